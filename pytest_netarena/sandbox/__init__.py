"""Sealed boxes shared by every app: each agent action runs in a fresh bubblewrap box (see box.py)."""

from __future__ import annotations

from .box import HOME, BoxSpec, Launch, Limits, command, prepare, private_uid, run, run_unboxed, spawn
from .netns import NetNamespace
from .support import FIX, SandboxUnavailable, Support, support
from .userns import UserNetNamespace, new_network_namespace

__all__ = ["FIX", "HOME", "BoxSpec", "Launch", "Limits", "NetNamespace", "SandboxUnavailable", "Support",
           "UserNetNamespace", "command", "new_network_namespace", "prepare", "private_uid", "run", "run_unboxed", "spawn",
           "support"]
