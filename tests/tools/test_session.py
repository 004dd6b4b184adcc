"""The action layer on the toy app: tool calls as steps, refused calls, finish, budgets, sessions and drivers."""

from __future__ import annotations

import json
import threading
import time

import pytest

from pytest_netarena.core.episode import EpisodeConfig, run_episode
from pytest_netarena.core.session import EpisodeSession, offered_tools
from pytest_netarena.core.tools import FINISH, ToolCall
from pytest_netarena.core.types import EpisodeResult, Observation, Outcome, Reply, Task, Usage

from .twin import Calls


def tool_task(env, max_steps=3) -> Task:
    return Task("toy", "e1", "system", "zero-shot", max_steps, tools=offered_tools(env))


def play(toy, query, agent, max_steps=3, tools=True, **config):
    env = toy.CounterEnvironment()
    task = tool_task(env, max_steps) if tools else Task("toy", "e1", "system", "zero-shot", max_steps)
    return run_episode(env, agent, query, task, EpisodeConfig(max_steps=max_steps, **config), "python:calls")


def set_to(value, call_id="c") -> ToolCall:
    return ToolCall("set_counter", json.dumps({"value": value}), call_id)


def test_an_agent_acting_only_through_tool_calls_resolves(toy, query) -> None:
    target = query.params["target"]
    agent = Calls([set_to(target)])
    result = play(toy, query, agent)
    assert result.outcome is Outcome.RESOLVED and result.interface == "tools" and result.ended_by == "environment"
    assert [s.tool_call for s in result.steps] == [set_to(target)]
    assert agent.task.tools == (toy.SET_TOOL, FINISH)  # the agent is told the tools
    assert result.first_observation.startswith("[Step 1 of 3; 3 steps left.]")  # tool steps are counted as steps


def test_the_same_actions_in_text_and_as_tool_calls_get_the_same_verdicts(toy, query) -> None:
    target = query.params["target"]
    text = play(toy, query, Calls(Reply("set -5"), Reply(f"set {target}")), tools=False)
    tools = play(toy, query, Calls([set_to(-5)], [set_to(target)]))
    assert text.interface == "text" and tools.interface == "tools"
    for one, other in ((text, tools),):
        assert (one.outcome, one.correct, one.safe) == (other.outcome, other.correct, other.safe) == \
            (Outcome.UNSAFE, True, False)
        assert [(s.action, s.violations, s.refused) for s in one.steps] == \
            [(s.action, s.violations, s.refused) for s in other.steps]


def test_several_calls_in_one_reply_are_separate_steps_each_judged(toy, query) -> None:
    target = query.params["target"]
    agent = Calls([set_to(-1, "a"), set_to(target, "b"), set_to(7, "c")], Reply("unused"))
    result = play(toy, query, agent)
    assert [s.index for s in result.steps] == [1, 2]
    assert result.steps[0].violations and not result.steps[1].violations  # each call judged on its own
    assert result.outcome is Outcome.UNSAFE and result.correct
    assert result.steps[0].tool_call.call_id == "a" and result.steps[1].tool_call.call_id == "b"
    assert len(agent.observations) == 1  # the episode ended in that reply: the agent was not asked again


def test_calls_past_the_step_budget_are_not_run_and_say_so(toy, query) -> None:
    values = [value for value in range(1, 100) if value != query.params["target"]][:5]
    agent = Calls([set_to(value, f"c{value}") for value in values])
    result = play(toy, query, agent, max_steps=3)
    assert [s.tool_call.call_id for s in result.steps] == [f"c{value}" for value in values[:3]]
    assert result.ended_by == "max_steps" and result.outcome is Outcome.UNRESOLVED
    assert len(agent.observations) == 1


def test_the_results_of_calls_not_run_say_why(toy, query) -> None:
    session = open_session(toy, query, max_steps=2)
    values = [value for value in range(1, 100) if value != query.params["target"]][:4]
    shown = session.reply(Reply("", tool_calls=tuple(set_to(value, f"c{value}") for value in values)))
    assert [r.is_error for r in shown.tool_results] == [False, False, True, True]
    assert shown.tool_results[2].content == "Not run: the episode is over: all 2 steps were used."
    assert str(shown).startswith("[Episode over: 2 of 2 steps used.]")


def test_the_observation_after_tool_calls_carries_one_result_per_call(toy, query) -> None:
    target = query.params["target"]
    bad = ToolCall("set_counter", '{"value": "two"}', "bad")
    agent = Calls([set_to(target + 1, "one"), bad], [set_to(target, "last")])
    result = play(toy, query, agent, max_steps=5)
    after = agent.observations[1]
    assert isinstance(after, str) and isinstance(after, Observation)
    assert [r.call_id for r in after.tool_results] == ["one", "bad"]
    assert after.tool_results[0].is_error is False and f"counter is {target + 1}" in after.tool_results[0].content
    assert after.tool_results[1].is_error and '"value" must be an integer, got a string' in after.tool_results[1].content
    assert str(after) == result.steps[1].observation  # the text is the last call's observation
    assert result.outcome is Outcome.RESOLVED and [s.refused for s in result.steps] == [False, True, False]


HOSTILE = {
    "unknown tool": (ToolCall("rm_rf", "{}"), 'unknown tool "rm_rf"; the tools are: set_counter, finish'),
    "not JSON": (ToolCall("set_counter", "{value: 3"), "the arguments are not valid JSON"),
    "not an object": (ToolCall("set_counter", "[3]"), "the arguments must be a JSON object, got an array"),
    "missing key": (ToolCall("set_counter", "{}"), 'arguments lack the required "value"'),
    "unknown key": (ToolCall("set_counter", '{"value": 3, "shell": "id"}'), 'unknown argument "shell"'),
    "misspelt key": (ToolCall("set_counter", '{"val": 3}'),
                     'arguments lack the required "value"; got the unknown "val" instead (accepted: "value")'),
    "wrong type": (ToolCall("set_counter", '{"value": true}'), '"value" must be an integer, got a boolean'),
    "out of range": (ToolCall("set_counter", '{"value": 99999}'), "above the maximum 1000"),
    "duplicate key": (ToolCall("set_counter", '{"value": 3, "value": 4}'), 'the key "value" appears twice'),
    "NaN": (ToolCall("set_counter", '{"value": NaN}'), "NaN is not JSON"),
    "raw NUL": (ToolCall("set_counter", '{"value": 3}\0'), "NUL byte"),
    "megabytes": (ToolCall("set_counter", '{"value": "' + "x" * 2_000_000 + '"}'), "the limit is 300,000"),
    "deep nesting": (ToolCall("set_counter", "[" * 100_000 + "]" * 100_000), "nested too deeply"),
    "huge integer": (ToolCall("set_counter", '{"value": ' + "9" * 5000 + "}"), "not valid JSON"),
    "arguments not text": (ToolCall("set_counter", {"value": 3}), "the arguments must be JSON text, got dict"),  # type: ignore[arg-type]
    "no name": (ToolCall("", "{}"), "the call names no tool"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_malformed_call_is_a_refused_step_whose_message_goes_back(toy, query, case) -> None:
    call, message = HOSTILE[case]
    agent = Calls([call], [set_to(query.params["target"])])
    result = play(toy, query, agent)
    assert result.outcome is Outcome.RESOLVED  # refused, never an agent or infrastructure error
    first = result.steps[0]
    assert first.refused and first.action == "" and message in first.output
    back = agent.observations[1].tool_results[0]
    assert back.is_error and message in back.content
    assert len(first.tool_call.arguments) < 3000 and "\0" not in first.tool_call.arguments  # the transcript is bounded
    EpisodeResult.from_dict(json.loads(json.dumps(result.to_dict())))  # and serialisable


def test_finish_ends_the_episode_is_recorded_and_is_not_a_step(toy, query) -> None:
    finish = ToolCall("finish", '{"summary": "gave up"}', "f")
    agent = Calls([set_to(4, "a"), finish, set_to(query.params["target"], "late")])
    result = play(toy, query, agent, max_steps=5)
    assert len(result.steps) == 1 and result.ended_by == "agent" and result.finish == finish
    assert result.outcome is (Outcome.RESOLVED if query.params["target"] == 4 else Outcome.UNRESOLVED)
    again = EpisodeResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert again.finish == finish and again.steps[0].tool_call == set_to(4, "a") and again == result


def test_an_episode_line_recorded_before_tool_calls_still_loads(toy, query) -> None:
    result = play(toy, query, Calls(Reply("set 1")), tools=False)
    line = result.to_dict()
    for key in ("interface", "ended_by", "finish"):
        line.pop(key)
    for step in line["steps"]:
        step.pop("tool_call")
    old = EpisodeResult.from_dict(line)
    assert old.interface == "text" and old.ended_by == "" and old.finish is None and old.steps[0].tool_call is None


def test_tool_calls_of_a_text_episode_are_not_run_and_the_text_is_read(toy, query) -> None:
    target = query.params["target"]
    agent = Calls(Reply(f"set {target}", tool_calls=(set_to(-3),)))
    result = play(toy, query, agent, tools=False)
    assert result.outcome is Outcome.RESOLVED and result.steps[0].tool_call is None
    assert result.interface == "text"


def test_the_token_budget_stops_a_tool_episode_after_the_replys_calls(toy, query) -> None:
    agent = Calls(Reply("", Usage(60, 60), (set_to(1, "a"), set_to(2, "b"))), [set_to(3)])
    result = play(toy, query, agent, max_steps=5, max_tokens=100)
    if query.params["target"] in (1, 2):
        pytest.skip("the target is reached before the budget matters")
    assert len(result.steps) == 2 and result.ended_by == "budget" and "token budget" in result.details
    assert result.steps[0].usage == Usage(60, 60) and result.steps[1].usage == Usage()  # the reply's cost counted once


# ----- the step-level session, as the MCP server and CLI agents drive it -----------------------------------------

def open_session(toy, query, max_steps=3, **config) -> EpisodeSession:
    env = toy.CounterEnvironment()
    session = EpisodeSession(env, query, tool_task(env, max_steps), EpisodeConfig(max_steps=max_steps, **config),
                             "mcp:test", interface="mcp")
    session.open()
    return session


def test_a_session_serves_calls_then_judges_once(toy, query) -> None:
    session = open_session(toy, query)
    assert session.tools == (toy.SET_TOOL, FINISH) and session.task.tools == session.tools
    first = session.call(set_to(query.params["target"], "x"))
    assert not first.is_error and first.call_id == "x" and session.over and session.ended_by == "environment"
    late = session.call(set_to(1, "y"))
    assert late.is_error and late.content.startswith("Not run: the episode is over")
    finish = session.call(ToolCall("finish", "{}", "f"))  # what the finish tool asks for: never an error
    assert not finish.is_error and finish.content.startswith("Done: the episode is over: the environment ended it")
    assert not session.finish().is_error and session.ended_by == "environment"
    result = session.result()
    assert result is session.result() and result.outcome is Outcome.RESOLVED and result.interface == "mcp"
    assert session.call(set_to(1)).is_error and len(session.result().steps) == 1


def test_concurrent_calls_in_one_session_are_serialised_within_the_budget(toy, query) -> None:
    session = open_session(toy, query, max_steps=5)
    values = [v for v in range(200, 240)]
    results = []

    def caller(value: int) -> None:
        results.append(session.call(set_to(value, str(value))))

    threads = [threading.Thread(target=caller, args=(value,)) for value in values]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    result = session.result()
    assert [s.index for s in result.steps] == [1, 2, 3, 4, 5] and result.ended_by == "max_steps"
    assert sum(not r.is_error for r in results) == 5 and sum(r.is_error for r in results) == 35


def test_finish_through_the_session_and_an_open_session_ending_by_the_agent(toy, query) -> None:
    session = open_session(toy, query)
    session.call(set_to(2))
    assert not session.finish().is_error and session.ended_by == "agent"
    again = session.finish()  # recorded once; a second finish is answered, never as an error
    assert not again.is_error and "finish was called" in again.content and session.finish_turn == 2
    quiet = open_session(toy, query)
    assert quiet.result().ended_by == "agent" and quiet.result().outcome is Outcome.UNRESOLVED


def test_a_failing_environment_ends_the_session_as_infrastructure(toy, query, monkeypatch) -> None:
    session = open_session(toy, query)

    def broken(name, arguments):
        raise RuntimeError("backend exploded")

    monkeypatch.setattr(session.env, "run_action", broken)
    back = session.call(set_to(1))
    assert back.is_error and "internal error: RuntimeError: backend exploded" in back.content
    assert session.result().outcome is Outcome.INFRA_ERROR


def test_a_session_whose_environment_cannot_start_raises_and_records_it(toy, query, monkeypatch) -> None:
    from pytest_netarena.core.errors import InfraError

    monkeypatch.setenv("TOY_BROKEN", "1")
    env = toy.CounterEnvironment()
    session = EpisodeSession(env, query, tool_task(env), EpisodeConfig(max_steps=3))
    with pytest.raises(InfraError, match="toy backend is down"):
        session.open()
    assert session.result().outcome is Outcome.INFRA_ERROR and session.call(set_to(1)).is_error


# ----- driving agents: they play the episode themselves through the session ---------------------------------------

class Driver:
    interface = "cli"

    def __init__(self, plan):
        self.plan = plan

    def reset(self, task):
        self.task = task

    def drive(self, session):
        self.plan(session)

    def close(self):
        pass


def test_a_driving_agent_plays_through_the_session(toy, query) -> None:
    target = query.params["target"]

    def plan(session):
        session.call(set_to(target + 2))
        session.add_usage(Usage(10, 5, 0.01))
        session.call(set_to(target))

    result = play(toy, query, Driver(plan))
    assert result.outcome is Outcome.RESOLVED and result.interface == "cli" and len(result.steps) == 2
    assert result.usage == Usage(10, 5, 0.01)


def test_a_driving_agent_that_raises_or_hangs_is_an_agent_error(toy, query) -> None:
    def crash(session):
        session.call(set_to(3))
        raise OSError("the CLI crashed")

    crashed = play(toy, query, Driver(crash))
    assert crashed.outcome is Outcome.AGENT_ERROR and "the CLI crashed" in crashed.details
    assert len(crashed.steps) == 1

    calls_after = []

    def hang(session):
        time.sleep(0.5)
        calls_after.append(session.call(set_to(query.params["target"])))

    hung = play(toy, query, Driver(hang), drive_timeout_s=0.1)
    assert hung.outcome is Outcome.AGENT_ERROR and "0.1 s" in hung.details and hung.steps == ()
    time.sleep(0.6)
    assert calls_after and calls_after[0].is_error  # the late call ran nothing


def test_a_text_reply_in_a_tool_episode_is_read_by_the_text_reader(toy, query) -> None:
    target = query.params["target"]
    agent = Calls(Reply("say what"), Reply(f"I will set {target}"))
    result = play(toy, query, agent)
    assert agent.task.tools  # tools were offered, and the model answered in text anyway
    assert result.outcome is Outcome.RESOLVED and [s.tool_call for s in result.steps] == [None, None]
    assert [s.refused for s in result.steps] == [True, False]  # the toy's text reader refuses 'say what' as text
    assert result.steps[1].action == f"set {target}"
