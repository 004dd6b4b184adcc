"""Shared fixtures of the MALT tests: small and default synthetic topologies, one sandbox each."""

from __future__ import annotations

from pathlib import Path

import pytest

REAL_TOPOLOGY = Path("/work/shared/data/malt/malt-graph.textproto.txt")
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
