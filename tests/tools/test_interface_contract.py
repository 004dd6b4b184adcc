"""Every interface gets the app's whole contract (issue 44): each app's task and observations rendered as text, native
tool calls, MCP and a CLI agent get them, planned by run/plan.py; every fact the text path states (the answer format,
the rules, the budget) is stated on every interface, and no tool interface is told to write its action as text."""

from __future__ import annotations

import json
import os
import re

import pytest

from pytest_netarena.apps import get_app
from pytest_netarena.core.app import RunOptions
from pytest_netarena.core.session import EpisodeSession
from pytest_netarena.core.tools import ToolCall
from pytest_netarena.core.types import Reply
from pytest_netarena.run.plan import MCP_CLIENT, TEXT, Traits, plan_episode

INTERFACES = {"text": TEXT, "tools": Traits(wants_tools=True), "mcp": MCP_CLIENT,
              "cli": Traits(interface="cli", needs_tools=True)}
OPTIONS = {"malt": RunOptions(seed=4, queries=1, levels=(1,), extra={"malt_topology": "synthetic:200"}),
           "k8s": RunOptions(seed=4, queries=1, levels=(1,), extra={"k8s_pods": "off"}),
           "route": RunOptions(seed=4, queries=1, levels=(1,), extra={"route_size": "2x1"})}
#: what the text path states, per app: each must be stated on every interface (whitespace runs as one space)
FACTS = {
    "malt": {
        "the answer object": r'\{"type": "text" \| "list" \| "graph", "data"',
        "rankings as [name, capacity] pairs": r"\[name, capacity\] pairs",
        "ties by name": r"ties by name",
        "what updated_graph may hold": r"node_link_data",
        "a bare value is refused": r"bare (graph, number or list|value) is refused",
        "only the first valid answer is graded": r"first valid answer is the one graded",
        "the graph's rules": r"Every node keeps `name` and `type`",
        "the box's limits": r"CPU time \(10 s\)",
        "the step budget": r"at most 3 steps",
    },
    "k8s": {
        "how to change a policy": r"kubectl patch networkpolicy NAME --type=json",
        "a merge patch replaces lists": r"merge patch replaces whole lists",
        "every write is checked": r"not even for a moment",
        "least privilege": r"(?i)least privilege",
        "one command may span lines": r"One command may span several lines",
        "only the namespace": r"answer Forbidden",
        "the step budget": r"at most 10 steps",
    },
    "route": {
        "the goal": r"0% dropped",
        "never break a working pair": r"unsafe",
        "several commands for one node": r"ip link; ip addr",
        "the packet budget": r"Packets and kernel objects are budgeted",
        "the time limit": r"time limit of",
        "the step budget": r"at most 20 steps",
    },
}
#: words that tell an agent to write its action as text: never on a tool interface
TEXT_ONLY = re.compile(r"(?i)reply with (exactly )?(one|a)\b|code (block|fence)|answer with one ```|in a fence")
#: one action per app that is refused or fails, as a reply and as a call
BAD = {"malt": ("```python\ndef process_graph(graph_data):\n    raise ValueError('no')\n```",
                ToolCall.of("run_process_graph", {"code": "def process_graph(graph_data):\n    raise ValueError('no')"})),
       "k8s": ("```\nls /\n```", ToolCall.of("run_kubectl", {"command": "ls /"})),
       "route": ('{"machine": "nowhere", "command": "ip route"}',
                 ToolCall.of("run_command", {"machine": "nowhere", "command": "ip route"}))}


def flat(text: str) -> str:
    return " ".join(text.split())


def route_missing() -> str | None:
    if os.geteuid() != 0:
        return "route needs root (Mininet network namespaces)"
    from pytest_netarena.apps.route.network.capabilities import backend_missing

    return backend_missing()


@pytest.fixture(scope="module", params=sorted(FACTS))
def app_env(request):
    name = request.param
    if name == "route" and route_missing():
        pytest.skip(str(route_missing()))
    app = get_app(name)
    env = app.make_environment(OPTIONS[name])
    yield app, env
    env.close()


def rendered(app, env, interface: str) -> dict[str, str]:
    """What an agent of this interface reads: its task (system prompt; MCP's instructions; the CLI's prompt), the
    tools it is offered, the first observation and the observation after a refused or failed action."""
    from pytest_netarena.mcp.cli_agent import cli_prompt
    from pytest_netarena.mcp.server import task_text

    options = OPTIONS[app.name]
    query = app.generate(options)[0]
    plan = plan_episode(app, env, options, INTERFACES[interface])
    session = EpisodeSession(env, query, plan.task, plan.config, "contract", 0, plan.interface)
    first = str(session.open())
    reply, call = BAD[app.name]
    after = session.reply(Reply(reply)) if interface == "text" else session.call(call).content
    task = {"text": plan.task.system_prompt, "tools": plan.task.system_prompt, "mcp": task_text(session),
            "cli": plan.task.system_prompt + "\n\n" + cli_prompt(session)}[interface]
    session.result()
    return {"task": task, "tools": json.dumps([tool.to_function() for tool in session.tools]), "first": first,
            "after": str(after)}


def test_every_fact_of_the_text_path_is_stated_on_every_interface(app_env) -> None:
    app, env = app_env
    seen = {interface: rendered(app, env, interface) for interface in INTERFACES}
    text = flat(seen["text"]["task"])
    for fact, pattern in FACTS[app.name].items():
        assert re.search(pattern, text), f"the text path itself does not state {fact}"
    for interface, parts in seen.items():
        told = flat(parts["task"] + " " + parts["tools"])
        missing = [fact for fact, pattern in FACTS[app.name].items() if not re.search(pattern, told)]
        assert not missing, f"{app.name} through {interface} is not told: {', '.join(missing)}"


def test_no_tool_interface_is_told_to_write_its_action_as_text(app_env) -> None:
    app, env = app_env
    for interface in ("tools", "mcp", "cli"):
        for part, shown in rendered(app, env, interface).items():
            found = TEXT_ONLY.search(shown)
            assert found is None, f"{app.name} through {interface}, {part}: " \
                                  f"{shown[max(0, found.start() - 80):found.end() + 80]!r}"
    text = rendered(app, env, "text")
    assert "tool call" not in flat(text["task"]).lower() and text["tools"] == "[]"


def test_the_first_observation_is_the_same_on_every_interface_but_for_its_own_words(app_env) -> None:
    from pytest_netarena.validity.interfaces import comparable_observation

    app, env = app_env
    firsts = {interface: comparable_observation(rendered(app, env, interface)["first"], env)
              for interface in INTERFACES}
    assert len(set(firsts.values())) == 1, firsts
