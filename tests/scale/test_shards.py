"""`--shard K/N` slices and `netarena report merge`: three shards merged equal one unsharded run; runs record their
environment's fingerprint, and `report compare` and `report merge` warn when two runs' differ."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytest_netarena.reporting.fingerprint import SHOWN, differences, fingerprint

AGENTS = ("--agent=builtin:oracle", "--agent=builtin:reckless")  # deterministic: the same episodes every time


def netarena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_netarena.cli", *map(str, args)], capture_output=True,
                          text=True, timeout=120, check=False)


def run_folder(root: Path) -> Path:
    (run,) = [path.parent for path in root.glob("*/run.json")]
    return run


def without_timing(value):
    """Summaries minus wall-clock measures, which differ between any two runs."""
    if isinstance(value, dict):
        return {k: without_timing(v) for k, v in value.items() if "latency" not in k and "wall" not in k}
    if isinstance(value, list):
        return [without_timing(v) for v in value]
    return value


def shard(toy: pytest.Pytester, k: int, seed: int = 5, *extra: str) -> Path:
    result = toy.runpytest(*AGENTS, f"--seed={seed}", "--queries=4", f"--shard={k}/3", f"--reports-dir=shards/{k}", *extra)
    assert result.ret in (0, 1), result.stdout.str()
    return run_folder(toy.path / "shards" / str(k))


def test_three_shards_merged_give_the_summary_and_junit_of_one_unsharded_run(toy: pytest.Pytester) -> None:
    whole = toy.runpytest(*AGENTS, "--seed=5", "--queries=4", "--reports-dir=whole", "--junitxml=whole.xml")
    whole.assert_outcomes(passed=8, failed=8)
    shards = [shard(toy, k) for k in (1, 2, 3)]
    sizes = [len((s / "episodes.jsonl").read_text().splitlines()) for s in shards]
    assert sum(sizes) == 16 and all(sizes)  # a partition: every episode in exactly one shard
    assert json.loads((shards[0] / "run.json").read_text())["collection"] == {"total": 16, "selected": sizes[0]}

    done = netarena("report", "merge", *shards, "--out", toy.path / "merged", "--no-plots")
    assert done.returncode == 0, done.stderr
    merged = toy.path / "merged"
    expected = json.loads((run_folder(toy.path / "whole") / "summary.json").read_text())
    assert without_timing(json.loads((merged / "summary.json").read_text())) == without_timing(expected)
    assert "toy-L2-set+set-0003" in (merged / "report.html").read_text()
    cases = ET.parse(merged / "junit.xml").getroot().findall("testcase")
    whole_cases = ET.parse(toy.path / "whole.xml").getroot().iter("testcase")
    assert sorted(c.get("name") for c in cases) == sorted(c.get("name") for c in whole_cases)
    assert sum(c.find("failure") is not None for c in cases) == 8
    run = json.loads((merged / "run.json").read_text())
    assert run["seed"] == 5 and sorted(m["shard"] for m in run["merged_from"]) == ["1/3", "2/3", "3/3"]


def test_merge_refuses_folders_of_different_runs_and_missing_shards(toy: pytest.Pytester) -> None:
    ones = [shard(toy, 1), shard(toy, 2)]
    other_seed = toy.runpytest(*AGENTS, "--seed=6", "--queries=4", "--shard=3/3", "--reports-dir=other")
    assert other_seed.ret in (0, 1)
    done = netarena("report", "merge", *ones, run_folder(toy.path / "other"), "--out", toy.path / "m1")
    assert done.returncode == 2 and "seed 6 differs from 5" in done.stderr
    other_options = toy.runpytest(*AGENTS, "--seed=5", "--queries=3", "--shard=3/3", "--reports-dir=options")
    assert other_options.ret in (0, 1)
    done = netarena("report", "merge", *ones, run_folder(toy.path / "options"), "--out", toy.path / "m2")
    assert done.returncode == 2 and "options" in done.stderr and '"queries": 3' in done.stderr
    done = netarena("report", "merge", *ones, "--out", toy.path / "m3")
    assert done.returncode == 2 and "shard(s) 3/3 missing" in done.stderr
    assert not (toy.path / "m1").exists() and not (toy.path / "m3").exists()


def test_a_shard_needs_a_seed(toy: pytest.Pytester) -> None:
    result = toy.runpytest("--agent=builtin:oracle", "--shard=1/2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--shard needs --seed*"])


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


def test_a_resumed_shard_stays_that_shard(toy: pytest.Pytester) -> None:
    run = shard(toy, 2)
    lines = (run / "episodes.jsonl").read_text().splitlines()
    ids = sorted(json.loads(line)["query"]["id"] for line in lines)
    (run / "episodes.jsonl").write_text("".join(line + "\n" for line in lines[:-1]))  # interrupted before its last
    result = toy.runpytest(f"--resume={run}")  # no --shard: run.json's
    assert result.ret in (0, 1), result.stdout.str()
    resumed = sorted(json.loads(line)["query"]["id"] for line in (run / "episodes.jsonl").read_text().splitlines())
    assert resumed == ids and len(ids) < 16  # its slice again, not the whole collection
    assert json.loads((run / "run.json").read_text())["shard"] == "2/3"
