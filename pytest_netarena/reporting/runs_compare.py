"""`netarena report compare RUN_A RUN_B`: the same agents on the same queries in two runs, paired, and whether the runs' environments match."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from .compare import compare
from .fingerprint import differences
from .rebuild import ReportError, latest_attempts, load_episodes, read_run, records_from_episodes


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
    by_agent: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for label, run_dir in (("A", first), ("B", second)):
        kept, _ = latest_attempts(load_episodes(run_dir))
        for record in records_from_episodes(kept):
            by_agent[record["agent"]].append({**record, "agent": f"{label} {record['agent']}"})
    # one agent at a time: compare() pairs every two agents it is given, and here only A against B matters
    seed = int(runs[0].get("seed") or 0)
    comparisons = [c for agent in sorted(by_agent) for c in compare(by_agent[agent], seed=seed)]
    if not any(c["pairs"] for c in comparisons):
        warnings.append("no query ran in both runs (different seeds or options?): nothing to pair")
    return warnings, comparisons


def render(comparisons: list[dict[str, Any]]) -> list[str]:
    """One line per app, agent and metric: both rates, the paired difference with its 95% interval, McNemar's p."""
    lines = [f"{'app':6} {'agent':28} {'metric':11} {'pairs':>5} {'A':>7} {'B':>7} {'B-A':>7}  {'95% CI':16} {'p':>6}"]
    for c in comparisons:
        if not c["pairs"]:
            continue
        low, high = c["bootstrap_ci95"]
        lines.append(f"{c['app']:6} {c['agent_a'].split(' ', 1)[1]:28} {c['metric']:11} {c['pairs']:5d} "
                     f"{c['rate_a']:7.1%} {c['rate_b']:7.1%} {-c['difference']:+7.1%}  "
                     f"[{-high:+.1%}, {-low:+.1%}]{'':2} {c['mcnemar_p']:6.3f}")
    return lines
