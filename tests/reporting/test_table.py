"""The terminal summary table: resolved leads, and an over-broad fix shows in its overly_permissive column (perm)."""

from __future__ import annotations

import re

from pytest_netarena.reporting.summary import render_table, summarize


def record(query: str, outcome: str, correct: bool, safe: bool, **metrics: bool) -> dict:
    return {"app": "k8s", "agent": "m", "level": 1, "category": "change_port", "query": query, "trial": 0,
            "outcome": outcome, "correct": correct, "safe": safe, "steps": 2, "latency_s": 1.0,
            **{f"metric.{name}": value for name, value in metrics.items()}}


def test_resolved_leads_and_overly_permissive_has_a_column() -> None:
    records = [record("q0", "resolved", True, True, overly_permissive=False),
               record("q1", "unresolved", True, True, overly_permissive=True),  # correct and safe, but too wide
               record("q2", "unresolved", False, True, overly_permissive=False),
               record("q3", "unsafe", True, False, overly_permissive=False)]
    lines = render_table(summarize(records))
    header, _, heading, *rows, legend, _ = lines
    columns = ["resolved [95% CI]", "correct", "safe", "perm"]
    assert [header.index(c) for c in columns] == sorted(header.index(c) for c in columns)
    assert heading == "k8s, m:"
    overall = next(row for row in rows if " ALL " in row)
    resolved, correct, safe = re.match(r"\* ALL +\d+ +(\S+) \[[^]]*\] +(\S+) +(\S+)", overall).groups()
    assert (resolved, correct, safe) == ("25.0%", "75.0%", "75.0%")
    assert overall.rstrip().split()[-5] == "25.0%"  # perm, then steps, latency, infra, $/resolved
    assert legend.startswith("resolved = correct and every step safe") and "overly permissive: perm" in legend


def test_an_app_without_the_measure_shows_a_dash() -> None:
    rows = render_table(summarize([record("q0", "resolved", True, True)]))[3:-2]
    assert rows and all(row.rstrip().split()[-5] == "-" for row in rows)


def test_overly_permissive_is_not_applicable_to_episodes_that_are_not_correct() -> None:
    """A no-op agent leaves the broken (permissive) state: n/a, never a 100% overly permissive rate."""
    from pytest_netarena.reporting.html import _metric_lines

    noop = [record(f"q{i}", "unresolved", False, True, overly_permissive="n/a") for i in range(3)]
    summary = summarize(noop)
    rate = summary["groups"][0]["overall"]["metrics"]["overly_permissive"]
    assert (rate["n"], rate["not_applicable"], rate["rate"]) == (0, 3, None)
    rows = render_table(summary)[3:-2]
    assert rows and all(row.rstrip().split()[-5] == "n/a" for row in rows)
    assert "n/a" in _metric_lines(summary["groups"]) and "defined only for correct fixes" in _metric_lines(summary["groups"])
    mixed = summarize([*noop, record("q9", "unresolved", True, True, overly_permissive=True)])
    rate = mixed["groups"][0]["overall"]["metrics"]["overly_permissive"]
    assert (rate["n"], rate["k"], rate["not_applicable"]) == (1, 1, 3)
    assert "1 correct episodes; n/a for 3" in _metric_lines(mixed["groups"])
