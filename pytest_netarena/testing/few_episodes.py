"""A pytest plugin for the docs tests: keeps the first NETARENA_FEW_EPISODES benchmark tests of each app.

Loaded through PYTEST_PLUGINS, so a documented command runs as written, only smaller; every process of a run
(xdist workers too) collects the same items in the same order and so keeps the same ones.
"""

from __future__ import annotations

import os
from typing import Any


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    keep = int(os.environ.get("NETARENA_FEW_EPISODES", "1"))
    seen: dict[str, int] = {}
    kept: list[Any] = []
    dropped: list[Any] = []
    for item in items:
        case = getattr(getattr(item, "callspec", None), "params", {}).get("netarena_case")
        app = getattr(getattr(case, "query", None), "app", None) or getattr(case, "app", None)
        if app is None:
            kept.append(item)
            continue
        seen[app] = seen.get(app, 0) + 1
        (kept if seen[app] <= keep else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
