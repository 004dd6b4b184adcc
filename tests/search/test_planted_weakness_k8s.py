"""Adversarial search on the real K8s app: a planted weakness is found and shrunk to exactly that fault."""

from __future__ import annotations

import pytest

from pytest_netarena.agents.spec import AgentSpec
from pytest_netarena.apps import get_app
from pytest_netarena.core.app import RunOptions
from pytest_netarena.core.types import Outcome, Reply
from pytest_netarena.run.runner import play
from pytest_netarena.run.search import SearchConfig, search


class NeverRestoresProtocol:
    """The oracle with a planted weakness: it leaves policies whose only fault is change_protocol."""

    def __init__(self, query, env) -> None:
        from pytest_netarena.apps.k8s.agents.builtin import OracleAgent

        self.inner = OracleAgent(query, env)
        only_protocol = {
            f["policy"] for f in query.params["faults"]
            if all(g["type"] == "change_protocol" for g in query.params["faults"] if g["policy"] == f["policy"])
        }
        self.inner.commands = [c for c in self.inner.commands if not any(f" {p} " in c[0] for p in only_protocol)]

    def reset(self, task) -> None:
        self.inner.reset(task)

    def act(self, observation: str) -> Reply:
        return self.inner.act(observation)

    def close(self) -> None:
        pass


@pytest.fixture(scope="module")
def k8s():
    app = get_app("k8s")
    env = app.make_environment(RunOptions())
    yield app, env
    env.close()


def searcher(app, env, agent_factory, options):
    spec = AgentSpec("python:planted", "python", "planted")

    def run(query):
        original = app.builtin_agent
        app.builtin_agent = lambda name, q, e: agent_factory(q, e)  # only this test's agent plays
        try:
            return play(app, env, AgentSpec("builtin:planted", "builtin", "planted"), query, options, 30.0)
        finally:
            app.builtin_agent = original

    return spec, run


def test_search_finds_and_shrinks_the_planted_protocol_weakness(k8s) -> None:
    app, env = k8s
    options = RunOptions(seed=0, max_steps=4)
    spec, run = searcher(app, env, NeverRestoresProtocol, options)
    outcome = search(app, spec.raw, run, options, SearchConfig(max_examples=40, time_limit_s=120, seed=3))
    assert outcome.failure is not None, outcome
    shrunk = outcome.failure.query
    assert shrunk.level == 1 and shrunk.category == "change_protocol"
    (fault,) = shrunk.params["faults"]
    assert fault["type"] == "change_protocol"
    # identical reproduction: the same agent on the shrunk case fails the same way
    again = run(shrunk)
    assert again.outcome is outcome.failure.outcome is Outcome.UNRESOLVED
    assert again.details == outcome.failure.details


def test_the_oracle_yields_no_failures(k8s) -> None:
    from pytest_netarena.apps.k8s.agents.builtin import OracleAgent

    app, env = k8s
    options = RunOptions(seed=0, max_steps=4)
    spec, run = searcher(app, env, OracleAgent, options)
    outcome = search(app, spec.raw, run, options, SearchConfig(max_examples=25, time_limit_s=120, seed=4))
    assert outcome.failure is None and outcome.examples >= 25 and not outcome.notes
