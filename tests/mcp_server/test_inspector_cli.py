"""The MCP Inspector's CLI plays a whole k8s episode of `netarena mcp --http`, one call per process (docs/agents.md):
each call opens an MCP session of its own and never ends it, so the server must make room for more calls than it
keeps sessions (MAX_SESSIONS) while the episode goes on across them."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from pytest_netarena.mcp.transport import MAX_SESSIONS

from .conftest import SERVE, run_folder, start_http_server
from .inspector_cli import INSPECTOR, inspector_cli

pytest.importorskip("mcp")


@pytest.fixture(scope="module")
def inspector() -> str:
    from pytest_netarena.core.errors import UsageError

    if shutil.which("node") is None:
        pytest.skip("the MCP Inspector needs Node.js (apt-get install nodejs npm)")
    try:
        return str(inspector_cli())
    except UsageError as error:
        pytest.skip(f"cannot install {'@'.join(INSPECTOR)} here: {error}")


def call(inspector: str, url: str, token: str, *args: str) -> dict:
    """One Inspector CLI process: one MCP session, one request; its JSON answer."""
    done = subprocess.run([inspector, "--cli", url, "--header", f"Authorization: Bearer {token}", *args],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, (args, done.stdout[-2000:], done.stderr[-2000:])
    return json.loads(done.stdout)


def test_the_inspector_cli_plays_a_whole_episode_one_process_per_call(inspector, oracle_calls, tmp_path) -> None:
    process, url, token = start_http_server(*SERVE[1:], out=tmp_path)
    try:
        # more sessions than the server keeps, none of them ended: the old server refused the ninth (503)
        listed = [call(inspector, url, token, "--method", "tools/list") for _ in range(MAX_SESSIONS + 2)]
        assert {tool["name"] for tool in listed[-1]["tools"]} == {"run_kubectl", "finish"}
        verdict = "--method", "resources/read", "--uri", "netarena://episode/verdict"
        before = json.loads(call(inspector, url, token, *verdict)["contents"][0]["text"])
        steps = [["run_kubectl", {"command": "kubectl get networkpolicy"}], *oracle_calls]
        results = [call(inspector, url, token, "--method", "tools/call", "--tool-name", name,
                        "--tool-arg", f"command={arguments['command']}") for name, arguments in steps]
        finish = call(inspector, url, token, "--method", "tools/call", "--tool-name", "finish",
                      "--tool-arg", "summary=fixed")
        after = json.loads(call(inspector, url, token, *verdict)["contents"][0]["text"])
        process.wait(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert before["over"] is False
    texts = [[part["text"] for part in result["content"]] for result in results]
    # one episode across every process: the steps count on, and the oracle's last command resolved it
    assert texts[0][0].startswith("[Step 2 of ") and "networkpolicy" in texts[0][0], texts[0]
    assert texts[-1][0].startswith(f"[Episode over: {len(steps)} of ") and texts[-1][-1].startswith("Verdict: resolved")
    assert not any(result.get("isError") for result in results)
    assert finish["structuredContent"]["verdict"]["outcome"] == "resolved"
    assert after["over"] is True and after["outcome"] == "resolved" and after["steps"] == len(steps)
    record, _, _ = run_folder(tmp_path)
    assert record["outcome"] == "resolved" and record["interface"] == "mcp"
