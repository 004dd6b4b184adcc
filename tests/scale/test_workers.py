"""`-n N` with a model agent: fewer workers than os.cpu_count(), the rest of N in flight inside them."""

from __future__ import annotations

import os
import re

import pytest

from pytest_netarena.scale.workers import split_workers
from pytest_netarena.testing.openai_server import OpenAIStubServer, StubReply

DELAY = 0.5  # seconds the stub model thinks per reply: long enough for episodes to overlap visibly


def toy_model(request: dict) -> StubReply:
    """Answers the toy task after DELAY seconds."""
    target = re.search(r"make it (\d+)", request["messages"][-1]["content"])
    return StubReply(f"set {target.group(1)}" if target else "set 1", delay_s=DELAY)


@pytest.fixture
def model(toy: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    with OpenAIStubServer(toy_model) as server:
        yield server


def workers_of(result: pytest.RunResult) -> set[str]:
    """The workers that reported to the controller (netarena's own header line per worker)."""
    return set(re.findall(r"^\[(gw\d+)\] netarena on ", result.stdout.str(), re.MULTILINE))


def most_requests_at_once(server: OpenAIStubServer) -> int:
    starts = sorted(request.received_at for request in server.requests)
    return max(sum(s <= start < s + DELAY for s in starts) for start in starts)


def test_n_beyond_the_cores_with_a_model_agent_runs_the_rest_in_flight(toy: pytest.Pytester, model) -> None:
    cores, asked = os.cpu_count() or 1, (os.cpu_count() or 1) * 4
    split = split_workers(asked, cores)
    result = toy.runpytest_subprocess("--agent=openai:gpt-4o", f"--llm-api-base={model.url}/v1", "--seed=3",
                                      "--queries=8", "-n", str(asked))
    result.assert_outcomes(passed=16)
    result.stdout.fnmatch_lines([f"*{split.header()}*"])
    assert len(workers_of(result)) == split.workers <= cores, result.stdout.str()
    # the asked concurrency is there: more model requests wait at once than there are workers
    assert most_requests_at_once(model) > cores


def test_explicit_in_flight_and_builtin_agents_keep_n_as_asked(toy: pytest.Pytester, model) -> None:
    asked = (os.cpu_count() or 1) + 1
    explicit = toy.runpytest_subprocess("--agent=openai:gpt-4o", f"--llm-api-base={model.url}/v1", "--seed=3",
                                        "--queries=1", "-n", str(asked), "--in-flight=1")
    explicit.assert_outcomes(passed=2)
    assert len(workers_of(explicit)) == asked
    assert "with a model agent" not in explicit.stdout.str()
    builtin = toy.runpytest_subprocess("--agent=builtin:oracle", "--seed=3", "--queries=1", "-n", str(asked))
    builtin.assert_outcomes(passed=2)
    assert len(workers_of(builtin)) == asked
    assert "with a model agent" not in builtin.stdout.str()


@pytest.mark.parametrize("asked, cores, expected", [(8, 2, (0, 8)), (3, 2, (0, 3)), (2, 2, (2, 1)),
                                                       (8, 1, (0, 8)), (8, 4, (3, 3)), (8, 16, (8, 1))])
def test_split_keeps_at_least_the_asked_episodes_in_flight_below_the_cores(asked: int, cores: int, expected: tuple[int, int]) -> None:
    split = split_workers(asked, cores)
    assert (split.workers, split.in_flight) == expected
