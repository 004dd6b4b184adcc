"""`netarena mcp` driven by the official MCP client library: the episode it records equals the same actions through a
python: agent, over stdio (k8s) and streamable HTTP (malt), and nothing hidden reaches the client."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import httpx
import pytest

from pytest_netarena.apps import get_app
from pytest_netarena.mcp.episode import ServeConfig, pick_query

from .conftest import netarena_argv, play_python, run_folder, server_env, start_http_server, steps_of

pytest.importorskip("mcp")


def hidden_words(query) -> list[str]:
    """What names the hidden query: its id, its category and each fault type (symptoms never name them)."""
    faults = query.params.get("faults") or []
    return [query.id, query.category, *{f["type"] for f in faults if isinstance(f, dict) and "type" in f}]


def seen_by_client(init, tools, prompt, results) -> str:
    return "\n".join([init.instructions or "", json.dumps(init.server_info.model_dump()),
                      *(f"{t.name} {t.description} {json.dumps(t.input_schema)}" for t in tools.tools),
                      *(m.content.text for m in prompt.messages), *results])


@pytest.fixture(scope="module")
def k8s_case():
    """A k8s query netarena mcp will serve for seed 3 at level 1, its oracle's commands, and an environment."""
    from pytest_netarena.apps.k8s.agents.builtin import OracleAgent

    config = ServeConfig(app="k8s", seed=3, levels=(1,))
    app, options = get_app("k8s"), config.run_options()
    query = pick_query(app, options)
    env = app.make_environment(options)
    yield app, env, query, options, [command for command, _ in OracleAgent(query, env).commands]
    env.close()


def test_stdio_episode_equals_the_same_actions_through_a_python_agent(k8s_case, tmp_path: Path) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    app, env, query, options, fixes = k8s_case
    calls = [("run_kubectl", {"command": "kubectl get networkpolicy"}),
             ("run_kubectl", {"command": "kubectl delete pod --all --dry-run=client"}),
             *[("run_kubectl", {"command": command}) for command in fixes]]

    async def play() -> tuple:
        params = StdioServerParameters(command=netarena_argv()[0], args=[*netarena_argv()[1:], "mcp", "--app", "k8s",
                                       "--seed", "3", "--levels", "1", "--out", str(tmp_path)], env=server_env())
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            init = await client.initialize()
            tools = await client.list_tools()
            prompt = await client.get_prompt("task")
            results = [await client.call_tool(name, arguments) for name, arguments in calls]
            done = await client.call_tool("finish", {"summary": "done"})
            return init, tools, prompt, results, done

    init, tools, prompt, results, done = asyncio.run(play())
    assert [tool.name for tool in tools.tools] == ["run_kubectl", "finish"]
    assert "kubectl" in init.instructions and prompt.messages[0].content.text.endswith(query_symptom_tail(init))
    assert not any(result.is_error for result in results)
    # fixed, the episode was already over: finish is what its description asks for, never an error
    assert not done.is_error and "environment ended it" in done.content[0].text
    assert "[Step 2 of 10" in results[0].content[0].text
    texts = [result.content[0].text for result in results]
    for word in hidden_words(query):
        assert word not in seen_by_client(init, tools, prompt, texts), word

    record, info, summary = run_folder(tmp_path)
    expected = play_python(app, env, query, options, calls)
    assert record["query"]["id"] == query.id and record["interface"] == "mcp" and record["agent"].startswith("mcp:")
    assert (record["outcome"], record["correct"], record["safe"]) == (expected.outcome.value, expected.correct,
                                                                     expected.safe) == ("resolved", True, True)
    assert steps_of(record) == steps_of(expected)
    assert record["ended_by"] == expected.ended_by == "environment"
    assert info["generator"] == "netarena mcp" and summary["groups"][0]["overall"]["episodes"] == 1


def query_symptom_tail(init) -> str:
    """The last line of the first symptom, as the instructions end (the prompt holds the same task)."""
    return init.instructions.rstrip().splitlines()[-1]


def test_http_episode_with_a_token_equals_the_python_agents(tmp_path: Path) -> None:
    from mcp.client.streamable_http import streamable_http_client

    from pytest_netarena.apps.malt.agents.builtin import oracle_code

    options_args = ["--option", "malt-topology=synthetic:200", "--seed", "2", "--levels", "1"]
    config = ServeConfig(app="malt", seed=2, levels=(1,), extra={"malt_topology": "synthetic:200"})
    app, options = get_app("malt"), config.run_options()
    query = pick_query(app, options)
    calls = [("run_process_graph", {"code": oracle_code(query)})]
    process, url, token = start_http_server("--app", "malt", *options_args, out=tmp_path)
    try:
        assert httpx.post(url, json={}, timeout=10).status_code == 401  # no token, nothing reached
        wrong = httpx.post(url, json={}, headers={"Authorization": "Bearer wrong"}, timeout=10)
        assert wrong.status_code == 401
        huge = httpx.post(url, content=b"x" * (2 << 20), headers={"Authorization": f"Bearer {token}",
                                                                   "Content-Type": "application/json"}, timeout=30)
        assert huge.status_code == 413
        rebinding = httpx.post(url, json={}, headers={"Authorization": f"Bearer {token}", "Host": "evil.example"},
                               timeout=10)
        assert rebinding.status_code in (403, 421)

        async def play() -> tuple:
            import httpx2
            from mcp import Client

            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120)
            async with http, Client(streamable_http_client(url, http_client=http)) as client:
                results = [await client.call_tool(name, arguments) for name, arguments in calls]
                verdict = await client.read_resource("netarena://episode/verdict")
                return results, client.protocol_version, verdict

        results, version, verdict = asyncio.run(play())
        # the SDK's newest revision, with the verdict in the last step's result (the environment ended the
        # episode with its one answer) and as a resource
        assert version == "2026-07-28"
        assert results[-1].content[-1].text.startswith("Verdict: resolved (correct: yes, every step safe: yes)")
        assert json.loads(verdict.contents[0].text)["outcome"] == "resolved"
        process.wait(timeout=120)  # the episode ended with its one answer: the server stops by itself
    finally:
        if process.poll() is None:
            process.kill()
    output = process.stdout.read() if process.stdout else ""
    assert process.returncode == 0 and "resolved" in output and query.id not in output
    assert not results[0].is_error
    record, _, _ = run_folder(tmp_path)
    env = app.make_environment(options)
    try:
        expected = play_python(app, env, query, options, calls)
    finally:
        env.close()
    assert (record["outcome"], record["correct"], record["safe"]) == (expected.outcome.value, expected.correct,
                                                                     expected.safe) == ("resolved", True, True)
    assert steps_of(record) == steps_of(expected) and record["interface"] == "mcp"


@pytest.mark.parametrize("args, message", [
    (["--http", "0.0.0.0:8765"], "loopback only"),
    (["--http", "192.168.1.2:80"], "loopback only"),
    (["--levels", "7"], "--levels"),
    (["--option", "nonsense"], "NAME=VALUE"),
    (["--prompt-style", "magic"], "--prompt-style must be one of"),
    (["--strategy", "magic"], "--prompt-style must be one of"),  # its old name, the same option
])
def test_bad_options_are_one_line_usage_errors(args: list[str], message: str, tmp_path: Path) -> None:
    done = subprocess.run(netarena_argv("mcp", "--app", "malt", "--out", str(tmp_path), *args), capture_output=True,
                          text=True, env=server_env(), timeout=120)
    assert done.returncode == 2 and message in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())


def test_an_unknown_app_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run(netarena_argv("mcp", "--app", "nope", "--out", str(tmp_path)), capture_output=True,
                          text=True, env=server_env(), timeout=120)
    assert done.returncode == 2 and "unknown app" in done.stderr


def test_the_prompt_style_option_keeps_its_old_name() -> None:
    import argparse

    from pytest_netarena.mcp.cli import register

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    for flag in ("--prompt-style", "--strategy"):
        assert parser.parse_args(["mcp", "--app", "k8s", flag, "cot"]).prompt_style == "cot"
    assert parser.parse_args(["mcp", "--app", "k8s"]).prompt_style == "zero-shot"
