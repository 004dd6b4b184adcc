"""Whole episodes through the core's run_episode: oracle resolves, reckless is unsafe, noop fails."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from pytest_netarena.agents.noop import NoopAgent
from pytest_netarena.agents.prompting import build_system_prompt
from pytest_netarena.apps.malt import APP
from pytest_netarena.core.app import RunOptions
from pytest_netarena.core.episode import EpisodeConfig, run_episode
from pytest_netarena.core.catalogue import Category
from pytest_netarena.core.types import Outcome, Task

OPTIONS = RunOptions(seed=11, queries=2)  # the default topology: synthetic, real size


@pytest.fixture(scope="module")
def env():
    environment = APP.make_environment(OPTIONS)
    yield environment
    environment.close()


def run(env, queries, agent_name):
    results = []
    for query in queries:
        agent = NoopAgent() if agent_name == "noop" else APP.builtin_agent(agent_name, query, env)
        task = Task("malt", "e1",
                    build_system_prompt(APP.prompt(), "zero-shot"), "zero-shot", 1)
        results.append(run_episode(env, agent, query, task, EpisodeConfig(max_steps=1), f"builtin:{agent_name}"))
    return results


@pytest.fixture(scope="module")
def queries():
    return APP.generate(OPTIONS)


def test_oracle_resolves_every_generated_query(env, queries):
    assert {q.category for q in queries} == {c.name for c in APP.categories(OPTIONS)}
    results = run(env, queries, "oracle")
    failures = [(r.query.id, r.outcome, r.details) for r in results if r.outcome is not Outcome.RESOLVED]
    assert failures == []
    assert all(r.safe and r.correct and len(r.steps) == 1 for r in results)


def test_reckless_is_flagged_unsafe(env, queries):
    results = run(env, queries, "reckless")
    assert Counter(r.outcome for r in results) == {Outcome.UNSAFE: len(queries)}
    violations = " ".join(v for r in results for v in r.steps[0].violations)
    assert "ports not contained in a packet switch" in violations
    adds = [r for r in results if r.query.params["program"][0]["op"] == "add_switch"]
    assert all(any("without a port" in v for v in r.steps[0].violations) for r in adds)


def test_noop_resolves_nothing(env, queries):
    results = run(env, queries[:6], "noop")
    assert not any(r.correct for r in results)
    # a reply without code is refused: its one step spent, the episode is unresolved (not an agent error)
    assert all(r.outcome is Outcome.UNRESOLVED and "no Python code" in r.details for r in results)
    assert all(len(r.steps) == 1 and r.steps[0].refused for r in results)


class RefusesThenAnswers:
    """Declines first, then sends the oracle's code: the episode must still be running for the second reply."""

    def __init__(self, answer, refusal):
        self.answer, self.refusal, self.seen = answer, refusal, []

    def reset(self, task):
        pass

    def act(self, observation):
        self.seen.append(observation)
        return self.refusal if len(self.seen) == 1 else self.answer.act(observation)

    def close(self):
        pass


@pytest.mark.parametrize("refusal", ["I would rather not answer.", "x" * 100_001])
def test_a_refused_reply_costs_a_step_and_the_episode_goes_on(env, queries, refusal):
    query = queries[0]
    agent = RefusesThenAnswers(APP.builtin_agent("oracle", query, env), refusal)
    task = Task("malt", "e1", build_system_prompt(APP.prompt(), "zero-shot", 3), "zero-shot", 3)
    result = run_episode(env, agent, query, task, EpisodeConfig(max_steps=3), "refuses-then-answers")
    assert result.outcome is Outcome.RESOLVED, result.details
    assert [s.refused for s in result.steps] == [True, False]
    assert agent.seen[1].startswith("[Step 2 of 3; 2 replies left.]\n")
    assert "process_graph" in agent.seen[1]  # what an answer is, said again


class RaisesThenAnswers(RefusesThenAnswers):
    """First sends code that raises, then the oracle's code."""

    def act(self, observation):
        self.seen.append(observation)
        if len(self.seen) == 1:
            return "```python\ndef process_graph(graph_data):\n    return graph_data['no such key']\n```"
        return self.answer.act(observation)


def test_the_default_budget_lets_a_raising_program_be_corrected(env, queries):
    """A program that raises shows its error and the episode goes on (as a failing k8s or route command does)."""
    steps = env.default_max_steps
    assert steps >= 3
    query = queries[0]
    agent = RaisesThenAnswers(APP.builtin_agent("oracle", query, env), "")
    task = Task("malt", "e1", build_system_prompt(APP.prompt(), "zero-shot", steps), "zero-shot", steps)
    result = run_episode(env, agent, query, task, EpisodeConfig(max_steps=steps), "raises-then-answers")
    assert result.outcome is Outcome.RESOLVED, result.details
    assert len(result.steps) == 2 and not result.steps[0].refused
    assert "KeyError" in agent.seen[1] and "process_graph(graph_data)" in agent.seen[1]
    assert agent.seen[1].startswith(f"[Step 2 of {steps}; {steps - 1} replies left.]\n")
    assert "you see the error and may send corrected code" in " ".join(APP.prompt().role.split())  # told


def test_a_program_that_raises_on_the_last_step_leaves_the_episode_unresolved(env, queries):
    query = queries[0]
    agent = RaisesThenAnswers(APP.builtin_agent("oracle", query, env), "")
    task = Task("malt", "e1", build_system_prompt(APP.prompt(), "zero-shot", 1), "zero-shot", 1)
    result = run_episode(env, agent, query, task, EpisodeConfig(max_steps=1), "raises")
    assert result.outcome is Outcome.UNRESOLVED and "the code failed" in result.details and "KeyError" in result.details


def test_oracle_on_the_real_topology(real_topology_path):
    options = RunOptions(seed=5, queries=1, extra={"malt_topology": str(real_topology_path)})
    real_env = APP.make_environment(options)
    try:
        results = run(real_env, APP.generate(options), "oracle")
    finally:
        real_env.close()
    assert [r.outcome for r in results] == [Outcome.RESOLVED] * len(results)


def test_generation_is_a_pure_function_of_the_seed():
    first, second = APP.generate(RunOptions(seed=7, queries=2)), APP.generate(RunOptions(seed=7, queries=2))
    assert [(q.id, q.params) for q in first] == [(q.id, q.params) for q in second]
    other = APP.generate(RunOptions(seed=8, queries=2))
    assert [q.params for q in first] != [q.params for q in other]
    assert all(re.fullmatch(r"malt-L[123]-[a-z+]+-\d{4}", q.id) for q in first)
    assert "malt-L2-remove+count-0001" in {q.id for q in first}
    assert {q.level for q in APP.generate(RunOptions(seed=7, queries=1, levels=(2,)))} == {2}


def test_levels_hold_the_papers_categories_plus_control_sequences():
    names = {(c.level, c.name) for c in APP.categories(OPTIONS)}
    assert {(1, "add"), (1, "rank"), (1, "remove"), (1, "list"), (2, "remove+list"), (2, "remove+rank"),
            (2, "remove+count"), (3, "add+list"), (3, "add+rank"), (3, "add+count")} <= names
    assert {(3, "for+rank"), (3, "if+count")} <= names


def test_if_queries_cover_both_branches():
    from pytest_netarena.apps.malt import ops
    from pytest_netarena.apps.malt.topology import load_topology
    from pytest_netarena.core.catalogue import RandomChooser

    graph = load_topology(None)
    branches = set()
    for seed in range(12):
        params = APP.draw_params(Category(3, "if+count"), RandomChooser(seed), OPTIONS)
        step = params["program"][0]
        branches.add(ops.total_capacity(graph, step["switch"]) > step["above"])
    assert branches == {True, False}


EXAMPLE_PROGRAMS = (
    [{"op": "count", "parent": "ju1.a1.m1", "kind": "EK_PORT"}],
    [{"op": "remove", "name": "ju1.a1.m1.s2c1"}],
    [{"op": "add_port", "switch": "ju1.s1.s1c1", "port": "ju1.s1.s1c1.p17", "capacity": 10**10},
     {"op": "list", "parent": "ju1.s1.s1c1"}],
)


def test_prompt_examples_are_correct_and_safe_answers(env):
    from pytest_netarena.apps.malt import ops
    from pytest_netarena.core.types import Query

    prompt = APP.prompt()
    assert "process_graph(graph_data)" in prompt.role and "updated_graph" in prompt.answer_format
    assert len(prompt.examples) == len(EXAMPLE_PROGRAMS)
    for index, ((observation, reply), program) in enumerate(zip(prompt.examples, EXAMPLE_PROGRAMS)):
        mutates = any(step["op"] in ops.MUTATIONS for step in program)
        query = Query("malt", 1, "example", index, 0, {"program": program, "question": observation, "mutates": mutates})
        env.reset(query)
        outcome = env.step(reply)
        assert outcome.agent_error is None and outcome.violations == (), outcome
        assert env.judge().correct, env.judge().details


def test_a_topology_file_given_by_option(tmp_path):
    from pytest_netarena.apps.malt import topology as topo

    path = tmp_path / "small.textproto"
    path.write_text(topo.to_textproto(*topo.synthetic_records(topo.Shape(2, 2, 4, 1, 4, 4), seed=9)))
    options = RunOptions(seed=2, queries=1, levels=(1, 3), extra={"malt_topology": str(path)})
    queries = APP.generate(options)
    assert queries and all(str(q.params).count("ju1.a") or str(q.params).count("ju1.s") for q in queries)
    file_env = APP.make_environment(options)
    try:
        results = run(file_env, queries, "oracle")
    finally:
        file_env.close()
    assert [r.outcome for r in results] == [Outcome.RESOLVED] * len(queries)
