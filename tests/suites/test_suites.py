"""The real benchmark suites through the plugin, as a user runs them (subprocess pytest, xdist)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


def groups(pytester: pytest.Pytester) -> dict[str, dict]:
    """summary.json's rows by agent; a row of a setting (k8s: "[live]" or "[api-only]") by the agent alone."""
    (summary,) = (pytester.path / "reports").glob("*/summary.json")
    rows = json.loads(summary.read_text())["groups"]
    for row in rows:
        assert row["agent"].endswith(f" [{row['setting']}]") if row.get("setting") else " [" not in row["agent"]
    return {g["agent"].split(" [")[0]: g for g in rows}


def passed_ids(result: pytest.RunResult) -> list[str]:
    return sorted(line.split("::test_episode[")[1].split("]")[0] for line in result.stdout.lines
                  if "PASSED" in line and "::test_episode[" in line)


def needs_route(app: str) -> None:
    if app == "route" and os.geteuid() != 0:
        pytest.skip("the routing suite needs root")


@pytest.mark.parametrize("app", ["malt", "k8s", "route"])
def test_oracle_resolves_all_noop_none_reckless_unsafe(pytester: pytest.Pytester, suite, app: str) -> None:
    needs_route(app)
    # with one host per subnet some faults drop the whole mesh, and then no step can lose a pair:
    # two hosts per subnet keep every episode able to show the reckless agent's damage
    sizes = ["--route-size=2x2"] if app == "route" else []
    # route's episodes mostly wait on packets, which two workers overlap (72 s instead of 116 s); k8s's and MALT's
    # are CPU, where starting two workers cost 6.7 s of CPU more than it saved (xdist's own test is the next one)
    workers = ["-n", "2"] if app == "route" else []
    result = suite(app).runpytest_subprocess(
        "--agent=builtin:oracle", "--agent=builtin:noop", "--agent=builtin:reckless", "--queries=1", "--levels=1,2",
        "--seed=11", "-p", "no:cacheprovider", *sizes, *workers,
    )
    by_agent = groups(pytester)
    assert by_agent["builtin:oracle"]["avg_correctness"] == 1.0 and by_agent["builtin:oracle"]["avg_safety"] == 1.0
    assert by_agent["builtin:oracle"]["avg_resolved"] == 1.0
    # doing nothing is always safe, so safety alone would rank it; resolved, the headline, says 0%
    assert by_agent["builtin:noop"]["overall"]["resolved"]["k"] == 0 and by_agent["builtin:noop"]["avg_resolved"] == 0.0
    assert by_agent["builtin:noop"]["avg_safety"] == 1.0
    assert by_agent["builtin:reckless"]["avg_safety"] == 0.0
    n = by_agent["builtin:oracle"]["overall"]["episodes"]
    result.assert_outcomes(passed=n, failed=2 * n)


@pytest.mark.parametrize("app", ["malt", "k8s", "route"])
def test_collection_is_identical_with_and_without_xdist(pytester: pytest.Pytester, suite, app: str) -> None:
    needs_route(app)
    suite(app)
    args = ("--agent=builtin:oracle", "--queries=1", "--levels=1", "--seed=5", "-v", "-p", "no:cacheprovider")
    serial = pytester.runpytest_subprocess(*args)
    parallel = pytester.runpytest_subprocess(*args, "-n", "2")
    assert passed_ids(serial) == passed_ids(parallel) and len(passed_ids(serial)) >= 4
