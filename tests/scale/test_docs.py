"""docs/scale.md's recipes, run as written (host names, paths, agents and sizes swapped for local ones)."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import pytest_netarena

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "scale.md"
PACKAGE_ROOT = Path(pytest_netarena.__file__).resolve().parent.parent


def recipe(name: str) -> str:
    """The fenced block that follows `<!-- recipe: NAME -->` in docs/scale.md."""
    match = re.search(rf"<!-- recipe: {name} -->\n```\w*\n(.*?)```", DOC.read_text(), flags=re.DOTALL)
    assert match, f"docs/scale.md has no recipe {name!r}"
    return match.group(1)


def shell(command: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    # `netarena` as installed would be another checkout's; the package under test is on PYTHONPATH
    python = shlex.quote(sys.executable)
    command = re.sub(r"(?<![\w/])python -m pytest(?!\w)", f"{python} -m pytest -p no:cacheprovider", command.strip())
    command = re.sub(r"^netarena ", f"{python} -m pytest_netarena.cli ", command, flags=re.MULTILINE)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PACKAGE_ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                          check=False)


def with_suites(project: Path, *apps: str) -> Path:
    for app in apps:
        (project / "suites" / app).mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / "suites" / app / f"test_{app}.py", project / "suites" / app)
    (project / "pytest.ini").write_text("[pytest]\ntestpaths = tests\nnetarena_plots = false\n")
    return project


def test_recipe_ssh_two_hosts(toy: pytest.Pytester, remote) -> None:
    project = with_suites(remote.project, "k8s")
    (project / "tox.ini").unlink()  # the toy project's ini: the recipe runs the real suites
    command = recipe("ssh")
    for host in ("alice@host-a", "alice@host-b"):
        command = command.replace(f"2*ssh={host}", f"1*ssh=root@127.0.0.1//ssh_config={remote.server.client_config}")
    command = (command.replace("/srv/netarena/worker-python", str(remote.wrapper)).replace("/srv/netarena", str(project))
               .replace("--agent=openai:gpt-4o", "--agent=builtin:oracle").replace("--queries=20", "--queries=1 --levels=1"))
    done = shell(command, project)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "5 passed" in done.stdout and "[gw1] netarena on" in done.stdout
    (run,) = (project / "reports").glob("*/summary.json")
    assert json.loads(run.read_text())["groups"][0]["overall"]["episodes"] == 5
    assert remote.written_on_worker_side() == []


def test_recipe_github_actions_matrix_of_shards_then_merge(tmp_path: Path) -> None:
    workflow = yaml.safe_load(recipe("github-actions"))
    shard_job, merge_job = workflow["jobs"]["shard"], workflow["jobs"]["merge"]
    assert merge_job["needs"] == "shard" and merge_job["if"] == "always()"
    run_shard = next(step["run"] for step in shard_job["steps"] if step.get("name") == "Run shard")
    merge = next(step["run"] for step in merge_job["steps"] if step.get("name") == "Merge")
    shards = shard_job["strategy"]["matrix"]["shard"]
    project = with_suites(tmp_path / "repo", "k8s", "malt")
    for shard in shards:  # each matrix job on a fresh runner: a checkout of its own
        job = tmp_path / f"job-{shard}"
        shutil.copytree(project, job)
        command = (run_shard.replace("${{ github.run_id }}", "4242").replace("${{ matrix.shard }}", str(shard))
                   .replace("--queries=5", "--queries=1 --levels=1").replace(" -n 2 ", " -n 0 "))
        assert " -n 0 " in command  # a shard's episodes in one process: the workers are the ssh recipe's test
        done = shell(command, job)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
        shutil.copytree(job / "reports", tmp_path / "merge-job" / "shards" / f"shard-{shard}")  # upload, download
    done = shell(merge, tmp_path / "merge-job")
    assert done.returncode == 0, done.stdout + done.stderr
    merged = tmp_path / "merge-job" / "merged"
    run = json.loads((merged / "run.json").read_text())
    assert run["seed"] == 4242 and len(run["merged_from"]) == len(shards)
    summary = json.loads((merged / "summary.json").read_text())
    assert {group["app"] for group in summary["groups"]} == {"k8s", "malt"}
    episodes = (merged / "episodes.jsonl").read_text().splitlines()
    assert len(episodes) == run["collection"]["total"] == run["collection"]["selected"]
    assert (merged / "report.html").exists() and (merged / "junit.xml").exists()
    assert "bar met: correctness" in done.stdout


def test_recipe_real_cluster_command_line(tmp_path: Path) -> None:
    project = with_suites(tmp_path, "k8s")
    done = shell(recipe("cluster").strip() + " --collect-only -q", project)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "900 tests collected" in done.stdout  # 15 categories x 20 queries x 3 trials
