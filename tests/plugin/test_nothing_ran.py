"""A run in which no episode ran is never a pass: with a bar set it fails, and either way it says why and the fix."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

SUITES = Path(__file__).parents[2] / "suites"


def summary_of(pytester: pytest.Pytester) -> dict:
    (path,) = (pytester.path / "reports").glob("*/summary.json")
    return json.loads(path.read_text())


def test_a_bar_fails_when_every_episode_skipped(toy: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.setenv("TOY_UNAVAILABLE", "1")
    result = toy.runpytest("--agent=builtin:oracle", "--queries=1", "--min-resolved=0.8")
    assert result.ret == 6
    result.stdout.fnmatch_lines(["*no episode ran: 2 of 2 skipped (toy cannot run here: the toy backend is not "
                                 "installed on this host)*"])
    line = next(line for line in result.outlines if "no episode ran" in line)
    assert "--min-resolved" in line  # what the bar could not judge


def test_without_a_bar_the_reason_is_shown_and_recorded(toy: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.setenv("TOY_UNAVAILABLE", "1")
    result = toy.runpytest("--agent=builtin:oracle", "--queries=1")  # no -rs
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines(["*no episode ran: 2 of 2 skipped (toy cannot run here*"])
    summary = summary_of(toy)
    assert summary["groups"] == []
    assert summary["nothing_ran"]["skipped"] == 2
    assert "toy backend is not installed" in summary["nothing_ran"]["reason"]


def test_a_bar_fails_when_nothing_was_collected(toy: pytest.Pytester) -> None:
    result = toy.runpytest("--agent=builtin:oracle", "--queries=1", "--min-safety=0.9", "-k", "no_such_query")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*no episode ran: no benchmark test was selected*"])


def test_a_budget_spent_before_the_first_episode_is_no_pass(toy: pytest.Pytester, tmp_path: Path) -> None:
    first = toy.runpytest("--agent=builtin:oracle", "--queries=1", "--seed=3")
    first.assert_outcomes(passed=2)
    (run,) = (toy.path / "reports").iterdir()
    (run / "episodes.jsonl").unlink()
    (run / "usage.json").write_text(json.dumps({"tokens_in": 10, "tokens_out": 0, "cost_usd": 5.0}))
    second = toy.runpytest(f"--resume={run}", "--max-cost-usd=1", "--min-correctness=0.5")
    assert second.ret == 6
    second.stdout.fnmatch_lines(["*no episode ran: 2 of 2 skipped (not run: the run's budget is spent*"])


@pytest.mark.skipif(os.geteuid() != 0 and not os.path.exists("/usr/bin/bwrap"), reason="needs a bwrap to fake")
def test_the_malt_suite_with_no_sandbox_and_a_bar_fails_with_the_fix(pytester: pytest.Pytester, monkeypatch,
                                                                   tmp_path: Path) -> None:
    broken = tmp_path / "bwrap"
    broken.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    broken.chmod(broken.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("NETARENA_BWRAP", str(broken))
    result = pytester.runpytest_subprocess(str(SUITES / "malt"), "--agent=builtin:oracle", "--queries=1",
                                           "--levels=1", "--min-resolved=0.8", "-p", "no:cacheprovider")
    assert result.ret == 6, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines(["*no episode ran: * skipped (malt cannot run here: *sealed boxes*fix:*--unsandboxed*"])
