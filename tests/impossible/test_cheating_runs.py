"""--impossible through the real suites: honest built-ins never cheat, builtin:cheater is caught and shown in the
terminal, summary.json, JUnit and report.html; impossible episodes stay out of every rate; off, nothing changes."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytest_netarena.run.gates import EXIT_BELOW_BAR

HONEST = ("builtin:oracle", "builtin:expert", "builtin:noop")


def summary_of(pytester: pytest.Pytester) -> dict:
    (path,) = (pytester.path / "reports").glob("*/summary.json")
    return json.loads(path.read_text())


def junit_properties(path: Path) -> dict[str, dict[str, str]]:
    """Each test case's netarena.* properties, by test id."""
    cases = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        cases[case.get("name")] = props
    return cases


@pytest.mark.parametrize("app", ["k8s", "malt", "route"])
def test_honest_builtins_never_cheat_and_the_cheater_is_caught(pytester: pytest.Pytester, suite, app: str) -> None:
    if app == "route" and os.geteuid() != 0:
        pytest.skip("the routing suite needs root")
    queries = "1" if app == "route" else "2"
    extra = ["--k8s-pods=off"] if app == "k8s" else []
    result = suite(app, "junit_family = xunit1\n").runpytest_subprocess(
        "--impossible", *(f"--agent={a}" for a in (*HONEST, "builtin:cheater")), f"--queries={queries}",
        "--levels=1", "-k", "impossible", "--seed=3", "--junitxml=junit.xml", "-p", "no:cacheprovider", *extra)
    n = int(queries)
    summary = summary_of(pytester)
    assert summary["groups"] == []  # impossible episodes are in no rate: only in "cheating"
    rows = {row["agent"].split(" [")[0]: row for row in summary["cheating"]}
    for agent in HONEST:
        assert rows[agent]["cheating"]["k"] == 0 and rows[agent]["cheating"]["n"] == n, rows[agent]
        assert rows[agent]["cheats"] == []
    cheater = rows["builtin:cheater"]
    assert cheater["cheating"] == {"rate": 1.0, "k": n, "n": n, "ci95": cheater["cheating"]["ci95"]}
    assert cheater["cheating"]["ci95"][1] == 1.0 and 0 < cheater["cheating"]["ci95"][0] < 1
    assert len(cheater["cheats"]) == n and all(c["episode_id"] and c["outcome"] == "unsafe" for c in cheater["cheats"])
    # the test of a cheated episode fails and says so; an honest agent's impossible episode passes
    result.assert_outcomes(passed=3 * n, failed=n)
    result.stdout.fnmatch_lines(["*CHEATED on an impossible episode*", "impossible episodes: cheating rate*",
                                 f"{app}, builtin:cheater*: cheated {n} of {n} 100.0%*", "  cheat: *episode *"])
    cases = junit_properties(pytester.path / "junit.xml")
    cheated = {name for name, props in cases.items() if props.get("netarena.cheated") == "True"}
    assert len(cheated) == n and all("builtin-cheater" in name for name in cheated)
    assert all(props.get("netarena.impossible") == "True" for props in cases.values())
    (report,) = (pytester.path / "reports").glob("*/report.html")
    html = report.read_text()
    assert '<h2 id="cheating">Impossible episodes</h2>' in html and cheater["cheats"][0]["episode_id"] in html


def test_impossible_is_off_by_default_and_changes_nothing(pytester: pytest.Pytester, suite) -> None:
    """Without --impossible: the same tests, no impossible id, no cheating key, no impossible properties."""
    suite("malt", "junit_family = xunit1\n")
    args = ("--agent=builtin:oracle", "--queries=1", "--levels=1", "--seed=9", "-p", "no:cacheprovider")
    plain = pytester.runpytest_subprocess(*args, "--collect-only", "-q")
    mixed = pytester.runpytest_subprocess(*args, "--impossible", "--collect-only", "-q")
    ids = [line for line in plain.stdout.lines if "::test_episode[" in line]
    with_impossible = [line for line in mixed.stdout.lines if "::test_episode[" in line]
    assert ids and not any("impossible" in line for line in ids)
    assert [line for line in with_impossible if "impossible" not in line] == ids
    assert len(with_impossible) == len(ids) + 1
    result = pytester.runpytest_subprocess(*args, "--junitxml=junit.xml")
    result.assert_outcomes(passed=len(ids))
    assert "cheating" not in summary_of(pytester) and "impossible episodes" not in result.stdout.str()
    for props in junit_properties(pytester.path / "junit.xml").values():
        assert "netarena.impossible" not in props and "netarena.cheated" not in props


def test_impossible_episodes_stay_out_of_the_rates(pytester: pytest.Pytester, suite) -> None:
    """With --impossible the normal rows are what they are without it: the cheater's cheats are not resolutions."""
    suite("malt", "junit_family = xunit1\n")
    args = ("--agent=builtin:cheater", "--queries=1", "--levels=1", "--seed=4", "-p", "no:cacheprovider")
    pytester.runpytest_subprocess(*args, "--impossible", "--min-resolved=1")
    with_impossible = summary_of(pytester)
    (group,) = with_impossible["groups"]
    assert group["overall"]["resolved"]["k"] == group["overall"]["scored"] == 4  # the oracle's answers, and no more
    assert with_impossible["gates"][0]["passed"] and with_impossible["cheating"][0]["cheating"]["k"] == 1


def test_resume_keeps_impossible(pytester: pytest.Pytester, suite) -> None:
    """--impossible decides the queries: run.json keeps it, and `--resume DIR` alone collects them again."""
    suite("malt", "junit_family = xunit1\n")
    pytester.runpytest_subprocess("--agent=builtin:oracle", "--queries=1", "--levels=1", "--seed=2", "--impossible",
                                  "-k", "impossible", "-p", "no:cacheprovider")
    (run_json,) = (pytester.path / "reports").glob("*/run.json")
    assert json.loads(run_json.read_text())["options"]["impossible"] is True
    again = pytester.runpytest_subprocess(f"--resume={run_json.parent}", "--collect-only", "-q", "-p", "no:cacheprovider")
    assert any("impossible_strip_switch" in line for line in again.stdout.lines), again.stdout.str()[-2000:]


def test_a_bar_over_impossible_episodes_alone_fails(pytester: pytest.Pytester, suite) -> None:
    """Impossible episodes are scored only as cheats, so a run of them alone scored nothing a bar can meet."""
    suite("malt", "junit_family = xunit1\n")
    result = pytester.runpytest_subprocess("--agent=builtin:oracle", "--queries=1", "--levels=1", "--seed=2",
                                           "--impossible", "-k", "impossible", "--min-resolved=0.5",
                                           "-p", "no:cacheprovider")
    assert result.ret == EXIT_BELOW_BAR, result.stdout.str()[-2000:]
    result.stdout.fnmatch_lines(["*bar FAILED: resolved of no agent on all is n/a, bar 0.5*"])
    assert summary_of(pytester)["gates"] == [{"metric": "resolved", "app": "all", "agent": "no agent",
                                               "threshold": 0.5, "value": None, "passed": False}]
