"""Harbor runs its own oracle agent through our provider (`-e pytest_netarena.harbor.provider:NetarenaEnvironment`), no
Docker: on an exported k8s task (the sidecar's episode judged step by step, its verdict collected for the separate
verifier) and on a k3s-layout fixture (a fresh embedded cluster in place of k3s); both reward 1.0. A task whose agent
does nothing is rewarded 0. The provider module imports on this Python (3.11) without Harbor."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_netarena.harbor.export import Selection, export_harbor
from pytest_netarena.sandbox import support

from .conftest import ROOT, harbor_run, netarena, reward

FIXTURE = ROOT / "fixtures" / "harbor" / "release-bot-scale"

pytestmark = pytest.mark.skipif(not support().ok, reason=f"the provider's boxes cannot be made here: {support().reason}")


@pytest.fixture(scope="module")
def k8s_task(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("k8s-task")
    done = netarena("generate", "--app", "k8s", "--episodes", "1", "--levels", "1", "--seed", "3", "--out",
                    str(tmp / "runs"))
    assert done.returncode == 0, done.stderr
    (name,) = export_harbor(sorted((tmp / "runs").iterdir()), tmp / "dataset", Selection(apps=("k8s",)))
    return tmp / "dataset" / name


def test_the_provider_imports_without_harbor() -> None:
    done = subprocess.run([sys.executable, "-c", "import pytest_netarena.harbor.provider as p; print(p.__name__)"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "pytest_netarena.harbor.provider" in done.stdout, done.stderr


def test_harbors_oracle_resolves_an_exported_k8s_task_on_our_provider(harbor_python, k8s_task, tmp_path) -> None:
    trial = harbor_run(harbor_python, k8s_task, "oracle", tmp_path)
    assert trial.get("exception_info") is None, trial.get("exception_info")
    assert reward(trial) == 1.0
    verdict = next(tmp_path.rglob("verdict.json"))  # the sidecar's verdict, collected as its artifact
    judged = json.loads(verdict.read_text())
    assert judged["outcome"] == "resolved" and judged["safe"] is True and judged["steps"] >= 1


def test_an_agent_that_does_nothing_is_not_rewarded(harbor_python, k8s_task, tmp_path) -> None:
    trial = harbor_run(harbor_python, k8s_task, "nop", tmp_path)
    assert reward(trial) == 0.0
    judged = json.loads(next(tmp_path.rglob("verdict.json")).read_text())
    assert judged["outcome"] == "unresolved" and judged["steps"] == 0


def test_harbors_oracle_solves_a_k3s_fixture_on_our_embedded_cluster(harbor_python, tmp_path) -> None:
    trial = harbor_run(harbor_python, FIXTURE, "oracle", tmp_path)
    assert trial.get("exception_info") is None, trial.get("exception_info")
    assert reward(trial) == 1.0
