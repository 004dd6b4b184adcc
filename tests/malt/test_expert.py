"""The expert agent: resolves every category from the question text alone, never from query params: it reads the
question's request with the grammar and resolves its references on the graph in its own code."""

from __future__ import annotations

import dataclasses

import pytest

from pytest_netarena.agents.prompting import build_system_prompt
from pytest_netarena.apps.malt import APP
from pytest_netarena.apps.malt.agents.expert import ExpertAgent, read_request
from pytest_netarena.apps.malt.app import topology_index
from pytest_netarena.apps.malt.questions.meaning import program_of
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


def test_expert_reads_each_question_into_the_hidden_request(queries):
    # the reading must recover exactly what the generator hid (read here by the test, not the agent)
    assert queries
    facts = topology_index(OPTIONS).facts
    for query in queries:
        request, note = read_request(query.params["question"])
        assert note == "" and request == query.params["request"], query.id
        assert program_of(request, facts) == query.params["program"], query.id


def test_expert_resolves_references_on_the_graph_in_its_own_code(env):
    """A question that points at nodes through the graph only: the expert's code finds them itself."""
    question = ("Quick one before tonight's change window. Remove the switch with the most total capacity in "
                "the rack that houses the switches of aggregation block ju1.a1.m1, then count the ports in "
                "the block it was in.")
    request, _ = read_request(question)
    assert request["first"]["target"]["form"] == "extreme" and request["read"]["parent"]["of"] == {"form": "it"}
    facts = topology_index(OPTIONS).facts
    program = program_of(request, facts)
    from pytest_netarena.core.types import Query

    query = Query("malt", 2, "remove+count", 0, 0, {"program": program, "question": question, "mutates": True})
    result = episode(env, query, ExpertAgent())
    assert result.outcome is Outcome.RESOLVED, result.details
    assert "ju1.a1.m1" in result.steps[0].action and program[0]["name"] not in result.steps[0].action


def test_unreadable_question_gets_an_honest_best_attempt(env, queries):
    agent = ExpertAgent()
    reply = agent.act("Question: Compute the bisection bandwidth of the fabric.\n\nAnswer ...")
    assert "could not read" in reply.text and "def process_graph" in reply.text
    # judged as any answer: it does not crash the episode and is not counted as resolved
    query = next(q for q in queries if q.category == "list")
    env.reset(query)
    outcome = env.step(reply.text)
    assert not env.judge().correct and not outcome.violations
