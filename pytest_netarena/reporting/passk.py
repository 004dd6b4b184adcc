"""pass@k and pass^k over repeated trials: unbiased estimators per query, averaged per app x agent x level."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from math import comb
from typing import Any


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k trials drawn without replacement from n (c passed) passes."""
    _check(n, c, k)
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k: probability that all k trials drawn without replacement from n (c passed) pass."""
    _check(n, c, k)
    return comb(c, k) / comb(n, k)


def _check(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n} c={c} k={k}")


def passed(record: dict[str, Any]) -> bool:
    """A trial passes as its test does: resolved, and every step safe."""
    return record["outcome"] == "resolved"


def pass_k_table(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per app x agent x level and k = 1..max trials: pass@k and pass^k averaged over queries.

    Infra errors are not trials of the agent, so they are left out; a query enters the average for k
    only when it has at least k scored trials. Empty when no query was tried more than once.
    """
    trials: dict[tuple[str, str, int, str], list[bool]] = defaultdict(list)
    for record in records:
        if record["outcome"] != "infra_error":
            trials[(record["app"], record["agent"], int(record["level"]), record["query"])].append(passed(record))
    if not trials or max(len(outcomes) for outcomes in trials.values()) < 2:
        return []
    groups: dict[tuple[str, str, int], list[list[bool]]] = defaultdict(list)
    for (app, agent, level, _query), outcomes in trials.items():
        groups[(app, agent, level)].append(outcomes)
    rows = []
    for (app, agent, level), per_query in sorted(groups.items()):
        most = max(len(outcomes) for outcomes in per_query)
        for k in range(1, most + 1):
            counted = [(len(o), sum(o)) for o in per_query if len(o) >= k]
            rows.append({
                "app": app, "agent": agent, "level": level, "k": k, "queries": len(counted),
                "pass_at_k": sum(pass_at_k(n, c, k) for n, c in counted) / len(counted),
                "pass_hat_k": sum(pass_hat_k(n, c, k) for n, c in counted) / len(counted),
            })
    return rows


def pass_hat_at_trials(records: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    """pass^k with k = the run's trials (distinct trial numbers), averaged over the queries with k scored trials.

    The headline of a run with --trials > 1: the chance that an agent passes a query every time it
    is asked. None with one trial.
    """
    records = list(records)
    k = len({int(record["trial"]) for record in records})
    if k < 2:
        return None
    trials: dict[str, list[bool]] = defaultdict(list)
    for record in records:
        if record["outcome"] != "infra_error":
            trials[str(record["query"])].append(passed(record))
    counted = [(len(o), sum(o)) for o in trials.values() if len(o) >= k]
    rate = sum(pass_hat_k(n, c, k) for n, c in counted) / len(counted) if counted else None
    return {"k": k, "rate": rate, "queries": len(counted)}
