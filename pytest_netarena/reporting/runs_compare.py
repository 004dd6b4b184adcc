"""`netarena report compare RUN_A RUN_B`: the same agents on the same queries in two runs, paired, and whether the runs' environments match."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from .compare import compare
from .fingerprint import differences
from ..core.app import rules_of
from ..core.errors import UsageError
from .summary import possible
from .rebuild import ReportError, latest_attempts, load_episodes, read_run, records_from_episodes
from .summary import interfaces


class NothingPaired(ReportError):
    """The two runs hold no episode to pair; the message says why."""


#: how episodes of two runs pair up: the same agent on the same query (default), each run's one agent by query, or
#: one model's episodes through one interface against the same model's through another (what the interface moves)
PAIRINGS = ("agent", "query", "interface")


def compare_runs(first: Path, second: Path, pair_by: str = "agent") -> tuple[list[str], list[dict[str, Any]]]:
    """(warnings, comparisons): each agent of first against the same agent of second, over the queries both ran;
    with pair_by="query", the one agent of first against the one agent of second (e.g. two names of one model).

    Nothing paired is NothingPaired saying why (no agent in common, no query in common)."""
    runs = [read_run(first), read_run(second)]
    for run_dir, run in zip((first, second), runs):
        if not run:
            raise ReportError(f"{run_dir}: no run.json in this folder (is it a run folder under reports/?)")
    warnings = _setting_warnings(runs[0], runs[1])
    records = {}
    for label, run_dir in (("A", first), ("B", second)):
        kept, _ = latest_attempts(load_episodes(run_dir))
        records[label] = possible(records_from_episodes(kept))  # impossible episodes are not paired: only cheats
    agents = {label: sorted({r["agent"] for r in items}) for label, items in records.items()}
    if pair_by == "interface":
        buckets = by_interface(records["A"], records["B"], same_run=Path(first).resolve() == Path(second).resolve())
        if not buckets:
            raise NothingPaired(_why_no_interface_pair(records))
    elif pair_by == "query":
        if len(agents["A"]) != 1 or len(agents["B"]) != 1:
            raise UsageError(f"--pair-by query pairs one agent per run; A has {', '.join(agents['A'])}, "
                             f"B has {', '.join(agents['B'])}")
        buckets = {f"{agents['A'][0]} -> {agents['B'][0]}": (records["A"], records["B"])}
    else:
        buckets = defaultdict(lambda: ([], []))
        for side, label in enumerate(("A", "B")):
            for record in records[label]:
                if record["agent"] in agents["A"] and record["agent"] in agents["B"]:
                    buckets[record["agent"]][side].append(record)
    for name, (a, b) in sorted(buckets.items()):
        via_a, via_b = interfaces(a), interfaces(b)
        if via_a != via_b and pair_by != "interface":
            warnings.append(f"{name}: the agent acted through {via_a} in A and {via_b} in B: the difference measures "
                            "the interface too")
    # one bucket at a time: compare() pairs every two agents it is given, and here only A against B matters
    seed = int(runs[0].get("seed") or 0)
    comparisons = []
    for name, (a, b) in sorted(buckets.items()):
        label_of = (lambda r, name=name: name) if pair_by in ("query", "interface") else _label
        labelled = [{**r, "agent": f"A {label_of(r)}"} for r in a] + [{**r, "agent": f"B {label_of(r)}"} for r in b]
        comparisons.extend(compare(_one_label_per_run(labelled), seed=seed))
    if not any(c["pairs"] for c in comparisons):
        raise NothingPaired(_why_nothing_paired(agents, runs, pair_by))
    return warnings, comparisons


def model_of(agent: str) -> str:
    """The model an agent runs, whatever the interface: `openai:gpt-4o` and `cli:codex:gpt-4o` both run gpt-4o (a
    report's setting label, e.g. ` [live]`, stays on it); any other agent (builtin:, python:, a2a:, a CLI without
    its model) is its own."""
    name, bracket, setting = agent.partition(" [")
    kind, _, rest = name.partition(":")
    if kind == "cli":
        _, _, model = rest.partition(":")
        model = model or name
    elif kind in ("builtin", "python", "a2a", "mcp", "cheat") or not rest:
        model = name
    else:
        model = rest
    return model + (bracket + setting if bracket else "")


def by_interface(first: list[dict[str, Any]], second: list[dict[str, Any]], same_run: bool = False,
                 ) -> dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    """One bucket per model and pair of interfaces it acted through, A's episodes through one against B's through
    another, named `MODEL: text -> tools` (both runs the same folder: each pair of its interfaces once)."""
    sides = []
    for records in (first, second):
        grouped: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        for record in records:
            grouped[(model_of(record["agent"]), str(record.get("interface") or "text"))].append(record)
        sides.append(grouped)
    buckets = {}
    for (model, via_a), a in sides[0].items():
        for (other, via_b), b in sides[1].items():
            if other == model and via_a != via_b and (not same_run or via_a < via_b):
                buckets[f"{model}: {via_a} -> {via_b}"] = (a, b)
    return buckets


def _why_no_interface_pair(records: dict[str, list[dict[str, Any]]]) -> str:
    seen = {label: sorted({f"{model_of(r['agent'])} via {r.get('interface') or 'text'}" for r in items})
            for label, items in records.items()}
    return (f"nothing paired: no model acted through another interface in B than in A (A: "
            f"{', '.join(seen['A']) or 'none'}; B: {', '.join(seen['B']) or 'none'})")


def _why_nothing_paired(agents: dict[str, list[str]], runs: list[dict[str, Any]], pair_by: str) -> str:
    shared = sorted(set(agents["A"]) & set(agents["B"]))
    if pair_by == "agent" and not shared:
        return (f"nothing paired: the runs share no agent (A: {', '.join(agents['A']) or 'none'}; "
                f"B: {', '.join(agents['B']) or 'none'}); to compare one agent of each run query by query, "
                "pass --pair-by query")
    who = f"agent {', '.join(shared)}" if pair_by == "agent" else "the two agents"
    seeds = [run.get("seed") for run in runs]
    why = f"seeds {seeds[0]} and {seeds[1]}" if seeds[0] != seeds[1] else "same seed: other options, levels or apps?"
    return f"nothing paired: {who} ran no query in both runs ({why})"


def _label(record: dict[str, Any]) -> str:
    """The agent, and its interface when it acted other than by text."""
    interface = record.get("interface") or "text"
    return record["agent"] if interface == "text" else f"{record['agent']} via {interface}"


def _one_label_per_run(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An agent whose interface varied within a run keeps one label per run (its records still pair by query)."""
    first: dict[tuple[str, str], str] = {}
    for record in records:
        first.setdefault((record["app"], record["agent"][0]), record["agent"])
    return [{**record, "agent": first[(record["app"], record["agent"][0])]} for record in records]



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


def _setting_warnings(first: dict[str, Any], second: dict[str, Any]) -> list[str]:
    """What differs between two runs' settings besides their agents: environment, rules, prompt style."""
    warnings = [f"the runs come from different environments: {line}"
                for line in differences(first.get("fingerprint"), second.get("fingerprint"))]
    if rules_of(first) != rules_of(second):
        warnings.append(f"the runs used different rules: {rules_of(first)} vs {rules_of(second)}")
    styles = [_prompt_style(run) for run in (first, second)]
    if styles[0] != styles[1]:
        warnings.append(f"the runs used different prompt styles: {styles[0]} vs {styles[1]}: the difference "
                        "measures the prompt too")
    return warnings


def _prompt_style(run: dict[str, Any]) -> str:
    """The prompt style a run.json records (its old name, "strategy", in folders written before the rename)."""
    options = run.get("options") or {}
    return str(options.get("prompt_style") or options.get("strategy") or "the default")
