"""The k8s suite's mode and story as a user runs them: the header says which mode ran, run.json keeps the options
and the settings its episodes ran in, and summary.json, report.html and the terminal table label every row."""

from __future__ import annotations

import json

import pytest

from pytest_netarena.cluster import live_support


def run_files(pytester: pytest.Pytester) -> tuple[dict, dict, str, list[dict]]:
    (folder,) = (pytester.path / "reports").glob("*/")
    episodes = [json.loads(line) for line in (folder / "episodes.jsonl").read_text().splitlines()]
    return (json.loads((folder / "run.json").read_text()), json.loads((folder / "summary.json").read_text()),
            (folder / "report.html").read_text(), episodes)


def test_an_api_only_operator_run_is_labelled_everywhere(pytester: pytest.Pytester, suite) -> None:
    result = suite("k8s").runpytest_subprocess(
        "--agent=builtin:oracle", "--queries=1", "--levels=1", "--seed=4", "--k8s-pods=off", "--k8s-story=operator",
        "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["netarena: k8s: mode api-only (the API server alone*story operator*"])
    assert "k8s, builtin:oracle [api-only+operator]:" in result.stdout.lines  # the terminal table's heading
    run, summary, html, episodes = run_files(pytester)
    assert run["options"]["k8s_pods"] == "off" and run["options"]["k8s_story"] == "operator"
    assert run["settings"] == {"k8s": ["api-only+operator"]}
    (row,) = summary["groups"]
    assert row["agent"] == "builtin:oracle [api-only+operator]" and row["setting"] == "api-only+operator"
    assert row["avg_resolved"] == 1.0  # the verdict does not depend on the story
    assert "builtin:oracle [api-only+operator]" in html
    assert all(e["setting"] == "api-only+operator" and e["agent"] == "builtin:oracle" for e in episodes)
    assert all("Users report" in e["first_observation"] or "scan flags" in e["first_observation"] for e in episodes)
    assert not any("Expected:" in e["first_observation"] for e in episodes)


@pytest.mark.skipif(not live_support().ok, reason=f"pods cannot run here: {live_support().reason}")
def test_a_default_run_is_live_where_pods_can_run(pytester: pytest.Pytester, suite) -> None:
    result = suite("k8s").runpytest_subprocess("--agent=builtin:oracle", "--queries=1", "--levels=1", "--seed=4",
                                               "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["netarena: k8s: mode live (the pods run: the agent may kubectl exec, logs and "
                                 "events); story mismatch*"])
    run, summary, _, episodes = run_files(pytester)
    assert run["options"]["k8s_pods"] == "auto" and run["settings"] == {"k8s": ["live"]}
    assert [g["agent"] for g in summary["groups"]] == ["builtin:oracle [live]"]
    assert all(e["setting"] == "live" for e in episodes)
