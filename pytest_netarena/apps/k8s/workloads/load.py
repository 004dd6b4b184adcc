"""The application an episode runs, by --k8s-app: Online Boutique or a synthetic app of N services."""

from __future__ import annotations

from ....core.errors import UsageError
from .model import AppSpec, online_boutique
from .synthetic import synthetic_app


def load_app(spec: str) -> AppSpec:
    """The app named by --k8s-app: "online-boutique" or "synthetic:N[:SEED]"."""
    if spec in ("", "online-boutique"):
        return online_boutique()
    if spec.startswith("synthetic:"):
        parts = spec.split(":")
        try:
            size = int(parts[1])
            seed = int(parts[2]) if len(parts) > 2 else 0
        except (IndexError, ValueError):
            raise UsageError(f"--k8s-app {spec!r}: expected synthetic:N or synthetic:N:SEED") from None
        if not 2 <= size <= 2000 or len(parts) > 3:
            raise UsageError(f"--k8s-app {spec!r}: N must be between 2 and 2000")
        return synthetic_app(size, seed)
    raise UsageError(f"unknown --k8s-app {spec!r}: use online-boutique or synthetic:N")
