"""Every run records its environment's fingerprint; `report compare` and `report merge` warn when two runs' differ."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_netarena.reporting.fingerprint import SHOWN, differences, fingerprint

AGENTS = ("--agent=builtin:oracle", "--agent=builtin:reckless")


def netarena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_netarena.cli", *map(str, args)], capture_output=True,
                          text=True, timeout=120, check=False)


def run_folder(root: Path) -> Path:
    (run,) = [path.parent for path in root.glob("*/run.json")]
    return run


def test_the_fingerprint_names_what_a_score_depends_on() -> None:
    found = fingerprint()
    assert set(SHOWN) | {"digest"} == set(found) and len(found["digest"]) == 16
    assert found["python"].endswith(".".join(map(str, sys.version_info[:3])))
    assert found["kubectl"] is None or found["kubectl"].startswith("v1.")
    assert differences(found, found) == []
    changed = {**found, "kubectl": "v1.30.0"}
    assert differences(found, changed) == [f"kubectl: {found['kubectl']} vs v1.30.0"]
    assert differences(found, None) and differences(None, None) == []


def test_runs_record_it_and_compare_and_merge_warn_when_it_differs(toy: pytest.Pytester) -> None:
    toy.runpytest(*AGENTS, "--seed=7", "--queries=2", "--reports-dir=a").assert_outcomes(passed=4, failed=4)
    toy.runpytest(*AGENTS, "--seed=7", "--queries=2", "--reports-dir=b").assert_outcomes(passed=4, failed=4)
    first, second = run_folder(toy.path / "a"), run_folder(toy.path / "b")
    recorded = json.loads((first / "run.json").read_text())["fingerprint"]
    assert recorded == fingerprint()
    assert f"environment</td><td>{recorded['digest']}" in (first / "report.html").read_text()

    same = netarena("report", "compare", first, second)
    assert same.returncode == 0 and "warning" not in same.stderr, same.stderr
    lines = same.stdout.splitlines()
    assert any(line.split()[:3] == ["toy", "builtin:oracle", "correctness"] and "100.0%" in line for line in lines)

    run = json.loads((second / "run.json").read_text())
    run["fingerprint"] = {**run["fingerprint"], "networkx": "2.0"}
    (second / "run.json").write_text(json.dumps(run))
    other = netarena("report", "compare", first, second)
    assert other.returncode == 0
    assert f"different environments: networkx: {recorded['networkx']} vs 2.0" in other.stderr


def test_merge_warns_when_shards_ran_in_different_environments(toy: pytest.Pytester) -> None:
    shards = []
    for k in (1, 2):
        toy.runpytest(*AGENTS, "--seed=5", "--queries=2", f"--shard={k}/2", f"--reports-dir=shards/{k}")
        shards.append(run_folder(toy.path / "shards" / str(k)))
    run = json.loads((shards[1] / "run.json").read_text())
    run["fingerprint"] = {**run["fingerprint"], "kernel": "0.0-other"}
    (shards[1] / "run.json").write_text(json.dumps(run))
    done = netarena("report", "merge", *shards, "--out", toy.path / "merged", "--no-plots")
    assert done.returncode == 0, done.stderr
    assert f"ran in another environment than {shards[0]}: kernel: " in done.stderr and "vs 0.0-other" in done.stderr
