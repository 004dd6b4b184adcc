"""Agents fail fast: no credentials, a key the provider refuses, an endpoint that does not answer, a CLI that is not
installed or a cost cap that cannot be enforced is one usage error before collection (with the fix), never an error per
episode. Each agent kind is checked with one real request (a provider's list of models, an A2A agent's card)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from pytest_netarena.testing.openai_server import OpenAIStubServer

RECIPE = "--agent=openai:MODEL --llm-api-base URL"


@pytest.fixture
def keyless(toy: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE", "ANTHROPIC_API_KEY", "CODEX_API_KEY",
                 "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    return toy


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def one_error(result: pytest.RunResult) -> str:
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()[-2000:]
    errors = [line for line in result.stderr.lines if line.strip()]
    assert len(errors) == 1, errors
    assert "collected" not in result.stdout.str()  # before collection
    return errors[0]


def test_no_api_key_is_one_usage_error_with_the_local_server_recipe(keyless: pytest.Pytester) -> None:
    error = one_error(keyless.runpytest_subprocess("--agent=openai:gpt-4o", "--queries=2"))
    assert "openai:gpt-4o" in error and "OPENAI_API_KEY" in error and RECIPE in error
    assert not (keyless.path / "reports").exists()


def test_a_litellm_provider_without_its_key_is_one_usage_error(keyless: pytest.Pytester) -> None:
    error = one_error(keyless.runpytest_subprocess("--agent=anthropic:claude-sonnet-4-5", "--queries=2"))
    assert "anthropic:claude-sonnet-4-5" in error and "ANTHROPIC_API_KEY" in error


def test_an_endpoint_that_does_not_answer_is_one_usage_error(keyless: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "anything")
    base = f"http://127.0.0.1:{closed_port()}/v1"
    error = one_error(keyless.runpytest_subprocess("--agent=openai:my-model", f"--llm-api-base={base}", "--queries=2"))
    assert base in error and "does not answer" in error


@pytest.mark.parametrize("client", ["auto", "litellm"])
def test_a_key_the_provider_refuses_is_one_usage_error_before_any_completion(keyless: pytest.Pytester, monkeypatch,
                                                                             client: str) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    with OpenAIStubServer(["set 1"] * 4, api_key="sk-right") as server:
        error = one_error(keyless.runpytest_subprocess("--agent=openai:my-model", f"--llm-api-base={server.url}/v1",
                                                       f"--llm-client={client}", "--queries=2"))
        assert server.requests == [] and server.pending == 4  # one listing request, no completion
        base = f"{server.url}/v1"
    assert error.startswith("ERROR: pytest-netarena: model agent openai:my-model: the provider at ")
    assert f"{base} refused the key (HTTP 401: Incorrect API key provided.)" in error and RECIPE in error
    assert not (keyless.path / "reports").exists()


def test_no_route_to_the_provider_is_one_usage_error(keyless: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-any")
    base = "http://192.0.2.1:9/v1"  # TEST-NET-1: an address no network routes to a server
    error = one_error(keyless.runpytest_subprocess("--agent=openai:gpt-4o", f"--llm-api-base={base}", "--queries=2"))
    assert f"{base} does not answer" in error and "route to the provider" in error


def test_the_providers_own_endpoint_is_checked_too(keyless: pytest.Pytester, monkeypatch) -> None:
    """No --llm-api-base: the provider's public endpoint gets the request (offline: unreachable; online: the made-up
    key is refused). Either way one usage error, where it had been one infrastructure error per episode."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-made-up-for-this-test")
    error = one_error(keyless.runpytest_subprocess("--agent=openai:gpt-4o", "--queries=2"))
    assert "https://api.openai.com/v1" in error and ("does not answer" in error or "refused the key" in error)


def fake_install(tmp_path: Path, monkeypatch, name: str) -> None:
    """An install folder where the profile looks (the program is not run: the checks come before any episode)."""
    from pytest_netarena.mcp.clis import PROFILES

    root = tmp_path / f"{name}-install"
    folder, _ = PROFILES[name]().program(root)
    folder.mkdir(parents=True)
    monkeypatch.setenv(f"NETARENA_CLI_{name.upper().replace('-', '_')}", str(root))


def test_a_cli_agent_that_is_not_installed_is_one_usage_error(keyless: pytest.Pytester, monkeypatch,
                                                              tmp_path: Path) -> None:
    monkeypatch.setenv("NETARENA_CLI_CODEX", str(tmp_path / "nothing-here"))
    error = one_error(keyless.runpytest_subprocess("--agent=cli:codex", "--queries=2"))
    assert "--agent cli:codex: codex is not installed here" in error
    assert "netarena cli-agents install codex" in error


@pytest.mark.parametrize("name, key", [("codex", "OPENAI_API_KEY or CODEX_API_KEY"),
                                       ("claude-code", "ANTHROPIC_API_KEY")])
def test_a_cli_agent_without_its_key_is_one_usage_error(keyless: pytest.Pytester, monkeypatch, tmp_path: Path,
                                                        name: str, key: str) -> None:
    fake_install(tmp_path, monkeypatch, name)
    error = one_error(keyless.runpytest_subprocess(f"--agent=cli:{name}", "--queries=2"))
    assert f"--agent cli:{name}: {key} is not set" in error and "--llm-api-base" in error


@pytest.mark.parametrize("name, variable", [("codex", "OPENAI_API_KEY"), ("claude-code", "ANTHROPIC_API_KEY")])
def test_a_cli_agents_refused_key_is_one_usage_error(keyless: pytest.Pytester, monkeypatch, tmp_path: Path,
                                                     name: str, variable: str) -> None:
    from pytest_netarena.testing.messages_stub import MessagesStub
    from pytest_netarena.testing.responses_stub import ResponsesStub

    fake_install(tmp_path, monkeypatch, name)
    monkeypatch.setenv(variable, "wrong-key")
    stub, path = (ResponsesStub, "/v1") if name == "codex" else (MessagesStub, "")
    with stub([], api_key="right-key") as model:
        error = one_error(keyless.runpytest_subprocess(f"--agent=cli:{name}", f"--llm-api-base={model.url}{path}",
                                                       "--queries=2"))
        assert model.requests == []
        base = f"{model.url}{path}"
    assert f"--agent cli:{name}: the provider at {base} refused the key (HTTP 401" in error
    assert variable in error


def test_a_local_server_with_any_key_runs(keyless: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "any")
    with OpenAIStubServer(lambda request: "set " + request["messages"][-1]["content"].rsplit(" ", 1)[1]) as server:
        result = keyless.runpytest_subprocess("--agent=openai:my-model", f"--llm-api-base={server.url}/v1",
                                              "--queries=1")
    result.assert_outcomes(passed=2)


def test_a_replayed_run_needs_no_key_and_no_endpoint(keyless: pytest.Pytester, tmp_path: Path) -> None:
    result = keyless.runpytest_subprocess("--agent=openai:gpt-4o", f"--llm-replay={tmp_path}", "--queries=1")
    result.assert_outcomes(errors=2)  # nothing recorded there: infra errors, but the run starts
    result.stdout.fnmatch_lines(["*no recorded answer for this request*"])


def test_a_cost_cap_on_a_model_without_a_price_is_refused(keyless: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "any")
    with OpenAIStubServer(["set 1"]) as server:
        error = one_error(keyless.runpytest_subprocess("--agent=openai:my-local-model", "--max-cost-usd=1",
                                                       f"--llm-api-base={server.url}/v1"))
    assert "--max-cost-usd" in error and "no price is known for openai:my-local-model" in error
    assert "--max-tokens" in error


def test_a_cost_cap_with_a_token_cap_on_an_unpriced_model_warns_at_start(keyless: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "any")
    with OpenAIStubServer(lambda request: "set " + request["messages"][-1]["content"].rsplit(" ", 1)[1]) as server:
        result = keyless.runpytest_subprocess("--agent=openai:my-local-model", "--max-cost-usd=1",
                                              "--max-tokens=100000", f"--llm-api-base={server.url}/v1",
                                              "--queries=1")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["netarena: warning: no price is known for openai:my-local-model*--max-tokens*"])


def test_a_priced_model_keeps_its_cost_cap(keyless: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "any")
    with OpenAIStubServer(lambda request: "set " + request["messages"][-1]["content"].rsplit(" ", 1)[1]) as server:
        result = keyless.runpytest_subprocess("--agent=openai:gpt-4o", "--max-cost-usd=5",
                                              f"--llm-api-base={server.url}/v1", "--queries=1")
    result.assert_outcomes(passed=2)
    assert "no price is known" not in result.stdout.str()


def test_the_readme_shows_the_local_server_recipe() -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    assert "--agent=openai:MODEL --llm-api-base" in readme and "OPENAI_API_KEY=any" in readme
