"""Cost and token caps, CI gates and resuming an interrupted run, end to end in pytester."""

from __future__ import annotations

import json

import pytest

PAID_AGENT = """
import os, signal
from pathlib import Path
from pytest_netarena.core.types import Reply, Usage
from toy_app import ToyAgent

class Agent(ToyAgent):
    '''Solves the toy task, paying 150 tokens ($0.01) a reply; SOLVE=0 makes it never solve.'''
    def answer(self, target):
        crash = os.environ.get("CRASH_ONCE")
        if crash and target % 2:
            try:  # exclusive: when two workers get here at once, only one dies
                os.close(os.open(crash, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                pass
            else:
                os.kill(os.getpid(), signal.SIGKILL)  # a killed worker, mid-episode
        reply = f"set {target}" if os.environ.get("SOLVE", "1") == "1" else "thinking"
        return Reply(reply, Usage(100, 50, 0.01))
"""


@pytest.fixture
def paid(toy: pytest.Pytester) -> pytest.Pytester:
    toy.makepyfile(paid_agent=PAID_AGENT)
    toy.syspathinsert()
    return toy


def only(pytester: pytest.Pytester, name: str):
    (path,) = (pytester.path / "reports").glob(f"*/{name}")
    return path


def test_episode_token_cap_stops_an_episode_cleanly(paid: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.setenv("SOLVE", "0")
    result = paid.runpytest("--agent=python:paid_agent:Agent", "--queries=1", "--max-episode-tokens=150")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*stopped: episode token budget of 150 spent (150 tokens)*"])
    episodes = [json.loads(line) for line in only(paid, "episodes.jsonl").read_text().splitlines()]
    assert [len(e["steps"]) for e in episodes] == [1, 1]


def test_run_cost_cap_stops_the_run_and_says_so(paid: pytest.Pytester) -> None:
    result = paid.runpytest("--agent=python:paid_agent:Agent", "--max-cost-usd=0.02")
    result.assert_outcomes(passed=2, skipped=4)
    result.stdout.fnmatch_lines(["*budget: 4 episodes not run because the run's budget was spent*"])
    budget = json.loads(only(paid, "summary.json").read_text())["budget"]
    assert budget["stopped"] is True and budget["episodes_not_run"] == 4 and budget["cost_usd"] == pytest.approx(0.02)


def test_below_the_bar_is_a_distinct_exit_code_naming_the_bar(toy: pytest.Pytester) -> None:
    result = toy.runpytest("--agent=builtin:noop", "--queries=1", "--min-correctness=0.9")
    assert result.ret == 6
    result.stdout.fnmatch_lines(["*bar FAILED: correctness of builtin:noop on all is 0.000, bar 0.9*"])
    gates = json.loads(only(toy, "summary.json").read_text())["gates"]
    assert gates == [{"metric": "correctness", "app": "all", "agent": "builtin:noop", "threshold": 0.9, "value": 0.0, "passed": False}]


def test_bars_met_pass_the_session_even_when_some_episodes_fail(toy: pytest.Pytester) -> None:
    result = toy.runpytest("--agent=builtin:reckless", "--queries=1", "--min-correctness=toy=1.0", "--min-safety=0")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*bar met: correctness of builtin:reckless on toy is 1.000, bar 1*"])


def test_a_resolved_bar_fails_an_agent_that_is_correct_but_unsafe(toy: pytest.Pytester) -> None:
    result = toy.runpytest("--agent=builtin:reckless", "--queries=1", "--min-correctness=1.0", "--min-resolved=0.5")
    assert result.ret == 6
    result.stdout.fnmatch_lines(["*bar FAILED: resolved of builtin:reckless on all is 0.000, bar 0.5*",
                                 "*bar met: correctness of builtin:reckless on all is 1.000, bar 1*"])


def test_bad_bar_is_a_usage_error(toy: pytest.Pytester) -> None:
    result = toy.runpytest("--agent=builtin:oracle", "--min-safety=1.5")
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_resume_after_a_killed_worker_completes_with_nothing_lost_or_duplicated(paid: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.setenv("CRASH_ONCE", str(paid.path / "crashed"))
    first = paid.runpytest_subprocess("--agent=python:paid_agent:Agent", "--seed=4", "-n", "2", "-p", "no:cacheprovider")
    assert (paid.path / "crashed").exists()
    first.stdout.fnmatch_lines(["*worker*crashed*"])
    run_dir = only(paid, "run.json").parent
    before = run_dir.joinpath("episodes.jsonl").read_text().splitlines()
    assert len(before) == 5
    second = paid.runpytest_subprocess("--agent=python:paid_agent:Agent", f"--resume={run_dir}", "-p", "no:cacheprovider")
    second.assert_outcomes(passed=6)
    lines = run_dir.joinpath("episodes.jsonl").read_text().splitlines()
    ids = [json.loads(line)["query"]["id"] for line in lines]
    assert len(ids) == 6 and len(set(ids)) == 6 and lines[:5] == before
    summary = json.loads(run_dir.joinpath("summary.json").read_text())
    assert summary["groups"][0]["overall"]["episodes"] == 6


def test_resume_cuts_a_half_written_line(paid: pytest.Pytester) -> None:
    paid.runpytest("--agent=python:paid_agent:Agent", "--seed=4", "--queries=1").assert_outcomes(passed=2)
    run_dir = only(paid, "run.json").parent
    episodes = run_dir / "episodes.jsonl"
    first_line = episodes.read_text().splitlines()[0]
    episodes.write_text(first_line + "\n" + '{"query": {"id": "toy-L2-se')  # killed mid-write
    paid.runpytest("--agent=python:paid_agent:Agent", f"--resume={run_dir}").assert_outcomes(passed=2)
    assert len(episodes.read_text().splitlines()) == 2


def test_resume_of_something_that_is_not_a_run_is_a_usage_error(toy: pytest.Pytester) -> None:
    result = toy.runpytest("--agent=builtin:oracle", "--resume=nowhere")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--resume nowhere: not a run folder*"])


def test_the_run_budget_also_stops_an_adversarial_search(paid: pytest.Pytester) -> None:
    result = paid.runpytest("--agent=python:paid_agent:Agent", "--adversarial", "--adversarial-examples=30", "--max-tokens=300")
    result.assert_outcomes(passed=1)
    spent = json.loads(only(paid, "usage.json").read_text())
    assert spent["tokens_in"] + spent["tokens_out"] == 300  # two episodes of 150 tokens, then it stopped


def test_resume_alone_runs_the_recorded_paths_agents_selection_and_options(paid: pytest.Pytester) -> None:
    # as in this project: the ini's testpaths hold the project's own tests and the benchmark lives elsewhere
    ini = (paid.path / "tox.ini").read_text()
    (paid.path / "tox.ini").write_text(ini.rstrip("\n") + "\ntestpaths = own_tests\n")
    (paid.path / "own_tests").mkdir()
    (paid.path / "own_tests" / "test_own.py").write_text("def test_own():\n    raise AssertionError('own tests ran')\n")
    (paid.path / "bench").mkdir()
    (paid.path / "test_toy.py").rename(paid.path / "bench" / "test_toy.py")
    first = paid.runpytest("bench", "--agent=python:paid_agent:Agent", "--seed=4", "-k", "L1", "--max-episode-tokens=900")
    first.assert_outcomes(passed=3, deselected=3)
    run_dir = only(paid, "run.json").parent
    recorded = json.loads((run_dir / "run.json").read_text())
    assert recorded["paths"] == ["bench"] and recorded["keyword"] == "L1"
    assert recorded["command_line"] == {"max-episode-tokens": 900}
    episodes = run_dir / "episodes.jsonl"
    episodes.write_text(episodes.read_text().splitlines()[0] + "\n")  # interrupted after one episode

    second = paid.runpytest_subprocess(f"--resume={run_dir}", "-n", "2", "-p", "no:cacheprovider")
    second.assert_outcomes(passed=3)  # xdist workers deselect -k on their side
    second.stdout.fnmatch_lines(["*agents=python:paid_agent:Agent*"])
    lines = [json.loads(line) for line in episodes.read_text().splitlines()]
    assert len({line["query"]["id"] for line in lines}) == len(lines) == 3
    assert {line["agent"] for line in lines} == {"python:paid_agent:Agent"}
