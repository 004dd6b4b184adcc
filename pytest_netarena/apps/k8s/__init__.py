"""The Kubernetes NetworkPolicy repair app; `APP` is its entry point (heavy parts load lazily)."""

from __future__ import annotations

from ...core.ruled import RuledApp
from .app import K8sApp

#: ours, and NetArena's app (netarena/app.py) for runs under its rules
APP = RuledApp(K8sApp(), "pytest_netarena.apps.k8s.netarena.app:NETARENA_APP")

__all__ = ["APP", "K8sApp"]
