"""The scripted Responses and Messages stubs speak their APIs as the official SDKs read them, turn by turn."""

from __future__ import annotations

import json

import httpx
import pytest

from pytest_netarena.testing.messages_stub import MessagesStub
from pytest_netarena.testing.responses_stub import ResponsesStub
from pytest_netarena.testing.scripted_models import Call, Say, resolve

TOOLS_MESSAGES = [{"name": "mcp__netarena__run", "description": "run", "input_schema": {"type": "object"}},
                  {"name": "mcp__netarena__finish", "description": "done", "input_schema": {"type": "object"}}]
TOOLS_RESPONSES = [{"type": "namespace", "name": "mcp__netarena", "description": "ours",
                    "tools": [{"type": "function", "name": "run", "parameters": {"type": "object"}},
                              {"type": "function", "name": "finish", "parameters": {"type": "object"}}]}]
SCRIPT = [[Say("looking"), Call("run", {"command": "kubectl get pods"})],
          [Call("Bash", {"command": "touch /tmp/x"}, exact=True)],
          [Call("finish")]]


def sse(text: str) -> list[dict]:
    return [json.loads(line[len("data: "):]) for line in text.splitlines() if line.startswith("data: ")]


def test_names_resolve_to_what_the_cli_offered():
    assert resolve("run", ["mcp__netarena__run", "mcp__netarena__finish"]) == "mcp__netarena__run"
    assert resolve("run", ["mcp__netarena.run"]) == "mcp__netarena.run"
    assert resolve("Bash", ["mcp__netarena__run"]) == "Bash"


def test_the_messages_stub_streams_tool_use_and_follows_the_conversation():
    anthropic = pytest.importorskip("anthropic")
    with MessagesStub(SCRIPT) as stub:
        client = anthropic.Anthropic(base_url=stub.url, api_key="test", max_retries=0)
        messages = [{"role": "user", "content": "fix it"}]
        with client.messages.stream(model="claude-test", max_tokens=100, messages=messages,
                                    tools=TOOLS_MESSAGES) as stream:
            first = stream.get_final_message()
        assert [block.type for block in first.content] == ["text", "tool_use"]
        call = first.content[1]
        assert call.name == "mcp__netarena__run" and call.input == {"command": "kubectl get pods"}
        assert first.stop_reason == "tool_use" and first.usage.output_tokens == stub.tokens_out_per_turn
        messages += [{"role": "assistant", "content": [block.model_dump() for block in first.content]},
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "ok"}]}]
        second = client.messages.create(model="claude-test", max_tokens=100, messages=messages, tools=TOOLS_MESSAGES)
        again = client.messages.create(model="claude-test", max_tokens=100, messages=messages, tools=TOOLS_MESSAGES)
        assert second.content[0].name == "Bash" == again.content[0].name  # a retried turn gets the same answer
        assert [r.turn for r in stub.requests] == [0, 1, 1]


def test_the_responses_stub_streams_namespaced_function_calls():
    with ResponsesStub(SCRIPT) as stub:
        body = {"model": "gpt-test", "stream": True, "tools": TOOLS_RESPONSES,
                "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix"}]}]}
        answer = httpx.post(f"{stub.url}/v1/responses", json=body, timeout=10)
        assert answer.headers["content-type"].startswith("text/event-stream")
        events = sse(answer.text)
        kinds = [event["type"] for event in events]
        assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
        done = [event["item"] for event in events if event["type"] == "response.output_item.done"]
        assert done[0]["type"] == "message" and done[0]["content"][0]["text"] == "looking"
        assert done[1] == {**done[1], "type": "function_call", "name": "run", "namespace": "mcp__netarena",
                           "arguments": json.dumps({"command": "kubectl get pods"})}
        assert events[-1]["response"]["usage"]["output_tokens"] == stub.tokens_out_per_turn
        body["input"] += [done[1], {"type": "function_call_output", "call_id": done[1]["call_id"], "output": "ok"}]
        body["stream"] = False
        whole = httpx.post(f"{stub.url}/v1/responses", json=body, timeout=10).json()
        assert whole["output"][0]["name"] == "Bash" and "namespace" not in whole["output"][0]
        assert stub.usage()[1] == 2 * stub.tokens_out_per_turn


def test_the_openai_sdk_reads_the_responses_stream():
    openai = pytest.importorskip("openai")
    with ResponsesStub([[Call("run", {"command": "ls"})]]) as stub:
        client = openai.OpenAI(base_url=f"{stub.url}/v1", api_key="test", max_retries=0)
        with client.responses.stream(model="gpt-test", input="fix", tools=[
                {"type": "function", "name": "run", "parameters": {"type": "object"}}]) as stream:
            final = stream.get_final_response()
        assert final.output[0].type == "function_call" and json.loads(final.output[0].arguments) == {"command": "ls"}


def test_beyond_the_script_the_model_says_it_is_done_and_bad_requests_are_refused():
    with MessagesStub([]) as stub:
        answer = httpx.post(f"{stub.url}/v1/messages", json={"model": "m", "messages": []}, timeout=10).json()
        assert answer["content"] == [{"type": "text", "text": "Done."}] and answer["stop_reason"] == "end_turn"
        assert httpx.post(f"{stub.url}/v1/messages", content=b"not json", timeout=10).status_code == 400
        assert httpx.post(f"{stub.url}/v1/other", json={}, timeout=10).status_code == 404
        counted = httpx.post(f"{stub.url}/v1/messages/count_tokens", json={"messages": []}, timeout=10).json()
        assert counted["input_tokens"] > 0
