"""run.json says which MALT topology a run drew its questions on and answered against: its source, its size, and
for a file, where it was and its sha256 (which tells two files of one name apart)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from pytest_netarena.apps import get_app
from pytest_netarena.core.app import RunOptions

ROOT = Path(__file__).parents[2]


def run_json(pytester: pytest.Pytester, *options: str) -> dict:
    pytester.makeini("[pytest]\nnetarena_plots = false\n")
    pytester.makepyfile(test_malt=(ROOT / "suites" / "malt" / "test_malt.py").read_text())
    result = pytester.runpytest_subprocess("--agent=builtin:oracle", "--queries=1", "--levels=1", "--seed=3",
                                           "-k", "list", "-p", "no:cacheprovider", *options)
    assert result.ret == 0, result.stdout.str()[-2000:]
    (path,) = (pytester.path / "reports").glob("*/run.json")
    return json.loads(path.read_text())


def test_run_json_names_the_default_synthetic_topology_and_its_size(pytester: pytest.Pytester) -> None:
    topology = run_json(pytester)["environments"]["malt"]["topology"]
    graph = get_app("malt").run_facts(RunOptions())["topology"]
    assert topology == graph and topology["source"] == "synthetic" and topology["synthetic"] is True
    assert topology["nodes"] > 100 and topology["edges"] > topology["nodes"] - 1


def test_run_json_names_a_topology_file_by_path_and_digest(pytester: pytest.Pytester, real_topology_path) -> None:
    copy = pytester.path / "topology.textproto"
    shutil.copyfile(real_topology_path, copy)
    topology = run_json(pytester, f"--malt-topology={copy}")["environments"]["malt"]["topology"]
    assert topology["file"] == str(copy) and topology["bytes"] == copy.stat().st_size
    assert topology["sha256"] == hashlib.sha256(copy.read_bytes()).hexdigest()
    assert topology["nodes"] > 1000 and "synthetic" not in topology


def test_a_run_without_malt_episodes_records_no_topology(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nnetarena_plots = false\n")
    pytester.makepyfile(test_k8s=(ROOT / "suites" / "k8s" / "test_k8s.py").read_text())
    result = pytester.runpytest_subprocess("--agent=builtin:noop", "--queries=1", "--levels=1", "--seed=3",
                                           "-k", "change_port", "-p", "no:cacheprovider", "--max-steps=1")
    assert result.ret == 1, result.stdout.str()[-2000:]
    (path,) = (pytester.path / "reports").glob("*/run.json")
    assert "environments" not in json.loads(path.read_text())
