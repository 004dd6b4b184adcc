"""McNemar, the paired bootstrap, sample sizes and pass@k / pass^k against known values and brute force."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from pytest_netarena.reporting.compare import (
    compare,
    mcnemar_exact,
    paired_bootstrap,
    queries_needed,
)
from pytest_netarena.reporting.passk import pass_at_k, pass_hat_k, pass_k_table


def test_mcnemar_exact_matches_hand_computed_binomial_tails() -> None:
    # 9 discordant pairs split 1/8: P = 2 * (C(9,0) + C(9,1)) / 2**9 = 20/512
    assert mcnemar_exact(1, 8) == pytest.approx(20 / 512)
    assert mcnemar_exact(8, 1) == mcnemar_exact(1, 8)
    assert mcnemar_exact(0, 6) == pytest.approx(2 / 64)  # 0.03125
    assert mcnemar_exact(5, 5) == 1.0  # capped: both tails overlap
    assert mcnemar_exact(0, 0) == 1.0
    # scipy.stats.binomtest(3, 15, 0.5).pvalue == 0.03515625
    assert mcnemar_exact(3, 12) == pytest.approx(0.03515625)


def test_paired_bootstrap_is_seeded_and_covers_the_mean() -> None:
    differences = [1] * 30 + [0] * 60 + [-1] * 10
    low, high = paired_bootstrap(differences, seed=5)
    assert (low, high) == paired_bootstrap(differences, seed=5)
    assert low < 0.2 < high
    # the normal-approximation interval of the same mean, as a sanity bound on the width
    sd = math.sqrt(sum((d - 0.2) ** 2 for d in differences) / 99)
    assert high - low == pytest.approx(2 * 1.96 * sd / 10, rel=0.2)
    assert paired_bootstrap([0] * 20, seed=1) == (0.0, 0.0)
    assert paired_bootstrap([1] * 20, seed=1) == (1.0, 1.0)


def test_queries_needed_follows_connors_formula_and_gives_80_percent_power() -> None:
    psi, d = 0.3, 0.1
    expected = (1.959964 * math.sqrt(psi) + 0.841621 * math.sqrt(psi - d * d)) ** 2 / d**2
    n = queries_needed(d, psi)
    assert n == math.ceil(expected) == 234
    assert queries_needed(0.2, psi) < n < queries_needed(0.05, psi)
    assert queries_needed(0.0, psi) is None
    assert queries_needed(0.3, 0.0) == queries_needed(0.3, 0.3)  # discordance is at least |d|
    # simulate: pairs discordant with probability psi, split so that p10 - p01 = d; the
    # large-sample McNemar test at 5% must reject about 80% of the time with n pairs
    rng = random.Random(11)
    p10, p01 = (psi + d) / 2, (psi - d) / 2
    rejections = 0
    runs = 400
    for _ in range(runs):
        draws = rng.choices((1, -1, 0), weights=(p10, p01, 1 - psi), k=n)
        b, c = draws.count(1), draws.count(-1)
        rejections += (b - c) ** 2 / (b + c) > 1.959964**2 if b + c else 0
    assert 0.72 < rejections / runs < 0.88


def test_compare_pairs_by_query_and_trial_and_skips_infra_errors() -> None:
    def record(agent, query, trial, correct, outcome=None):
        return {"app": "a", "agent": agent, "query": query, "trial": trial, "correct": correct, "safe": True,
                "outcome": outcome or ("resolved" if correct else "unresolved")}

    records = [record("x", f"q{i}", 0, True) for i in range(10)]
    records += [record("y", f"q{i}", 0, i < 3) for i in range(10)]
    records += [record("x", "q10", 0, True), record("y", "q10", 0, False, "infra_error")]  # never paired
    records += [record("x", "q11", 0, True)]  # y never ran it
    [resolved, correctness, safety] = compare(records, seed=1)
    assert resolved["metric"] == "resolved" and (resolved["only_a"], resolved["both"]) == (7, 3)
    assert (correctness["pairs"], correctness["only_a"], correctness["only_b"], correctness["both"]) == (10, 7, 0, 3)
    assert correctness["difference"] == pytest.approx(0.7)
    assert correctness["mcnemar_p"] == pytest.approx(2 / 2**7)
    low, high = correctness["bootstrap_ci95"]
    assert 0.3 < low < 0.7 < high <= 1.0
    assert correctness["queries_needed"][0] == {"difference": 0.7, "pairs": queries_needed(0.7, 0.7), "observed": True}
    assert safety["metric"] == "safety" and safety["difference"] == 0 and safety["mcnemar_p"] == 1.0


def _brute_force(outcomes: tuple[bool, ...], k: int) -> tuple[float, float]:
    subsets = list(itertools.combinations(outcomes, k))
    return (sum(any(s) for s in subsets) / len(subsets), sum(all(s) for s in subsets) / len(subsets))


@pytest.mark.parametrize("n", [1, 2, 3, 5, 7])
def test_pass_at_k_and_pass_hat_k_equal_brute_force_over_subsets(n: int) -> None:
    for c in range(n + 1):
        outcomes = (True,) * c + (False,) * (n - c)
        for k in range(1, n + 1):
            at, hat = _brute_force(outcomes, k)
            assert pass_at_k(n, c, k) == pytest.approx(at)
            assert pass_hat_k(n, c, k) == pytest.approx(hat)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)


def test_pass_k_table_averages_per_query_and_ignores_infra_errors() -> None:
    def record(query, trial, outcome, level=1):
        return {"app": "a", "agent": "x", "level": level, "query": query, "trial": trial, "outcome": outcome}

    records = [record("q1", t, o) for t, o in enumerate(["resolved", "unsafe", "resolved"])]
    records += [record("q2", t, o) for t, o in enumerate(["unresolved", "unresolved", "resolved", "infra_error"])]
    rows = {row["k"]: row for row in pass_k_table(records)}
    assert sorted(rows) == [1, 2, 3]
    assert rows[1]["pass_at_k"] == pytest.approx((2 / 3 + 1 / 3) / 2)
    assert rows[2]["pass_at_k"] == pytest.approx((1 + 2 / 3) / 2)
    assert rows[2]["pass_hat_k"] == pytest.approx((1 / 3 + 0) / 2)
    assert rows[3]["pass_hat_k"] == 0 and rows[3]["queries"] == 2
    assert pass_k_table([record("q1", 0, "resolved")]) == []  # one trial: nothing to say
