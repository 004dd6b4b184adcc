"""Shared helpers for the route tests: a real Mininet environment (root only) and queries with chosen faults."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from pytest_netarena.apps.route import APP
from pytest_netarena.apps.route import faults as fault_catalogue
from pytest_netarena.apps.route.network.build import Network
from pytest_netarena.apps.route.network.leases import Lease, claim
from pytest_netarena.apps.route.topology import Topology
from pytest_netarena.core.app import RunOptions
from pytest_netarena.core.episode import EpisodeConfig, run_episode
from pytest_netarena.core.catalogue import RandomChooser
from pytest_netarena.core.types import EpisodeResult, Query, Task

NO_NETEM = {"netem": "not used in tests"}


def backend_reason() -> str | None:
    if os.geteuid() != 0:
        return "route tests need root (Mininet network namespaces, veth pairs, bridges)"
    from pytest_netarena.apps.route.network.capabilities import backend_missing

    return backend_missing()


needs_mininet = pytest.mark.skipif(backend_reason() is not None, reason=str(backend_reason()))


def fault(kind: str, method: str, subnets: int, **fixed: Any) -> dict[str, Any]:
    """A fault of kind/method drawn like the generator does (first seed that picks the method and `fixed`)."""
    for seed in range(10_000):
        drawn = fault_catalogue.draw_fault(kind, RandomChooser(seed), subnets, NO_NETEM)
        if drawn["method"] == method and all(drawn.get(key) == value for key, value in fixed.items()):
            return drawn
    raise AssertionError(f"no seed draws {kind}/{method} {fixed}")


def make_query(faults: list[dict[str, Any]], subnets: int = 3, hosts: int = 2, index: int = 0) -> Query:
    category = "+".join(f["type"] for f in faults)
    level = next(level for level, groups in fault_catalogue.LEVELS.items() if tuple(category.split("+")) in groups)
    params = {"subnets": subnets, "hosts": hosts, "faults": faults}
    return Query("route", level, category, index, 0, params)


def run(env, agent_name: str, query: Query, max_steps: int = 20) -> EpisodeResult:
    if agent_name == "noop":
        from pytest_netarena.agents.noop import NoopAgent

        agent = NoopAgent()
    else:
        agent = APP.builtin_agent(agent_name, query, env)
    task = Task("route", "e1", "", "zero-shot", max_steps)
    return run_episode(env, agent, query, task, EpisodeConfig(max_steps=max_steps), agent_name)


@pytest.fixture(scope="module")
def route_env():
    reason = backend_reason()
    if reason:
        pytest.skip(reason)
    env = APP.make_environment(RunOptions())
    yield env
    env.close()


@contextmanager
def started_network(episode: int, subnets: int = 3, hosts: int = 2) -> Iterator[tuple[Lease, Topology, Network]]:
    """A network built as an episode builds it (outside any environment), stopped however the block ends."""
    lease = claim(episode)
    topo = Topology(lease.prefix, subnets, hosts)
    network = Network(topo, lease)
    try:
        network.start()
        yield lease, topo, network
    finally:
        network.stop()
