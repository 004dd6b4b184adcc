"""Embedded Kubernetes API server that the real kubectl and the kubernetes Python client talk to."""

from __future__ import annotations

from .kubectl import KubectlNotFound, kubectl_env, kubectl_minor, kubectl_path

__all__ = ["EmbeddedAPIServer", "KubectlNotFound", "kubectl_env", "kubectl_minor", "kubectl_path"]


def __getattr__(name: str):
    if name == "EmbeddedAPIServer":  # keep `import pytest_netarena.kube` cheap
        from .server import EmbeddedAPIServer

        return EmbeddedAPIServer
    raise AttributeError(name)
