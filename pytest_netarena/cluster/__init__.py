"""Pods that run for the embedded API server: processes in boxes, a data plane of real packets, exec, logs, events."""

from __future__ import annotations

from .support import LiveSupport, LiveUnavailable, live_support

__all__ = ["LiveCluster", "LiveSupport", "LiveUnavailable", "live_support", "start_live"]


def __getattr__(name: str):
    if name == "LiveCluster":  # keep `import pytest_netarena.cluster` cheap
        from .runtime import LiveCluster

        return LiveCluster
    raise AttributeError(name)


def start_live(server, **options):
    """A LiveCluster running the server's pods, or None where pods cannot run here (the server stays "api-only")."""
    if not live_support().ok:
        return None
    from .runtime import LiveCluster

    return LiveCluster(server, **options).start()
