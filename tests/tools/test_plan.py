"""The planner (run/plan.py): from the app, the agent's traits and the options, the task and the configuration of an
episode, for every front door alike."""

from __future__ import annotations

import pytest

from pytest_netarena.agents.spec import parse_agent_spec
from pytest_netarena.core.app import NETARENA, RunOptions
from pytest_netarena.core.errors import UsageError
from pytest_netarena.core.rules import NETARENA_RULES, OURS
from pytest_netarena.run.plan import MCP_CLIENT, TEXT, Traits, offers_tools, plan_episode, traits_of

WANTS = Traits(wants_tools=True)
ON_REQUEST = Traits(on_request=True)


@pytest.mark.parametrize(("ruleset", "mode", "traits", "offered"), [
    (OURS, "auto", TEXT, False), (OURS, "auto", WANTS, True), (OURS, "auto", ON_REQUEST, False),
    (OURS, "always", ON_REQUEST, True), (OURS, "always", TEXT, False), (OURS, "never", WANTS, False),
    (OURS, "never", ON_REQUEST, False), (OURS, "auto", MCP_CLIENT, True), (OURS, "always", MCP_CLIENT, True),
    (NETARENA_RULES, "auto", WANTS, False), (NETARENA_RULES, "always", ON_REQUEST, False),
])
def test_whether_tools_are_offered(ruleset, mode, traits, offered) -> None:
    assert offers_tools(ruleset, mode, traits) is offered


@pytest.mark.parametrize(("ruleset", "mode"), [(OURS, "never"), (NETARENA_RULES, "auto")])
def test_an_agent_that_needs_tools_where_none_are_offered_is_a_usage_error(ruleset, mode) -> None:
    with pytest.raises(UsageError, match="acts only through the episode's tools"):
        offers_tools(ruleset, mode, MCP_CLIENT)


def test_the_traits_of_an_agent() -> None:
    class Texter:
        def reset(self, task): ...

    class Asker(Texter):
        uses_tools = True

    class Driver(Texter):
        interface = "cli"

        def drive(self, session): ...

    class SaysText(Asker):
        interface = "text"

    assert traits_of(Texter()) == TEXT
    assert traits_of(Texter(), parse_agent_spec("python:m:a")) == ON_REQUEST  # a python: agent, on request
    assert traits_of(Texter(), parse_agent_spec("builtin:oracle", ("oracle",))) == TEXT
    assert traits_of(Asker()) == WANTS
    assert traits_of(Driver()) == Traits(interface="cli", needs_tools=True)
    assert traits_of(SaysText(), parse_agent_spec("python:m:a")) == TEXT  # it says it acts by text


def test_the_same_plan_for_every_front_door_and_the_rules_it_carries(toy) -> None:
    app = toy.APP
    env = app.make_environment(RunOptions())
    ours = plan_episode(app, env, RunOptions(max_steps=4), WANTS, agent_timeout_s=9.0)
    assert ours.interface == "tools" and [tool.name for tool in ours.task.tools] == ["set_counter", "finish"]
    assert ours.config.ruleset is OURS and ours.config.max_steps == ours.task.max_steps == 4
    assert ours.config.agent_timeout_s == 9.0 and "at most 4 steps" in ours.task.system_prompt
    assert ours.task.episode_id != plan_episode(app, env, RunOptions(max_steps=4), WANTS).task.episode_id
    theirs = plan_episode(app, env, RunOptions(rules=NETARENA), WANTS)
    assert theirs.interface == "text" and theirs.task.tools == () and theirs.config.ruleset is NETARENA_RULES
    assert "steps" not in theirs.task.system_prompt  # NetArena never states the budget
    assert theirs.task.max_steps == env.default_max_steps
