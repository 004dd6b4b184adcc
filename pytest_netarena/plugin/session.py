"""The run's start and end in each process: pytest_configure builds Settings and Scale, registers the role plugins."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ..agents.model_agent import uses_litellm
from ..apps import available_apps, get_app, register_app
from ..core.errors import UsageError
from ..run.search import PROFILES
from ..run.settings import build_settings
from ..scale.options import build_scale_options
from .options import option_lookup, restore_selection, resumed_run
from .reporting import RunReporter
from .scheduling import XdistHooks, fold_workers_into_flight
from .state import FOLDED_KEY, SCALE_KEY, SETTINGS_KEY, Scale


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
        resumed = resumed_run(config) or {}
        if resumed:
            restore_selection(config, resumed)
        option = option_lookup(config, resumed.get("command_line"))
        settings = config.stash[SETTINGS_KEY] = build_settings(
            option,
            agents=list(config.getoption("agent") or resumed.get("agents") or config.getini("netarena_agents") or []),
            adversarial=config.getoption("adversarial"),
            hypothesis_profile=config.getoption("hypothesis_profile", None),
            worker=worker,
            rootpath=config.rootpath,
        )
        options = build_scale_options(option, worker)
        folded = fold_workers_into_flight(config, settings, option) if worker is None else None
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


def _process_ends_with_run(config: pytest.Config) -> bool:
    """An xdist worker, or a pytest started from the command line for this run (not pytester's in-process one)."""
    import sys

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
