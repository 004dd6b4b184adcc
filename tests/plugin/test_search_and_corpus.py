"""Adversarial search, found-case corpora and saved corpora, end to end in pytester with the toy app."""

from __future__ import annotations

import json

import pytest

WEAK_AGENT = """
from toy_app import ToyAgent

class Agent(ToyAgent):
    '''Planted weakness: it cannot count past 49.'''
    def answer(self, target):
        return f"set {target if target < 50 else 0}"
"""


@pytest.fixture
def weak(toy: pytest.Pytester) -> pytest.Pytester:
    toy.makepyfile(weak_agent=WEAK_AGENT)
    toy.syspathinsert()
    return toy


def found_entries(pytester: pytest.Pytester) -> list[dict]:
    return [json.loads(line) for path in (pytester.path / "reports").glob("*/found.jsonl") for line in path.read_text().splitlines()]


def test_search_shrinks_a_planted_weakness_to_exactly_the_boundary(weak: pytest.Pytester) -> None:
    result = weak.runpytest("--agent=python:weak_agent:Agent", "--adversarial", "--adversarial-examples=40", "--seed=1")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*adversarial search of toy found a failure*", "*reproduce: pytest test_toy.py*--corpus=*-k 'toy-L1-set-0000'*"])
    (entry,) = found_entries(weak)
    assert entry["query"]["params"] == {"target": 50} and entry["query"]["level"] == 1
    assert entry["outcome"] == "unresolved"


def test_a_strong_agent_yields_no_failures(toy: pytest.Pytester) -> None:
    result = toy.runpytest("--agent=builtin:oracle", "--adversarial", "--adversarial-examples=15")
    result.assert_outcomes(passed=1)
    assert found_entries(toy) == []


def test_replaying_a_found_case_gives_the_same_failure(weak: pytest.Pytester) -> None:
    weak.runpytest("--agent=python:weak_agent:Agent", "--adversarial", "--adversarial-examples=40", "--seed=2")
    (entry,) = found_entries(weak)
    (found,) = (weak.path / "reports").glob("*/found.jsonl")
    for _ in range(2):
        replay = weak.runpytest("--agent=python:weak_agent:Agent", f"--corpus={found}", "-v")
        replay.assert_outcomes(failed=1)
        replay.stdout.fnmatch_lines([f"*test_episode[[]{entry['query']['id']}[]] FAILED*", "*counter 0, target 50*"])


def test_searches_of_several_agents_run_on_different_workers_and_merge(weak: pytest.Pytester) -> None:
    result = weak.runpytest_subprocess(
        "--agent=python:weak_agent:Agent", "--agent=builtin:oracle", "--adversarial", "--adversarial-examples=40", "-n", "2",
        "-p", "no:cacheprovider",
    )
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(["*netarena adversarial search*", "*toy-L1-set-0000: python:weak_agent:Agent -> unresolved*"])


def test_save_corpus_then_run_it_with_the_same_ids(toy: pytest.Pytester) -> None:
    first = toy.runpytest("--agent=builtin:oracle", "--seed=9", "--save-corpus=frozen.jsonl", "-v")
    first.assert_outcomes(passed=6)
    lines = (toy.path / "frozen.jsonl").read_text().splitlines()
    assert len(lines) == 6
    replay = toy.runpytest("--agent=builtin:oracle", "--seed=1234", "--corpus=frozen.jsonl", "-v")
    replay.assert_outcomes(passed=6)
    ids = lambda r: sorted(line.split("[")[1].split("]")[0] for line in r.stdout.lines if "PASSED" in line)  # noqa: E731
    assert ids(first) == ids(replay)
    targets = sorted(json.loads(line)["params"]["target"] for line in lines)
    episodes = max((toy.path / "reports").glob("*/episodes.jsonl"), key=lambda p: p.stat().st_mtime)
    assert sorted(json.loads(line)["query"]["params"]["target"] for line in episodes.read_text().splitlines()) == targets


def test_a_malformed_corpus_is_a_usage_error_naming_the_line(toy: pytest.Pytester) -> None:
    (toy.path / "bad.jsonl").write_text('{"app": "toy", "level": 1, "category": "set", "index": 0, "seed": 1}\nnot json\n')
    result = toy.runpytest("--agent=builtin:oracle", "--corpus=bad.jsonl")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*bad.jsonl:2: not a corpus entry*"])


COUNTING_AGENT = """
import os

class Agent:
    def reset(self, task):
        with open(os.environ["EPISODE_LOG"], "a") as log:
            log.write(task.episode_id + "\\n")
    def act(self, observation):
        return "set " + observation.rsplit(" ", 1)[1]
    def close(self):
        pass
"""


@pytest.mark.parametrize(("profile", "low", "high"), [("netarena-ci", 1, 10), (None, 11, 20)])
def test_the_hypothesis_profile_sets_the_search_budget(toy: pytest.Pytester, monkeypatch, profile, low, high) -> None:
    toy.makepyfile(counting_agent=COUNTING_AGENT)
    toy.syspathinsert()
    log = toy.path / "episodes.log"
    monkeypatch.setenv("EPISODE_LOG", str(log))
    args = ["--agent=python:counting_agent:Agent", "--adversarial"] + ([f"--hypothesis-profile={profile}"] if profile else [])
    toy.runpytest(*args).assert_outcomes(passed=1)
    assert low <= len(log.read_text().splitlines()) <= high
