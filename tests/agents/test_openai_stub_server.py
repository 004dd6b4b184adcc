"""The local OpenAI-compatible stub server on its own, over plain urllib."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import pytest

from pytest_netarena.testing.openai_server import OpenAIStubServer, StubReply


def post(url: str, body: object, timeout: float = 5.0) -> tuple[int, bytes]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def content(url: str, body: object = None) -> object:
    """The first choice's content of a successful completion."""
    status, raw = post(url + "/v1/chat/completions", CHAT if body is None else body)
    assert status == 200
    return json.loads(raw)["choices"][0]["message"]["content"]


CHAT = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hello there"}], "temperature": 0.2, "seed": 5}


def test_scripted_replies_are_served_in_order_on_both_paths_and_recorded():
    with OpenAIStubServer(["first", StubReply(content="second", prompt_tokens=7, completion_tokens=3)]) as server:
        assert server.url.startswith("http://127.0.0.1:")
        status, raw = post(server.url + "/v1/chat/completions", CHAT)
        assert status == 200
        first = json.loads(raw)
        assert first["choices"][0]["message"] == {"role": "assistant", "content": "first"}
        assert first["model"] == "gpt-4o" and first["usage"]["prompt_tokens"] == len("hello there") // 4
        second = json.loads(post(server.url + "/chat/completions", CHAT)[1])
        assert second["usage"] == {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
        assert first["id"] != second["id"]
        assert [request.path for request in server.requests] == ["/v1/chat/completions", "/chat/completions"]
        recorded = server.requests[0]
        assert (recorded.messages, recorded.temperature, recorded.seed) == (CHAT["messages"], 0.2, 5)
        assert server.pending == 0


def test_an_exhausted_script_answers_500_saying_so_and_push_refills_it():
    with OpenAIStubServer() as server:
        status, raw = post(server.url + "/v1/chat/completions", CHAT)
        assert status == 500 and b"no scripted reply left" in raw
        server.push("refilled")
        assert content(server.url) == "refilled"


def test_a_callable_answers_from_the_request():
    def responder(request):
        last = request["messages"][-1]["content"]
        return StubReply.error(429, "busy") if last == "busy?" else f"echo: {last}"

    with OpenAIStubServer(responder) as server:
        assert content(server.url) == "echo: hello there"
        busy = {**CHAT, "messages": [{"role": "user", "content": "busy?"}]}
        assert post(server.url + "/v1/chat/completions", busy)[0] == 429


@pytest.mark.parametrize("status", [401, 429, 500, 503])
def test_error_statuses_carry_an_openai_error_body(status):
    with OpenAIStubServer([StubReply.error(status, "scripted failure", retry_after=2)]) as server:
        code, raw = post(server.url + "/v1/chat/completions", CHAT)
        assert code == status
        assert json.loads(raw)["error"]["message"] == "scripted failure"


def test_garbage_empty_and_choiceless_bodies():
    replies = [StubReply.garbage("not json at all"), StubReply.empty(), StubReply.no_choices()]
    with OpenAIStubServer(replies) as server:
        assert post(server.url + "/v1/chat/completions", CHAT) == (200, b"not json at all")
        assert content(server.url) is None
        assert json.loads(post(server.url + "/v1/chat/completions", CHAT)[1])["choices"] == []


def test_unknown_paths_and_non_json_requests():
    with OpenAIStubServer(["ok"]) as server:
        assert post(server.url + "/v1/embeddings", CHAT)[0] == 404
        assert post(server.url + "/v1/chat/completions", b"{{{")[0] == 200
        assert server.requests[-1].body == {}


def test_stop_interrupts_a_slow_reply_quickly():
    server = OpenAIStubServer([StubReply.slow(30.0, "late")]).start()
    url = server.url
    with pytest.raises(OSError):
        post(url + "/v1/chat/completions", CHAT, timeout=0.2)
    started = time.perf_counter()
    server.stop()
    assert time.perf_counter() - started < 2.0
    with pytest.raises(RuntimeError):
        _ = server.url
