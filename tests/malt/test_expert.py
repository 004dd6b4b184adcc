"""The expert agent: resolves every category from the question text alone, never from query params."""

from __future__ import annotations

import dataclasses

import pytest

from pytest_netarena.agents.prompting import build_system_prompt
from pytest_netarena.apps.malt import APP
from pytest_netarena.apps.malt.agents.expert import ExpertAgent, parse_question
from pytest_netarena.core.app import RunOptions
from pytest_netarena.core.episode import EpisodeConfig, run_episode
from pytest_netarena.core.types import Outcome, Task

SMALL = "synthetic:600"
OPTIONS = RunOptions(seed=3, queries=1, extra={"malt_topology": SMALL})


@pytest.fixture(scope="module")
def env():
    environment = APP.make_environment(OPTIONS)
    yield environment
    environment.close()


@pytest.fixture(scope="module")
def queries():
    return APP.generate(OPTIONS)


def episode(env, query, agent):
    task = Task("malt", "e1",
                build_system_prompt(APP.prompt(), "zero-shot"), "zero-shot", 1)
    return run_episode(env, agent, query, task, EpisodeConfig(max_steps=1), "builtin:expert")


def test_expert_is_registered():
    assert "expert" in APP.builtin_agent_names


def test_expert_resolves_every_category_without_params(env, queries):
    assert {q.category for q in queries} == {c.name for c in APP.categories(OPTIONS)}
    failures = []
    for query in queries:
        # the agent is built from a query stripped of its params: only the observation can guide it
        blind = dataclasses.replace(query, params={})
        agent = APP.builtin_agent("expert", blind, env)
        assert isinstance(agent, ExpertAgent)
        result = episode(env, query, agent)
        if result.outcome is not Outcome.RESOLVED:
            failures.append((query.id, result.outcome, result.details))
    assert failures == []


def test_expert_parses_each_question_into_the_hidden_program(queries):
    # the parse must recover exactly what the generator hid (read here by the test, not the agent)
    assert queries
    for query in queries:
        steps, unparsed = parse_question(query.params["question"])
        assert unparsed == []
        assert steps == query.params["program"], query.id


def test_if_sentence_is_one_conditional_step():
    steps, _ = parse_question(
        "If the total physical_capacity_bps of the ports of the packet switch a.s1 is greater than "
        "5 bps, remove its port a.s1.p2; otherwise add a new port named a.s1.p3 with "
        "physical_capacity_bps 7 bps (0 Gbps) to it. Then, on the updated graph: Count the EK_PORT "
        "nodes contained in the aggregation block a at any depth. Return type 'text': the number.")
    assert [s["op"] for s in steps] == ["if", "count"]
    assert steps[0]["else"] == [{"op": "add_port", "switch": "a.s1", "port": "a.s1.p3", "capacity": 7}]


def test_unparsable_question_gets_an_honest_best_attempt(env, queries):
    agent = ExpertAgent()
    reply = agent.act("Question: Compute the bisection bandwidth of the fabric.\n\nAnswer ...")
    assert "could not parse" in reply.text and "def process_graph" in reply.text
    # judged as any answer: it does not crash the episode and is not counted as resolved
    query = next(q for q in queries if q.category == "list")
    env.reset(query)
    outcome = env.step(reply.text)
    assert not env.judge().correct and not outcome.violations
