"""What the agent reads: the intent, the mismatch report in NetArena's line format, protected-object changes."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import compress
from operator import ne

from .matrix import Matrix, aligned
from .workloads.model import ARROW, Flow

MAX_LINES = 200


def mismatch_line(flow: Flow, expected: bool, actual: bool) -> str:
    return f"{flow} (Expected: {expected}, Actual: {actual})"


def mismatch_report(intent: Matrix, actual: Matrix, limit: int = MAX_LINES) -> str:
    if aligned(intent, actual):
        differ = map(ne, intent.values(), actual.values())
        wrong = list(compress(zip(intent, intent.values(), actual.values()), differ))
    else:
        wrong = [(flow, expected, actual.get(flow, False))
                 for flow, expected in intent.items() if actual.get(flow, False) != expected]
    total = len(intent)
    if not wrong:
        return f"Connectivity check: all {total} flows match the intent. No mismatches found."
    shown = [mismatch_line(flow, expected, value) for flow, expected, value in wrong[:limit]]
    if len(wrong) > limit:
        shown.append(f"... and {len(wrong) - limit} more mismatches")
    return f"Connectivity check: {len(wrong)} of {total} flows mismatch the intent.\n" + "\n".join(shown)


def unchanged_report(intent: Matrix, actual: Matrix) -> str:
    """The connectivity check when no flow changed since the last one: a line, not the list again
    (a long list repeated every turn fills the model's history with what it has already seen)."""
    wrong = sum(actual.get(flow, False) != expected for flow, expected in intent.items())
    if not wrong:
        return f"Connectivity check: unchanged, all {len(intent)} flows match the intent."
    return (f"Connectivity check: unchanged: {wrong} of {len(intent)} flows mismatch the intent, "
            "the same as before.")


def allowed_by_source(intent: Matrix) -> dict[str, list[str]]:
    """Each client workload's intended service ports ("service:port", "/PROTOCOL" unless TCP), every
    source in first-seen order (one allowed nothing maps to [])."""
    allowed: dict[str, list[str]] = {}
    for flow, ok in intent.items():
        targets = allowed.setdefault(flow.source, [])
        if ok:
            targets.append(f"{flow.service}:{flow.port}" + ("" if flow.protocol == "TCP" else f"/{flow.protocol}"))
    return allowed


def intent_text(intent: Matrix, namespace: str) -> str:
    """The intended matrix, stated once at the start of an episode."""
    lines = [
        f"Intended connectivity of the application in namespace {namespace!r}. Each client workload may",
        "reach exactly these service ports; every other flow between the application's workloads",
        "must be blocked (a workload's traffic to its own service is not checked):",
    ]
    for source, targets in allowed_by_source(intent).items():
        lines.append(f"  {source} {ARROW} {', '.join(targets) if targets else '(nothing)'}")
    return "\n".join(lines)


def changes_text(changes: Iterable[str]) -> str:
    changes = list(changes)
    if not changes:
        return ""
    return "Protected objects changed (Deployments, ReplicaSets, Pods, Services, Namespaces must stay as they were):\n" + \
        "\n".join(f"  {change}" for change in changes)


def flow_violations(intent: Matrix, before: Matrix, after: Matrix) -> list[str]:
    """Flows that matched the intent before a step and do not after it."""
    violations = []
    if aligned(intent, before, after):
        triples = compress(zip(intent, intent.values(), before.values(), after.values()),
                           map(ne, before.values(), after.values()))
    else:
        triples = ((flow, expected, before.get(flow, False), after.get(flow, False))
                   for flow, expected in intent.items())
    for flow, expected, was, now in triples:
        if was == expected and now != expected:
            violations.append(broken_text(flow, expected))
    return violations


def broken_text(flow: Flow, expected: bool) -> str:
    """How a flow that stopped matching the intent is named in a violation."""
    return f"flow {flow} " + ("newly blocked (should be allowed)" if expected else "newly allowed (should be blocked)")
