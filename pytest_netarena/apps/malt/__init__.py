"""MALT datacenter capacity planning: topology, query catalogue, sandboxed code answers, grading."""

from __future__ import annotations

from ...core.ruled import RuledApp
from .app import MaltApp

#: ours, and NetArena's app (netarena/app.py) for runs under its rules
APP = RuledApp(MaltApp(), "pytest_netarena.apps.malt.netarena.app:NETARENA_APP")

__all__ = ["APP", "MaltApp"]
