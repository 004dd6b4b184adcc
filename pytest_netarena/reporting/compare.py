"""Paired comparison of agents on the same queries: McNemar's exact test, a paired bootstrap, sample sizes.

Episodes pair up by (query id, trial): both agents faced the very same hidden problem, so the
comparison looks only at the pairs where they disagree, which is far more sensitive than
comparing two independent rates.

Queries needed (Connor 1987, "Sample size for testing differences in proportions for the
paired-sample design", Biometrics 43:207-211): to detect a difference d = p10 - p01 in
correctness with a two-sided test at level alpha and power 1 - beta, when a fraction psi of the
pairs is discordant (p10 + p01),

    n = (z[1 - alpha/2] * sqrt(psi) + z[1 - beta] * sqrt(psi - d**2))**2 / d**2

with alpha = 0.05 (z = 1.960) and power 0.8 (z = 0.842). psi is estimated from the run itself and
never taken below |d| (a difference of d needs at least that many disagreements).
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from itertools import combinations
from typing import Any

Z_975 = 1.959963984540054  # two-sided 95% confidence
Z_80 = 0.8416212335729143  # 80% power
TARGET_DIFFERENCES = (0.05, 0.10, 0.20)
RESAMPLES = 2000
METRICS = ("resolved", "correct", "safe")  #: resolved, the headline, first
NAMES = {"resolved": "resolved", "correct": "correctness", "safe": "safety"}


def _value(record: dict[str, Any], metric: str) -> bool:
    # records of runs before the "resolved" property carry the outcome it comes from
    return record["outcome"] == "resolved" if metric == "resolved" else bool(record[metric])


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value: a binomial(b + c, 1/2) test on the discordant pairs."""
    discordant = only_a + only_b
    if discordant == 0:
        return 1.0
    smaller = min(only_a, only_b)
    tail = sum(math.comb(discordant, i) for i in range(smaller + 1)) / 2**discordant
    return min(1.0, 2 * tail)


def paired_bootstrap(differences: Sequence[float], seed: int, resamples: int = RESAMPLES) -> tuple[float, float]:
    """Percentile 95% interval of the mean paired difference, resampling pairs with replacement."""
    if not differences:
        return (math.nan, math.nan)
    rng = random.Random(seed)
    n = len(differences)
    means = sorted(sum(rng.choices(differences, k=n)) / n for _ in range(resamples))
    return (means[int(0.025 * resamples)], means[min(resamples - 1, math.ceil(0.975 * resamples) - 1)])


def queries_needed(difference: float, discordance: float, z_alpha: float = Z_975, z_power: float = Z_80) -> int | None:
    """Pairs needed to detect `difference` with McNemar's test (Connor's formula, see the module docstring)."""
    d = abs(difference)
    if d == 0 or d > 1:
        return None
    psi = min(1.0, max(discordance, d))
    n = (z_alpha * math.sqrt(psi) + z_power * math.sqrt(max(0.0, psi - d * d))) ** 2 / (d * d)
    return math.ceil(n - 1e-9)


def _pairs(records: Iterable[dict[str, Any]]) -> dict[tuple[str, str], dict[tuple[str, Any, int], dict[str, Any]]]:
    """(app, agent) -> {(query, its seed, trial): record}, scored episodes only: a query id of another run seed
    names another problem, so it never pairs."""
    by_agent: dict[tuple[str, str], dict[tuple[str, Any, int], dict[str, Any]]] = defaultdict(dict)
    for record in records:
        if record["outcome"] != "infra_error":
            by_agent[(record["app"], record["agent"])][(record["query"], record.get("seed"), int(record["trial"]))] = record
    return by_agent


def compare(records: Iterable[dict[str, Any]], seed: int = 0) -> list[dict[str, Any]]:
    """Every pair of agents of each app, on resolved, correctness and safety, over the episodes both ran."""
    by_agent = _pairs(records)
    apps: dict[str, list[str]] = defaultdict(list)
    for app, agent in by_agent:
        apps[app].append(agent)
    comparisons = []
    for app in sorted(apps):
        for agent_a, agent_b in combinations(sorted(apps[app]), 2):
            episodes_a, episodes_b = by_agent[(app, agent_a)], by_agent[(app, agent_b)]
            keys = sorted(set(episodes_a) & set(episodes_b))
            for metric in METRICS:
                a = [_value(episodes_a[key], metric) for key in keys]
                b = [_value(episodes_b[key], metric) for key in keys]
                comparisons.append(_comparison(app, agent_a, agent_b, metric, a, b, seed))
    return comparisons


def _comparison(app: str, agent_a: str, agent_b: str, metric: str, a: list[bool], b: list[bool], seed: int) -> dict[str, Any]:
    n = len(a)
    only_a = sum(x and not y for x, y in zip(a, b))
    only_b = sum(y and not x for x, y in zip(a, b))
    both = sum(x and y for x, y in zip(a, b))
    differences = [int(x) - int(y) for x, y in zip(a, b)]
    difference = sum(differences) / n if n else None
    low, high = paired_bootstrap(differences, seed) if n else (None, None)
    discordance = (only_a + only_b) / n if n else 0.0
    # the observed difference first (how many queries would confirm it), then fixed targets
    targets = ([(abs(difference), True)] if difference else []) + [(t, False) for t in TARGET_DIFFERENCES]
    return {
        "app": app, "agent_a": agent_a, "agent_b": agent_b,
        "metric": NAMES[metric],
        "pairs": n, "both": both, "only_a": only_a, "only_b": only_b, "neither": n - both - only_a - only_b,
        "rate_a": sum(a) / n if n else None, "rate_b": sum(b) / n if n else None,
        "difference": difference,
        "mcnemar_p": mcnemar_exact(only_a, only_b),
        "bootstrap_ci95": [low, high], "bootstrap": {"resamples": RESAMPLES, "seed": seed},
        "discordance": discordance,
        "queries_needed": [
            {"difference": target, "pairs": queries_needed(target, discordance), "observed": observed}
            for target, observed in targets
        ],
    }
