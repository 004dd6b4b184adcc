"""run.json's record of a session (options, selection, where it ran) and reading it back for --resume, from any folder."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from ..apps import available_apps
from ..reporting import artifacts
from ..core.seeding import PUBLIC
from ..run.settings import RESUMED_OPTIONS, absolute_path, expand_home, path_options
from .options import OLD_NAMES
from .state import SCALE_KEY, SETTINGS_KEY, USER_APPS_KEY, worker_input

#: run.json command-line keys of runs made before options were renamed
_RENAMED = {"record": "llm-record", "replay": "llm-replay"}


def option_lookup(config: pytest.Config, recorded: dict[str, Any] | None = None) -> Any:
    """A lookup of an option by name: the command line first, then what a --resume'd run's command line gave
    (`recorded`), then the ini key netarena_<name>; `~` expanded in paths."""
    paths = path_options(available_apps())
    recorded = {_RENAMED.get(key, key): value for key, value in (recorded or {}).items()}

    def value(name: str) -> Any:
        given = config.getoption(name.replace("-", "_"))
        if given is None and recorded:
            given = recorded.get(name)
        if given is None:
            given = config.getini("netarena_" + name.replace("-", "_"))
        if given is None and name in OLD_NAMES:  # an ini file written before the option was renamed
            given = config.getini("netarena_" + OLD_NAMES[name].replace("-", "_"))
        return expand_home(name, given) if name in paths else given

    return value


def resumed_run(config: pytest.Config) -> dict[str, Any] | None:
    """The run.json of the run --resume completes (as the controller read it, on an xdist worker), or None."""
    worker = worker_input(config)
    if worker is not None and worker.run_info:
        return dict(worker.run_info)
    folder = option_lookup(config)("resume")
    return artifacts.read_run_info(Path(folder)) if folder else None


def restore_selection(config: pytest.Config, run: dict[str, Any]) -> None:
    """`--resume DIR` alone collects what the run collected: its paths (unless paths are given), -k and -m."""
    if run.get("paths") and config.args_source is not pytest.Config.ArgsSource.ARGS:
        config.option.pyargs = bool(run.get("pyargs"))
        config.args = list(run["paths"]) if run.get("pyargs") else [_found_path(config, run, i)
                                                                    for i in range(len(run["paths"]))]
    for dest in ("keyword", "markexpr"):
        if run.get(dest) and not getattr(config.option, dest, ""):
            setattr(config.option, dest, run[dest])


def _found_path(config: pytest.Config, run: dict[str, Any], index: int) -> str:
    """A recorded test path where it is now: as recorded (absolute), else under this rootdir, else under the run's.

    A run folder may be resumed from another folder, another --rootdir, or after the project moved."""
    relative = str(run["paths"][index])
    absolute = (run.get("paths_absolute") or [])[index:index + 1]
    candidates = [*absolute, os.path.join(config.rootpath, relative)]
    if run.get("rootdir"):
        candidates.append(os.path.join(run["rootdir"], relative))
    for candidate in candidates:
        if os.path.exists(candidate.partition("::")[0]):
            return candidate
    return candidates[0]  # pytest's own error names it


def restore_agent_folder(run: dict[str, Any]) -> None:
    """`python:MODULE` agents of a resumed run are found in the folder the run started in, as they were then."""
    folder = run.get("invocation_dir")
    if folder and os.path.isdir(folder) and folder not in sys.path:
        sys.path.append(folder)


def _resumed_options(config: pytest.Config) -> dict[str, Any]:
    """The run-wide options given on the command line, as a resumed run takes them (paths made absolute)."""
    option, given = option_lookup(config), {}
    for name in RESUMED_OPTIONS:
        if config.getoption(name.replace("-", "_")) is None:
            continue
        value = option(name)
        given[name] = absolute_path(name, value) if name in ("corpus", "llm-record", "llm-replay") else value
    return given


def _run_paths(config: pytest.Config) -> tuple[list[str], list[str]]:
    """The run's collection arguments: relative to the rootdir where they are inside it, and absolute."""
    if config.option.pyargs:
        return list(config.args), list(config.args)
    relative, absolute = [], []
    for arg in config.args:
        path, sep, rest = str(arg).partition("::")
        path = os.path.abspath(os.path.join(config.invocation_params.dir, path))
        absolute.append(path + sep + rest)
        if Path(path).is_relative_to(config.rootpath):
            path = os.path.relpath(path, config.rootpath)
        relative.append(path + sep + rest)
    return relative, absolute


def environments(config: pytest.Config, apps: Iterable[str]) -> dict[str, Any]:
    """run.json's "environments": per app whose episodes ran, what it records of their world (App.run_facts)."""
    options, found = config.stash[SETTINGS_KEY].run_options, {}
    registry = available_apps()
    for name in sorted(set(apps)):
        app = registry.get(name)
        facts = app.run_facts(options) if app is not None else {}
        if facts:
            found[name] = facts
    return found


def run_info(config: pytest.Config, apps: Iterable[str] = ()) -> dict[str, Any]:
    """run.json's content, which the controller writes and `--resume DIR` reads back (resumed_run); `apps`: the apps
    whose episodes ran, whose worlds it records."""
    settings, scale = config.stash[SETTINGS_KEY], config.stash[SCALE_KEY]
    options = settings.run_options
    service = scale.service
    relative, absolute = _run_paths(config)
    return {
        **({"shard": str(scale.options.shard)} if scale.options.shard is not None else {}),
        **({"collection": dict(service.collection)} if service is not None and service.collection else {}),
        "run_id": settings.run_id,
        "seed": settings.seed,
        # what `--resume DIR` alone needs to collect and run the same tests, from any folder
        "paths": relative,
        "paths_absolute": absolute,
        "rootdir": str(config.rootpath),
        "invocation_dir": str(config.invocation_params.dir),
        **({"apps": config.stash[USER_APPS_KEY]} if config.stash.get(USER_APPS_KEY, None) else {}),
        **({"pyargs": True} if config.option.pyargs else {}),
        **{dest: getattr(config.option, dest) for dest in ("keyword", "markexpr") if getattr(config.option, dest, "")},
        "command_line": _resumed_options(config),
        "sandboxed": options.sandboxed,
        "rules": options.rules,
        "secret_in_use": options.secret != PUBLIC,
        # read by the harness only (--resume, reproduce): whoever holds the run folder can rerun its episodes;
        # report.html, summaries and exports never show it, and no agent's box sees the run folder
        "private": {"secret": options.secret},
        "agents": [agent.raw for agent in settings.agents],
        "options": {
            "queries": options.queries,
            "levels": list(options.levels),
            **({} if options.levels_given else {"levels_given": False}),
            "max_steps": options.max_steps,
            "prompt_style": options.prompt_style,
            "tool_calls": options.tool_calls,
            "trials": settings.trials,
            **({"split": options.split} if options.split else {}),
            **({} if options.sandboxed else {"unsandboxed": True}),
            **({"impossible": True} if settings.impossible else {}),  # it decides the queries: --resume keeps it
            **{key: value for key, value in options.extra.items() if value is not None},
        },
        **({"environments": found} if (found := environments(config, apps)) else {}),
    }
