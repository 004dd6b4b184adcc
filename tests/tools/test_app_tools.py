"""Each app's actions as tool calls: a python agent acting only through tools gets the verdicts the same actions get
as text (k8s on the embedded API server with the real kubectl, route in real Mininet as root, malt in its box)."""

from __future__ import annotations

import json
import os
import re

import pytest

from pytest_netarena.apps import get_app
from pytest_netarena.core.app import NETARENA, RunOptions
from pytest_netarena.core.episode import EpisodeConfig, run_episode
from pytest_netarena.core.session import offered_tools
from pytest_netarena.core.tools import FINISH, ToolCall
from pytest_netarena.core.types import EpisodeResult, Outcome, Reply, Task

from .twin import Calls, ToolTwin


def play(app_name, env, query, agent, max_steps, tools, name="python:twin") -> EpisodeResult:
    task = Task(app_name, "e1", "system", "zero-shot", max_steps, tools=offered_tools(env) if tools else ())
    return run_episode(env, agent, query, task, EpisodeConfig(max_steps=max_steps), name)


def verdicts(result: EpisodeResult, prefix: str = "") -> tuple:
    """What must not depend on the interface: outcome, verdicts, and every step's action, violations, refusal."""
    strip = (lambda text: text.replace(prefix, "")) if prefix else (lambda text: text)
    steps = [(strip(s.action), tuple(map(strip, s.violations)), s.refused) for s in result.steps]
    return result.outcome, result.correct, result.safe, strip(result.details), steps


def text_and_tools(app_name, env, query, agent_name, max_steps, per_reply=1, prefix=lambda env: ""):
    app = get_app(app_name)
    text = play(app_name, env, query, app.builtin_agent(agent_name, query, env), max_steps, False, agent_name)
    text_prefix = prefix(env)
    twin = ToolTwin(app_name, app.builtin_agent(agent_name, query, env), per_reply)
    tools = play(app_name, env, query, twin, max_steps, True)
    assert text.interface == "text" and tools.interface == "tools"
    assert all(step.tool_call is not None for step in tools.steps)
    assert verdicts(text, text_prefix) == verdicts(tools, prefix(env))
    return text, tools


# ----- k8s ------------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def k8s_env():
    env = get_app("k8s").make_environment(RunOptions())
    yield env
    env.close()


@pytest.fixture(scope="module")
def k8s_queries():
    return get_app("k8s").generate(RunOptions(seed=5, queries=1, levels=(1, 2)))


@pytest.mark.parametrize("agent_name", ["oracle", "expert", "reckless"])
def test_k8s_tool_calls_get_the_verdicts_of_the_same_commands_in_text(k8s_env, k8s_queries, agent_name) -> None:
    outcomes = set()
    for query in k8s_queries[:3]:
        text, tools = text_and_tools("k8s", k8s_env, query, agent_name, 6)
        outcomes.add(tools.outcome)
    assert outcomes == ({Outcome.UNSAFE} if agent_name == "reckless" else {Outcome.RESOLVED})


def test_k8s_several_calls_in_one_reply_are_steps_judged_one_by_one(k8s_env, k8s_queries) -> None:
    query = next(q for q in k8s_queries if len({f["policy"] for f in q.params["faults"]}) > 1)
    text, tools = text_and_tools("k8s", k8s_env, query, "oracle", 6, per_reply=2)
    assert len(tools.steps) == len(text.steps) >= 2 and tools.outcome is Outcome.RESOLVED


def test_k8s_refused_tool_commands_are_refused_as_in_text(k8s_env, k8s_queries) -> None:
    query = k8s_queries[0]
    calls = [ToolCall.of("run_kubectl", {"command": "cat /etc/passwd"}, "a"),
             ToolCall.of("run_kubectl", {"command": "kubectl get pods\x07"}, "b"),
             ToolCall("run_kubectl", '{"command": "kubectl get pods", "namespace": "kube-system"}', "c")]
    agent = Calls(calls)
    result = play("k8s", k8s_env, query, agent, 5, True)
    assert [s.refused for s in result.steps] == [True, True, True] and result.outcome is Outcome.UNRESOLVED
    assert "does not run kubectl" in result.steps[0].output and "Call run_kubectl with one command" in \
        result.steps[0].output
    assert "control character" in result.steps[1].output and 'unknown argument "namespace"' in result.steps[2].output
    assert result.ended_by == "agent" and result.finish == ToolCall("finish", "{}", "end")


def test_k8s_netarena_profile_offers_no_tools() -> None:
    env = get_app("k8s").make_environment(RunOptions(rules=NETARENA))
    try:
        assert env.tools() == () and offered_tools(env) == (FINISH,)
        assert env.run_action("run_kubectl", {"command": "kubectl get pods"}).refused
    finally:
        env.close()


# ----- malt -----------------------------------------------------------------------------------------------------------

MALT = RunOptions(seed=3, queries=1, extra={"malt_topology": "synthetic:600"})


@pytest.fixture(scope="module")
def malt_env():
    env = get_app("malt").make_environment(MALT)
    yield env
    env.close()


@pytest.mark.parametrize("agent_name", ["oracle", "expert", "reckless"])
def test_malt_tool_calls_get_the_verdicts_of_the_same_programs_in_text(malt_env, agent_name) -> None:
    queries = get_app("malt").generate(MALT)
    outcomes = set()
    for query in queries[::3]:
        text, tools = text_and_tools("malt", malt_env, query, agent_name, 1)
        outcomes.add(tools.outcome)
    assert Outcome.RESOLVED in outcomes if agent_name != "reckless" else Outcome.UNSAFE in outcomes


def test_malt_a_program_sent_in_a_fence_or_with_a_usage_example_reads_as_in_text(malt_env) -> None:
    query = get_app("malt").generate(MALT)[0]
    code = get_app("malt").builtin_agent("oracle", query, malt_env).code
    for sent in (f"```python\n{code}\n```", f"{code}\n\nprint(process_graph(graph_data))\n"):
        result = play("malt", malt_env, query, Calls([ToolCall.of("run_process_graph", {"code": sent})]), 1, True)
        assert result.outcome is Outcome.RESOLVED, result.details


def test_malt_refused_call_costs_a_step_and_the_episode_goes_on(malt_env) -> None:
    query = get_app("malt").generate(MALT)[0]
    code = get_app("malt").builtin_agent("oracle", query, malt_env).code
    agent = Calls([ToolCall("run_process_graph", '{"code": 42}')], [ToolCall.of("run_process_graph", {"code": code})])
    result = play("malt", malt_env, query, agent, 2, True)
    assert [s.refused for s in result.steps] == [True, False] and result.outcome is Outcome.RESOLVED
    assert '"code" must be a string, got an integer' in result.steps[0].output


# ----- route (real Mininet, as root) --------------------------------------------------------------------------------

def route_missing() -> str | None:
    if os.geteuid() != 0:
        return "route needs root (Mininet network namespaces)"
    from pytest_netarena.apps.route.network.capabilities import backend_missing

    return backend_missing()


ROUTE = RunOptions(seed=2, queries=1, levels=(1,), extra={"route_size": "2x1"})


@pytest.fixture(scope="module")
def route_env():
    if route_missing():
        pytest.skip(str(route_missing()))
    env = get_app("route").make_environment(ROUTE)
    yield env
    env.close()


def _prefix(env) -> str:
    return env.network.topology.prefix if env.network is not None else ""


@pytest.mark.parametrize("agent_name", ["oracle", "reckless"])
def test_route_tool_calls_get_the_verdicts_of_the_same_commands_in_text(route_env, agent_name) -> None:
    queries = get_app("route").generate(ROUTE)
    outcomes = set()
    for query in queries[:2]:
        text, tools = text_and_tools("route", route_env, query, agent_name, 5, prefix=_prefix)
        outcomes.add(tools.outcome)
    assert (Outcome.UNSAFE in outcomes) if agent_name == "reckless" else outcomes == {Outcome.RESOLVED}


class RouterProbe(Calls):
    """First an unknown node, then the router as the topology names it."""

    def act(self, observation):
        self.observations.append(observation)
        if len(self.observations) == 1:
            return Reply("", tool_calls=(ToolCall.of("run_command", {"machine": "nowhere", "command": "ip route"}),))
        router = re.search(r"^Router (\S+) ", self.observations[0], re.MULTILINE).group(1)
        return Reply("", tool_calls=(ToolCall.of("run_command", {"machine": router, "command": "ip route"}),
                                     ToolCall("finish", "")))


def test_route_tool_names_the_nodes_and_refuses_others(route_env) -> None:
    query = get_app("route").generate(ROUTE)[0]
    agent = RouterProbe()
    result = play("route", route_env, query, agent, 4, True)
    nodes = route_env.topology.nodes
    assert agent.task.tools[0].parameters["properties"]["machine"]["enum"] == list(nodes)
    assert result.steps[0].refused and "not one of" in result.steps[0].output
    assert not result.steps[1].refused and result.steps[1].action == f"{route_env.topology.router}: ip route"
    assert len(result.steps) == 2 and result.ended_by == "agent"
