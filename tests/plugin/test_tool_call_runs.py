"""Whole runs with a model that acts through native tool calls: --tool-calls, the interface in every report, the
usage errors, and `report compare` pairing the same model through text and through tools."""

from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ET

import pytest

from pytest_netarena.testing.openai_server import OpenAIStubServer, StubReply


def tool_model(request: dict) -> StubReply | str:
    """A scripted 'model': calls set_counter when it is offered, else answers in text; one wrong value first."""
    messages = request["messages"]
    target = int(re.search(r"make it (\d+)", messages[1]["content"]).group(1))
    value = target + 1 if len(messages) == 2 else target
    if request.get("tools"):
        return StubReply.calls(("set_counter", {"value": value}))
    return f"set {value}"


@pytest.fixture
def model_server():
    with OpenAIStubServer(tool_model) as server:
        yield server


def run_folder(pytester: pytest.Pytester, reports: str):
    (folder,) = (pytester.path / reports).glob("*/")
    return folder


def test_a_tool_calling_model_run_reports_its_interface_everywhere(llm_toy, model_server) -> None:
    result = llm_toy.runpytest_subprocess("--agent=openai:gpt-4o", f"--llm-api-base={model_server.url}/v1",
                                          "--seed=3", "--queries=1", "--reports-dir=tools", "--junitxml=j.xml")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*netarena: seed=3 *tool-calls=auto*", "*toy, openai:gpt-4o via tools:*", "*ALL*",
                                    "*via = how the agent acted*"])
    assert all(request.tools for request in model_server.requests)
    folder = run_folder(llm_toy, "tools")
    episodes = [json.loads(line) for line in (folder / "episodes.jsonl").read_text().splitlines()]
    assert {e["interface"] for e in episodes} == {"tools"} and all(len(e["steps"]) == 2 for e in episodes)
    assert all(step["tool_call"]["name"] == "set_counter" for e in episodes for step in e["steps"])
    summary = json.loads((folder / "summary.json").read_text())
    assert {group["interface"] for group in summary["groups"]} == {"tools"}
    properties = {p.get("name"): p.get("value") for p in ET.parse(llm_toy.path / "j.xml").iter("property")}
    assert properties["netarena.interface"] == "tools" and properties["netarena.refused"] == "0"
    assert "via tools" in (folder / "report.html").read_text()


def test_text_and_tools_runs_of_one_model_pair_by_query_in_report_compare(llm_toy, model_server) -> None:
    for interface, reports in (("never", "text"), ("always", "tools")):
        llm_toy.runpytest_subprocess("--agent=openai:gpt-4o", f"--llm-api-base={model_server.url}/v1", "--seed=3",
                                     "--queries=2", f"--reports-dir={reports}", f"--tool-calls={interface}"
                                     ).assert_outcomes(passed=4)
    text, tools = run_folder(llm_toy, "text"), run_folder(llm_toy, "tools")
    assert {json.loads(line)["interface"] for line in (text / "episodes.jsonl").read_text().splitlines()} == {"text"}
    compared = llm_toy.run(sys.executable, "-c", "import sys; from pytest_netarena import cli; sys.exit(cli.main())",
                           "report", "compare", str(text), str(tools))
    assert compared.ret == 0
    compared.stderr.fnmatch_lines(["*acted through text in A and tools in B*"])
    compared.stdout.fnmatch_lines(["*toy*openai:gpt-4o | openai:gpt-4o via tools*resolved*4*"])


@pytest.mark.parametrize("arguments, message", [
    (["--tool-calls=sometimes"], "--tool-calls takes auto, always or never; got 'sometimes'"),
    (["--tool-calls=always", "--compat=netarena"], "--compat netarena keeps NetArena's text protocol"),
    (["--tool-calls=always", "--agent=ollama:netarena-no-such-model"], "does not take tool calls"),
])
def test_tool_call_usage_errors(llm_toy, arguments, message) -> None:
    agent = [] if any(a.startswith("--agent") for a in arguments) else ["--agent=openai:gpt-4o"]
    result = llm_toy.runpytest_subprocess(*agent, *arguments)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{message}*"])


def test_the_netarena_profile_offers_no_tools(llm_toy, model_server) -> None:
    result = llm_toy.runpytest_subprocess("--agent=openai:gpt-4o", f"--llm-api-base={model_server.url}/v1",
                                          "--compat=netarena", "--queries=1", "--reports-dir=compat")
    result.stdout.fnmatch_lines(["*tool-calls=never (NetArena: text)*"])
    assert model_server.requests and not any(request.tools for request in model_server.requests)


def malformed_first(request: dict) -> StubReply:
    """Answers its first turn with three malformed calls, then sets the counter to the target."""
    messages = request["messages"]
    if len(messages) == 2:
        return StubReply.calls(("set_counter", "{oops"), ("rm_rf", {}), ("set_counter", {"value": "high"}))
    target = int(re.search(r"make it (\d+)", messages[1]["content"]).group(1))
    return StubReply.calls(("set_counter", {"value": target}))


def test_malformed_calls_are_refused_steps_counted_in_the_report_not_errors(llm_toy) -> None:
    with OpenAIStubServer(malformed_first) as server:
        result = llm_toy.runpytest_subprocess("--agent=openai:gpt-4o", f"--llm-api-base={server.url}/v1",
                                              "--seed=3", "--queries=1", "--max-steps=5", "--reports-dir=bad",
                                              "--junitxml=j.xml")
    result.assert_outcomes(passed=2)  # resolved after the refused steps: no crash, no infra error
    properties = [(p.get("name"), p.get("value")) for p in ET.parse(llm_toy.path / "j.xml").iter("property")]
    assert [value for name, value in properties if name == "netarena.refused"] == ["3", "3"]
    folder = run_folder(llm_toy, "bad")
    episodes = [json.loads(line) for line in (folder / "episodes.jsonl").read_text().splitlines()]
    assert all([s["refused"] for s in e["steps"]] == [True, True, True, False] for e in episodes)
    summary = json.loads((folder / "summary.json").read_text())
    assert sum(group["overall"]["refused_steps"] for group in summary["groups"]) == 6
    assert all(group["overall"]["infra_errors"] == 0 for group in summary["groups"])
    tool_messages = [m for m in server.requests[1].messages if m["role"] == "tool"]
    assert len(tool_messages) == 3 and "not valid JSON" in tool_messages[0]["content"]
