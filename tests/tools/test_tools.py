"""Tool values and argument checking: the apps' tools stay within what the checker reads; hostile calls never raise."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netarena.apps.k8s.prompt import kubectl_tool
from pytest_netarena.apps.malt.prompt import program_tool
from pytest_netarena.apps.route.prompt import command_tool
from pytest_netarena.core.tools import FINISH, KEYWORDS, Tool, ToolCall, check_arguments, check_call, schema_keywords

TOOLS = (kubectl_tool(20, 32_000), command_tool(("na0a01h1", "na0a01r0")), program_tool(), FINISH)


@pytest.mark.parametrize("tool", TOOLS, ids=lambda tool: tool.name)
def test_every_tool_schema_uses_only_keywords_the_checker_reads(tool: Tool) -> None:
    assert schema_keywords(tool.parameters) <= KEYWORDS
    assert tool.parameters["type"] == "object" and tool.parameters.get("additionalProperties") is False
    function = tool.to_function()
    assert function["type"] == "function" and function["function"]["name"] == tool.name
    json.dumps(function)  # plain JSON, as a provider receives it
    assert len(tool.description) > 150 and "Returns" in tool.description  # says what it does and what comes back


def test_the_route_tool_names_the_episodes_nodes() -> None:
    tool = command_tool(("na0a01h1", "na0a01r0"))
    assert tool.parameters["properties"]["machine"]["enum"] == ["na0a01h1", "na0a01r0"]
    problem = check_call(ToolCall.of("run_command", {"machine": "h9", "command": "ip r"}), [tool]).problem
    assert problem == 'run_command: "machine" is "h9", not one of: "na0a01h1", "na0a01r0"'
    assert "enum" not in command_tool().parameters["properties"]["machine"]


def test_good_calls_decode_to_their_arguments() -> None:
    checked = check_call(ToolCall.of("run_kubectl", {"command": "kubectl get pods | head -3"}), TOOLS)
    assert checked.ok and checked.tool is TOOLS[0] and checked.arguments == {"command": "kubectl get pods | head -3"}
    assert check_call(ToolCall("finish", ""), TOOLS).ok  # no arguments at all is an empty object
    assert check_call(ToolCall("run_process_graph", '{"code": "def f():\\n\\treturn 1"}'), TOOLS).ok  # tabs, newlines


@pytest.mark.parametrize("value, problem", [
    ("kubectl get pods\x1b[2J", "a control character (U+001B)"),
    ("kubectl get\u0000 pods", "a NUL character"),
    ("kubectl \ud800", "an unpaired surrogate"),
    ("", '"command" is empty'),
])
def test_strings_that_no_action_can_take_are_refused(value: str, problem: str) -> None:
    arguments = json.dumps({"command": value})  # escapes: the raw text holds no such character
    assert problem in check_call(ToolCall("run_kubectl", arguments), TOOLS).problem


def test_check_arguments_reads_nested_schemas() -> None:
    schema = {"type": "object", "properties": {"pairs": {"type": "array", "maxItems": 2, "items": {
        "type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}}}
    assert check_arguments(schema, {"pairs": [{"n": 1}]}) == ""
    assert check_arguments(schema, {"pairs": [{"n": 1}, {}]}) == '"pairs"[1] lacks the required "n"'
    assert "at most 2" in check_arguments(schema, {"pairs": [{"n": 1}] * 3})
    assert check_arguments({"type": "integer"}, 3.0) == "" and check_arguments({"type": "number"}, True)


@settings(max_examples=300, deadline=None)
@given(name=st.one_of(st.sampled_from([t.name for t in TOOLS]), st.text(max_size=20)),
       arguments=st.one_of(st.text(max_size=300), st.recursive(
           st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=30)),
           lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
           max_leaves=20).map(lambda value: json.dumps(value, allow_nan=True))))
def test_no_call_makes_the_checker_raise(name: str, arguments: str) -> None:
    checked = check_call(ToolCall(name, arguments), TOOLS)
    assert checked.ok or checked.problem
    assert "\n" not in checked.problem  # one line
