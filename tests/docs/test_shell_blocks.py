"""Every shell block of README.md and docs/ runs as written here, smaller, or says why it cannot run here.

A block is run in a copy of the project (its suites, scripts and build files, with this environment as its
`.venv`), with model agents and placeholders swapped for the built-in oracle, sizes cut (one query per
category, one episode per app: pytest_netarena/testing/few_episodes.py) and HOME a folder of the test's own.
A block that cannot run here has `<!-- not run here: REASON -->` on the line before it; the recipes and
examples that other test modules run have `<!-- recipe: NAME -->` / `<!-- example: NAME -->` / `<!-- install: NAME -->`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import pytest_netarena
from pytest_netarena.testing.doc_blocks import DocBlock, fenced_blocks, runnable_blocks

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_ROOT = Path(pytest_netarena.__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCKS = runnable_blocks(PAGES)
#: markers of blocks that another test module runs, and the module that must name them
RUN_ELSEWHERE = {"recipe": ROOT / "tests" / "scale" / "test_docs.py",
                 "example": ROOT / "tests" / "training" / "test_docs.py",
                 "install": ROOT / "tests" / "install" / "test_wheel.py"}
NOT_RUN = "not run here"
#: what a project copy needs for the documented commands (suites, scripts/bootstrap and what it hashes)
PROJECT_FILES = ("suites", "scripts", "pyproject.toml", "setup.py", "requirements.lock")

# (pattern, replacement): the same command, offline and small
SUBSTITUTIONS = (
    (r"--agent([= ])(?:openai|anthropic|ollama):\S+", r"--agent\1builtin:oracle"),  # no model API key here
    (r"--agent([= ])(?:SPEC|\.\.\.)(?=\s|$)", r"--agent\1builtin:oracle"),  # placeholders
    (r"--queries([= ])\d+", r"--queries\g<1>1"),
    (r"--episodes([= ])\d+", r"--episodes\g<1>1"),
    (r"--adversarial-examples([= ])\d+", r"--adversarial-examples\g<1>2"),
    (r"(?<=\s)-n \d+(?=\s|$)", "-n 0"),  # one process (README's `-n auto` keeps xdist in these runs)
    (r"<run-id>", "$(ls -t reports | head -n 1)"),  # the run folder the block's previous command wrote
    # a whole suite run shrinks to a query per category, but README's first command runs whole, as a user runs it
    (r"(?m)^(?![^\n]*(?:--queries|-n auto))([^\n#]*\bpytest suites\S*)", r"\1 --queries 1"),
)


def ids(blocks: list[DocBlock]) -> list[str]:
    return [block.id for block in blocks]


def small(text: str) -> str:
    for pattern, replacement in SUBSTITUTIONS:
        text = re.sub(pattern, replacement, text)
    return text


def bootstrapped_venv() -> Path | None:
    """This checkout's .venv (scripts/bootstrap's) when the tests run in it, else None."""
    venv = ROOT / ".venv"
    return venv if Path(sys.prefix).resolve() == venv.resolve() else None


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the project where the docs' commands run: `.venv` is this environment."""
    venv = bootstrapped_venv()
    if venv is None:
        pytest.skip("these tests must run in the .venv scripts/bootstrap made (`.venv/bin/python -m pytest tests`)")
    folder = tmp_path / "project"
    copy_project(folder, venv)
    return folder


def copy_project(folder: Path, venv: Path) -> None:
    made_from = (venv / ".netarena-lock").read_text().strip() if (venv / ".netarena-lock").exists() else None
    build_files = b"".join((ROOT / name).read_bytes() for name in ("requirements.lock", "pyproject.toml", "setup.py"))
    if made_from != hashlib.sha256(build_files).hexdigest():
        # the copy's bootstrap would make a new .venv from the copy, which holds no package to install
        pytest.fail(".venv was made from other build files than this checkout's: run scripts/bootstrap again")
    for name in PROJECT_FILES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            folder.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, folder / name)
    (folder / ".venv").symlink_to(venv)


def environment(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The blocks' environment (runs write no plots unless a block asks with --plots: they are off by default)."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    bin_dir = str(Path(sys.executable).parent)
    return {**os.environ, "HOME": str(home), "PATH": os.pathsep.join([bin_dir, os.environ["PATH"]]),
            # the package under test, whatever the environment's editable install points at
            "PYTHONPATH": os.pathsep.join([str(PACKAGE_ROOT), os.environ.get("PYTHONPATH", "")]),
            "PYTEST_PLUGINS": "pytest_netarena.testing.few_episodes", "NETARENA_FEW_EPISODES": "1",
            "PYTEST_ADDOPTS": "--seed=1 -p no:randomly -p no:anyio",  # and tests/conftest.py's UNUSED_PLUGINS
            "LITELLM_LOCAL_MODEL_COST_MAP": "True", **extra}


def bash(script: str, cwd: Path, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """The script's run; past the timeout every process it started is stopped and the test fails with its output."""
    process = subprocess.Popen(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=cwd, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        pytest.fail(f"still running after {timeout:g} s:\n{script}\n--- stdout (end)\n{stdout[-6000:]}\n"
                    f"--- stderr (end)\n{stderr[-6000:]}")
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def shown(done: subprocess.CompletedProcess[str]) -> str:
    return f"exit {done.returncode}\n--- stdout\n{done.stdout[-4000:]}\n--- stderr\n{done.stderr[-3000:]}"


# ---- every block is run somewhere or says why not ----------------------------------------------------------


@pytest.mark.parametrize("block", BLOCKS, ids=ids(BLOCKS))
def test_every_shell_block_is_run_or_says_why_not(block: DocBlock) -> None:
    if block.marker is None:
        return  # test_a_block_runs_as_written runs it
    kind, text = block.marker
    if kind == NOT_RUN:
        assert len(text.split()) >= 2, f"{block.id}: say why it cannot run here"
        return
    assert kind in RUN_ELSEWHERE, f"{block.id}: unknown marker <!-- {kind}: ... -->; use <!-- {NOT_RUN}: REASON -->"
    assert re.search(rf"""["'<:] ?{re.escape(text)}["' ]""", RUN_ELSEWHERE[kind].read_text()), \
        f"{block.id}: {RUN_ELSEWHERE[kind].relative_to(ROOT)} does not run <!-- {kind}: {text} -->"


def test_a_new_block_without_a_marker_is_run_and_a_bad_marker_is_caught(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("Text.\n\n```\npytest suites --agent=builtin:oracle\n```\n\n<!-- not run: why -->\n```bash\nls\n```\n"
                    "\n````\n```bash\nkubectl get pods\n```\n````\n\n```\n[gw0] output\n```\n")
    first, second = runnable_blocks([page])  # the fenced reply inside ```` and the output are not shell blocks
    assert first.marker is None and first.text == "pytest suites --agent=builtin:oracle\n"
    with pytest.raises(AssertionError, match="unknown marker"):
        test_every_shell_block_is_run_or_says_why_not(second)
    assert len(fenced_blocks(page)) == 4


# ---- the blocks, run ---------------------------------------------------------------------------------------

RUN_HERE = [block for block in BLOCKS if block.marker is None and not block.is_workflow]
WORKFLOWS = [block for block in BLOCKS if block.marker is None and block.is_workflow]


def found_cases(project: Path) -> None:
    """reports/<run-id>/found.jsonl as an adversarial search leaves it: one shrunk k8s case."""
    from pytest_netarena.apps.k8s import APP
    from pytest_netarena.core.app import RunOptions

    (query,) = APP.generate(RunOptions(seed=1, queries=1, levels=(1,)))[:1]
    run = project / "reports" / "20260101-000000-1-search"
    run.mkdir(parents=True)
    (run / "found.jsonl").write_text(json.dumps({"query": query.to_dict(), "agent": "builtin:reckless",
                                                 "outcome": "unsafe"}) + "\n")


@pytest.mark.parametrize("block", RUN_HERE, ids=ids(RUN_HERE))
def test_a_block_runs_as_written(block: DocBlock, project: Path, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    env = environment(tmp_path)
    if "NetArena" in block.text:  # a NetArena checkout at ~/NetArena, as the block says
        (Path(env["HOME"]) / "NetArena").symlink_to(request.getfixturevalue("checkout"))
    if "<run-id>/found.jsonl" in block.text:  # what an earlier search left
        found_cases(project)
    script = small(block.text)
    done = bash(script, project, env)
    assert done.returncode == 0, f"{block.id} as run:\n{script}\n{shown(done)}"
    assert "Traceback" not in done.stdout + done.stderr, shown(done)
    for summary in re.findall(r"^=+ (.*(?:passed|failed|skipped|error).*) =+$", done.stdout, re.M):
        assert "passed" in summary and "error" not in summary, f"{block.id}: {summary}"


# ---- GitHub Actions workflows: a job's steps run in order, in a workspace, as the runner would -----------------


def without_expressions(text: str) -> str:
    """`${{ secrets.X }}` and the like: empty here (no secrets; the model is the oracle)."""
    return re.sub(r"\$\{\{[^}]*\}\}", "", text)


def run_job(job: dict, workspace: Path, env: dict[str, str]) -> list[subprocess.CompletedProcess[str]]:
    """The job's checkout and run steps: the agent's repository is the workspace, pytest-netarena a copy of ours."""
    github_path = workspace.parent / "github_path"
    github_path.touch()
    env = {**env, "GITHUB_PATH": str(github_path), "GITHUB_WORKSPACE": str(workspace)}
    done = []
    for step in job["steps"]:
        uses = step.get("uses", "")
        if uses.startswith("actions/checkout") and step.get("with", {}).get("repository"):
            copy_project(workspace / step["with"]["path"], ROOT / ".venv")
        if "run" not in step:
            continue
        script = "\n".join(line for line in step["run"].splitlines()
                           if not line.strip().startswith("sudo apt-get"))  # the test machine has the Debian packages
        if os.geteuid() == 0 and shutil.which("sudo") is None:
            script = script.replace("sudo -E ", "")  # root already; this machine has no sudo
        script = without_expressions(small(script))
        added = [line for line in github_path.read_text().splitlines() if line]
        step_env = {**env, **{key: without_expressions(str(value)) for key, value in step.get("env", {}).items()},
                    "PATH": os.pathsep.join([*reversed(added), env["PATH"]])}
        result = bash(script, workspace, step_env)
        assert result.returncode == 0, f"step {step.get('name')!r} as run:\n{script}\n{shown(result)}"
        done.append(result)
    return done


@pytest.mark.parametrize("block", WORKFLOWS, ids=ids(WORKFLOWS))
def test_a_workflow_runs_as_written(block: DocBlock, tmp_path: Path) -> None:
    if bootstrapped_venv() is None:
        pytest.skip("these tests must run in the .venv scripts/bootstrap made")
    workflow = yaml.safe_load(block.text)
    for name, job in workflow["jobs"].items():
        workspace = tmp_path / name / "workspace"
        workspace.mkdir(parents=True)
        steps = run_job(job, workspace, environment(tmp_path))  # its --plots run fills reports/*/plots/
        assert steps, f"job {name} runs nothing"
        for step in job["steps"]:  # what the upload step keeps exists
            if step.get("uses", "").startswith("actions/upload-artifact"):
                for pattern in step["with"]["path"].split():
                    assert list(workspace.glob(pattern.rstrip("/"))), f"job {name}: nothing at {pattern}"


# ---- README's own agent, under the plain `pytest` script ----------------------------------------------------


def test_readmes_own_agent_runs_under_the_pytest_script_from_the_current_folder(project: Path, tmp_path: Path) -> None:
    readme = ROOT / "README.md"
    (agent,) = [block for block in fenced_blocks(readme) if block.tag == "python" and "class Agent" in block.text]
    assert "--agent=python:my_agent:Agent" in readme.read_text()
    (project / "my_agent.py").write_text(agent.text)
    pytest_script = project / ".venv" / "bin" / "pytest"  # unlike `python -m pytest`, it puts no folder of ours first
    done = subprocess.run([str(pytest_script), "suites/k8s", "--agent=python:my_agent:Agent", "--max-steps=1"],
                          cwd=project, env=environment(tmp_path), capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 1, shown(done)  # the example agent only looks: its episode is unresolved
    assert "No module named" not in done.stdout + done.stderr and "1 failed" in done.stdout, shown(done)
    (episodes,) = (project / "reports").glob("*/episodes.jsonl")
    (episode,) = [json.loads(line) for line in episodes.read_text().splitlines()]
    assert episode["agent"] == "python:my_agent:Agent" and episode["outcome"] == "unresolved"
    step = episode["steps"][0]
    assert step["action"] == "kubectl get networkpolicy -o yaml" and "kind: NetworkPolicy" in step["output"]
