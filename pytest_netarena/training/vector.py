"""Vectorised environments: each sub-environment in its own process, with its own Mininet names and kube server."""

from __future__ import annotations

import os
from typing import Any


def make_vector(env_id: str, count: int, **kwargs: Any) -> Any:
    """An AsyncVectorEnv of `count` copies of env_id (kwargs go to every copy).

    Text spaces cannot live in shared memory, so observations travel through the workers' pipes.
    Route names are leased per process (apps/route/network/leases.py) and every k8s environment starts its
    own API server, so the copies never share backend state.
    """
    import gymnasium
    from gymnasium.vector import AsyncVectorEnv

    from . import register_envs

    register_envs()
    caller = os.getpid()

    def factory() -> Any:
        import pytest_netarena.training  # noqa: F401  (a spawned worker registers the ids itself)

        # route leases name prefixes by worker: an inherited xdist worker id would give every copy
        # the same slot; without it each copy takes a slot of its own pid. AsyncVectorEnv also calls this
        # once in the caller (for the spaces), whose environment stays as it was.
        if os.getpid() != caller:
            os.environ.pop("PYTEST_XDIST_WORKER", None)
        return gymnasium.make(env_id, **kwargs)

    return AsyncVectorEnv([factory] * count, shared_memory=False)
