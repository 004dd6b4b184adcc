"""The route app: broken Linux routers in real Mininet networks (Mininet is imported only when a network is built)."""

from __future__ import annotations

from ...core.ruled import RuledApp
from .app import RouteApp

#: ours, and NetArena's app (netarena/app.py) for runs under its rules
APP = RuledApp(RouteApp(), "pytest_netarena.apps.route.netarena.app:NETARENA_APP")

__all__ = ["APP", "RouteApp"]
