"""CI gates: minimum resolved rate, correctness and safety, overall or per app, checked against the run's records."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from ..core.errors import UsageError
from ..reporting.summary import aggregate

#: pytest's own exit codes stop at 5; a run below a bar exits with this one
EXIT_BELOW_BAR = 6


@dataclass(frozen=True)
class Gate:
    metric: str  #: "resolved", "correctness" or "safety" (a key of reporting.summary.aggregate)
    threshold: float
    app: str | None = None  #: None: pooled over every app the agent ran


def parse_gates(metric: str, text: str | None) -> list[Gate]:
    """'0.9' (overall) or 'k8s=0.9,route=0.8' (per app), or a mix."""
    gates = []
    for part in (text or "").split(","):
        if not part.strip():
            continue
        app, sep, value = part.rpartition("=")
        try:
            threshold = float(value)
        except ValueError:
            raise UsageError(f"--min-{metric} takes RATE or APP=RATE[,APP=RATE]; got {text!r}") from None
        if not 0.0 <= threshold <= 1.0:
            raise UsageError(f"--min-{metric} rates lie between 0 and 1; got {threshold}")
        gates.append(Gate(metric, threshold, app.strip() if sep else None))
    return gates


def check_gates(gates: list[Gate], records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One verdict per gate and agent (and app, for per-app gates)."""
    verdicts = []
    by_agent: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        by_agent[record["agent"]].append(record)
    for gate in gates:
        scored = False
        for agent, items in sorted(by_agent.items()):
            scoped = [r for r in items if gate.app is None or r["app"] == gate.app]
            if not scoped:
                continue
            scored = True
            rate = aggregate(scoped)[gate.metric]["rate"]
            verdicts.append(_verdict(gate, agent, rate))
        if not scored:  # a bar over no episode is never met (e.g. a run of impossible episodes alone)
            verdicts.append(_verdict(gate, "no agent", None))
    return verdicts


def _verdict(gate: Gate, agent: str, rate: float | None) -> dict[str, Any]:
    return {"metric": gate.metric, "app": gate.app or "all", "agent": agent, "threshold": gate.threshold,
            "value": rate, "passed": rate is not None and rate >= gate.threshold}
