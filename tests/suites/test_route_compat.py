"""The route suite under --compat netarena, as a user runs it: NetArena's network, query catalogue and verdicts."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


def grouped_by_agent(records: list[dict]) -> dict[str, list[dict]]:
    grouped: dict[str, list[dict]] = {}
    for record in records:
        grouped.setdefault(record["agent"], []).append(record)
    return grouped


@pytest.mark.skipif(os.geteuid() != 0, reason="the routing suite needs root")
def test_route_oracle_passes_and_noop_gets_netarenas_verdicts(pytester: pytest.Pytester, suite, episodes) -> None:
    """NetArena's 2x1 network and 15 categories (its levels); the oracle is always correct and safe; the
    noop agent is safe, and correct exactly where the fault broke nothing (an immediate success: 1 step)."""
    suite("route").runpytest_subprocess("--compat", "netarena", "--agent=builtin:oracle", "--agent=builtin:noop",
                                         "--queries=1", "--seed=11", "-n", "2", "-p", "no:cacheprovider")
    by_agent = grouped_by_agent(episodes())
    oracle, noop = by_agent["builtin:oracle"], by_agent["builtin:noop"]
    assert len(oracle) == len(noop) == 15
    assert all(r["query"]["params"]["subnets"] == 2 and r["query"]["params"]["hosts"] == 1 for r in oracle)
    assert all(r["query"]["params"]["rules"] == "netarena" for r in oracle)
    levels = {r["query"]["category"]: r["query"]["level"] for r in oracle}
    assert levels["disable_routing+drop_traffic_to_from_subnet"] == 3
    assert levels["disable_interface+drop_traffic_to_from_subnet"] == 2
    assert all(r["correct"] and r["safe"] for r in oracle), [r["details"] for r in oracle if not r["correct"]]
    for record in noop:
        assert record["safe"]
        assert len(record["steps"]) == (1 if record["correct"] else 10)
    (summary,) = (pytester.path / "reports").glob("*/summary.json")
    assert json.loads(summary.read_text())["rules"] == "netarena"
