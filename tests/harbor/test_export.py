"""`netarena export harbor` checked by Harbor itself: every app's exported tasks load with Harbor's own loader and pass
`harbor lint` (its compose checks where Docker's compose plugin is installed), and the fixtures of fixtures/harbor do
too; what a task holds keeps the hidden query in the sidecar's build context alone."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_netarena.harbor.export import Selection, export_harbor

from .conftest import ROOT, netarena, run_in_harbor

FIXTURES = ROOT / "fixtures" / "harbor"
#: Harbor's lint rules checked here: its default set, less the Compose ones where `docker compose` is missing
#: (they run the Compose plugin's `config`; no daemon needed)
LINT = r"""
import json, shutil, subprocess, sys
from pathlib import Path
from harbor.lint.models import COMPOSE_RULES, DEFAULT_RULES
from harbor.lint.task import lint_task
from harbor.models.task.task import Task
compose = shutil.which("docker") and subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0
rules = set(DEFAULT_RULES) if compose else set(DEFAULT_RULES) - COMPOSE_RULES
found = {}
for folder in sys.argv[1:]:
    Task(Path(folder))  # Harbor's own loader: raises on an invalid task
    found[folder] = [f.model_dump(mode="json") for f in lint_task(Path(folder), selected_rules=rules)]
print(json.dumps({"compose": bool(compose), "findings": found}))
"""


def export_runs(tmp: Path, apps: dict[str, list[str]]) -> list[str]:
    runs = tmp / "runs"
    for app, options in apps.items():
        done = netarena("generate", "--app", app, "--episodes", "2", "--levels", "1,2", "--seed", "5", "--out",
                        str(runs), *options)
        assert done.returncode in (0, 1), done.stderr
    return export_harbor(sorted(runs.iterdir()), tmp / "dataset", Selection())


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    from pytest_netarena.apps.route.network.capabilities import backend_missing

    tmp = tmp_path_factory.mktemp("harbor-export")
    apps = {"k8s": [], "malt": ["--option", "malt-topology=synthetic:200"]}
    if not backend_missing():
        apps["route"] = ["--option", "route-size=2x1"]
    export_runs(tmp, apps)
    return tmp / "dataset"


def test_harbor_loads_and_lints_every_exported_task_clean(harbor_python, dataset) -> None:
    tasks = sorted(str(p) for p in dataset.iterdir() if p.is_dir())
    apps = {Path(t).name.split("-")[0] for t in tasks}
    assert {"k8s", "malt"} <= apps and len(tasks) >= 4
    done = run_in_harbor(harbor_python, LINT, *tasks)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["findings"] == {task: [] for task in tasks}


def test_the_fixtures_pass_harbor_lint(harbor_python) -> None:
    tasks = sorted(str(p) for p in FIXTURES.iterdir() if (p / "task.toml").is_file())
    done = run_in_harbor(harbor_python, LINT, *tasks)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["findings"] == {task: [] for task in tasks}


def test_an_exported_task_hides_its_query_from_the_agent_and_pins_the_version(dataset) -> None:
    from pytest_netarena import __version__

    task = next(p for p in sorted(dataset.iterdir()) if p.name.startswith("k8s-"))
    episode = json.loads((task / "environment/netarena/episode.json").read_text())
    query_id, nonce = episode["query"]["id"], episode["nonce"]
    agent_side = [task / "instruction.md", task / "environment/Dockerfile", *sorted((task / "environment/bin").iterdir())]
    for path in agent_side:  # what the agent's container is built from and told: no query id, no fault, no nonce
        text = path.read_text()
        assert query_id not in text and episode["query"]["category"] not in text and nonce not in text, path
    assert "COPY episode.json" in (task / "environment/netarena/Dockerfile").read_text()
    assert f"pytest-netarena[k8s,mcp]=={__version__}" in (task / "environment/netarena/Dockerfile").read_text()
    assert nonce in (task / "tests/test.sh").read_text()
    manifest = (dataset / "dataset.toml").read_text()
    assert f'version = "{__version__}"' in manifest and f'name = "netarena/{task.name}"' in manifest
