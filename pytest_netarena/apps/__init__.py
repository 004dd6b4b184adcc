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


@cache
def get_app(name: str) -> App:
    """The App registered under name; KeyError if there is none."""
    module_name, _, attr = APP_ENTRY_POINTS[name].partition(":")
    return getattr(importlib.import_module(module_name), attr)


def available_apps() -> dict[str, App]:
    """Every registered app whose package is present (an app still being built is left out)."""
    apps = {}
    for name in APP_ENTRY_POINTS:
        try:
            apps[name] = get_app(name)
        except ModuleNotFoundError as error:
            if not (error.name or "").startswith(f"pytest_netarena.apps.{name}"):
                raise
    return apps
