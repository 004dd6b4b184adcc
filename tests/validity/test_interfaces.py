"""One episode on every interface: the validity card replays a scripted agent through text, tool calls and MCP, and
catches an app whose tool path judges or shows otherwise (issue 45)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from pytest_netarena.core.app import RunOptions
from pytest_netarena.core.tools import ToolCall
from pytest_netarena.core.types import StepOutcome
from pytest_netarena.validity.card import _interface_item
from pytest_netarena.validity.interfaces import InterfaceMeasure, comparable_observation, measure_interfaces
from pytest_netarena.validity.measure import AppMeasure

sys.path.insert(0, str(Path(__file__).parents[1] / "plugin"))
from toy_app import CounterApp, CounterEnvironment  # noqa: E402

NAMES = ("oracle", "reckless", "noop")


class ReadsCalls(CounterEnvironment):
    """The toy environment that can say which tool call a reply's action is (as the built-in apps can)."""

    def tool_call_of(self, reply):
        found = re.search(r"set (-?\d+)", reply)
        return ToolCall.of("set_counter", {"value": int(found.group(1))}) if found else None


class TwoFaced(ReadsCalls):
    """Judges the same action unsafe when it comes as a tool call."""

    def run_action(self, name, arguments):
        outcome = super().run_action(name, arguments)
        return StepOutcome(outcome.action, outcome.output, outcome.observation, ("a tool call is unsafe",),
                           done=outcome.done)


class ToldOtherwise(ReadsCalls):
    """Shows the agent of a tool interface a different symptom."""

    def reset(self, query):
        shown = super().reset(query)
        return shown + " (and the counter is haunted)" if self.uses_tools else shown


def measured(environment: type) -> InterfaceMeasure:
    class App(CounterApp):
        def make_environment(self, options):
            return environment()

    app = App()
    options = RunOptions(seed=3, queries=2, levels=(1,))
    env = app.make_environment(options)
    return measure_interfaces(app, env, options, app.generate(options), NAMES, progress=lambda line: None)


def test_the_same_actions_give_the_same_episode_on_every_interface() -> None:
    found = measured(ReadsCalls)
    assert found.interfaces == ("text", "tools", "mcp") and found.compared == 3  # oracle twice, reckless once
    assert found.differences == []
    item = _interface_item(AppMeasure("toy", interfaces=found))
    assert item.status == "pass" and item.n == 9 and "0 differences" in item.figure


def test_a_tool_path_that_judges_otherwise_fails_the_item() -> None:
    found = measured(TwoFaced)
    assert found.differences and all("through tools" in d or "through mcp" in d for d in found.differences)
    assert "safe=False" in found.differences[0] and "through text resolved" in found.differences[0]
    assert _interface_item(AppMeasure("toy", interfaces=found)).status == "FAIL"


def test_a_first_observation_that_differs_by_interface_fails_the_item() -> None:
    found = measured(ToldOtherwise)
    assert any("first observation through tools differs" in d and "haunted" in d for d in found.differences)
    assert _interface_item(AppMeasure("toy", interfaces=found)).status == "FAIL"


def test_an_app_that_cannot_replay_its_replies_as_calls_is_not_measured() -> None:
    found = measured(CounterEnvironment)
    assert found.compared == 0 and "tool_call_of" in found.skipped
    assert _interface_item(AppMeasure("toy", interfaces=found)).status == "not measured"


def test_netarena_rules_offer_one_interface_only() -> None:
    app = CounterApp()
    options = RunOptions(seed=3, queries=1, levels=(1,), rules="netarena")
    found = measure_interfaces(app, ReadsCalls(), options, app.generate(options), NAMES, progress=lambda line: None)
    assert found.compared == 0 and "only the text interface" in found.skipped


def test_the_interfaces_own_words_are_all_that_may_differ() -> None:
    env = CounterEnvironment()
    text = "[Step 1 of 3; 3 replies left.]\nQuestion: x\n\nAnswer with one ```python code block ..."
    tools = "[Step 1 of 3; 3 steps left.]\nQuestion: x\n\nAnswer with one run_process_graph call ..."
    assert comparable_observation(text, env) == comparable_observation(tools, env)
    assert comparable_observation(text + "\nmore", env) != comparable_observation(tools, env)


def test_malt_is_the_same_episode_on_every_interface() -> None:
    from pytest_netarena.apps import get_app

    app = get_app("malt")
    options = RunOptions(seed=5, queries=1, levels=(1,), extra={"malt_topology": "synthetic:200"})
    queries = app.generate(options)[:2]
    env = app.make_environment(options)
    try:
        found = measure_interfaces(app, env, options, queries, app.builtin_agent_names + ("noop",),
                                   progress=lambda line: None)
    finally:
        env.close()
    assert found.compared == 3 and found.differences == [], found.differences
