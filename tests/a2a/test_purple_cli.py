"""serve-purple's responder: model turns answered side by side, a python: agent object one turn at a time."""

from __future__ import annotations

import argparse
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from pytest_netarena.agentbeats.purple_cli import make_responder
from pytest_netarena.testing.openai_server import OpenAIStubServer, StubReply


def args(api_base: str | None = None, client: str = "auto") -> argparse.Namespace:
    return argparse.Namespace(llm_api_base=api_base, temperature=0.0, llm_client=client)


def test_model_turns_are_answered_side_by_side(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    all_in_flight = threading.Barrier(4)

    def model(request: dict) -> StubReply:
        # each turn waits until all four are with the model: turns answered one at a time never get there
        try:
            all_in_flight.wait(timeout=10)
        except threading.BrokenBarrierError:
            return StubReply("answered one at a time")
        return StubReply("kubectl get pods")

    with OpenAIStubServer(model) as server:
        respond = make_responder("openai:gpt-4o", args(server.url + "/v1"))
        with ThreadPoolExecutor(4) as pool:
            replies = list(pool.map(respond, ["a", "b", "c", "d"]))
    assert [reply.text for reply in replies] == ["kubectl get pods"] * 4


class OneObject:
    """A python: agent given as an object: a second conversation during the first would mix them up."""

    def __init__(self) -> None:
        self.inside = 0
        self.overlapped = False
        self._lock = threading.Lock()

    def reset(self, task) -> None:
        with self._lock:
            self.inside += 1
            self.overlapped |= self.inside > 1

    def act(self, observation):
        from pytest_netarena.core.types import Reply

        time.sleep(0.05)
        with self._lock:
            self.inside -= 1
        return Reply("done")

    def close(self) -> None:
        pass


AGENT = OneObject()


def test_a_python_agent_object_holds_one_conversation_at_a_time():
    respond = make_responder(f"python:{__name__}:AGENT", args())
    with ThreadPoolExecutor(4) as pool:
        replies = list(pool.map(respond, ["a", "b", "c", "d"]))
    assert [reply.text for reply in replies] == ["done"] * 4
    assert not AGENT.overlapped


def test_a_missing_or_refused_key_or_a_dead_endpoint_stops_serve_purple_at_start(monkeypatch):
    """Checked once with one real request before serving: never a server that fails every assessment later."""
    import pytest

    from pytest_netarena.core.errors import UsageError

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(UsageError, match="OPENAI_API_KEY not set"):
        make_responder("openai:gpt-4o", args("http://127.0.0.1:9/v1"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    with OpenAIStubServer(["never asked"], api_key="sk-right") as server:
        with pytest.raises(UsageError, match=r"refused the key \(HTTP 401: Incorrect API key provided.\)"):
            make_responder("openai:gpt-4o", args(server.url + "/v1"))
        assert server.requests == [] and server.pending == 1  # no completion was spent on the check
        monkeypatch.setenv("OPENAI_API_KEY", "sk-right")
        assert make_responder("openai:gpt-4o", args(server.url + "/v1"))("hi").text == "never asked"
        base = server.url + "/v1"
    with pytest.raises(UsageError, match="does not answer"):
        make_responder("openai:gpt-4o", args(base))  # the server is gone


def test_serve_purple_without_a_key_exits_at_once_with_the_fix(tmp_path):
    import os
    import subprocess
    import sys

    env = {key: value for key, value in os.environ.items() if key not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    done = subprocess.run([sys.executable, "-m", "pytest_netarena.cli", "serve-purple", "--agent", "openai:gpt-4o",
                           "--port", "0"], capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("netarena serve-purple: model agent openai:gpt-4o: OPENAI_API_KEY not set")
    assert "--llm-api-base" in line
