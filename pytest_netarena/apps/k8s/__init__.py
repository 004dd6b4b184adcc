"""The Kubernetes NetworkPolicy repair app; `APP` is its entry point (heavy parts load lazily)."""

from __future__ import annotations

from .app import K8sApp

APP = K8sApp()

__all__ = ["APP", "K8sApp"]
