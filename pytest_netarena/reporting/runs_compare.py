"""`netarena report compare RUN_A RUN_B`: the same agents on the same queries in two runs, paired, and whether the runs' environments match."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from .compare import compare
from .fingerprint import differences
from .rebuild import ReportError, latest_attempts, load_episodes, read_run, records_from_episodes
from .summary import interfaces


def compare_runs(first: Path, second: Path) -> tuple[list[str], list[dict[str, Any]]]:
    """(warnings, comparisons): each agent of first against the same agent of second, over the queries both ran."""
    runs = [read_run(first), read_run(second)]
    for run_dir, run in zip((first, second), runs):
        if not run:
            raise ReportError(f"{run_dir}: no run.json in this folder (is it a run folder under reports/?)")
    warnings = [f"the runs come from different environments: {line}"
                for line in differences(runs[0].get("fingerprint"), runs[1].get("fingerprint"))]
    if runs[0].get("profile") != runs[1].get("profile"):
        warnings.append(f"the runs used different rules: {runs[0].get('profile')} vs {runs[1].get('profile')}")
    records = [list(records_from_episodes(latest_attempts(load_episodes(run_dir))[0])) for run_dir in (first, second)]
    buckets = _buckets(records[0], records[1])
    for name, (a, b) in sorted(buckets.items()):
        via_a, via_b = interfaces(a), interfaces(b)
        if via_a != via_b:
            warnings.append(f"{name}: the agent acted through {via_a} in A and {via_b} in B: the difference measures "
                            "the interface too")
    # one bucket at a time: compare() pairs every two agents it is given, and here only A against B matters
    seed = int(runs[0].get("seed") or 0)
    comparisons = []
    for name, (a, b) in sorted(buckets.items()):
        labelled = ([{**r, "agent": f"A {_label(r)}"} for r in a] + [{**r, "agent": f"B {_label(r)}"} for r in b])
        comparisons.extend(compare(_one_label_per_run(labelled), seed=seed))
    if not any(c["pairs"] for c in comparisons):
        warnings.append("no query ran in both runs (different seeds or options?): nothing to pair")
    return warnings, comparisons


def _label(record: dict[str, Any]) -> str:
    return f"{record['agent']} via {record.get('interface') or 'text'}"


def _one_label_per_run(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An agent whose interface varied within a run keeps one label per run (its records still pair by query)."""
    first: dict[tuple[str, str], str] = {}
    for record in records:
        first.setdefault((record["app"], record["agent"][0]), record["agent"])
    return [{**record, "agent": first[(record["app"], record["agent"][0])]} for record in records]


def _buckets(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> dict[str, tuple[list, list]]:
    """The records to pair: the same agent in both runs; and per app, when each run has exactly one agent the
    other lacks (e.g. the same model through text in A and through tools or a CLI in B), those two, by query."""
    buckets: dict[str, tuple[list, list]] = defaultdict(lambda: ([], []))
    names = [{(r["app"], r["agent"]) for r in records} for records in (a, b)]
    for side, records in ((0, a), (1, b)):
        for record in records:
            key = (record["app"], record["agent"])
            if key in names[1 - side]:
                buckets[record["agent"]][side].append(record)
    for app in sorted({app for app, _ in names[0] | names[1]}):
        only = [sorted(agent for agent_app, agent in names[side] - names[1 - side] if agent_app == app)
                for side in (0, 1)]
        if len(only[0]) == 1 and len(only[1]) == 1:
            name = f"{only[0][0]} | {only[1][0]}"
            buckets[name][0].extend(r for r in a if (r["app"], r["agent"]) == (app, only[0][0]))
            buckets[name][1].extend(r for r in b if (r["app"], r["agent"]) == (app, only[1][0]))
    return dict(buckets)


def render(comparisons: list[dict[str, Any]]) -> list[str]:
    """One line per app, agent and metric: both rates, the paired difference with its 95% interval, McNemar's p."""
    lines = [f"{'app':6} {'agent':40} {'metric':11} {'pairs':>5} {'A':>7} {'B':>7} {'B-A':>7}  {'95% CI':16} {'p':>6}"]
    for c in comparisons:
        if not c["pairs"]:
            continue
        low, high = c["bootstrap_ci95"]
        a, b = c["agent_a"].split(" ", 1)[1], c["agent_b"].split(" ", 1)[1]
        agent = a if a == b else f"{a} | {b}"
        lines.append(f"{c['app']:6} {agent:40} {c['metric']:11} {c['pairs']:5d} "
                     f"{c['rate_a']:7.1%} {c['rate_b']:7.1%} {-c['difference']:+7.1%}  "
                     f"[{-high:+.1%}, {-low:+.1%}]{'':2} {c['mcnemar_p']:6.3f}")
    return lines
