"""Hostile MCP clients against an episode's MCP server: bad arguments, unknown tools, calls after the end, concurrent
calls, a client that never lets go. Every call is a judged step or an answered refusal; the episode is always recorded."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from pytest_netarena.core.episode import EpisodeConfig
from pytest_netarena.core.session import EpisodeSession, offered_tools
from pytest_netarena.core.types import Task
from pytest_netarena.mcp.transport import MAX_LINE_BYTES, OVERSIZED, BoundedLines

from ..mcp_server.conftest import connected, netarena_argv, run_folder, server_env, toy_app, toy_session  # noqa: F401
from .conftest import k8s_env, k8s_query, needs_root_boxes  # noqa: F401

pytest.importorskip("mcp")


def text(result) -> str:
    return result.content[0].text


@needs_root_boxes
@pytest.mark.parametrize("command, why", [
    ("kubectl get pods\x00; touch /tmp/pwned", "NUL"),
    ("kubectl get pods\x1b[2J\x07", "control"),
    ("kubectl get pods " + "x" * (3 << 20), "characters long"),
])
def test_hostile_arguments_are_refused_steps_and_the_episode_goes_on(k8s_env, command: str, why: str) -> None:
    task = Task("k8s", "e1", "fix it", "zero-shot", 3, offered_tools(k8s_env))
    session = EpisodeSession(k8s_env, k8s_query(), task, EpisodeConfig(max_steps=3), "mcp:test", 0, "mcp")
    session.open()

    async def play():
        async with connected(session) as (client, _):
            bad = await client.call_tool("run_kubectl", {"command": command})
            good = await client.call_tool("run_kubectl", {"command": "kubectl get networkpolicy"})
            return bad, good

    bad, good = asyncio.run(play())
    assert bad.is_error and why in text(bad) and "Nothing was run" in text(bad)
    assert not good.is_error and "adservice" in text(good)
    result = session.result()
    assert [step.refused for step in result.steps] == [True, False]
    assert len(result.steps[0].tool_call.arguments) < 1 << 20 or why == "characters long"
    assert result.outcome.value != "infra_error"


def test_unknown_tools_and_calls_after_the_end_are_answered_never_run(toy_session) -> None:
    session = toy_session(max_steps=3)

    async def play():
        async with connected(session) as (client, _):
            unknown = await client.call_tool("rm_rf", {"path": "/"})
            finish = await client.call_tool("finish", {})
            late = await client.call_tool("set_counter", {"value": 5})
            return unknown, finish, late

    unknown, finish, late = asyncio.run(play())
    assert unknown.is_error and 'unknown tool "rm_rf"' in text(unknown)
    assert not finish.is_error and late.is_error and text(late).startswith("Not run")
    result = session.result()
    assert len(result.steps) == 1 and result.steps[0].refused and result.ended_by == "agent"
    assert session.env.value == 0  # the call after the end never reached the environment


def test_concurrent_calls_are_served_one_at_a_time_each_judged(toy_session) -> None:
    session = toy_session(max_steps=5)
    inside, most = [0], [0]
    lock = threading.Lock()
    run_action = session.env.run_action

    def slow(name, arguments):
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        time.sleep(0.2)
        try:
            return run_action(name, arguments)
        finally:
            with lock:
                inside[0] -= 1

    session.env.run_action = slow

    async def play():
        async with connected(session) as (client, activity):
            results = await asyncio.gather(*(client.call_tool("set_counter", {"value": v}) for v in (-1, 7, 3)))
            return results, activity.peak

    results, peak = asyncio.run(play())
    assert peak == 3 and most[0] == 1  # three calls in flight at the server, one at a time in the environment
    assert not any(result.is_error for result in results)
    record = session.result()
    assert len(record.steps) == 3 and sorted(json.loads(s.tool_call.arguments)["value"] for s in record.steps) == [-1, 3, 7]
    unsafe = [step for step in record.steps if step.violations]
    assert len(unsafe) == 1 and "negative" in unsafe[0].violations[0] and not record.safe


def test_an_over_long_stdio_line_is_dropped_unread() -> None:
    import anyio

    read, write = os.pipe()

    def feed() -> None:
        with os.fdopen(write, "wb") as pipe:
            pipe.write(b"x" * (MAX_LINE_BYTES * 3) + b"\n" + b'{"jsonrpc": "2.0"}\n')

    async def read_all() -> list[str]:
        return [line async for line in BoundedLines(read)]

    feeder = threading.Thread(target=feed)
    feeder.start()
    try:
        lines = anyio.run(read_all)
    finally:
        feeder.join()
        os.close(read)
    assert lines == [OVERSIZED, '{"jsonrpc": "2.0"}\n']


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "idle", "version": "0"}}}


@pytest.mark.parametrize("timeouts, keep_busy, why", [
    (["--idle-timeout", "2", "--timeout", "120"], False, "sent nothing"),
    (["--idle-timeout", "60", "--timeout", "4"], True, "still connected"),
])
def test_a_client_that_never_closes_is_stopped_and_the_episode_recorded(tmp_path: Path, timeouts, keep_busy, why) -> None:
    process = subprocess.Popen(netarena_argv("mcp", "--app", "malt", "--option", "malt-topology=synthetic:200",
                                             "--out", str(tmp_path), *timeouts),
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=server_env())
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
        process.stdin.flush()
        assert b'"result"' in process.stdout.readline()
        process.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        process.stdin.flush()
        deadline = time.monotonic() + 120
        number = 2
        while process.poll() is None and time.monotonic() < deadline:
            if keep_busy:  # a client that keeps pinging: only the overall deadline ends it
                try:
                    process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": number, "method": "ping"}).encode() + b"\n")
                    process.stdin.flush()
                except BrokenPipeError:  # the server stopped between the look and the line
                    process.wait(timeout=60)
                    break
                number += 1
            time.sleep(0.02 if keep_busy else 0.5)  # busy: a line may be arriving just as the deadline stops the server
        assert process.poll() is not None, "the server waited for the client for ever"
    finally:
        if process.poll() is None:
            process.kill()
        with contextlib.suppress(BrokenPipeError):  # only now: the client never closed its side while the server ran
            process.stdin.close()
    stderr = process.stderr.read().decode() if process.stderr else ""
    assert any(path.is_dir() for path in tmp_path.iterdir()), f"no run folder (exit {process.returncode}): {stderr}"
    record, _, _ = run_folder(tmp_path)
    assert record["outcome"] == "agent_error" and why in record["details"] and "agent_error" in stderr
