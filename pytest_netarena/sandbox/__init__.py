"""Sealed boxes shared by every app: each agent action runs in a fresh bubblewrap box (see box.py)."""

from __future__ import annotations

from .box import HOME, BoxSpec, Limits, command, private_uid, run, run_unboxed, spawn
from .netns import NetNamespace
from .support import FIX, SandboxUnavailable, Support, support

__all__ = ["FIX", "HOME", "BoxSpec", "Limits", "NetNamespace", "SandboxUnavailable", "Support", "command", "private_uid",
           "run", "run_unboxed", "spawn", "support"]
