"""A benchmark run's start and end in each process: start() builds Settings and Scale and registers the run's hooks."""

from __future__ import annotations

import importlib
import signal
import sys
import threading
from dataclasses import replace

import pytest

from ..agents.model_agent import uses_litellm
from ..apps import APP_ENTRY_POINTS, available_apps, get_app, register_app
from ..core.errors import UsageError
from ..run.search import PROFILES
from ..run.settings import Settings, build_settings
from ..scale.options import build_scale_options
from .reporting import RunReporter
from .runfile import option_lookup, restore_agent_folder, restore_selection, resumed_run
from .scheduling import XdistHooks, fold_workers_into_flight
from .state import FOLDED_KEY, SCALE_KEY, SETTINGS_KEY, USER_APPS_KEY, WARNINGS_KEY, Scale, worker_input


def _register_user_apps(config: pytest.Config, recorded: dict[str, str]) -> None:
    """The ini's netarena_apps, and those a resumed run registered (its run.json keeps them)."""
    wanted: dict[str, str] = {}
    for line in config.getini("netarena_apps"):
        name, sep, entry_point = (part.strip() for part in line.partition("="))
        if not sep or ":" not in entry_point:
            raise UsageError(f"netarena_apps entries look like 'NAME = MODULE:ATTR'; got {line!r}")
        wanted[name] = entry_point
    for name, entry_point in recorded.items():
        if name not in wanted and APP_ENTRY_POINTS.get(name) in (None, entry_point):
            wanted[name] = str(entry_point)
    for name, entry_point in wanted.items():
        try:
            register_app(name, entry_point)
            get_app(name)
        except (ValueError, ImportError, AttributeError) as error:
            raise UsageError(f"cannot load app {name} = {entry_point}: {error}") from None
    config.stash[USER_APPS_KEY] = wanted


def _take_back_sigint() -> None:
    """A run started as a background job (where a shell without job control ignores SIGINT) gets SIGINT back.

    Every process inherits an ignored signal, so the commands boxes run would behave otherwise than in a run
    started in the foreground: route's time limit interrupts as by Ctrl-C (a `ping` prints its summary), and a
    pod's `wget -T` is bounded by a signal too."""
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def start(config: pytest.Config) -> None:
    """Build this process's part of the run; a bad option is one usage error before collection."""
    _take_back_sigint()
    worker = worker_input(config)
    try:
        resumed = resumed_run(config) or {}
        _register_user_apps(config, dict(resumed.get("apps") or {}))
        if resumed:
            restore_selection(config, resumed)
            restore_agent_folder(resumed)
        option = option_lookup(config, resumed.get("command_line"))
        settings = config.stash[SETTINGS_KEY] = build_settings(
            option,
            agents=list(config.getoption("agent") or resumed.get("agents") or config.getini("netarena_agents") or []),
            adversarial=config.getoption("adversarial"),
            hypothesis_profile=config.getoption("hypothesis_profile", None),
            worker=worker,
            resumed=resumed or None,
            rootpath=config.rootpath,
        )
        options = build_scale_options(option, worker, settings.resumed_run)
        folded = fold_workers_into_flight(config, settings, option) if worker is None else None
        if folded is not None:
            options = replace(options, in_flight=folded.in_flight)
            config.stash[FOLDED_KEY] = folded
        config.stash[WARNINGS_KEY] = []
        if worker is None and settings.agents and not config.option.collectonly:
            config.stash[WARNINGS_KEY] = _preflight(settings)
    except UsageError as error:
        raise pytest.UsageError(f"pytest-netarena: {error}") from None
    config.stash[SCALE_KEY] = Scale.for_process(config, settings, options)
    runs_episodes = worker is not None or config.getoption("dist", "no") in ("no", None)
    if runs_episodes and any(agent.kind == "model" and uses_litellm(agent.target, agent.settings.get("client"))
                             for agent in settings.agents):
        _import_model_client_now()
    _register_run_hooks(config, controller=worker is None)


def _preflight(settings: Settings) -> list[str]:
    """Backends and agents that cannot be reached fail now, not by skips; returns what the header warns about."""
    for app in available_apps().values():
        app.preflight(settings.run_options)
    from ..agents.preflight import check_agents

    return check_agents(settings.agents, settings.run_budget, settings.episode_budget)


def _register_run_hooks(config: pytest.Config, controller: bool) -> None:
    for name in ("collection", "scheduling", "reporting"):  # the run's hooks, which a session without one never sees
        # through sys.modules, never the package's attribute: pytester's in-process runs drop the modules they imported
        config.pluginmanager.register(importlib.import_module(f"{__package__}.{name}"), f"netarena-{name}")
    config.pluginmanager.register(_RunEnd(), "netarena-end")
    if controller:  # only the controller aggregates and writes run files
        config.pluginmanager.register(RunReporter(config), "netarena-reporter")
    if config.getoption("hypothesis_profile", None) or "hypothesis" in sys.modules:
        _register_hypothesis_profiles()  # importing Hypothesis costs every worker 0.4 s of CPU: only when asked
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(XdistHooks(), "netarena-xdist")


class _RunEnd:
    def __init__(self) -> None:
        self._freezes = False  #: only a process that ends with the run: an in-process run's heap is its caller's
        self._settled: set[str] = set()  #: apps whose first episode in this process has ended

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self._freezes = _process_ends_with_run(session.config)
        if self._freezes:
            freeze_long_lived()

    def pytest_runtest_teardown(self, item: pytest.Item) -> None:
        # an app's first episode built what its environment keeps (a MALT graph's canonical form, the box)
        case = getattr(getattr(item, "callspec", None), "params", {}).get("netarena_case")
        app = getattr(getattr(case, "query", case), "app", None)
        if self._freezes and app is not None and app not in self._settled:
            self._settled.add(app)
            freeze_long_lived()

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        _drop_idle_hypothesis_summary(session.config)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        scale = config.stash.get(SCALE_KEY, None)
        if scale is not None and scale.in_flight is not None and self._freezes:
            import gc

            # This process exits next: spare pytest's final full collections (five, at unconfigure) the
            # heap of the environments it ran (0.2 s at the end of a 40-episode run).
            gc.freeze()


def _drop_idle_hypothesis_summary(config: pytest.Config) -> None:
    """Hypothesis's pytest plugin imports Hypothesis for its terminal summary even where no test used it: 0.4 s
    of CPU in each of the run's processes (2 s where PYTHONDONTWRITEBYTECODE makes pytest rewrite it anew
    every time), at the end of every xdist worker at once. A process that never imported Hypothesis and set
    no Hypothesis option, and whose reports (an xdist controller's come from its workers) carry nothing of
    Hypothesis, has no statistics or failing examples to show: its summary hook goes before it runs."""
    plugin = config.pluginmanager.get_plugin("hypothesispytest")
    options = getattr(plugin, "_ALL_OPTIONS", None)
    keys = {getattr(plugin, "STATS_KEY", None), getattr(plugin, "FAILING_EXAMPLES_KEY", None)}
    if plugin is None or options is None or None in keys or "hypothesis" in sys.modules:
        return
    if any(config.getoption(option, None) for option in options):
        return
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    reports = [report for kept in getattr(terminal, "stats", {}).values() for report in kept]
    if not any(key in getattr(report, "__dict__", {}) for report in reports for key in keys):
        config.pluginmanager.unregister(plugin)


def freeze_long_lived() -> None:
    """Leave what lives until the run ends (modules, items, queries, a MALT topology, environments) out of every
    later full garbage collection: each one scans all live objects, and on the MALT suite they took 40 % of the
    CPU. Called after collection and after each app's first episode. Garbage is collected first, so nothing is
    frozen that could be freed."""
    import gc

    gc.collect()
    gc.freeze()


def _process_ends_with_run(config: pytest.Config) -> bool:
    """An xdist worker, or a pytest started from the command line for this run (not pytester's in-process one)."""
    return hasattr(config, "workerinput") or tuple(config.invocation_params.args) == tuple(sys.argv[1:])


def _register_hypothesis_profiles() -> None:
    from hypothesis import settings as hypothesis_settings

    for name, values in PROFILES.items():
        hypothesis_settings.register_profile(name, deadline=None, **values)


def _import_model_client_now() -> None:
    """Import litellm (seconds of CPU) on a thread while this process sets up, not in its first episode."""
    import threading

    def load() -> None:
        try:
            from ..agents.model_agent import import_litellm

            import_litellm()
        except Exception:  # the episode that needs it reports the problem
            pass

    threading.Thread(target=load, name="netarena-import-litellm", daemon=True).start()
