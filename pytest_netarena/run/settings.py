"""Run settings resolved once from the command line, the ini file and the xdist controller."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..agents.prompting import STRATEGIES
from ..agents.spec import AgentSpec, check_python_agent, parse_agent_spec
from ..core import resources
from ..apps import available_apps
from ..apps.options import check_value
from .budget import Budget
from ..core.app import App, RunOptions, parse_rules, rules_of
from ..core.seeding import new_run_seed
from ..core.types import Query
from .corpus import load_corpus
from ..core.errors import UsageError
from .gates import Gate, parse_gates
from ..reporting import artifacts
from .search import PROFILES, SearchConfig


@dataclass
class Settings:
    """Everything the plugin needs to generate, run and report episodes."""

    seed: int
    run_id: str
    agents: list[AgentSpec]
    run_options: RunOptions
    trials: int
    agent_timeout_s: float
    reports_dir: Path
    corpus: list[Query] | None = None  #: --corpus: run these queries instead of generating
    search: SearchConfig | None = None  #: --adversarial: search instead of sampling
    save_corpus: str | None = None
    run_budget: Budget = Budget()
    episode_budget: Budget = Budget()
    gates: list[Gate] = field(default_factory=list)
    #: --resume: episodes.jsonl lines of finished episodes by (query id, agent, trial)
    finished: dict[tuple[str, str, int], dict[str, Any]] = field(default_factory=dict)
    query_cache: dict[str, Any] = field(default_factory=dict)
    resumed_dir: Path | None = None  #: --resume: the run folder itself, wherever it is and whatever its name

    @property
    def run_dir(self) -> Path:
        return self.resumed_dir or self.reports_dir / self.run_id


#: options naming a file or folder (with the apps' own marked `path`): a leading `~` is expanded, since the shell
#: leaves `--reports-dir=~/x` and `netarena-malt:~/x` alone
PATH_OPTIONS = ("reports-dir", "llm-record", "llm-replay", "resume", "corpus", "save-corpus")
#: run-wide options a `--resume`d run takes from its run.json when the command line does not give them again
#: (the options that decide the queries are always the run's own: RunOptions below)
RESUMED_OPTIONS = ("corpus", "agent-timeout", "temperature", "llm-api-base", "llm-client", "tool-calls", "llm-record",
                   "llm-replay", "max-tokens", "max-cost-usd", "max-episode-tokens", "max-episode-cost-usd", "min-correctness",
                   "min-safety", "in-flight")


def path_options(apps: Mapping[str, App]) -> frozenset[str]:
    return frozenset((*PATH_OPTIONS, *(spec.name for app in apps.values() for spec in app.options if spec.path)))


def expand_home(name: str, value: Any) -> Any:
    """`~/x` (or `~user/x`) as the home folder's x; in a --corpus FORMAT:FILE, in FILE."""
    if not isinstance(value, str) or "~" not in value:
        return value
    if name == "corpus":
        kind, file = _foreign_corpus(value)
        if kind:
            return f"{kind}:{os.path.expanduser(file)}"
    return os.path.expanduser(value)


def app_options(items: Iterable[str], apps: Mapping[str, App] | None = None) -> dict[str, str]:
    """The app options of repeated `--option NAME=VALUE` arguments, keyed as in RunOptions.extra; `~` expanded in
    paths. A name that none of `apps` (default: every app) declares, or a value its check refuses, is a UsageError."""
    items = list(items)
    if not items:
        return {}  # no app is loaded for no option
    apps = available_apps() if apps is None else apps
    known = {spec.name for app in apps.values() for spec in app.options}
    paths = path_options(apps)
    extra = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            raise UsageError(f"--option takes NAME=VALUE; got {item!r}")
        name, value = name.strip(), value.strip()
        if name not in known:
            scope = f" for {next(iter(apps))}; its options" if len(apps) == 1 else "; app options"
            raise UsageError(f"unknown app option {name!r}{scope}: {', '.join(sorted(known)) or 'none'}")
        extra[name.replace("-", "_")] = expand_home(name, value) if name in paths else value
    check_app_options(apps, extra)
    return extra


def absolute_path(name: str, value: str) -> str:
    """A path option's value as an absolute path (a --corpus FORMAT:FILE keeps its FORMAT)."""
    kind, file = _foreign_corpus(value) if name == "corpus" else ("", value)
    return f"{kind}:{os.path.abspath(file)}" if kind else os.path.abspath(file)


LEVELS_UNSET = "default"  #: the ini default of --levels: every level, or an app's own default (MALT compat)


def _given_levels(value: Any) -> str | None:
    """--levels as given; None when the run names none (every level, or an app's own default)."""
    return None if value in (None, LEVELS_UNSET) else str(value)


def parse_levels(text: str) -> tuple[int, ...]:
    try:
        levels = tuple(sorted({int(part) for part in str(text).replace(" ", "").split(",") if part}))
    except ValueError:
        raise UsageError(f"--levels takes levels separated by commas, e.g. 1,2,3; got {text!r}") from None
    if not levels or any(level not in (1, 2, 3) for level in levels):
        raise UsageError(f"--levels must list levels among 1, 2 and 3; got {text!r}")
    return levels


def positive_int(name: str, value: Any) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise UsageError(f"{name} takes a whole number; got {value!r}") from None
    if number < 1:
        raise UsageError(f"{name} must be at least 1; got {number}")
    return number


def finite_number(name: str, value: Any, *, allow_zero: bool = False) -> float:
    """A real, finite, positive number (or zero when allowed): nan, inf and negatives are usage errors."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise UsageError(f"{name} takes a number; got {value!r}") from None
    if not math.isfinite(number) or number < 0 or (number == 0 and not allow_zero):
        bound = "zero or more" if allow_zero else "more than zero"
        raise UsageError(f"{name} must be a finite number, {bound}; got {value!r}")
    return number


def check_app_options(apps: Mapping[str, App], extra: dict[str, Any]) -> None:
    """Run every app option's own check on the value the user gave, so a bad one stops the run at once."""
    for app in apps.values():
        for spec in app.options:
            value = extra.get(spec.dest)
            if value not in (None, ""):
                check_value(spec, value)


def _check_paths(option: Callable[[str], Any]) -> None:
    """Paths that must exist (or must not be files) before the run writes or reads them."""
    for name, wanted in (("corpus", "file"), ("llm-replay", "folder")):
        value = option(name)
        if value in (None, ""):
            continue
        if name == "corpus":
            value = _foreign_corpus(str(value))[1]
        path = Path(value)
        if not path.exists():
            raise UsageError(f"--{name} {value}: no such {wanted}")
        if (wanted == "file") != path.is_file():
            raise UsageError(f"--{name} {value}: not a {wanted}")
    for name in ("reports-dir", "llm-record"):
        value = option(name)
        if value not in (None, "") and Path(value).exists() and not Path(value).is_dir():
            raise UsageError(f"--{name} {value}: exists and is not a folder")
        if value not in (None, ""):
            _check_writable_folder(name, Path(str(value)).expanduser())
    value = option("save-corpus")
    if value not in (None, "") and Path(value).is_dir():
        raise UsageError(f"--save-corpus {value}: is a folder; give the corpus file to write")
    value = option("llm-client")
    if value not in (None, "", "auto", "litellm"):
        raise UsageError(f"--llm-client takes auto or litellm; got {value!r}")
    value = option("tool-calls")
    if value not in (None, "", "auto", "always", "never"):
        raise UsageError(f"--tool-calls takes auto, always or never; got {value!r}")
    value = option("llm-api-base")
    if value not in (None, ""):
        url = urlsplit(str(value))
        if url.scheme not in ("http", "https") or not url.hostname:
            raise UsageError(f"--llm-api-base takes an http(s) URL, e.g. http://127.0.0.1:8000/v1; got {value!r}")


def _check_tool_calls(options: RunOptions, specs: list[AgentSpec]) -> None:
    """--tool-calls always refuses to start where no tool can be offered: under NetArena's text protocol, or to a
    model whose provider takes no tool calls."""
    if options.tool_calls != "always":
        return
    if options.netarena_compat:
        raise UsageError("--tool-calls always: --compat netarena keeps NetArena's text protocol, which offers no "
                         "tools; drop one of the two")
    from ..agents.model_agent import takes_tools

    for spec in specs:
        if spec.kind == "litellm" and not takes_tools(spec.target):
            raise UsageError(f"--tool-calls always: {spec.raw} does not take tool calls (litellm's model map says "
                             "so); use --tool-calls auto to read its replies as text")


def parse_agents(raw_specs: list[str], builtin_names: tuple[str, ...]) -> list[AgentSpec]:
    specs = [parse_agent_spec(raw, builtin_names) for raw in raw_specs]
    seen: set[str] = set()
    for spec in specs:
        if spec.raw in seen:
            raise UsageError(f"--agent {spec.raw} is given twice")
        seen.add(spec.raw)
    return specs


def _check_writable_folder(name: str, folder: Path) -> None:
    """UsageError unless folders can be made where `folder` is (or would be): one line before the run, rather
    than a traceback per test. Probed by making and removing a folder in its nearest existing ancestor."""
    import tempfile

    ancestor = folder.absolute()
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".netarena-probe-", dir=ancestor))
    except OSError as error:
        raise UsageError(f"--{name} {folder}: cannot write there ({error.strerror or error})") from None


def build_settings(
    option: Callable[[str], Any],
    *,
    agents: list[str],
    adversarial: bool,
    worker: dict[str, Any] | None,
    rootpath: Path,
    hypothesis_profile: str | None = None,
) -> Settings:
    """Resolve every run setting; `option(name)` gives the user's value (command line, then ini)."""
    apps = available_apps()
    builtin_names = tuple(sorted({n for app in apps.values() for n in app.builtin_agent_names}))
    specs = parse_agents(agents, builtin_names)
    if worker is None:  # a remote worker need not see the controller's paths
        _check_paths(option)
        for spec in specs:
            if spec.kind == "python":
                check_python_agent(spec.target)
    resume_dir = option("resume")
    if resume_dir and worker is not None:  # the controller read run.json: a worker may not see the folder
        resumed = worker.get("netarena_run_info") or artifacts.read_run_info(Path(resume_dir))
    else:
        resumed = artifacts.read_run_info(Path(resume_dir)) if resume_dir else None
    if worker is not None:
        seed, run_id = worker["netarena_seed"], worker["netarena_run_id"]
    elif resumed is not None:
        seed, run_id = int(resumed["seed"]), str(resumed["run_id"])
    else:
        seed_text = option("seed")
        try:
            seed = int(seed_text) if seed_text not in (None, "") else new_run_seed()
        except ValueError:
            raise UsageError(f"--seed takes a whole number; got {seed_text!r}") from None
        if seed < 0:
            raise UsageError(f"--seed takes a whole number, zero or more; got {seed_text!r}")
        run_id = artifacts.new_run_id(seed)
    strategy = option("strategy")
    if strategy not in STRATEGIES:
        raise UsageError(f"--strategy must be one of {', '.join(STRATEGIES)}; got {strategy!r}")
    max_steps = option("max-steps")
    extra = {
        spec.dest: option(spec.name)
        for app in apps.values()
        for spec in app.options
    }
    stored = resumed["options"] if resumed is not None else {}
    if resumed is not None:  # the interrupted run's options win, so the same queries come back
        strategy, max_steps = stored.get("strategy", strategy), stored.get("max_steps", max_steps)
        extra.update({key: value for key, value in stored.items() if key in extra})
    check_app_options(apps, extra)
    split = _split(stored.get("split") if resumed is not None else option("split"))
    levels_text = _given_levels(option("levels"))
    run_options = RunOptions(
        seed=seed,
        queries=positive_int("--queries", stored.get("queries") or option("queries")),
        levels=parse_levels(",".join(map(str, stored["levels"])) if "levels" in stored
                            else ",".join(map(str, RunOptions.levels)) if levels_text is None else levels_text),
        levels_given=stored.get("levels_given", True) if "levels" in stored else levels_text is not None,
        max_steps=None if max_steps in (None, "") else positive_int("--max-steps", max_steps),
        strategy=strategy,
        extra=extra,
        sandboxed=not (stored.get("unsandboxed") if resumed is not None else _flag(option("unsandboxed"))),
        rules=rules_of(resumed) if resumed is not None else parse_rules(option("compat")),
        split=split,
        tool_calls=option("tool-calls") or "auto",
    )
    if worker is None:
        _check_tool_calls(run_options, specs)
    timeout = finite_number("--agent-timeout", option("agent-timeout"))
    temperature = finite_number("--temperature", option("temperature"), allow_zero=True)
    llm_settings: dict[str, Any] = {
        "temperature": temperature,
        "seed": seed,
        "deadline_s": max(1.0, timeout - 10.0),  # retries end before the episode's agent timeout
        "api_base": option("llm-api-base"),
        "client": option("llm-client"),
        "tool_calls": run_options.tool_calls,
        "record_dir": option("llm-record"),
        "replay_dir": option("llm-replay"),
    }
    a2a_settings = {"timeout_s": max(1.0, timeout - 5.0), "streaming": _flag(option("a2a-streaming"))}
    cli_settings = {"timeout_s": timeout, "api_base": option("llm-api-base")}
    by_kind = {"litellm": llm_settings, "a2a": a2a_settings, "cli": cli_settings}
    specs = [replace(a, settings=by_kind[a.kind]) if a.kind in by_kind else a for a in specs]
    reports_dir = Path(option("reports-dir"))
    if not reports_dir.is_absolute():
        # `pytest --pyargs pytest_netarena.suites` roots the run in the installed package: write beside the user
        reports_dir = (Path.cwd() if resources.inside_package(rootpath) else rootpath) / reports_dir
    if resume_dir:
        reports_dir = Path(resume_dir).resolve().parent
    corpus_path = option("corpus")
    trials = positive_int("--trials", stored.get("trials") or option("trials"))
    search = None
    if adversarial:
        profile = PROFILES.get(hypothesis_profile or "", {})
        given = option("adversarial-examples")
        examples = positive_int("--adversarial-examples", profile.get("max_examples", 20) if given is None else given)
        time_limit = finite_number("--adversarial-time", option("adversarial-time"))
        search = SearchConfig(examples, time_limit, trials, reports_dir / "hypothesis-db", seed)
    return Settings(
        seed=seed,
        run_id=run_id,
        agents=specs,
        run_options=run_options,
        trials=trials,
        agent_timeout_s=timeout,
        reports_dir=reports_dir,
        corpus=_corpus(corpus_path, worker, run_options),
        search=search,
        save_corpus=option("save-corpus"),
        run_budget=Budget(_number(option, "max-tokens", int), _number(option, "max-cost-usd", float)),
        episode_budget=Budget(_number(option, "max-episode-tokens", int), _number(option, "max-episode-cost-usd", float)),
        gates=parse_gates("resolved", option("min-resolved")) + parse_gates("correctness", option("min-correctness"))
        + parse_gates("safety", option("min-safety")),
        # workers ask the controller for finished episodes, one at a time (pytest_netarena.scale.service)
        finished=artifacts.finished_episodes(Path(resume_dir), repair=True) if resume_dir and worker is None else {},
        resumed_dir=Path(resume_dir).resolve() if resume_dir else None,
    )


#: --corpus FORMAT:FILE: question files of other benchmarks, read by their app into queries
FOREIGN_CORPORA = ("netarena-malt",)


def _foreign_corpus(spec: str) -> tuple[str, str]:
    """(format or "", file) of a --corpus value."""
    head, _, rest = spec.partition(":")
    return (head, rest) if head in FOREIGN_CORPORA and rest else ("", spec)


def _corpus(path: str | None, worker: dict[str, Any] | None, options: RunOptions) -> list[Query] | None:
    """--corpus: read here, or, on an xdist worker, as the controller read it (no shared disk needed)."""
    if worker is not None and worker.get("netarena_corpus") is not None:
        return [Query.from_dict(data) for data in worker["netarena_corpus"]]
    if not path:
        return None
    kind, file = _foreign_corpus(path)
    try:
        if kind == "netarena-malt":
            from ..apps.malt.app import netarena_corpus

            return netarena_corpus(file, options)
        return load_corpus(Path(path))
    except UsageError as error:
        raise UsageError(f"--corpus: {error}") from None


def _split(value: Any) -> str | None:
    """--split: "train" or "test", or None for the whole query space (the default, "all")."""
    if value in (None, "", "all"):
        return None  # the training package (and Gymnasium) is imported only when a split is asked for
    from ..core.splits import check_split

    try:
        return check_split(value)
    except ValueError as error:
        raise UsageError(str(error)) from None


def _flag(value: Any) -> bool:
    """An on/off option given on the command line (True) or as an ini value ("true", "1", ...)."""
    if isinstance(value, bool) or value is None:
        return bool(value)
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("", "0", "false", "no", "off"):
        return False
    raise UsageError(f"expected true or false; got {value!r}")


def _number(option: Callable[[str], Any], name: str, kind: type) -> Any:
    value = option(name)
    if value in (None, ""):
        return None
    if kind is float:
        return finite_number(f"--{name}", value)
    try:
        number = kind(value)
    except ValueError:
        raise UsageError(f"--{name} takes a whole number; got {value!r}") from None
    if number <= 0:
        raise UsageError(f"--{name} must be positive; got {value!r}")
    return number


