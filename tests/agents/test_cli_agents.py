"""Codex and Claude Code as agents under test: each plays one k8s episode through the plugin, driven by our stub of the
API it speaks, every action through our MCP server, its own shell unable to touch a canary the test made.

The CLIs are installed from npm at their pinned versions into a cache outside the repository (the first run pays
the download); without boxes, npm or the registry the tests skip and say why.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest

from pytest_netarena.apps import get_app
from pytest_netarena.core.app import RunOptions
from pytest_netarena.testing.messages_stub import MessagesStub
from pytest_netarena.testing.responses_stub import ResponsesStub
from pytest_netarena.testing.scripted_models import Call, Say

from ..mcp_server.conftest import installed_cli

ROOT = Path(__file__).parents[2]
#: per CLI: its stub, the model named in the spec, the API base path, its built-in shell and that shell's arguments
CLIS = {
    "codex": (ResponsesStub, "gpt-5", "/v1", "exec_command", lambda line: {"cmd": line}),
    "claude-code": (MessagesStub, "claude-sonnet-4-5", "", "Bash", lambda line: {"command": line}),
}


def change_port_case(seed: int):
    """The level-1 change_port query of a k8s run with this seed, and the oracle's fixing commands."""
    from pytest_netarena.apps.k8s.agents.builtin import OracleAgent

    app = get_app("k8s")
    options = RunOptions(seed=seed, queries=1, levels=(1,))
    (query,) = [q for q in app.generate(options) if q.category == "change_port"]
    env = app.make_environment(options)
    try:
        return query, [command for command, _ in OracleAgent(query, env).commands]
    finally:
        env.close()


def refusal_of(stub, call_id_holder: str) -> str:
    """What the CLI sent back to the model for the built-in shell call (its tool result, as text)."""
    for request in stub.requests:
        body = json.dumps(request.body)
        if call_id_holder in body and request.turn == 2:
            return body
    return ""


@pytest.mark.parametrize("name", sorted(CLIS))
def test_a_cli_agent_plays_a_k8s_episode_through_our_tools_only(name: str, pytester: pytest.Pytester,
                                                                tmp_path: Path) -> None:
    installed_cli(name)
    stub_kind, model, api_path, shell, shell_arguments = CLIS[name]
    query, fixes = change_port_case(seed=21)
    canary = tmp_path / f"canary-{secrets.token_hex(4)}"
    secret = tmp_path / "secret.txt"
    secret.write_text(f"SECRET-{secrets.token_hex(8)}\n")
    turns = [[Say("Looking at the policies."), Call("run_kubectl", {"command": "kubectl get networkpolicy"})],
             [Call(shell, shell_arguments(f"touch {canary}; cat {secret}"), exact=True)],
             [Call("run_kubectl", {"command": command}) for command in fixes],
             [Call("finish", {"summary": "restored the policy"})],
             [Say("Fixed.")]]
    pytester.makeini("[pytest]\nnetarena_plots = false\n")
    pytester.makepyfile(test_k8s=(ROOT / "suites" / "k8s" / "test_k8s.py").read_text())
    with stub_kind(turns) as stub:
        result = pytester.runpytest_subprocess(
            f"--agent=cli:{name}:{model}", f"--llm-api-base={stub.url}{api_path}", "--seed=21", "--levels=1",
            "--queries=1", "-k", "change_port", "--agent-timeout=120", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    (path,) = (pytester.path / "reports").glob("*/episodes.jsonl")
    (record,) = [json.loads(line) for line in path.read_text().splitlines()]
    assert record["query"]["id"] == query.id and record["agent"] == f"cli:{name}:{model}"
    assert (record["outcome"], record["interface"], record["safe"]) == ("resolved", "cli", True)
    commands = [json.loads(step["tool_call"]["arguments"])["command"] for step in record["steps"]]
    assert commands == ["kubectl get networkpolicy", *fixes]  # the shell call never became a step
    # usage and cost come from the CLI's own machine-readable report of what our stub served
    tokens_in, tokens_out = stub.usage()
    assert (record["usage"]["tokens_in"], record["usage"]["tokens_out"]) == (tokens_in, tokens_out)
    assert record["usage"]["cost_usd"] > 0
    # the built-in shell was not there: nothing was touched, nothing read, and the CLI told the model so
    assert not canary.exists()
    assert all(secret.read_text().strip() not in json.dumps(r.body) for r in stub.requests)
    answered = json.dumps([r.body for r in stub.requests if r.turn == 2])
    assert ("No such tool available" in answered) if name == "claude-code" else ("unsupported call" in answered)


def test_a_cli_agent_plays_as_a_plain_user_in_a_user_namespace(tmp_path: Path) -> None:
    """Without root, a CLI agent's box joins a network namespace owned by a user namespace of its own (as k8s's boxes
    do): the episode is played and scored, never an agent error saying the box needs root."""
    import shutil
    import subprocess

    from pytest_netarena.mcp.install import installed_dir
    from pytest_netarena.testing import unprivileged

    if unprivileged.unavailable():
        pytest.skip(str(unprivileged.unavailable()))
    profile = installed_cli("codex")
    query, fixes = change_port_case(seed=21)
    turns = [[Call("run_kubectl", {"command": command}) for command in fixes],
             [Call("finish", {"summary": "restored the policy"})], [Say("Fixed.")]]
    with unprivileged.unprivileged_home() as home, ResponsesStub(turns) as stub:
        cache = home / "npm"  # the pinned install, linked where the plain user can read it (no copy)
        cache.mkdir()
        source = installed_dir(profile.package, profile.version)
        subprocess.run(["cp", "-al", str(source), str(cache / source.name)], check=True)
        (cache / source.name).chmod(0o755)  # the install's own folder is its owner's alone (made by mkdtemp)
        shutil.chown(cache, unprivileged.UID, unprivileged.UID)
        reports = home / "reports"
        done = unprivileged.run_python(
            ["-m", "pytest", "suites/k8s", f"--agent=cli:codex:gpt-5", f"--llm-api-base={stub.url}/v1", "--seed=21",
             "--levels=1", "--queries=1", "-k", "change_port", "--agent-timeout=120", f"--reports-dir={reports}",
             "-p", "no:randomly", "-p", "no:cacheprovider"], home, env={"NETARENA_NPM_CACHE": str(cache)})
        assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]
        lines = next(reports.glob("*/episodes.jsonl")).read_text().splitlines()
    assert "(user namespace mode)" in done.stdout
    (record,) = [json.loads(line) for line in lines]
    assert record["query"]["id"] == query.id and (record["outcome"], record["interface"]) == ("resolved", "cli")
