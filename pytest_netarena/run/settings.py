"""Run settings resolved once from the command line, the ini file and the xdist controller."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..agents.spec import AgentSpec, parse_agent_spec
from ..core import resources
from ..apps import available_apps
from ..apps.options import check_value
from .budget import Budget
from ..core.app import App, RunOptions, parse_rules, rules_of
from ..core.seeding import PUBLIC, check_secret, new_run_secret, secret_option
from ..core.splits import HELDOUT, check_seed_range, new_heldout_seed
from ..core.types import Query, current_keys
from .corpus import load_corpus
from ..core.errors import UsageError
from .gates import Gate, parse_gates
from .plan import check_tool_calls
from ..reporting import artifacts
from .search import PROFILES, SearchConfig
from . import values
from .values import finite_number, parse_levels, positive_int
from .worker_input import WorkerInput


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
    resumed_run: Mapping[str, Any] | None = None  #: --resume: its run.json, read once (the controller hands it on)
    impossible: bool = False  #: --impossible: mix in each app's impossible episodes (docs/validity.md)

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


def check_app_options(apps: Mapping[str, App], extra: dict[str, Any]) -> None:
    """Run every app option's own check on the value the user gave, so a bad one stops the run at once."""
    for app in apps.values():
        for spec in app.options:
            value = extra.get(spec.dest)
            if value not in (None, ""):
                check_value(spec, value)


def _check_on_controller(option: Callable[[str], Any], specs: list[AgentSpec]) -> None:
    """What only the controller checks: a remote worker need not see the controller's paths or agents' modules."""
    _check_paths(option)
    _check_choices(option)
    for spec in specs:
        spec.agent_kind.check(spec)


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
        if value in (None, ""):
            continue
        if Path(value).exists() and not Path(value).is_dir():
            raise UsageError(f"--{name} {value}: exists and is not a folder")
        _check_writable_folder(name, Path(str(value)).expanduser())
    value = option("save-corpus")
    if value not in (None, "") and Path(value).is_dir():
        raise UsageError(f"--save-corpus {value}: is a folder; give the corpus file to write")


def _check_choices(option: Callable[[str], Any]) -> None:
    """The model options that take one of a few values, or a URL."""
    value = option("llm-client")
    if value not in (None, "", "auto", "litellm"):
        raise UsageError(f"--llm-client takes auto or litellm; got {value!r}")
    value = option("llm-api-base")
    if value not in (None, ""):
        url = urlsplit(str(value))
        if url.scheme not in ("http", "https") or not url.hostname:
            raise UsageError(f"--llm-api-base takes an http(s) URL, e.g. http://127.0.0.1:8000/v1; got {value!r}")


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
    worker: WorkerInput | None,
    resumed: Mapping[str, Any] | None,
    rootpath: Path,
    hypothesis_profile: str | None = None,
) -> Settings:
    """Resolve every run setting; `option(name)` gives the user's value (command line, then ini).

    `worker` is the controller's hand-off on an xdist worker, None in the controller (or without xdist): only the
    controller checks paths and agents, draws the seed and reads the resumed run's episodes. `resumed` is the
    run.json --resume completes, as the plugin read it once (plugin/runfile.py: resumed_run), None for a new run."""
    apps = available_apps()
    specs = parse_agents(agents, tuple(sorted({n for app in apps.values() for n in app.builtin_agent_names})))
    if worker is None:
        _check_on_controller(option, specs)
    resume_dir = option("resume")
    seed, run_id, secret = _seed_run_and_secret(option, worker, resumed)
    run_options = _run_options(option, apps, seed, secret, resumed)
    if worker is None:
        check_tool_calls(run_options, specs)
    timeout = finite_number("--agent-timeout", option("agent-timeout"))
    by_kind = _agent_settings(option, run_options, timeout)
    reports_dir = _reports_dir(option("reports-dir"), rootpath, resume_dir)
    trials = positive_int("--trials", (resumed or {}).get("options", {}).get("trials") or option("trials"))
    return Settings(
        seed=seed,
        run_id=run_id,
        agents=[replace(a, settings=by_kind[a.kind]) if a.kind in by_kind else a for a in specs],
        run_options=run_options,
        trials=trials,
        agent_timeout_s=timeout,
        reports_dir=reports_dir,
        search=_search(option, hypothesis_profile, trials, reports_dir, seed) if adversarial else None,
        corpus=_corpus(option("corpus"), worker, run_options),
        save_corpus=option("save-corpus"),
        run_budget=_budget(option, "max-tokens", "max-cost-usd"),
        episode_budget=_budget(option, "max-episode-tokens", "max-episode-cost-usd"),
        gates=parse_gates("resolved", option("min-resolved")) + parse_gates("correctness", option("min-correctness"))
        + parse_gates("safety", option("min-safety")),
        finished=_finished(resume_dir) if worker is None else {},
        resumed_dir=Path(resume_dir).resolve() if resume_dir else None,
        resumed_run=resumed,
        impossible=_impossible(option, resumed),
    )


def _impossible(option: Callable[[str], Any], resumed: Mapping[str, Any] | None) -> bool:
    """--impossible, or what the resumed run was started with."""
    if resumed is not None:
        return bool(resumed["options"].get("impossible"))
    return values.flag(option("impossible"))


def _finished(resume_dir: str | None) -> dict[tuple[str, str, int], dict[str, Any]]:
    """--resume, in the controller: the episodes the run finished (workers ask for them one at a time:
    pytest_netarena.scale.service)."""
    return artifacts.finished_episodes(Path(resume_dir), repair=True) if resume_dir else {}


def _seed_run_and_secret(option: Callable[[str], Any], worker: WorkerInput | None,
                         resumed: Mapping[str, Any] | None) -> tuple[int, str, str]:
    """The controller's on a worker; a resumed run's own; else --seed (or a new seed), a new run id and the run
    secret (--secret, or one drawn: docs/validity.md)."""
    if worker is not None:
        return worker.seed, worker.run_id, worker.secret
    if resumed is not None:
        return int(resumed["seed"]), str(resumed["run_id"]), run_secret(resumed)
    seed_text, heldout = option("seed"), _split(option("split")) == HELDOUT
    seed = new_heldout_seed() if heldout and seed_text in (None, "") else values.seed(seed_text)
    # a held-out run always has a secret: its seed alone must not say what it asked
    secret = _secret(option("secret"), seeded=seed_text not in (None, "") and not heldout)
    if heldout and secret == PUBLIC:
        raise UsageError("held-out runs (--split heldout) always have a run secret: give one, or none to draw one")
    if heldout and option("shard") and option("secret") in (None, ""):
        raise UsageError("--shard in a held-out run (--split heldout) needs --secret VALUE: every shard must draw the "
                         "same queries")
    return seed, artifacts.new_run_id(seed), secret


def _run_options(option: Callable[[str], Any], apps: Mapping[str, App], seed: int, secret: str,
                 resumed: Mapping[str, Any] | None) -> RunOptions:
    """The options apps see. A --resume'd run's own options win over the command line's (so the same queries come
    back); each line below says where one option comes from."""
    stored: Mapping[str, Any] = current_keys(resumed["options"]) if resumed is not None else {}
    prompt_style = stored.get("prompt_style") or values.prompt_style(option("prompt-style"))
    max_steps = stored.get("max_steps", option("max-steps"))
    extra = {spec.dest: option(spec.name) for app in apps.values() for spec in app.options}
    extra.update({key: value for key, value in stored.items() if key in extra})
    check_app_options(apps, extra)
    split = _split(stored.get("split") if resumed is not None else option("split"))
    try:
        check_seed_range(seed, split)
    except ValueError as error:
        raise UsageError(str(error)) from None
    levels, levels_given = _levels(values.given_levels(option("levels")), stored)
    return RunOptions(
        seed=seed,
        queries=positive_int("--queries", stored.get("queries") or option("queries")),
        levels=levels,
        levels_given=levels_given,
        max_steps=None if max_steps in (None, "") else positive_int("--max-steps", max_steps),
        prompt_style=prompt_style,
        extra=extra,
        sandboxed=not (stored.get("unsandboxed") if resumed is not None else values.flag(option("unsandboxed"))),
        rules=rules_of(resumed) if resumed is not None else parse_rules(option("compat")),
        split=split,
        tool_calls=values.tool_calls(option("tool-calls")),
        secret=secret,
    )


def _levels(given: str | None, stored: Mapping[str, Any]) -> tuple[tuple[int, ...], bool]:
    """(levels, whether the run named them): a resumed run's, else --levels, else every level."""
    if "levels" in stored:
        return parse_levels(",".join(map(str, stored["levels"]))), stored.get("levels_given", True)
    if given is None:
        return RunOptions.levels, False
    return parse_levels(given), True


def _agent_settings(option: Callable[[str], Any], run_options: RunOptions, timeout: float) -> dict[str, dict[str, Any]]:
    """The settings of each kind of agent, by kind; an agent's own deadlines end inside the episode's timeout."""
    model = {
        "temperature": finite_number("--temperature", option("temperature"), allow_zero=True),
        "seed": run_options.seed,
        "deadline_s": max(1.0, timeout - 10.0),  # retries end before the episode's agent timeout
        "api_base": option("llm-api-base"),
        "client": option("llm-client"),
        "record_dir": option("llm-record"),
        "replay_dir": option("llm-replay"),
    }
    a2a = {"timeout_s": max(1.0, timeout - 5.0), "streaming": values.flag(option("a2a-streaming"))}
    cli = {"timeout_s": timeout, "api_base": option("llm-api-base")}
    return {"model": model, "a2a": a2a, "cli": cli}


def _reports_dir(value: Any, rootpath: Path, resume_dir: str | None) -> Path:
    """--reports-dir, relative to the rootdir; a resumed run's folder's parent, wherever the run folder is."""
    if resume_dir:
        return Path(resume_dir).resolve().parent
    reports_dir = Path(value)
    if reports_dir.is_absolute():
        return reports_dir
    # `pytest --pyargs pytest_netarena.suites` roots the run in the installed package: write beside the user
    return (Path.cwd() if resources.inside_package(rootpath) else rootpath) / reports_dir


def _search(option: Callable[[str], Any], hypothesis_profile: str | None, trials: int, reports_dir: Path,
            seed: int) -> SearchConfig:
    """--adversarial: --adversarial-examples, else the netarena Hypothesis profile's, else 20."""
    profile = PROFILES.get(hypothesis_profile or "", {})
    given = option("adversarial-examples")
    examples = positive_int("--adversarial-examples", profile.get("max_examples", 20) if given is None else given)
    time_limit = finite_number("--adversarial-time", option("adversarial-time"))
    return SearchConfig(examples, time_limit, trials, reports_dir / "hypothesis-db", seed)


#: --corpus FORMAT:FILE: question files of other benchmarks, read by their app into queries
FOREIGN_CORPORA = ("netarena-malt",)


def _foreign_corpus(spec: str) -> tuple[str, str]:
    """(format or "", file) of a --corpus value."""
    head, _, rest = spec.partition(":")
    return (head, rest) if head in FOREIGN_CORPORA and rest else ("", spec)


def _corpus(path: str | None, worker: WorkerInput | None, options: RunOptions) -> list[Query] | None:
    """--corpus: read here, or, on an xdist worker, as the controller read it (no shared disk needed)."""
    if worker is not None and worker.corpus is not None:
        return list(worker.corpus)
    if not path:
        return None
    kind, file = _foreign_corpus(path)
    try:
        if kind == "netarena-malt":
            from ..apps.malt.netarena.app import netarena_corpus

            return netarena_corpus(file, options)
        return load_corpus(Path(path))
    except UsageError as error:
        raise UsageError(f"--corpus: {error}") from None


def _secret(value: Any, seeded: bool) -> str:
    """--secret: the value given; without one, PUBLIC for a run given --seed (anyone with the seed reproduces it,
    as before run secrets existed) and a fresh secret for a run whose seed is drawn too (docs/validity.md)."""
    if value in (None, ""):
        return PUBLIC if seeded else new_run_secret()
    try:
        return secret_option(value)
    except ValueError as error:
        raise UsageError(str(error)) from None


def run_secret(run: Mapping[str, Any]) -> str:
    """The secret a run.json keeps in its private part (PUBLIC for a run that had none, or was written before)."""
    private = run.get("private")
    secret = private.get("secret") if isinstance(private, Mapping) else None
    if secret in (None, ""):
        return PUBLIC
    try:
        return check_secret(secret)
    except ValueError as error:
        raise UsageError(f"run.json: private.secret: {error}") from None


def _split(value: Any) -> str | None:
    """--split: "train" or "test", or None for the whole query space (the default, "all")."""
    if value in (None, "", "all"):
        return None  # the training package (and Gymnasium) is imported only when a split is asked for
    from ..core.splits import check_split

    try:
        return check_split(value)
    except ValueError as error:
        raise UsageError(str(error)) from None


def _budget(option: Callable[[str], Any], tokens: str, cost: str) -> Budget:
    return Budget(values.optional_limit(f"--{tokens}", option(tokens), int),
                  values.optional_limit(f"--{cost}", option(cost), float))
