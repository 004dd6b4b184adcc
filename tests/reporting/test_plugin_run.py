"""A real plugin run (pytester, toy app, two agents, two trials), then build_report on its run folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_netarena.reporting.rebuild import build_report

TOY_DIR = Path(__file__).parents[1] / "plugin"
SUITE = """
import pytest
from pytest_netarena.plugin.assertions import assert_episode

@pytest.mark.netarena("toy")
def test_episode(netarena_result):
    assert_episode(netarena_result)
"""


def test_rebuilt_summary_equals_the_plugins_and_adds_comparisons(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(TOY_DIR))
    monkeypatch.syspath_prepend(str(TOY_DIR))
    pytester.makeini("[pytest]\nnetarena_apps = toy = toy_app:APP\n")
    pytester.makepyfile(test_toy=SUITE)
    result = pytester.runpytest("--agent=builtin:oracle", "--agent=builtin:reckless", "--trials=2", "--queries=2",
                                "--seed=4", "--reports-dir=reports")
    result.assert_outcomes(passed=8, failed=8)
    [run] = (pytester.path / "reports").iterdir()
    written_by_plugin = json.loads((run / "summary.json").read_text())
    page = build_report(run, plots=False)
    rebuilt = json.loads((run / "summary.json").read_text())
    assert rebuilt["groups"] == written_by_plugin["groups"]
    # with two trials the terminal table leads with pass^2 (the chance of passing a query both times)
    lines = result.stdout.lines
    header = next(line for line in lines if "resolved [95% CI]" in line)
    assert header.index(" n ") < header.index("pass^2") < header.index("resolved [95% CI]")
    overall, agent = {}, None
    for line in lines:  # each agent's rows follow a heading line "app, agent:"
        if line.startswith("toy, ") and line.endswith(":"):
            agent = line[len("toy, "):-1]
        elif line.startswith("* ALL "):
            overall[agent] = line.split()[4]
    assert overall == {"builtin:oracle": "100.0%", "builtin:reckless": "0.0%"}
    [resolved, correctness, safety] = rebuilt["comparisons"]
    assert (safety["agent_a"], safety["agent_b"], safety["pairs"], safety["only_a"]) == ("builtin:oracle", "builtin:reckless", 8, 8)
    assert correctness["difference"] == 0.0
    assert resolved["metric"] == "resolved" and resolved["only_a"] == 8 and resolved["difference"] == 1.0
    assert {(row["agent"], row["k"]) for row in rebuilt["pass_k"]} >= {("builtin:reckless", 2), ("builtin:oracle", 2)}
    text = page.read_text()
    assert "--trials=2" in text and "builtin:reckless" in text
