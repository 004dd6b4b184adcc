"""Shared fixtures of the MALT tests: small and default synthetic topologies, one sandbox each."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# the shared folder sits beside the checkout (as in CI); NETARENA_MALT_TOPOLOGY overrides it
REAL_TOPOLOGY = Path(
    os.environ.get("NETARENA_MALT_TOPOLOGY")
    or Path(__file__).resolve().parents[3] / "shared" / "data" / "malt" / "malt-graph.textproto.txt"
)
SMALL = "synthetic:600"


@pytest.fixture(scope="session")
def real_topology_path() -> Path:
    if not REAL_TOPOLOGY.exists():
        pytest.skip(f"the real MALT topology is not at {REAL_TOPOLOGY}")
    return REAL_TOPOLOGY


@pytest.fixture(scope="session")
def small_graph():
    from pytest_netarena.apps.malt.topology import load_topology

    return load_topology(SMALL)


@pytest.fixture(scope="session")
def small_env():
    from pytest_netarena.apps.malt import APP
    from pytest_netarena.core.app import RunOptions

    env = APP.make_environment(RunOptions(extra={"malt_topology": SMALL}))
    yield env
    env.close()
