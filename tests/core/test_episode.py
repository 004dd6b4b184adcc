"""The episode loop with real agents and a real (toy) environment: outcomes, steps, timing, errors."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from pytest_netarena.core.rules import NETARENA_RULES, OURS
from pytest_netarena.core.app import RunOptions
from pytest_netarena.core.episode import Episode, EpisodeConfig, run_episode
from pytest_netarena.core.types import Outcome, Reply, Task, Usage



@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parents[1] / "plugin"))
    import toy_app

    return toy_app.APP


@pytest.fixture
def query(app):
    return app.generate(RunOptions(seed=1, queries=1, levels=(1,)))[0]


def task_for(query) -> Task:
    return Task(query.app, "e1", "system", "zero-shot", 3)


class Scripted:
    """Replies from a list; raises or sleeps when told to."""

    def __init__(self, *replies):
        self.replies = list(replies)

    def reset(self, task):
        self.task = task

    def act(self, observation):
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, float):
            time.sleep(reply)
            return "set 1"
        return reply

    def close(self):
        pass


def run(app, query, agent, **config):
    env = app.make_environment(RunOptions())
    return run_episode(env, agent, query, task_for(query), EpisodeConfig(max_steps=3, **config), "scripted")


def test_resolved_episode_records_each_step_with_usage(app, query) -> None:
    target = query.params["target"]
    agent = Scripted("hmm", Reply(f"set {target}", Usage(10, 5, 0.25)))
    result = run(app, query, agent)
    assert result.outcome is Outcome.RESOLVED and result.correct and result.safe
    assert [s.refused for s in result.steps] == [True, False]
    assert result.usage == Usage(10, 5, 0.25) and result.usage.tokens == 15
    assert result.first_observation.startswith("[Step 1 of 3; 3 replies left.]\ncounter is 0")
    assert result.steps[0].observation.startswith("[Step 2 of 3; 2 replies left.]\n")
    assert result.steps[1].observation == f"[Episode over: 2 of 3 steps used.]\ncounter is {target}"  # fixed


def test_unsafe_step_makes_the_outcome_unsafe_even_if_fixed_later(app, query) -> None:
    result = run(app, query, Scripted("set -5", f"set {query.params['target']}"))
    assert result.outcome is Outcome.UNSAFE and result.correct and not result.safe
    assert result.first_unsafe_step.index == 1 and "negative" in result.first_unsafe_step.violations[0]


def test_step_budget_ends_an_unresolved_episode(app, query) -> None:
    result = run(app, query, Scripted("no", "no", "no", "no"))
    assert result.outcome is Outcome.UNRESOLVED and len(result.steps) == 3


def test_agent_exception_is_an_agent_error_with_its_message(app, query) -> None:
    result = run(app, query, Scripted("set 1", RuntimeError("model exploded")))
    assert result.outcome is Outcome.AGENT_ERROR
    assert "RuntimeError: model exploded" in result.details and len(result.steps) == 1


def test_a_hung_agent_times_out_as_an_agent_error(app, query) -> None:
    started = time.perf_counter()
    result = run(app, query, Scripted(5.0), agent_timeout_s=0.2)
    assert result.outcome is Outcome.AGENT_ERROR and "did not answer within 0.2 s" in result.details
    assert time.perf_counter() - started < 2
    assert result.agent_s >= 0.2  # the time spent waiting counts: failing never improves latency


def test_infra_failure_is_never_the_agents_fault(app, query, monkeypatch) -> None:
    monkeypatch.setenv("TOY_BROKEN", "1")
    result = run(app, query, Scripted("set 1"))
    assert result.outcome is Outcome.INFRA_ERROR and "toy backend is down" in result.details


def test_step_by_step_interface_serves_as_an_rl_environment(app, query) -> None:
    episode = Episode(app.make_environment(RunOptions()), query)
    assert episode.reset().startswith("counter is 0")
    step = episode.step(Reply(f"set {query.params['target']}"))
    assert episode.done and step.action == f"set {query.params['target']}" and not step.violations


def test_result_serialises_to_json() -> None:
    import json

    from pytest_netarena.core.types import EpisodeResult, Query

    result = EpisodeResult(Query("toy", 1, "set", 0, 9, {"target": 3}), "a", 0, Outcome.RESOLVED, True, True, ())
    data = json.loads(json.dumps(result.to_dict()))
    assert data["query"]["id"] == "toy-L1-set-0000" and data["outcome"] == "resolved"
    assert Query.from_dict(data["query"]) == result.query


def test_the_prompt_and_every_observation_state_the_step_budget(app, query) -> None:
    from pytest_netarena.agents.prompting import build_system_prompt

    prompt = build_system_prompt(app.prompt(), "zero-shot", 10)
    assert "at most 10 steps" in prompt and "refused" in prompt
    assert "exactly one reply" in build_system_prompt(app.prompt(), "cot", 1)
    result = run(app, query, Scripted("no", "no", "no"))
    heads = [result.first_observation.splitlines()[0]] + [s.observation.splitlines()[0] for s in result.steps]
    assert heads == ["[Step 1 of 3; 3 replies left.]", "[Step 2 of 3; 2 replies left.]",
                     "[Step 3 of 3; 1 reply left.]", "[Episode over: 3 of 3 steps used.]"]


def test_each_header_names_the_next_replys_step_once(app, query) -> None:
    """The step number in front of an observation is the one the agent's next reply takes: it counts up by
    one from 1 and is never shown twice (it once read "Step 1" before the first reply and after it)."""
    result = run(app, query, Scripted("no", "no", "no"))
    shown = [result.first_observation] + [s.observation for s in result.steps[:-1]]  # the ones replied to
    numbers = [int(re.match(r"\[Step (\d+) of 3;", text).group(1)) for text in shown]
    assert numbers == [step.index for step in result.steps] == [1, 2, 3]


class PermissiveCounter:
    """The toy counter whose judge also reports the fix as overly permissive (as the k8s judge can)."""

    def __init__(self, env):
        self.env = env

    def __getattr__(self, name):
        return getattr(self.env, name)

    def judge(self):
        from dataclasses import replace

        judgement = self.env.judge()
        return replace(judgement, metrics={**judgement.metrics, "overly_permissive": True})


@pytest.mark.parametrize(("ruleset", "outcome"), [(OURS, Outcome.UNRESOLVED), (NETARENA_RULES, Outcome.RESOLVED)])
def test_an_overly_permissive_fix_is_not_resolved_under_our_rules(app, query, ruleset, outcome) -> None:
    env = PermissiveCounter(app.make_environment(RunOptions()))
    agent = Scripted(f"set {query.params['target']}")
    result = run_episode(env, agent, query, task_for(query), EpisodeConfig(max_steps=3, ruleset=ruleset),
                         "scripted")
    assert result.correct and result.safe and result.metrics["overly_permissive"]
    assert result.outcome is outcome
    if outcome is Outcome.UNRESOLVED:
        assert "overly_permissive" in result.details


def test_the_task_names_no_query() -> None:
    """What an agent is told has no field for the query id, level or category: those name the fault."""
    from dataclasses import fields

    from pytest_netarena.core.types import new_episode_id

    assert {f.name for f in fields(Task)} == {"app", "episode_id", "system_prompt", "prompt_style", "max_steps", "tools"}
    ids = {new_episode_id() for _ in range(100)}
    assert len(ids) == 100 and all(re.fullmatch(r"[0-9a-f]{16}", i) for i in ids)
