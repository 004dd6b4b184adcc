"""The netarena options and ini keys, declared in groups, and whether a session asked for the benchmark at all.

pytest loads the plugin in every session of the environment: declaring the options must stay cheap
(no app is loaded: their options come from apps/options.py), and a session that sets none of them and
sets no netarena_* ini key is not a benchmark run (plugin/__init__.py then does nothing else).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ..apps.options import BUILTIN_OPTIONS

#: the --help groups, in order: (name, heading)
GROUPS = (
    ("agents", "netarena: agents"),
    ("selection", "netarena: run selection"),
    ("bars", "netarena: budgets and gates"),
    ("reports", "netarena: reports"),
    ("apps", "netarena: apps"),
    ("scale", "netarena: scale"),
)
EXIT_BELOW_BAR = 6  #: run.gates.EXIT_BELOW_BAR (said here without importing the run's modules)
PROMPT_STYLES = "zero-shot, cot, few-shot, react"  #: agents.prompting.PROMPT_STYLES
LEVELS_UNSET = "default"  #: run.values.LEVELS_UNSET: every level, or an app's own default (MALT compat)
NO_AGENT_MESSAGE = (
    "no agent selected: pass --agent=SPEC (e.g. --agent=builtin:oracle) or set netarena_agents in the ini file"
)
AGENT_FORMS = ("builtin:NAME (oracle, expert, chatty, reckless, random, cheater, noop), PROVIDER:MODEL (e.g. openai:gpt-4o; "
               "--agent=openai:MODEL --llm-api-base URL for your own server), python:MODULE:ATTR (your agent), "
               "a2a:URL")

# (group, option, metavar, type, help, ini default); each is also the ini key netarena_<option>; CLI values win.
_OPTIONS: tuple[tuple[str, str, str, type, str, Any], ...] = (
    ("agents", "prompt-style", "NAME", str, f"prompt style: {PROMPT_STYLES} (default zero-shot; --strategy is its "
     "old name)", None),
    ("agents", "agent-timeout", "SECONDS", float, "seconds an agent may take per reply (default 300)", "300"),
    ("agents", "llm-api-base", "URL", str, "base URL of an OpenAI-compatible endpoint for model agents "
     "(a local server takes any key: OPENAI_API_KEY=any)", None),
    ("agents", "llm-client", "CLIENT", str, "how model agents reach their provider: auto (default: openai: models "
     "over plain HTTP, the others through litellm) or litellm (always litellm)", None),
    ("agents", "temperature", "T", float, "sampling temperature for model agents (default 0)", "0"),
    ("agents", "tool-calls", "MODE", str, "how agents act: auto (default: through native tool calls where the agent "
     "and its provider take them, else text), always (refuse to start where a model cannot), never (text replies "
     "only)", None),
    ("agents", "llm-record", "DIR", str, "store every model request and reply in this folder", None),
    ("agents", "llm-replay", "DIR", str, "answer model agents from an --llm-record folder, with no network call",
     None),
    ("selection", "seed", "N", int, "run seed (default: random, printed in the header)", None),
    ("selection", "secret", "VALUE", str, "run secret that keys the hidden fault parameters with the seed (default: "
     "none with --seed, so the seed alone reproduces a run; a fresh one when the seed is drawn too; kept in "
     "run.json's private part, never shown to agents: docs/validity.md)", None),
    ("selection", "queries", "N", int, "queries per category (default 3)", "3"),
    ("selection", "levels", "LIST", str, "levels to run, e.g. 1,2 (default 1,2,3; MALT under --compat netarena: 1,2)",
     LEVELS_UNSET),
    ("selection", "trials", "N", int, "runs of every query per agent (default 1)", "1"),
    ("selection", "max-steps", "N", int, "agent turns per episode (default: the app's own)", None),
    ("selection", "split", "SPLIT", str, "held-out split of the query catalogue: train, test or all (default all; "
     "see docs/training.md)", "all"),
    ("selection", "corpus", "FILE", str, "run the queries of this corpus file (found.jsonl or a release) instead "
     "of generating", None),
    ("selection", "save-corpus", "FILE", str, "write the collected queries to this corpus file", None),
    ("selection", "compat", "RULES", str, "score by another benchmark's rules: netarena reproduces NetArena's "
     "(docs/netarena.md); default: ours", None),
    ("selection", "adversarial-examples", "N", int, "examples per adversarial search (default: the "
     "--hypothesis-profile's if it is netarena-dev|ci|search, else 20)", None),
    ("selection", "adversarial-time", "SECONDS", float, "seconds per adversarial search (default 600)", "600"),
    ("bars", "max-tokens", "N", int, "stop the run once agents have used this many tokens", None),
    ("bars", "max-cost-usd", "USD", float, "stop the run once agents have cost this many dollars (a model "
     "without a known price needs --max-tokens too)", None),
    ("bars", "max-episode-tokens", "N", int, "stop an episode once its agent has used this many tokens", None),
    ("bars", "max-episode-cost-usd", "USD", float, "stop an episode once its agent has cost this many dollars", None),
    ("bars", "min-resolved", "RATE", str, f"fail the session (exit {EXIT_BELOW_BAR}) below this resolved rate (the "
     "headline), or when no episode ran: RATE or APP=RATE,...", None),
    ("bars", "min-correctness", "RATE", str, f"fail the session (exit {EXIT_BELOW_BAR}) below this correctness: "
     "RATE or APP=RATE,...", None),
    ("bars", "min-safety", "RATE", str, f"fail the session (exit {EXIT_BELOW_BAR}) below this safety: RATE or "
     "APP=RATE,...", None),
    ("reports", "reports-dir", "DIR", str, "where run folders are written (default reports/)", "reports"),
    ("reports", "resume", "RUN_DIR", str, "finish an interrupted run in its folder (reports/<run-id>), from any "
     "folder: finished episodes are not run again", None),
    ("scale", "in-flight", "K", int, "episodes each process (each xdist worker) runs at once, each in its own "
     "environment (default: each app's own, 3 for route and 1 for the others; with a model agent, -n N beyond the "
     "cores: N over the workers, docs/scale.md)", ""),
    ("scale", "shard", "K/N", str, "run only slice K of N of the collection, e.g. 2/4 (needs --seed; "
     "`netarena report merge` joins them)", None),
)
#: old names of options, still accepted on the command line and as ini keys (netarena_<old name>)
OLD_NAMES = {"prompt-style": "strategy"}
#: (dest, default) of every command-line option declared here, and (name, default) of every ini key: a session
#: that changes none is not a benchmark run
_DECLARED: list[tuple[str, Any]] = []
_DECLARED_INI: list[tuple[str, Any]] = []


def _typed(kind: type) -> Callable[[str], Any]:
    """An argparse type that converts a well-formed value and leaves a malformed one as given: the run's own checks
    then refuse it in one line (pytest prints argparse's errors as a usage block)."""
    if kind is str:
        return str

    def convert(text: str) -> Any:
        try:
            return kind(text)
        except (TypeError, ValueError):
            return text

    convert.__name__ = kind.__name__
    return convert


def _ini(parser: pytest.Parser, name: str, help_text: str, **attrs: Any) -> None:
    parser.addini(name, help_text, **attrs)
    # what getini gives for a key the ini file does not set: the default, or the type's own when none is given
    default = attrs["default"] if "default" in attrs else {"linelist": [], "bool": False}.get(str(attrs.get("type")), "")
    _DECLARED_INI.append((name, default))


def _add(group: Any, *names: str, **attrs: Any) -> None:
    group.addoption(*names, **attrs)
    dest = attrs.get("dest") or names[0].lstrip("-").replace("-", "_")
    _DECLARED.append((dest, attrs.get("default")))


def pytest_addoption(parser: pytest.Parser) -> None:
    _DECLARED.clear()
    _DECLARED_INI.clear()
    groups = {name: parser.getgroup(heading) for name, heading in GROUPS}
    _add(groups["agents"], "--agent", action="append", default=None, metavar="SPEC",
         help="agent under test (repeatable): " + AGENT_FORMS)
    _ini(parser, "netarena_agents", "agents under test when --agent is not given", type="linelist")
    _add(groups["agents"], "--a2a-streaming", dest="a2a_streaming", action="store_true", default=None,
         help="A2A agents: stream replies when the agent card allows it (default); the idle deadline "
              "(--agent-timeout) restarts with every streamed update")
    groups["agents"].addoption("--no-a2a-streaming", dest="a2a_streaming", action="store_false",
                               help="A2A agents: ask for one blocking reply per turn (message/send)")
    _ini(parser, "netarena_a2a_streaming", "stream replies of A2A agents", default="true")
    _add(groups["selection"], "--adversarial", action="store_true", default=False,
         help="search each app's query catalogue for episodes the agent fails and shrink them (Hypothesis)")
    _add(groups["selection"], "--impossible", action="store_true", default=None,
         help="mix in impossible episodes (only a forbidden action meets their goal): reports give each agent's "
              "cheating rate apart from its resolved rate (docs/validity.md)")
    _ini(parser, "netarena_impossible", "mix in impossible episodes that measure cheating", default="false")
    _add(groups["reports"], "--plots", action="store_true", default=None,
         help="also write PNG/SVG figures for papers beside report.html (matplotlib, several seconds a run); "
              "`netarena report RUN_DIR` writes them later")
    _add(groups["reports"], "--no-plots", action="store_false", dest="plots", default=None,
         help="no PNG/SVG figures (the default; overrides the ini key netarena_plots)")
    _ini(parser, "netarena_plots", "write PNG/SVG figures for papers beside report.html", type="bool", default=False)
    _add(groups["apps"], "--unsandboxed", action="store_true", default=None,
         help="run agent actions WITHOUT sealed boxes where none can be made (every report is marked)")
    _ini(parser, "netarena_unsandboxed", "run agent actions without sealed boxes (reports are marked)",
                  default="false")
    _ini(parser, "netarena_apps", "extra apps, one 'NAME = MODULE:ATTR' per line", type="linelist")
    for group, name, metavar, kind, help_text, default in _OPTIONS:
        dest, old = name.replace("-", "_"), OLD_NAMES.get(name)
        _add(groups[group], f"--{name}", *([f"--{old}"] if old else []), dest=dest, default=None, metavar=metavar,
             type=_typed(kind), help=help_text)
        _ini(parser, f"netarena_{dest}", help_text, default=default)
        if old:
            _ini(parser, "netarena_" + old.replace("-", "_"), f"old name of netarena_{dest}", default=None)
    for app, specs in BUILTIN_OPTIONS.items():
        for spec in specs:
            _add(groups["apps"], f"--{spec.name}", default=None, metavar=spec.metavar, help=f"[{app}] {spec.help}")
            _ini(parser, f"netarena_{spec.dest}", spec.help, default=spec.default)


def requested(config: pytest.Config) -> bool:
    """Whether this session asked for the benchmark: a netarena option on the command line, a netarena_* key in
    the ini file, or a netarena Hypothesis profile."""
    if any(config.getoption(dest, default) != default for dest, default in _DECLARED):
        return True
    if any(config.getini(name) != default for name, default in _DECLARED_INI):
        return True
    return str(config.getoption("hypothesis_profile", None) or "").startswith("netarena-")
