"""Model agents fail fast: no credentials, an endpoint that does not answer or a cost cap that cannot be enforced is
one usage error before collection (with the local-server recipe), never an error per episode."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from pytest_netarena.testing.openai_server import OpenAIStubServer

RECIPE = "--agent=openai:MODEL --llm-api-base URL"


@pytest.fixture
def keyless(toy: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE", "ANTHROPIC_API_KEY"):
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
