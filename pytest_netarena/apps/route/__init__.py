"""The route app: broken Linux routers in real Mininet networks (Mininet is imported only when a network is built)."""

from __future__ import annotations

from .app import RouteApp

APP = RouteApp()

__all__ = ["APP", "RouteApp"]
