"""Whole runs with the litellm agent against a local OpenAI-compatible server: record, replay, cost caps."""

from __future__ import annotations

import json
import re

import pytest

from pytest_netarena.testing.openai_server import OpenAIStubServer


def toy_model(request: dict) -> str:
    """A scripted 'model': reads the last observation and answers the toy task."""
    observation = request["messages"][-1]["content"]
    target = re.search(r"make it (\d+)", observation)
    return f"Thought: easy.\nset {target.group(1)}" if target else "set 1"


@pytest.fixture
def model_server():
    with OpenAIStubServer(toy_model) as server:
        yield server


def episodes(pytester: pytest.Pytester, reports: str) -> list[dict]:
    (path,) = (pytester.path / reports).glob("*/episodes.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("client", ["auto", "litellm"])
def test_record_then_replay_without_network_gives_the_same_run(llm_toy: pytest.Pytester, model_server,
                                                               client: str) -> None:
    recorded = llm_toy.runpytest_subprocess(
        "--agent=openai:gpt-4o", f"--llm-api-base={model_server.url}/v1", "--llm-record=recording", "--seed=8",
        f"--llm-client={client}",
        "--queries=1", "--reports-dir=first", "--prompt-style=react",
    )
    recorded.assert_outcomes(passed=2)
    assert len(model_server.requests) == 2 and model_server.requests[0].temperature == 0
    assert len(list((llm_toy.path / "recording").glob("*.json"))) == 2
    model_server.stop()  # from here on, any network call would fail
    replayed = llm_toy.runpytest_subprocess(
        "--agent=openai:gpt-4o", "--llm-api-base=http://127.0.0.1:9/v1", "--llm-replay=recording", "--seed=8",
        "--queries=1", "--reports-dir=second", "--strategy=react",  # its old name: the same prompt
    )
    replayed.assert_outcomes(passed=2)
    first, second = episodes(llm_toy, "first"), episodes(llm_toy, "second")
    assert [e["steps"][0]["reply"] for e in first] == [e["steps"][0]["reply"] for e in second]
    assert [e["usage"] for e in first] == [e["usage"] for e in second]
    assert all(e["usage"]["cost_usd"] > 0 for e in second)  # gpt-4o is priced: the recorded cost is kept


def test_replay_of_a_conversation_never_recorded_is_an_infra_error(llm_toy: pytest.Pytester, tmp_path) -> None:
    result = llm_toy.runpytest_subprocess("--agent=openai:gpt-4o", f"--llm-replay={tmp_path}", "--queries=1")
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["*no recorded answer for this request*"])


def test_run_cost_cap_with_a_priced_model(llm_toy: pytest.Pytester, model_server) -> None:
    result = llm_toy.runpytest_subprocess(
        "--agent=openai:gpt-4o", f"--llm-api-base={model_server.url}/v1", "--max-cost-usd=0.000001", "--queries=2",
    )
    result.assert_outcomes(passed=1, skipped=3)
    assert len(model_server.requests) == 1


def test_an_unknown_model_client_is_a_usage_error(llm_toy: pytest.Pytester) -> None:
    result = llm_toy.runpytest_subprocess("--agent=openai:gpt-4o", "--llm-client=curl")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--llm-client takes auto or litellm; got 'curl'*"])
