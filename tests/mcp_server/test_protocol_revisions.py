"""Clients of every protocol revision play a k8s episode of `netarena mcp` and read its verdict: the SDK 2.x client
negotiates 2026-07-28 (`server/discover`), an SDK 1.x client (its own virtual environment, made once and cached outside
the checkout) the `initialize` handshake of 2025-11-25, each over stdio and streamable HTTP. The verdict reaches the
client in the result of the step after which the environment ended the episode, in finish's result and as the
resource netarena://episode/verdict."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest

from .conftest import SERVE, netarena_argv, run_folder, server_env, start_http_server
from .mcp1_venv import MCP1, mcp1_venv

pytest.importorskip("mcp")


@pytest.fixture(scope="module")
def mcp1_python() -> str:
    from pytest_netarena.testing.venvs import VenvError

    try:
        venv = mcp1_venv()
    except VenvError as error:
        pytest.skip(f"cannot make a virtual environment with {MCP1} here: {error}")
    return str(venv / "bin" / "python")


def check_verdict(texts_of_results: list[list[str]], verdict: dict, before: dict) -> None:
    assert before["over"] is False
    last = texts_of_results[-2]  # the oracle's last command: the environment ended the episode after it
    assert last[-1].startswith("Verdict: resolved (correct: yes, every step safe: yes)"), last
    assert not any(text.startswith("Verdict:") for texts in texts_of_results[:-2] for text in texts)
    finish = texts_of_results[-1]
    assert "environment ended it" in finish[0] and finish[-1].startswith("Verdict: resolved"), finish
    assert verdict["over"] is True and verdict["outcome"] == "resolved" and verdict["safe"] is True
    assert verdict["ended_by"] == "environment" and verdict["steps"] == len(texts_of_results) - 1


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_an_mcp_2x_client_negotiates_2026_07_28_and_reads_the_verdict(transport, oracle_calls, tmp_path) -> None:
    from mcp import Client, StdioServerParameters

    calls = [*oracle_calls, ["finish", {"summary": "fixed"}]]

    async def play(server) -> tuple:
        async with Client(server) as client:
            resources = await client.list_resources()
            before = await client.read_resource("netarena://episode/verdict")
            results = [await client.call_tool(name, arguments) for name, arguments in calls]
            after = await client.read_resource("netarena://episode/verdict")
            return client.protocol_version, resources, before, results, after

    if transport == "stdio":
        server = StdioServerParameters(command=netarena_argv()[0], args=[*netarena_argv(*SERVE)[1:], "--out",
                                       str(tmp_path)], env=server_env())
        version, resources, before, results, after = asyncio.run(play(server))
    else:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        process, url, token = start_http_server(*SERVE[1:], out=tmp_path)
        try:
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120)

            async def over_http() -> tuple:
                async with http:
                    return await play(streamable_http_client(url, http_client=http))

            version, resources, before, results, after = asyncio.run(over_http())
            process.wait(timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
    assert version == "2026-07-28"
    assert {str(r.uri) for r in resources.resources} == {"netarena://episode/task", "netarena://episode/verdict"}
    assert not any(result.is_error for result in results)
    assert results[-1].structured_content["verdict"]["outcome"] == "resolved"
    check_verdict([[part.text for part in result.content] for result in results],
                  json.loads(after.contents[0].text), json.loads(before.contents[0].text))
    record, _, _ = run_folder(tmp_path)
    assert record["outcome"] == "resolved" and record["interface"] == "mcp"


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_an_mcp_1x_client_gets_the_2025_11_25_handshake_and_reads_the_verdict(transport, oracle_calls, mcp1_python,
                                                                            tmp_path) -> None:
    script = str(Path(__file__).with_name("mcp1_client.py"))
    calls = json.dumps([*oracle_calls, ["finish", {"summary": "fixed"}]])
    process = None
    if transport == "stdio":
        argv = [mcp1_python, script, "stdio", *netarena_argv(*SERVE), "--out", str(tmp_path)]
    else:
        process, url, token = start_http_server(*SERVE[1:], out=tmp_path)
        argv = [mcp1_python, script, "http", url, token]
    try:
        done = subprocess.run(argv, input=calls, capture_output=True, text=True, timeout=300, env=server_env())
        if process is not None:
            process.wait(timeout=120)
    finally:
        if process is not None and process.poll() is None:
            process.kill()
    assert done.returncode == 0, done.stderr[-3000:]
    played = json.loads(done.stdout)
    assert played["protocol_version"] == "2025-11-25"
    assert played["resources"] == ["netarena://episode/task", "netarena://episode/verdict"]
    assert not any(result["error"] for result in played["results"])
    check_verdict([result["texts"] for result in played["results"]], played["verdict"], played["verdict_before"])
    record, _, _ = run_folder(tmp_path)
    assert record["outcome"] == "resolved" and record["agent"].startswith("mcp:")
