"""`netarena export` and `netarena generate` in real subprocesses: bad filters, names and keys are usage errors,
an export never replaces data with less unless --force, generate never calls infra errors a success."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SMALL_MALT = "malt-topology=synthetic:300"

INFRA_AGENT = """
from pytest_netarena.core.errors import InfraError

class Agent:
    '''Its service is down: every reply is an infrastructure error, never the agent's fault.'''
    def reset(self, task):
        pass
    def act(self, observation):
        raise InfraError("the agent's inference service is down")
    def close(self):
        pass
"""


def netarena(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run([sys.executable, "-m", "pytest_netarena.cli", *args], capture_output=True, text=True,
                          timeout=600, check=False, cwd=cwd, env=env)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, Path]:
    """Two real run folders: the expert on two MALT queries of level 1, then on two of level 2."""
    folders = []
    for level in ("1", "2"):
        out = tmp_path_factory.mktemp("reports")
        done = netarena("generate", "--app", "malt", "--episodes", "2", "--levels", level, "--out", str(out),
                        "--option", SMALL_MALT)
        assert done.returncode == 0, done.stdout + done.stderr
        (folder,) = out.iterdir()
        folders.append(folder)
    return folders[0], folders[1]


@pytest.fixture
def run(runs: tuple[Path, Path]) -> Path:
    return runs[0]


def data_lines(out: Path) -> list[str]:
    return (out / "data.jsonl").read_text().splitlines()


@pytest.mark.parametrize("kind", ["sft", "atif"])
@pytest.mark.parametrize(("filters", "said"), [(["--app", "k9s"], "unknown app 'k9s'"),
                                               (["--level", "7"], "--level 7")])
def test_an_unknown_filter_value_is_a_usage_error_and_writes_nothing(run: Path, tmp_path: Path, kind: str,
                                                                    filters: list[str], said: str) -> None:
    out = tmp_path / "out"
    done = netarena("export", kind, str(run), "--out", str(out), *filters)
    assert done.returncode == 2, done.stdout + done.stderr
    assert said in done.stderr and done.stderr.count("\n") == 1
    assert not out.exists()


def test_an_export_never_replaces_data_with_less_unless_forced(runs: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert netarena("export", "sft", *map(str, runs), "--out", str(out)).returncode == 0
    before = data_lines(out)
    assert len(before) == 4
    fewer = netarena("export", "sft", str(runs[0]), "--out", str(out))
    assert fewer.returncode == 2
    assert "holds 4 episodes" in fewer.stderr and "--force" in fewer.stderr
    assert data_lines(out) == before
    forced = netarena("export", "sft", str(runs[0]), "--out", str(out), "--force")
    assert forced.returncode == 0 and len(data_lines(out)) == 2


def test_an_atif_export_never_replaces_trajectories_with_less(runs: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "atif"
    assert netarena("export", "atif", *map(str, runs), "--out", str(out)).returncode == 0
    before = sorted(p.name for p in out.glob("*.json"))
    assert len(before) == 4
    fewer = netarena("export", "atif", str(runs[0]), "--out", str(out))
    assert fewer.returncode == 2 and "--force" in fewer.stderr
    assert sorted(p.name for p in out.glob("*.json")) == before


def test_an_export_that_selects_nothing_says_so_and_keeps_what_was_there(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert netarena("export", "sft", str(run), "--out", str(out)).returncode == 0
    before = data_lines(out)
    done = netarena("export", "sft", str(run), "--out", str(out), "--level", "2")
    assert done.returncode == 1
    assert "no episode matches" in done.stderr and "2 episodes" in done.stderr
    assert data_lines(out) == before


def test_generate_refuses_an_unknown_option_key(tmp_path: Path) -> None:
    done = netarena("generate", "--app", "malt", "--episodes", "1", "--out", str(tmp_path),
                    "--option", "malt-topolgy=synthetic:300")
    assert done.returncode == 2
    assert "unknown app option 'malt-topolgy'" in done.stderr and "malt-topology" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_generate_checks_option_values(tmp_path: Path) -> None:
    done = netarena("generate", "--app", "route", "--episodes", "1", "--out", str(tmp_path),
                    "--option", "route-size=0x0")
    assert done.returncode == 2 and "--route-size" in done.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("agent", ["openai:gpt-4o", "a2a:http://127.0.0.1:9"])
def test_generate_refuses_agents_it_does_not_run(tmp_path: Path, agent: str) -> None:
    done = netarena("generate", "--agent", agent, "--app", "malt", "--episodes", "1", "--out", str(tmp_path))
    assert done.returncode == 2
    assert "generate plays offline agents" in done.stderr and "pytest" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_generate_refuses_a_python_agent_that_does_not_load(tmp_path: Path) -> None:
    done = netarena("generate", "--agent", "python:nowhere_module:Agent", "--app", "malt", "--episodes", "1",
                    "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert done.returncode == 2 and "nowhere_module" in done.stderr


def test_generate_never_reports_success_for_infra_errors(tmp_path: Path) -> None:
    (tmp_path / "down_agent.py").write_text(INFRA_AGENT)
    done = netarena("generate", "--agent", "python:down_agent:Agent", "--app", "malt", "--episodes", "2",
                    "--out", str(tmp_path / "out"), "--option", SMALL_MALT, cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "malt: 0 episodes, 2 infra errors" in done.stdout + done.stderr
    assert "the agent's inference service is down" in done.stdout + done.stderr
