"""Interval estimates (Wilson score intervals for rates, normal intervals for means) and the exact binomial tail."""

from __future__ import annotations

import math
from collections.abc import Sequence

Z95 = 1.959963984540054


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion; (0, 1) when n is 0."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    # exact ends where the rate is 0 or 1: rounding must not put the rate outside its interval
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return (low, high)


def mean_interval(values: Sequence[float], z: float = Z95) -> tuple[float, float, float]:
    """(mean, low, high) with a normal-approximation interval; a point interval below two values."""
    if not values:
        return (math.nan, math.nan, math.nan)
    mean = sum(values) / len(values)
    if len(values) < 2:
        return (mean, mean, mean)
    variance = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
    half = z * math.sqrt(variance / len(values))
    return (mean, mean - half, mean + half)


def binomial_tail(successes: int, n: int, p: float) -> float:
    """P(X >= successes) for X ~ Binomial(n, p), exactly: the p-value of a one-sided test that the rate is at most p."""
    if successes <= 0:
        return 1.0
    if successes > n:
        return 0.0
    return min(1.0, sum(math.comb(n, k) * p ** k * (1 - p) ** (n - k) for k in range(successes, n + 1)))
