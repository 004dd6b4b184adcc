"""Local A2A servers for the A2A tests: purple agents (well-behaved and not), a garbage server, the toy app."""

from __future__ import annotations

import json
import re
import socket
import sys
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from pytest_netarena.core.app import RunOptions
from pytest_netarena.core.episode import EpisodeConfig, run_episode
from pytest_netarena.core.types import EpisodeResult, Task
from pytest_netarena.agentbeats.purple import purple_server
from pytest_netarena.testing.local_http import serving

PLUGIN_TESTS = Path(__file__).parent.parent / "plugin"


def _solve_toy(text: str) -> str:
    return "set " + re.findall(r"make it (\d+)", text)[-1]


@pytest.fixture
def solve_toy() -> Callable[[str], str]:
    """A purple agent's brain for the toy app: the last 'make it N' in the prompt is the current target."""
    return _solve_toy


@pytest.fixture
def solve_toy_after() -> Callable[[float], Callable[[str], str]]:
    """solve_toy_after(seconds): solve_toy's brain thinking that long before each reply (a slow purple agent)."""

    def slow(seconds: float) -> Callable[[str], str]:
        def respond(text: str) -> str:
            time.sleep(seconds)
            return _solve_toy(text)

        return respond

    return slow


@pytest.fixture(scope="session")
def toy_app() -> Any:
    """The toy app (tests/plugin/toy_app.py), registered as "toy"."""
    sys.path.insert(0, str(PLUGIN_TESTS))
    from pytest_netarena.apps import get_app, register_app

    register_app("toy", "toy_app:APP")
    return get_app("toy")


@pytest.fixture
def purple() -> Iterator[Callable[..., str]]:
    """purple(respond, **kwargs) starts a purple A2A server and returns its URL; all stop at teardown."""
    servers = []

    def start(respond: Callable[[str], Any], **kwargs: Any) -> str:
        server = purple_server(respond, **kwargs).start()
        servers.append(server)
        return server.url

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def closed_port_url() -> str:
    """A URL on which nothing listens."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def garbage_url() -> Iterator[str]:
    """A server with a valid agent card whose JSON-RPC endpoint answers plain-text garbage."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            url = f"http://127.0.0.1:{self.server.server_address[1]}/"
            body = json.dumps({"name": "garbage", "description": "d", "version": "1", "url": url,
                               "protocolVersion": "0.3", "capabilities": {"streaming": False},
                               "defaultInputModes": ["text"], "defaultOutputModes": ["text"], "skills": []})
            self._send(body.encode(), "application/json")

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            self._send(b"<html>this is not JSON-RPC</html>", "text/html")

        def _send(self, body: bytes, kind: str) -> None:
            self.send_response(200)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    with serving(Handler) as url:
        yield url


@pytest.fixture
def play_toy(toy_app: Any) -> Callable[..., EpisodeResult]:
    """play_toy(agent, index=0) runs one toy episode with run_episode."""

    def play(agent: Any, index: int = 0, max_steps: int = 3, agent_timeout_s: float = 30.0) -> EpisodeResult:
        query = toy_app.generate(RunOptions(seed=7, queries=2))[index]
        env = toy_app.make_environment(RunOptions())
        task = Task("toy", "e1", "You control a counter. Reply 'set N'.",
                    "zero-shot", max_steps)
        try:
            return run_episode(env, agent, query, task, EpisodeConfig(max_steps, agent_timeout_s), "a2a")
        finally:
            agent.close()
            env.close()

    return play
