"""Gymnasium ids of the three environments and their registration (idempotent)."""

from __future__ import annotations

#: Gymnasium id -> (app name, whether a seeded reset repeats its observation exactly)
ENV_IDS = {
    "netarena/K8s-v0": ("k8s", True),
    "netarena/Route-v0": ("route", False),  # per-episode Mininet name prefixes differ from reset to reset
    "netarena/Malt-v0": ("malt", True),
}
ENTRY_POINT = "pytest_netarena.training.env:NetArenaEnv"


def register_envs() -> None:
    """Register every environment with Gymnasium (ImportError when Gymnasium is missing)."""
    from gymnasium.envs.registration import register, registry

    for env_id, (app, deterministic) in ENV_IDS.items():
        if env_id not in registry:
            register(id=env_id, entry_point=ENTRY_POINT, kwargs={"app": app}, nondeterministic=not deterministic,
                     disable_env_checker=False)
