"""Fixtures of the Harbor tests: Harbor itself in its own cached Python 3.12 venv (skipped, saying how, where none can
be made), and a small exported dataset of each app."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from harbor_venv import ROOT, harbor_env, harbor_venv  # noqa: E402

PROVIDER = "pytest_netarena.harbor.provider:NetarenaEnvironment"


@pytest.fixture(scope="session")
def harbor_python() -> str:
    from pytest_netarena.testing.venvs import VenvError

    try:
        return str(harbor_venv() / "bin" / "python")
    except LookupError as error:
        pytest.skip(str(error))
    except VenvError as error:
        pytest.skip(f"cannot make Harbor's venv here: {error}")


def netarena(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """The `netarena` command of this checkout (this interpreter's)."""
    return subprocess.run([sys.executable, "-m", "pytest_netarena.cli", *args], capture_output=True, text=True,
                          timeout=timeout)


def run_in_harbor(python: str, code: str, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """Python code run with Harbor's interpreter, this checkout on its path."""
    return subprocess.run([python, "-c", code, *args], capture_output=True, text=True, timeout=timeout,
                          env=harbor_env(), cwd=str(ROOT))


def harbor_run(harbor_python: str, task: Path, agent: str, jobs: Path) -> dict:
    """`harbor run` of one trial; its trial result (the trial's result.json)."""
    harbor = str(Path(harbor_python).parent / "harbor")
    done = subprocess.run([harbor, "run", "-p", str(task), "-a", agent, "-e", PROVIDER, "-o", str(jobs), "-n", "1",
                           "-q", "-y"], capture_output=True, text=True, timeout=900, env=harbor_env(), cwd=str(jobs))
    results = [json.loads(p.read_text()) for p in jobs.rglob("result.json")]
    trials = [r for r in results if "verifier_result" in r]
    assert len(trials) == 1, (done.stdout[-3000:], done.stderr[-3000:])
    return trials[0]


def reward(trial: dict) -> float | None:
    return ((trial.get("verifier_result") or {}).get("rewards") or {}).get("reward")
