"""`cli:NAME[:MODEL]` specs: parsed against the known CLI agents, built only when installed, refused where no tools are."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_netarena.agents.spec import AgentSpec, make_agent, parse_agent_spec
from pytest_netarena.core.errors import BackendUnavailable, UsageError
from pytest_netarena.mcp.cli_agent import CliAgent
from pytest_netarena.mcp.clis import PROFILES


@pytest.mark.parametrize("raw, model", [("cli:codex", None), ("cli:codex:gpt-5", "gpt-5"),
                                        ("cli:claude-code:claude-sonnet-4-5", "claude-sonnet-4-5")])
def test_known_cli_agents_parse_with_an_optional_model(raw: str, model: str | None, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    spec = parse_agent_spec(raw)
    assert spec.kind == "cli" and spec.slug == raw.replace(":", "-")
    name = raw.split(":")[1]
    folder = tmp_path / "install"
    monkeypatch.setenv(f"NETARENA_CLI_{name.upper().replace('-', '_')}", str(folder))
    profile_folder, _ = PROFILES[name]().locate()
    profile_folder.mkdir(parents=True)
    agent = make_agent(AgentSpec(spec.raw, spec.kind, spec.target, {"api_base": "http://127.0.0.1:9/v1"}),
                       None, None, None)
    assert isinstance(agent, CliAgent) and agent.model == model and agent.api_base == "http://127.0.0.1:9/v1"
    assert agent.interface == "cli" and callable(agent.drive)


@pytest.mark.parametrize("raw", ["cli:aider", "cli:codex:", "cli:"])
def test_unknown_or_malformed_cli_specs_are_usage_errors_naming_the_known_ones(raw: str) -> None:
    with pytest.raises(UsageError, match="cli:codex, cli:claude-code|malformed"):
        parse_agent_spec(raw)


def test_a_cli_that_is_not_installed_cannot_be_built_and_says_how_to_install_it(tmp_path: Path,
                                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NETARENA_NPM_CACHE", str(tmp_path / "empty"))
    monkeypatch.delenv("NETARENA_CLI_CODEX", raising=False)
    with pytest.raises(BackendUnavailable, match="netarena cli-agents install codex"):
        make_agent(parse_agent_spec("cli:codex"), None, None, None)


def test_a_cli_agent_is_refused_where_no_tools_are_offered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_netarena.apps import get_app
    from pytest_netarena.core.app import RunOptions
    from pytest_netarena.run.runner import play

    monkeypatch.setenv("NETARENA_CLI_CODEX", str(tmp_path))
    (tmp_path / "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl").mkdir(parents=True)
    app = get_app("malt")
    options = RunOptions(seed=1, queries=1, levels=(1,), rules="netarena", extra={"malt_topology": "synthetic:200"})
    query = app.generate(options)[0]
    env = app.make_environment(options)
    try:
        with pytest.raises(UsageError, match="--compat netarena"):
            play(app, env, parse_agent_spec("cli:codex"), query, options, 30)
    finally:
        env.close()
