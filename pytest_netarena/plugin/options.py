"""The netarena options: declared (CLI and ini), looked up, and recorded in run.json for a --resume to read back."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from ..agents.prompting import STRATEGIES
from ..agents.spec import ACCEPTED_FORMS
from ..apps import available_apps
from ..reporting import artifacts
from ..run.gates import EXIT_BELOW_BAR
from ..run.settings import LEVELS_UNSET, RESUMED_OPTIONS, absolute_path, expand_home, path_options
from .state import SCALE_KEY, SETTINGS_KEY

# (option, help, default); each is also the ini key netarena_<option>; CLI values win over ini values.
_OPTIONS = (
    ("seed", "run seed (default: random, printed in the header)", None),
    ("queries", "queries per category (default 3)", "3"),
    ("levels", "levels to run, e.g. 1,2 (default 1,2,3; MALT under --compat netarena: 1,2)", LEVELS_UNSET),
    ("max-steps", "agent turns per episode (default: the app's own)", None),
    ("strategy", f"prompt strategy: {', '.join(STRATEGIES)} (default zero-shot)", "zero-shot"),
    ("trials", "runs of every query per agent (default 1)", "1"),
    ("reports-dir", "where run folders are written (default reports/)", "reports"),
    ("agent-timeout", "seconds an agent may take per reply (default 300)", "300"),
    ("llm-api-base", "base URL of an OpenAI-compatible endpoint for model agents", None),
    ("llm-client", "how model agents reach their provider: auto (default: openai: models over plain HTTP, "
     "the others through litellm) or litellm (always litellm)", None),
    ("temperature", "sampling temperature for model agents (default 0)", "0"),
    ("tool-calls", "how agents act: auto (default: through native tool calls where the agent and its provider take "
     "them, else text), always (refuse to start where a model cannot), never (text replies only)", None),
    ("adversarial-examples", "examples per adversarial search (default: the --hypothesis-profile's if it is "
     "netarena-dev|ci|search, else 20)", None),
    ("adversarial-time", "seconds per adversarial search (default 600)", "600"),
    ("max-tokens", "stop the run once agents have used this many tokens", None),
    ("max-cost-usd", "stop the run once agents have cost this many dollars", None),
    ("max-episode-tokens", "stop an episode once its agent has used this many tokens", None),
    ("max-episode-cost-usd", "stop an episode once its agent has cost this many dollars", None),
    ("min-resolved", f"fail the session (exit {EXIT_BELOW_BAR}) below this resolved rate (the headline): RATE or APP=RATE,...",
     None),
    ("min-correctness", f"fail the session (exit {EXIT_BELOW_BAR}) below this correctness: RATE or APP=RATE,...", None),
    ("min-safety", f"fail the session (exit {EXIT_BELOW_BAR}) below this safety: RATE or APP=RATE,...", None),
    ("record", "store every model request and reply in this folder", None),
    ("replay", "answer model agents from a --record folder, with no network call", None),
    ("resume", "complete an interrupted run folder (reports/<run-id>): finished episodes are not run again", None),
    ("corpus", "run the queries of this corpus file (found.jsonl or a release) instead of generating", None),
    ("save-corpus", "write the collected queries to this corpus file", None),
    ("shard", "run only slice K of N of the collection, e.g. 2/4 (needs --seed; `netarena report merge` joins them)",
     None),
    ("compat", "score by another benchmark's rules: netarena reproduces NetArena's (docs/netarena.md); default: ours",
     None),
    ("in-flight", "episodes each process (each xdist worker) runs at once, each in its own environment (default 1; "
     "with a model agent, -n N beyond the cores: N over the workers, docs/scale.md)", ""),
    ("split", "held-out split of the query space: train, test or all (default all; see docs/training.md)", "all"),
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("netarena", "pytest-netarena benchmark")
    group.addoption(
        "--agent",
        action="append",
        default=None,
        metavar="SPEC",
        help="agent under test (repeatable): " + "; ".join(ACCEPTED_FORMS),
    )
    parser.addini("netarena_agents", "agents under test when --agent is not given", type="linelist")
    group.addoption(
        "--adversarial",
        action="store_true",
        default=False,
        help="search each app's query space for episodes the agent fails and shrink them (Hypothesis)",
    )
    group.addoption("--no-plots", action="store_true", default=False, help="skip the PNG/SVG plots beside report.html")
    group.addoption("--unsandboxed", action="store_true", default=None,
                    help="run agent actions WITHOUT sealed boxes where none can be made (every report is marked)")
    parser.addini("netarena_unsandboxed", "run agent actions without sealed boxes (reports are marked)", default="false")
    group.addoption("--a2a-streaming", dest="a2a_streaming", action="store_true", default=None,
                    help="A2A agents: stream replies when the agent card allows it (default); the idle deadline "
                    "(--agent-timeout) restarts with every streamed update")
    group.addoption("--no-a2a-streaming", dest="a2a_streaming", action="store_false",
                    help="A2A agents: ask for one blocking reply per turn (message/send)")
    parser.addini("netarena_a2a_streaming", "stream replies of A2A agents", default="true")
    parser.addini("netarena_plots", "write PNG/SVG plots beside report.html", type="bool", default=True)
    parser.addini("netarena_apps", "extra apps, one 'NAME = MODULE:ATTR' per line", type="linelist")
    for name, help_text, default in _OPTIONS:
        group.addoption(f"--{name}", default=None, help=help_text)
        parser.addini("netarena_" + name.replace("-", "_"), help_text, default=default)
    for app in available_apps().values():
        for spec in app.options:
            group.addoption(f"--{spec.name}", default=None, help=f"[{app.name}] {spec.help}")
            parser.addini(f"netarena_{spec.dest}", spec.help, default=spec.default)


def option_lookup(config: pytest.Config, recorded: dict[str, Any] | None = None) -> Any:
    """A lookup of an option by name: the command line first, then what a --resume'd run's command line gave
    (`recorded`), then the ini key netarena_<name>; `~` expanded in paths."""
    paths = path_options(available_apps())

    def value(name: str) -> Any:
        given = config.getoption(name.replace("-", "_"))
        if given is None and recorded:
            given = recorded.get(name)
        if given is None:
            given = config.getini("netarena_" + name.replace("-", "_"))
        return expand_home(name, given) if name in paths else given

    return value


def resumed_run(config: pytest.Config) -> dict[str, Any] | None:
    """The run.json of the run --resume completes (as the controller read it, on an xdist worker), or None."""
    worker = getattr(config, "workerinput", None)
    if worker is not None and worker.get("netarena_run_info"):
        return worker["netarena_run_info"]
    folder = option_lookup(config)("resume")
    return artifacts.read_run_info(Path(folder)) if folder else None


def restore_selection(config: pytest.Config, run: dict[str, Any]) -> None:
    """`--resume DIR` alone collects what the run collected: its paths (unless paths are given), -k and -m."""
    if run.get("paths") and config.args_source is not pytest.Config.ArgsSource.ARGS:
        config.option.pyargs = bool(run.get("pyargs"))
        config.args = [arg if run.get("pyargs") else os.path.join(config.rootpath, arg) for arg in run["paths"]]
    for dest in ("keyword", "markexpr"):
        if run.get(dest) and not getattr(config.option, dest, ""):
            setattr(config.option, dest, run[dest])


def _resumed_options(config: pytest.Config) -> dict[str, Any]:
    """The run-wide options given on the command line, as a resumed run takes them (paths made absolute)."""
    option, given = option_lookup(config), {}
    for name in RESUMED_OPTIONS:
        if config.getoption(name.replace("-", "_")) is None:
            continue
        value = option(name)
        given[name] = absolute_path(name, value) if name in ("corpus", "record", "replay") else value
    return given


def _run_paths(config: pytest.Config) -> list[str]:
    """The run's collection arguments, relative to the rootdir where they are inside it."""
    if config.option.pyargs:
        return list(config.args)
    paths = []
    for arg in config.args:
        path, sep, rest = str(arg).partition("::")
        path = os.path.abspath(os.path.join(config.invocation_params.dir, path))
        if Path(path).is_relative_to(config.rootpath):
            path = os.path.relpath(path, config.rootpath)
        paths.append(path + sep + rest)
    return paths


def run_info(config: pytest.Config) -> dict[str, Any]:
    """run.json's content, which the controller writes and `--resume DIR` reads back (resumed_run)."""
    settings, scale = config.stash[SETTINGS_KEY], config.stash[SCALE_KEY]
    options = settings.run_options
    service = scale.service
    return {
        **({"shard": str(scale.options.shard)} if scale.options.shard is not None else {}),
        **({"collection": dict(service.collection)} if service is not None and service.collection else {}),
        "run_id": settings.run_id,
        "seed": settings.seed,
        # what `--resume DIR` alone needs to collect and run the same tests
        "paths": _run_paths(config),
        **({"pyargs": True} if config.option.pyargs else {}),
        **{dest: getattr(config.option, dest) for dest in ("keyword", "markexpr") if getattr(config.option, dest, "")},
        "command_line": _resumed_options(config),
        "sandboxed": options.sandboxed,
        "profile": options.profile,
        "agents": [agent.raw for agent in settings.agents],
        "options": {
            "queries": options.queries,
            "levels": list(options.levels),
            **({} if options.levels_given else {"levels_given": False}),
            "max_steps": options.max_steps,
            "strategy": options.strategy,
            "tool_calls": options.tool_calls,
            "trials": settings.trials,
            **({"split": options.split} if options.split else {}),
            **({} if options.sandboxed else {"unsandboxed": True}),
            **{key: value for key, value in options.extra.items() if value is not None},
        },
    }
