"""The pytest glue: options, seeding across xdist workers, one test per episode, reports.

Everything substantive lives in the pytest-free core; the hooks here only translate between
pytest and it.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from ..agents.litellm_agent import uses_litellm
from ..agents.prompting import STRATEGIES
from ..agents.spec import ACCEPTED_FORMS, AgentSpec
from ..apps import available_apps, get_app, load_errors, register_app
from .assertions import render_transcript
from ..core.app import App, Environment, RunOptions
from ..core.types import EpisodeResult, Outcome, Query
from ..run.corpus import read_found
from ..core.errors import BackendUnavailable, InfraError, UsageError
from ..reporting import artifacts
from ..reporting.properties import episode_properties, record_from_properties
from ..reporting.summary import render_table, summarize
from ..run.runner import play
from ..run.gates import EXIT_BELOW_BAR, check_gates
from ..scale.inflight import EnvironmentSlots, InFlight, runs_concurrently
from ..scale.options import ScaleOptions, build_scale_options
from ..scale.service import RemoteController, RunService
from ..scale.workers import WorkerSplit, model_bound, plain_numprocesses, split_workers
from ..run.search import PROFILES, SearchOutcome, search
from ..run.settings import (LEVELS_UNSET, RESUMED_OPTIONS, Settings, absolute_path, build_settings, expand_home,
                       path_options)

SETTINGS_KEY = pytest.StashKey[Settings]()
RESULT_KEY = pytest.StashKey[EpisodeResult]()
SCALE_KEY = pytest.StashKey["Scale"]()
FOLDED_KEY = pytest.StashKey[WorkerSplit]()  #: what -n N with a model agent became (controller)
EPISODE_LINE_KEY = pytest.StashKey[str]()  #: a freshly played episode's episodes.jsonl line, for the controller

BUDGET_SKIP = "not run: the run's budget is spent"
NO_AGENT_MESSAGE = (
    "no agent selected: pass --agent=SPEC (e.g. --agent=builtin:oracle) or set netarena_agents in the ini file"
)

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


# ---- options and configuration ---------------------------------------------------------------


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


def _option(config: pytest.Config, recorded: dict[str, Any] | None = None) -> Any:
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


def _resumed_run(config: pytest.Config) -> dict[str, Any] | None:
    """The run.json of the run --resume completes (as the controller read it, on an xdist worker), or None."""
    worker = getattr(config, "workerinput", None)
    if worker is not None and worker.get("netarena_run_info"):
        return worker["netarena_run_info"]
    folder = _option(config)("resume")
    return artifacts.read_run_info(Path(folder)) if folder else None


def _restore_selection(config: pytest.Config, run: dict[str, Any]) -> None:
    """`--resume DIR` alone collects what the run collected: its paths (unless paths are given), -k and -m."""
    if run.get("paths") and config.args_source is not pytest.Config.ArgsSource.ARGS:
        config.option.pyargs = bool(run.get("pyargs"))
        config.args = [arg if run.get("pyargs") else os.path.join(config.rootpath, arg) for arg in run["paths"]]
    for dest in ("keyword", "markexpr"):
        if run.get(dest) and not getattr(config.option, dest, ""):
            setattr(config.option, dest, run[dest])


def _resumed_options(config: pytest.Config) -> dict[str, Any]:
    """The run-wide options given on the command line, as a resumed run takes them (paths made absolute)."""
    option, given = _option(config), {}
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


def _register_user_apps(config: pytest.Config) -> None:
    for line in config.getini("netarena_apps"):
        name, sep, entry_point = (part.strip() for part in line.partition("="))
        if not sep or ":" not in entry_point:
            raise UsageError(f"netarena_apps entries look like 'NAME = MODULE:ATTR'; got {line!r}")
        try:
            register_app(name, entry_point)
            get_app(name)
        except (ValueError, ImportError, AttributeError) as error:
            raise UsageError(f"cannot load app {line!r}: {error}") from None


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "netarena(app): a benchmark test run once per query x agent x trial")
    worker = getattr(config, "workerinput", None)
    try:
        _register_user_apps(config)
        resumed = _resumed_run(config) or {}
        if resumed:
            _restore_selection(config, resumed)
        option = _option(config, resumed.get("command_line"))
        settings = config.stash[SETTINGS_KEY] = build_settings(
            option,
            agents=list(config.getoption("agent") or resumed.get("agents") or config.getini("netarena_agents") or []),
            adversarial=config.getoption("adversarial"),
            hypothesis_profile=config.getoption("hypothesis_profile", None),
            worker=worker,
            rootpath=config.rootpath,
        )
        options = build_scale_options(option, worker)
        folded = _fold_workers_into_flight(config, settings, option) if worker is None else None
        if folded is not None:
            options = replace(options, in_flight=folded.in_flight)
            config.stash[FOLDED_KEY] = folded
        if worker is None and settings.agents and not config.option.collectonly:
            for app in available_apps().values():  # a backend that cannot be reached fails now, not by skips
                app.preflight(settings.run_options)
    except UsageError as error:
        raise pytest.UsageError(f"pytest-netarena: {error}") from None
    config.stash[SCALE_KEY] = Scale.for_process(config, settings, options)
    runs_episodes = worker is not None or config.getoption("dist", "no") in ("no", None)
    if runs_episodes and any(agent.kind == "litellm" and uses_litellm(agent.target, agent.settings.get("client"))
                             for agent in settings.agents):
        _import_model_client_now()
    if worker is None:  # only the controller aggregates and writes run files
        config.pluginmanager.register(RunReporter(config), "netarena-reporter")
    _register_hypothesis_profiles()
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(XdistHooks(), "netarena-xdist")


def pytest_unconfigure(config: pytest.Config) -> None:
    scale = config.stash.get(SCALE_KEY, None)
    if scale is not None and scale.in_flight is not None and _process_ends_with_run(config):
        import gc

        # This process exits next: spare pytest's final full collections (five, at unconfigure) the
        # heap of the environments it ran (0.2 s at the end of a 40-episode run).
        gc.freeze()


def _fold_workers_into_flight(config: pytest.Config, settings: Settings, option: Any) -> WorkerSplit | None:
    """`-n N` with a model agent and more workers than cores: a worker per core but the controller's, N in flight.

    A worker costs a Python start-up and environments of its own, and on few cores N of them queue for
    the CPU while the model is thinking; threads in flight only wait (docs/scale.md). Left alone: `-n auto`,
    an explicit --in-flight, --dist, --tx and --maxprocesses (what xdist already made of -n stays)."""
    if not config.pluginmanager.hasplugin("xdist") or not model_bound([agent.kind for agent in settings.agents]):
        return None
    typed = config.known_args_namespace  # -n as typed, before xdist turns auto into a number
    asked = plain_numprocesses(getattr(typed, "numprocesses", None))
    if (asked is None or getattr(typed, "dist", "no") != "no" or getattr(typed, "tx", None)
            or getattr(typed, "maxprocesses", None) or option("in-flight") not in (None, "")):
        return None
    split = split_workers(asked, os.cpu_count() or 1)
    if split.workers == asked:
        return None
    config.option.numprocesses = split.workers  # read by xdist's DSession when the session starts
    config.option.tx = ["popen"] * split.workers
    return split


def _process_ends_with_run(config: pytest.Config) -> bool:
    """An xdist worker, or a pytest started from the command line for this run (not pytester's in-process one)."""
    import sys

    return hasattr(config, "workerinput") or tuple(config.invocation_params.args) == tuple(sys.argv[1:])


def _register_hypothesis_profiles() -> None:
    from hypothesis import settings as hypothesis_settings

    for name, values in PROFILES.items():
        hypothesis_settings.register_profile(name, deadline=None, **values)


@dataclass
class Scale:
    """This process's part in a run: who answers run-wide questions, its environments, episodes in flight."""

    options: ScaleOptions
    controller: Any  #: RunService (the controller) or RemoteController (an xdist worker)
    service: RunService | None  #: set in the controller only
    slots: EnvironmentSlots
    in_flight: InFlight | None = None
    positions: dict[str, int] | None = None  #: without xdist: item node id -> index, to start episodes ahead
    collected: dict[str, int] = field(default_factory=dict)  #: items collected, and kept by --shard

    @classmethod
    def for_process(cls, config: pytest.Config, settings: Settings, options: ScaleOptions) -> Scale:
        worker = getattr(config, "workerinput", None)
        slots = EnvironmentSlots(settings.run_options)
        if worker is None:
            service = RunService(settings)
            return cls(options, service, service, slots)
        from ..scale.link import worker_link

        client = worker_link()
        if client is None:
            raise pytest.UsageError("pytest-netarena: this xdist worker has no link to its controller "
                                    "(the controller must run pytest-netarena too)")
        return cls(options, RemoteController(client, settings, bool(worker.get("netarena_run_info"))), None, slots)

    def start_in_flight(self, config: pytest.Config) -> None:
        if self.options.in_flight > 1 and self.in_flight is None:
            settings = config.stash[SETTINGS_KEY]
            self.in_flight = InFlight(self.options.in_flight, lambda item: _obtain(item.callspec.params["netarena_case"],
                                                                                  settings, self),
                                      _runs_in_flight)

    def close(self) -> None:
        if self.in_flight is not None:
            self.in_flight.close()
        self.slots.close()


def _import_model_client_now() -> None:
    """Import litellm (seconds of CPU) on a thread while this process sets up, not in its first episode."""
    import threading

    def load() -> None:
        try:
            from ..agents.litellm_agent import import_litellm

            import_litellm()
        except Exception:  # the episode that needs it reports the problem
            pass

    threading.Thread(target=load, name="netarena-import-litellm", daemon=True).start()


def _benchmark_case(item: pytest.Item) -> Any:
    return getattr(getattr(item, "callspec", None), "params", {}).get("netarena_case")


def _runs_in_flight(item: pytest.Item) -> bool:
    case = _benchmark_case(item)
    return isinstance(case, Case) and case.agent is not None and runs_concurrently(get_app(case.query.app))


class XdistHooks:
    """The controller's side of xdist: ships the run to each worker and opens the netarena link to it."""

    def pytest_configure_node(self, node: Any) -> None:
        settings, scale = node.config.stash[SETTINGS_KEY], node.config.stash[SCALE_KEY]
        node.workerinput["netarena_seed"] = settings.seed
        node.workerinput["netarena_run_id"] = settings.run_id
        node.workerinput["netarena_shard"] = str(scale.options.shard) if scale.options.shard else None
        node.workerinput["netarena_in_flight"] = scale.options.in_flight
        if settings.corpus is not None:  # the corpus file need not exist on the worker's host
            node.workerinput["netarena_corpus"] = [query.to_dict() for query in settings.corpus]
        resume = _option(node.config)("resume")
        if resume:
            node.workerinput["netarena_run_info"] = artifacts.read_run_info(Path(resume))
        if scale.service is not None:
            from ..scale.link import open_link

            worker, service = node.gateway.id, scale.service
            service.channels[worker] = open_link(node.gateway, lambda kind, op, args: service.handle(worker, kind, op, args))

    @pytest.hookimpl(tryfirst=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        scale = config.stash[SCALE_KEY]
        if config.getoption("dist") != "load" or scale.service is None:
            return None  # another --dist mode: xdist's own scheduler
        from ..scale.scheduler import NetarenaScheduling

        return NetarenaScheduling(config, log, scale.service, scale.options.in_flight)

    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        scale = node.config.stash[SCALE_KEY]
        service = scale.service
        if service is None or not service.item_apps or not any(service.item_apps):
            return
        from ..scale.host import describe

        worker = node.gateway.id
        facts = service.hosts.get(worker)
        reporter = node.config.pluginmanager.get_plugin("terminalreporter")
        if facts is None or reporter is None or node.config.get_verbosity() < 0:
            return
        refused = service.refusals.get(worker, {})
        runs = sorted({app for app in service.item_apps if app and app not in refused})
        reporter.write_line(describe(worker, facts, refused, runs, scale.options.in_flight))


def pytest_report_header(config: pytest.Config) -> list[str]:
    settings = config.stash[SETTINGS_KEY]
    agents = ", ".join(a.raw for a in settings.agents) or "none"
    options = settings.run_options
    scale = config.stash[SCALE_KEY].options
    lines = [
        f"netarena: seed={settings.seed} agents={agents} strategy={options.strategy} "
        f"queries/category={options.queries} levels={','.join(map(str, options.levels))} trials={settings.trials}"
        + (f" split={options.split}" if options.split else ""),
        f"netarena: reports in {settings.run_dir}",
        _sandbox_line(options.sandboxed),
    ]
    if options.netarena_compat:
        lines.append("netarena: --compat netarena: NetArena's rules, not ours (docs/netarena.md lists every difference)")
    if scale.shard is not None:
        lines.append(f"netarena: shard {scale.shard} of the collection (`netarena report merge` joins the shards' folders)")
    folded = config.stash.get(FOLDED_KEY, None)
    if folded is not None:
        lines.append(folded.header())
    elif scale.in_flight > 1:
        lines.append(f"netarena: {scale.in_flight} episodes in flight per process, each in its own environment")
    for app in available_apps().values():
        lines.extend(f"netarena: {app.name}: {note}" for note in app.header_notes())
    return lines


# ---- collection: one test per query x agent x trial --------------------------------------------


@dataclass(frozen=True)
class Case:
    """The parameter of one benchmark test."""

    query: Query
    agent: AgentSpec | None
    trial: int


@dataclass(frozen=True)
class SearchCase:
    """The parameter of one adversarial search test: an app and an agent."""

    app: str
    agent: AgentSpec | None


def queries_for(settings: Settings, app_name: str) -> list[Query]:
    if app_name not in settings.query_cache:
        if settings.corpus is not None:
            queries = [q for q in settings.corpus if q.app == app_name and q.level in settings.run_options.levels]
            if settings.run_options.split is not None:
                from ..core.splits import split_of

                queries = [q for q in queries if split_of(q.app, q.params) == settings.run_options.split]
        else:
            queries = get_app(app_name).generate(settings.run_options)
        settings.query_cache[app_name] = queries
    return settings.query_cache[app_name]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "netarena_case" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker("netarena")
    if marker is None or not marker.args:
        raise pytest.UsageError(f"{metafunc.definition.nodeid}: use @pytest.mark.netarena('<app>') with netarena_case")
    settings = metafunc.config.stash[SETTINGS_KEY]
    if marker.args[0] not in available_apps():
        reason = load_errors().get(marker.args[0], "it is not registered")
        raise pytest.UsageError(f"{metafunc.definition.nodeid}: app {marker.args[0]!r} cannot be loaded: {reason}")
    agents: list[AgentSpec | None] = list(settings.agents) or [None]
    if settings.search is not None:
        searches = [SearchCase(marker.args[0], agent) for agent in agents]
        ids = [f"search-{marker.args[0]}" + (f"-{a.slug}" if a and len(agents) > 1 else "") for a in agents]
        metafunc.parametrize("netarena_case", searches, ids=ids)
        return
    queries = queries_for(settings, marker.args[0])
    cases, ids = [], []
    for query, agent, trial in itertools.product(queries, agents, range(settings.trials)):
        cases.append(Case(query, agent, trial))
        suffix = f"-{agent.slug}" if agent is not None and len(agents) > 1 else ""
        suffix += f"-t{trial}" if settings.trials > 1 else ""
        ids.append(query.id + suffix)
    metafunc.parametrize("netarena_case", cases, ids=ids)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    settings, scale = config.stash[SETTINGS_KEY], config.stash[SCALE_KEY]
    total = len(items)
    shard = scale.options.shard
    if shard is not None:
        kept = [item for item in items if shard.holds(item.nodeid)]
        deselected = [item for item in items if not shard.holds(item.nodeid)]
        if deselected:
            config.hook.pytest_deselected(items=deselected)
        items[:] = kept
    scale.collected = {"total": total, "selected": len(items)}
    if scale.service is not None:
        scale.service.report_collection(scale.collected)
    worker = getattr(config, "workerinput", {}).get("workerid", "gw0")
    if not settings.save_corpus or worker != "gw0":
        return  # every worker collects the same items: one sends them to the controller, which writes
    queries = {}
    for item in items:
        case = _benchmark_case(item)
        if isinstance(case, Case):
            queries.setdefault(case.query.id, case.query)
    scale.controller.save_corpus(list(queries.values()))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """Start episodes ahead (--in-flight); on an xdist worker, tell the controller what this host can run.

    tryfirst: the controller must know before xdist reports this worker's collection to it.
    """
    config = session.config
    settings, scale = config.stash[SETTINGS_KEY], config.stash[SCALE_KEY]
    scale.start_in_flight(config)
    if scale.service is not None:
        scale.positions = {item.nodeid: index for index, item in enumerate(session.items)}
        return
    apps: list[str | None] = []
    for item in session.items:
        case = _benchmark_case(item)
        apps.append(case.query.app if isinstance(case, Case) else case.app if isinstance(case, SearchCase) else None)
    refused = {}
    if any(apps):
        from ..scale.host import host_facts

        scale.controller.report_host(host_facts(settings.run_options.sandboxed))
    if any(apps) and settings.agents and not config.option.collectonly:
        # build one environment of each app now: the scheduler must know what runs here
        for name in sorted({app for app in apps if app}):
            why = scale.slots.probe(get_app(name))
            if why:
                refused[name] = why
    scale.controller.report_collection({**scale.collected, "apps": apps, "refused": refused})
    if scale.in_flight is not None:
        items = session.items
        scale.controller.client.handle_pushes(
            "upcoming", lambda indices: scale.in_flight.submit([items[i] for i in indices if i < len(items)]))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Without xdist, keep the next 2K episodes queued for the K threads (xdist workers get pushes)."""
    scale = item.config.stash[SCALE_KEY]
    if scale.in_flight is not None and scale.positions is not None:
        start = scale.positions.get(item.nodeid)
        if start is not None:
            items = item.session.items
            scale.in_flight.submit(items[start:start + 2 * scale.options.in_flight])


# ---- fixtures -----------------------------------------------------------------------------------


def _checkout(slots: EnvironmentSlots, app: App) -> Environment:
    try:
        return slots.checkout(app)
    except BackendUnavailable as error:
        pytest.skip(f"{app.name} cannot run here: {error}")


@pytest.fixture(scope="session")
def netarena_settings(pytestconfig: pytest.Config) -> Settings:
    """The run's resolved settings (seed, agents, options)."""
    return pytestconfig.stash[SETTINGS_KEY]


@pytest.fixture(scope="session")
def netarena_environments(pytestconfig: pytest.Config) -> Any:
    """This process's environments (one per episode in flight and app), closed at the end of the session."""
    scale = pytestconfig.stash[SCALE_KEY]
    yield scale.slots
    scale.close()


@pytest.fixture
def netarena_result(
    request: pytest.FixtureRequest, netarena_case: Any, netarena_settings: Settings, netarena_environments: EnvironmentSlots
) -> EpisodeResult | SearchOutcome:
    """Runs this test's episode (or, with --adversarial, its search) and returns the result."""
    case, settings = netarena_case, netarena_settings
    scale = request.config.stash[SCALE_KEY]
    if case.agent is None:
        pytest.skip(NO_AGENT_MESSAGE)
    if isinstance(case, SearchCase):
        return _run_search(request, case, settings, scale)
    if scale.in_flight is not None and scale.in_flight.eligible(request.node):
        fresh, result = scale.in_flight.take(request.node).result()
    else:
        fresh, result = _obtain(case, settings, scale)
    if fresh:  # the controller appends it to episodes.jsonl when this test's report reaches it
        request.node.stash[EPISODE_LINE_KEY] = artifacts.episode_line(result)
    request.node.stash[RESULT_KEY] = result
    request.node.user_properties.extend(episode_properties(result))
    if result.outcome is Outcome.INFRA_ERROR:
        raise InfraError(result.details)  # a test error, not a failure: never the agent's fault
    return result


def _obtain(case: Case, settings: Settings, scale: Scale) -> tuple[bool, EpisodeResult]:
    """(True, a new episode) or (False, the episode an interrupted run already finished); may skip.

    Runs on the test's thread, or ahead of it on an --in-flight thread.
    """
    assert case.agent is not None
    controller = scale.controller
    stored = controller.finished(case.query.id, case.agent.raw, case.trial)
    if stored is not None:  # --resume: this episode finished before the interruption
        return False, stored
    spent = controller.budget_exhausted()
    if spent:
        pytest.skip(f"{BUDGET_SKIP}: {spent}")
    app = get_app(case.query.app)
    env = _checkout(scale.slots, app)
    try:
        with _agent_problems_as_skips_or_usage_errors():
            result = play(app, env, case.agent, case.query, settings.run_options, settings.agent_timeout_s, case.trial,
                          settings.episode_budget)
    finally:
        scale.slots.checkin(app, env)
    controller.spend(result.usage)
    return True, result


@contextlib.contextmanager
def _agent_problems_as_skips_or_usage_errors() -> Any:
    try:
        yield
    except BackendUnavailable as error:
        pytest.skip(str(error))
    except UsageError as error:
        raise pytest.UsageError(str(error)) from None


def _run_search(request: pytest.FixtureRequest, case: SearchCase, settings: Settings, scale: Scale) -> SearchOutcome:
    app = get_app(case.app)
    controller = scale.controller
    env = _checkout(scale.slots, app)
    assert case.agent is not None and settings.search is not None
    spec = case.agent

    def run(query: Query) -> EpisodeResult:
        with _agent_problems_as_skips_or_usage_errors():
            result = play(app, env, spec, query, settings.run_options, settings.agent_timeout_s,
                          budget=settings.episode_budget)
        controller.spend(result.usage)
        return result

    config = replace(settings.search, database=controller.example_database())
    try:
        outcome = search(app, spec.raw, run, settings.run_options, config, controller.budget_exhausted)
    finally:
        scale.slots.checkin(app, env)
    if outcome.failure is not None:
        found = settings.run_dir / "found.jsonl"  # on the controller's side
        path = request.node.path
        suite = path.relative_to(request.config.rootpath) if path.is_relative_to(request.config.rootpath) else path
        command = f"pytest {suite} --agent={spec.raw} --corpus={found} -k '{{id}}'"
        query = controller.append_found(outcome.failure, {"run_id": settings.run_id, "examples": outcome.examples,
                                                          "reproduce": command})
        outcome.reproduce = command.replace("{id}", query.id)
        request.node.stash[RESULT_KEY] = outcome.failure
    return outcome


# ---- reporting ----------------------------------------------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    result = item.stash.get(RESULT_KEY, None)
    if result is not None and report.failed and report.when in ("setup", "call"):
        report.sections.append(("netarena transcript", render_transcript(result)))
    if report.when == "teardown":
        # xdist ships a report's attributes to the controller: the transcript travels with its test
        line = item.stash.get(EPISODE_LINE_KEY, None)
        if line is not None:
            report.netarena_episode = line
    return report


class RunReporter:
    """Collects episode records from test reports (which xdist ships from workers) and writes the run files."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.records: list[dict[str, Any]] = []
        self.no_agent_skips = 0
        self.budget_skips = 0
        self.gate_verdicts: list[dict[str, Any]] = []
        self.report_note = ""

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.skipped and NO_AGENT_MESSAGE in str(report.longrepr):
            self.no_agent_skips += 1
        if report.skipped and BUDGET_SKIP in str(report.longrepr):
            self.budget_skips += 1
        if report.when == "teardown":
            line = getattr(report, "netarena_episode", None)
            if line:
                settings = self.config.stash[SETTINGS_KEY]
                artifacts.ensure_run_info(settings.run_dir, _run_info(self.config))
                artifacts.append_line(settings.run_dir / "episodes.jsonl", line)
            record = record_from_properties(list(report.user_properties))
            if record is not None:
                self.records.append(record)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        settings = self.config.stash[SETTINGS_KEY]
        if self.records:
            artifacts.write_run_info(settings.run_dir, {**_run_info(self.config), "args": list(self.config.invocation_params.args)})
            summary = summarize(self.records)
            summary["sandboxed"] = settings.run_options.sandboxed
            summary["profile"] = settings.run_options.profile
            if settings.run_budget.capped:
                spent = self.config.stash[SCALE_KEY].service.ledger.spent()
                summary["budget"] = {"max_tokens": settings.run_budget.max_tokens, "max_cost_usd": settings.run_budget.max_cost_usd,
                                     "tokens": spent.tokens, "cost_usd": spent.cost_usd,
                                     "stopped": self.budget_skips > 0, "episodes_not_run": self.budget_skips}
            self.gate_verdicts = check_gates(settings.gates, self.records)
            if self.gate_verdicts:
                summary["gates"] = self.gate_verdicts
            artifacts.write_summary(settings.run_dir, summary)
            plots = self.config.getini("netarena_plots") and not self.config.getoption("no_plots")
            self.report_note = _build_html_report(settings.run_dir, plots)
            if self.gate_verdicts and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
                # with bars set, the bars decide: a failed episode is expected, a run below the bar is not
                passed = all(v["passed"] for v in self.gate_verdicts)
                session.exitstatus = pytest.ExitCode.OK if passed else EXIT_BELOW_BAR
        elif self.no_agent_skips:
            session.exitstatus = pytest.ExitCode.USAGE_ERROR
        else:
            self._empty_shard(session)

    def _empty_shard(self, session: pytest.Session) -> None:
        """A shard whose slice of a non-empty collection is empty still leaves a run folder for the merge."""
        scale, settings = self.config.stash[SCALE_KEY], self.config.stash[SETTINGS_KEY]
        service = scale.service
        if scale.options.shard is None or service is None or not service.collection.get("total"):
            return
        if service.collection.get("selected"):
            return
        artifacts.write_run_info(settings.run_dir, {**_run_info(self.config), "args": list(self.config.invocation_params.args)})
        if session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
            session.exitstatus = pytest.ExitCode.OK

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.no_agent_skips:
            terminalreporter.write_line(f"pytest-netarena: {self.no_agent_skips} episodes skipped: {NO_AGENT_MESSAGE}", red=True)
        settings = self.config.stash[SETTINGS_KEY]
        found = read_found(settings.run_dir / "found.jsonl")
        if found:
            terminalreporter.section("netarena adversarial search")
            for entry in found:
                terminalreporter.write_line(f"{entry['query']['id']}: {entry['agent']} -> {entry['outcome']}; params {entry['query']['params']}")
                terminalreporter.write_line(f"  reproduce: {entry['reproduce']}")
            terminalreporter.write_line(f"corpus of found cases: {settings.run_dir / 'found.jsonl'}")
        if not self.records:
            return
        terminalreporter.section("netarena summary")
        if not settings.run_options.sandboxed:
            terminalreporter.write_line("UNSANDBOXED run: agent actions ran without sealed boxes", red=True)
        for line in render_table(summarize(self.records)):
            terminalreporter.write_line(line)
        if self.budget_skips:
            terminalreporter.write_line(f"budget: {self.budget_skips} episodes not run because the run's budget was spent", yellow=True)
        for verdict in self.gate_verdicts:
            value = "n/a" if verdict["value"] is None else f"{verdict['value']:.3f}"
            word = "met" if verdict["passed"] else "FAILED"
            terminalreporter.write_line(
                f"bar {word}: {verdict['metric']} of {verdict['agent']} on {verdict['app']} is {value}, bar {verdict['threshold']:g}",
                green=verdict["passed"], red=not verdict["passed"])
        if self.report_note:
            terminalreporter.write_line(self.report_note)
        terminalreporter.write_line(f"seed {settings.seed}; reports in {settings.run_dir}")


def _build_html_report(run_dir: Path, plots: bool) -> str:
    """Write report.html and plots; a reporting problem is a note, never a failed run."""
    from ..reporting.rebuild import ReportError, build_report

    try:
        return f"report: {build_report(run_dir, plots=plots)}"
    except ReportError as error:
        return f"report.html not written: {error}"
    except Exception as error:  # a plotting bug must not cost the user the run's results
        return f"report.html not written (internal error, please report it): {type(error).__name__}: {error}"


def _sandbox_line(sandboxed: bool) -> str:
    if not sandboxed:
        return ("netarena: UNSANDBOXED: agent actions run without sealed boxes, as this user, on this machine "
                "(--unsandboxed); every report of this run says so")
    from ..sandbox import support

    found = support()
    if found.ok:
        return f"netarena: sealed boxes: bubblewrap {found.bwrap} ({'root' if found.root else 'user namespace'} mode)"
    return f"netarena: sealed boxes unavailable ({found.reason}): apps that need them skip; see --unsandboxed"


def _run_info(config: pytest.Config) -> dict[str, Any]:
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
            "trials": settings.trials,
            **({"split": options.split} if options.split else {}),
            **({} if options.sandboxed else {"unsandboxed": True}),
            **{key: value for key, value in options.extra.items() if value is not None},
        },
    }
