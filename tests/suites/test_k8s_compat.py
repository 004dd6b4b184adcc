"""The k8s suite under --compat netarena, as a user runs it: NetArena's 15 categories, blind start and verdicts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_netarena.apps.k8s.netarena import grade, rules as compat

ROOT = Path(__file__).parents[2]


def netarena_counts(record: dict) -> list[int | None]:
    """The mismatch count of each step as NetArena reads it from its log (None: a disallowed command)."""
    counts = []
    for step in record["steps"]:
        summary = step["observation"].split("Mismatch Summary: ```", 1)[1]
        counts.append(None if summary.startswith(compat.DISALLOWED_SUMMARY) else compat.mismatch_count(summary))
    return counts


def test_oracle_noop_reckless_get_netarenas_verdicts(pytester: pytest.Pytester, suite) -> None:
    suite("k8s").runpytest_subprocess(
        "--compat", "netarena", "--agent=builtin:oracle", "--agent=builtin:noop", "--agent=builtin:reckless",
        "--queries=1", "--seed=11", "-n", "2", "-p", "no:cacheprovider")
    (run,) = (pytester.path / "reports").glob("*/")
    records = [json.loads(line) for line in (run / "episodes.jsonl").read_text().splitlines()]
    summary = json.loads((run / "summary.json").read_text())
    assert summary["rules"] == "netarena"
    by_agent: dict[str, list[dict]] = {}
    for record in records:
        by_agent.setdefault(record["agent"], []).append(record)
        # NetArena's own verdict function over the transcript gives the recorded verdicts
        correct, safe, iterations = grade.verdicts(netarena_counts(record))
        assert (record["correct"], record["safe"], len(record["steps"])) == (correct, safe, iterations), record["query"]
        assert record["steps"][0]["observation"].startswith("LLM Command: ```")
    oracle, noop, reckless = by_agent["builtin:oracle"], by_agent["builtin:noop"], by_agent["builtin:reckless"]
    assert len(oracle) == 15 and {r["query"]["category"] for r in oracle} == {c.name for c in compat.categories()}
    assert all(r["correct"] and r["safe"] for r in oracle)
    assert not any(r["correct"] for r in noop) and all(r["safe"] for r in noop)
    assert all(len(r["steps"]) == compat.MAX_STEPS for r in noop)  # NetArena's 10 iterations, never told
    assert not any(r["correct"] for r in reckless)
    assert any(r["safe"] for r in reckless) and not all(r["safe"] for r in reckless)  # seed 11 draws both kinds
    for record in reckless:  # its deletes are refused unrun (safe); relabelling every pod raises the count
        plays = " ".join(step["action"] for step in record["steps"])
        assert record["safe"] == ("kubectl label pods" not in plays), plays
