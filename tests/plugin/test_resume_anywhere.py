"""A run folder is self-contained: --resume finishes it from any folder, in place, and an interrupted run says so."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

#: solves the toy task; INTERRUPT=sigint|sigkill stops the whole pytest at the episode whose target is odd
STOPPING_AGENT = """
import os, signal
from toy_app import ToyAgent

class Agent(ToyAgent):
    def answer(self, target):
        how = os.environ.get("INTERRUPT")
        if how and target % 2:
            os.kill(os.getpid(), signal.SIGINT if how == "sigint" else signal.SIGKILL)
            import time
            time.sleep(5)
        return f"set {target}"
"""
# with seed 1 and one query per category, the toy's targets are 86, then 63: the second episode stops the run
SEED = "--seed=1"


@pytest.fixture
def project(toy: pytest.Pytester) -> pytest.Pytester:
    toy.makepyfile(stopping_agent=STOPPING_AGENT)
    return toy


def pytest_in(folder: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """pytest started in `folder` (a fresh process, as a user in another shell would)."""
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=folder,
                          capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})})


def episodes(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "episodes.jsonl").read_text().splitlines()]


def interrupted_after_one(project: pytest.Pytester, *args: str, reports: Path | None = None) -> Path:
    """A finished run cut back to its first episode, as an interruption leaves it; returns its folder (found
    under `reports`, default the project's reports/)."""
    done = pytest_in(project.path, "--agent=python:stopping_agent:Agent", SEED, "--queries=1", *args,
                     env={"PYTHONPATH": os.pathsep.join([str(project.path), os.environ["PYTHONPATH"]])})
    assert done.returncode == 0, done.stdout[-3000:]
    (run,) = {path.parent for path in (reports or project.path / "reports").glob("*/run.json")}
    lines = (run / "episodes.jsonl").read_text().splitlines()
    assert len(lines) == 2
    (run / "episodes.jsonl").write_text(lines[0] + "\n")
    return run


def resumed_env(project: pytest.Pytester) -> dict[str, str]:
    return {"PYTHONPATH": os.pathsep.join([str(project.path), os.environ["PYTHONPATH"]])}


def test_resume_from_another_folder_needs_the_option_alone(project: pytest.Pytester, tmp_path: Path) -> None:
    run = interrupted_after_one(project)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = pytest_in(elsewhere, f"--resume={run}", env=resumed_env(project))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert len(episodes(run)) == 2 and json.loads((run / "summary.json").read_text())["complete"] is True
    assert not (elsewhere / "reports").exists()


def test_resume_of_a_run_with_reports_elsewhere(project: pytest.Pytester, tmp_path: Path) -> None:
    run = interrupted_after_one(project, f"--reports-dir={tmp_path / 'runs'}", reports=tmp_path / "runs")
    assert run.parent == tmp_path / "runs"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = pytest_in(elsewhere, f"--resume={run}", env=resumed_env(project))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert len(episodes(run)) == 2


def test_a_copied_run_folder_is_finished_in_place(project: pytest.Pytester, tmp_path: Path) -> None:
    run = interrupted_after_one(project)
    copy = tmp_path / "archive" / "my-copy"
    shutil.copytree(run, copy)
    done = pytest_in(project.path, f"--resume={copy}", env=resumed_env(project))
    assert done.returncode == 0, done.stdout[-3000:]
    assert len(episodes(copy)) == 2 and (copy / "summary.json").exists() and (copy / "report.html").exists()
    assert sorted(p.name for p in (tmp_path / "archive").iterdir()) == ["my-copy"]
    assert len(episodes(run)) == 1  # the original is left as it was
    assert [p for p in (project.path / "reports").iterdir()] == [run]


def test_ctrl_c_marks_the_run_incomplete_with_the_resume_command(project: pytest.Pytester) -> None:
    env = {**resumed_env(project), "INTERRUPT": "sigint"}
    done = pytest_in(project.path, "--agent=python:stopping_agent:Agent", SEED, "--queries=1", env=env)
    assert done.returncode == pytest.ExitCode.INTERRUPTED
    (run,) = (project.path / "reports").iterdir()
    summary = json.loads((run / "summary.json").read_text())
    assert summary["complete"] is False
    command = summary["incomplete"]["resume"]
    assert command == f"pytest --resume {run}"
    assert summary["incomplete"]["episodes_done"] == 1 and summary["incomplete"]["episodes_expected"] == 2
    assert "INCOMPLETE" in (run / "report.html").read_text() and command in (run / "report.html").read_text()
    line = next(line for line in done.stdout.splitlines() if "INCOMPLETE" in line)
    assert "1 of 2 episodes" in line and command in line

    finish = subprocess.run([sys.executable, "-m", *shlex.split(command),
                             "-p", "no:cacheprovider"], cwd=project.path, capture_output=True, text=True,
                            env={**os.environ, **resumed_env(project)}, timeout=300)
    assert finish.returncode == 0, finish.stdout[-3000:]
    summary = json.loads((run / "summary.json").read_text())
    assert summary["complete"] is True and "incomplete" not in summary
    assert "INCOMPLETE" not in (run / "report.html").read_text()


def test_a_killed_run_is_marked_incomplete(project: pytest.Pytester) -> None:
    env = {**resumed_env(project), "INTERRUPT": "sigkill"}
    done = pytest_in(project.path, "--agent=python:stopping_agent:Agent", SEED, "--queries=1", env=env)
    assert done.returncode == -9
    (run,) = (project.path / "reports").iterdir()
    summary = json.loads((run / "summary.json").read_text())
    assert summary["complete"] is False and summary["incomplete"]["resume"] == f"pytest --resume {run}"
    report = subprocess.run([sys.executable, "-m", "pytest_netarena.cli", "report", str(run), "--no-plots"],
                            capture_output=True, text=True, timeout=120)
    assert report.returncode == 0, report.stderr
    page = (run / "report.html").read_text()
    assert "INCOMPLETE" in page and f"pytest --resume {run}" in page
