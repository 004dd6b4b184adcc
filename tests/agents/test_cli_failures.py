"""A CLI agent that crashes, hangs or ignores the end of its episode ends as an agent error with its output kept; one
that fails while its model endpoint is down is an infrastructure error. A stand-in CLI (bash in the CLI's box)
plays each part, so no npm package is needed."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pytest

from pytest_netarena.core.episode import EpisodeConfig, run_episode
from pytest_netarena.core.session import offered_tools
from pytest_netarena.core.types import Task
from pytest_netarena.mcp.cli_agent import CliAgent
from pytest_netarena.mcp.clis import CliProfile, Launch, Report
from pytest_netarena.mcp.relay import ModelCall
from pytest_netarena.sandbox import support
from pytest_netarena.serving import listening_socket, url_of

from ..mcp_server.conftest import toy_app  # noqa: F401

pytestmark = pytest.mark.skipif(not support().root, reason="CLI agents need root-made boxes (a private network namespace)")


class ScriptCli(CliProfile):
    """bash, bound into the box as the CLI's program, running a script (the model and MCP URLs in its environment)."""

    name = "script"
    model_calls = (ModelCall("POST", "/v1/responses"),)

    def __init__(self, folder: Path, script: str) -> None:
        self.folder, self.script = folder, script

    def locate(self):
        return self.folder, f"{self.mount}/bash"

    def launch(self, model, system_prompt, prompt, model_url, mcp_url, token, tool_timeout_s) -> Launch:
        return Launch((f"{self.mount}/bash", "-c", self.script), {"MODEL_URL": model_url, "MCP_URL": mcp_url}, {})

    def credentials(self) -> dict[str, str]:
        return {}

    def read(self, output: str, model) -> Report:
        return Report()


@pytest.fixture
def play(toy_app, tmp_path: Path):
    """play(script, **agent settings, during=callable(session)): one toy episode of the stand-in CLI; its result."""
    from pytest_netarena.core.app import RunOptions

    folder = tmp_path / "cli"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)  # pytest's own folders are private: the box's uid must read its program folder
    for program in ("bash", "sleep"):
        shutil.copy2(shutil.which(program), folder / program)

    def run(script: str, during=None, **settings):
        query = toy_app.APP.generate(RunOptions(seed=1, queries=1, levels=(1,)))[0]
        env = toy_app.APP.make_environment(RunOptions())
        agent = CliAgent(ScriptCli(folder, script), **settings)
        if during is not None:
            original = agent.drive

            def drive(session):
                threading.Thread(target=during, args=(session,), daemon=True).start()
                return original(session)

            agent.drive = drive
        task = Task("toy", "e1", "You control a counter.", "zero-shot", 3, offered_tools(env))
        started = time.monotonic()
        result = run_episode(env, agent, query, task, EpisodeConfig(max_steps=3, agent_timeout_s=60), "cli:script")
        return result, time.monotonic() - started

    return run


def test_a_crashing_cli_is_an_agent_error_with_its_output(play) -> None:
    result, _ = play("echo 'panic: out of ideas' >&2; exit 3")
    assert result.outcome.value == "agent_error" and result.interface == "cli"
    assert "exited with status 3" in result.details and "panic: out of ideas" in result.details


def test_a_hanging_cli_is_stopped_at_the_agent_timeout(play) -> None:
    result, took = play("echo waiting; exec ${0%/bash}/sleep 600", timeout_s=2)
    assert result.outcome.value == "agent_error" and "made no request for 2 s" in result.details
    assert "waiting" in result.details and took < 60


def test_a_cli_that_runs_on_after_the_episode_ended_is_stopped(play) -> None:
    def end_soon(session):
        time.sleep(1)
        session.finish()

    result, took = play("echo still here; exec ${0%/bash}/sleep 600", during=end_soon, grace_s=2)
    assert result.outcome.value == "agent_error" and "kept running 2 s after the episode ended" in result.details
    assert took < 60


def test_a_cli_failing_while_its_endpoint_is_down_is_an_infrastructure_error(play) -> None:
    probe = listening_socket()
    dead = url_of(probe)
    probe.close()
    script = ('rest=${MODEL_URL#http://127.0.0.1:}; port=${rest%%/*}; exec 3<>/dev/tcp/127.0.0.1/$port; '
              "printf 'POST /model/v1/responses HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 2\\r\\n"
              "Connection: close\\r\\n\\r\\n{}' >&3; cat <&3; exit 1")
    result, _ = play(script, api_base=dead)
    assert result.outcome.value == "infra_error" and "model endpoint failed" in result.details


#: one model call, its answer read to the end (bash's own read: the box holds no cat), then a failure
POST_RESPONSES = ('rest=${MODEL_URL#http://127.0.0.1:}; port=${rest%%/*}; exec 3<>/dev/tcp/127.0.0.1/$port; '
                  "printf 'POST /model/v1/responses HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 2\\r\\n"
                  "Connection: close\\r\\n\\r\\n{}' >&3; while IFS= read -r line <&3; do echo \"$line\"; done; "
                  "exit 1")


def test_a_cli_failing_after_the_endpoint_refused_the_operators_key_is_an_infrastructure_error(play) -> None:
    """The harness asks the endpoint itself with the key: it is refused there too, so the failure is not the agent's."""
    from pytest_netarena.testing.openai_server import OpenAIStubServer

    with OpenAIStubServer(["never served"], api_key="sk-the-right-one") as upstream:
        result, _ = play(POST_RESPONSES, api_base=upstream.url)
    assert result.outcome.value == "infra_error", result.details
    assert "refused the key (HTTP 401)" in result.details


def test_a_refusal_the_box_provoked_while_the_key_is_good_stays_the_agents(play) -> None:
    """A 403 of the box's own making (a model the key may not use) with a key the endpoint accepts: an agent error."""
    from http.server import BaseHTTPRequestHandler

    from pytest_netarena.testing.local_http import serving

    class Endpoint(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def answer(self, status: int) -> None:
            body = b'{"error": {"message": "this key may not use that model"}}'
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # the harness's own check of the key
            self.answer(200 if self.path.rstrip("/").endswith("/models") else 404)

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.answer(403)

    with serving(Endpoint) as url:
        result, _ = play(POST_RESPONSES, api_base=url)
    assert result.outcome.value == "agent_error" and "exited with status 1" in result.details, result.details
