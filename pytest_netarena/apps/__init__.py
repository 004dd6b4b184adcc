"""The registry of built-in applications, loaded lazily by name."""

from __future__ import annotations

import importlib
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..core.app import App

#: app name -> "module:attribute" of its App instance
APP_ENTRY_POINTS = {
    "k8s": "pytest_netarena.apps.k8s:APP",
    "malt": "pytest_netarena.apps.malt:APP",
    "route": "pytest_netarena.apps.route:APP",
}


def register_app(name: str, entry_point: str) -> None:
    """Add a user's app ("module:attribute" of an App instance), e.g. from the netarena_apps ini key."""
    if APP_ENTRY_POINTS.get(name, entry_point) != entry_point:
        raise ValueError(f"app {name!r} is already registered as {APP_ENTRY_POINTS[name]}")
    APP_ENTRY_POINTS[name] = entry_point
    get_app.cache_clear()


def select_apps(register: list[str], names: list[str], default: list[str] | None = None) -> list[str]:
    """The apps a command names, after registering its `--register-app NAME=MODULE:ATTR` items; ValueError (one
    line) for a malformed item or an app that is not registered or does not load. No names: default, else all."""
    for item in register:
        name, sep, entry_point = item.partition("=")
        if not sep or ":" not in entry_point:
            raise ValueError(f"--register-app takes NAME=MODULE:ATTR; got {item!r}")
        register_app(name.strip(), entry_point.strip())
    apps = list(dict.fromkeys(names)) or list(default or sorted(available_apps()))
    unknown = [app for app in apps if app not in APP_ENTRY_POINTS or app not in available_apps()]
    if unknown:
        raise ValueError(f"unknown app {', '.join(unknown)}; apps: {', '.join(sorted(available_apps()))}")
    return apps


@cache
def get_app(name: str) -> App:
    """The App registered under name; KeyError if there is none."""
    module_name, _, attr = APP_ENTRY_POINTS[name].partition(":")
    return getattr(importlib.import_module(module_name), attr)


def available_apps() -> dict[str, App]:
    """Every registered app that loads; the others are in load_errors()."""
    return {name: app for name, app in _load_all().items() if not isinstance(app, Exception)}


def load_errors() -> dict[str, Exception]:
    """Why each registered app that does not load failed (a broken app must not break the others)."""
    return {name: app for name, app in _load_all().items() if isinstance(app, Exception)}


def _load_all() -> dict[str, App | Exception]:
    loaded: dict[str, App | Exception] = {}
    for name in APP_ENTRY_POINTS:
        try:
            loaded[name] = get_app(name)
        except Exception as error:  # e.g. a SyntaxError in one app must not take the others down
            loaded[name] = error
    return loaded
