"""MALT datacenter capacity planning: topology, query catalogue, sandboxed code answers, grading."""

from __future__ import annotations

from .app import MaltApp

APP = MaltApp()

__all__ = ["APP", "MaltApp"]
