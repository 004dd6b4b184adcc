"""The wheel is self-sufficient: built from this checkout, installed in a fresh virtualenv elsewhere, it runs suites."""

from __future__ import annotations

import json
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
QUICK = ("--agent=builtin:oracle", "--queries=1", "--levels=1", "-p", "no:randomly", "-p", "no:cacheprovider")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory, copy_checkout_to, run_clean) -> Path:
    """A wheel built from a copy of the checkout's sources (the build leaves nothing in the checkout)."""
    run = run_clean
    source = copy_checkout_to(tmp_path_factory.mktemp("source"))
    dist = tmp_path_factory.mktemp("dist")
    built = run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "-q", "-w",
                 str(dist), str(source)], cwd=source)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    (path,) = dist.glob("pytest_netarena-*.whl")
    return path


@pytest.fixture(scope="module")
def venv(wheel: Path, make_venv: Callable[[], Path], run_clean) -> Path:
    """A fresh virtualenv holding the wheel (and no other install of pytest-netarena)."""
    run = run_clean
    folder = make_venv()
    installed = run([sys.executable, "-m", "pip", "--python", str(folder / "bin" / "python"), "install", "--no-deps",
                     "-q", "--disable-pip-version-check", str(wheel)], cwd=folder)
    assert installed.returncode == 0, installed.stderr[-2000:]
    return folder


def test_the_wheel_carries_every_module_the_suites_and_their_data(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    modules = {path.relative_to(ROOT).as_posix() for path in (ROOT / "pytest_netarena").rglob("*.py")}
    assert modules <= names, sorted(modules - names)
    for folder, target in (("suites", "pytest_netarena/suites"), ("fixtures", "pytest_netarena/fixtures")):
        files = [p for p in (ROOT / folder).rglob("*") if p.is_file() and "__pycache__" not in p.parts]
        wanted = {f"{target}/{p.relative_to(ROOT / folder).as_posix()}" for p in files}
        assert wanted and wanted <= names, sorted(wanted - names)
    assert not [name for name in names if name.endswith(".pyc")]


def test_the_installed_package_runs_suites_from_anywhere_without_the_checkout(venv: Path, tmp_path: Path,
                                                                             run_clean) -> None:
    run = run_clean
    python, netarena = venv / "bin" / "python", venv / "bin" / "netarena"
    probe = run([str(python), "-c", "import json, pathlib, sys, pytest_netarena.core.resources as r, pytest_netarena.plugin; "
                 "from pytest_netarena.run.cli import pytest_command; "
                 "print(json.dumps([r.PACKAGE.as_posix(), str(r.fixtures('k8s')), sys.path, "
                 "pytest_command(['k8s', '-x'], pathlib.Path.cwd())]))"], cwd=tmp_path)
    assert probe.returncode == 0, probe.stderr
    package, fixtures, path, argv = json.loads(probe.stdout)
    assert Path(package).is_relative_to(venv) and Path(fixtures).is_relative_to(venv) and Path(fixtures).is_dir()
    assert argv[1:] == ["-m", "pytest", f"{package}/suites/k8s", f"--rootdir={tmp_path}", "-x"]
    assert not [entry for entry in path if entry and Path(entry).resolve().is_relative_to(ROOT)]

    done = run([str(netarena), "run", "k8s", "malt", *QUICK, "-v"], cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    collected = [line for line in done.stdout.splitlines() if "::test_episode[" in line and "PASSED" in line]
    assert len(collected) >= 9
    assert any("k8s-L1-" in line for line in collected) and any("malt-L1-" in line for line in collected)
    (run_dir,) = (tmp_path / "reports").iterdir()  # written where the user is, not into the package
    groups = json.loads((run_dir / "summary.json").read_text())["groups"]
    assert {g["app"] for g in groups} == {"k8s", "malt"} and all(g["avg_correctness"] == 1.0 for g in groups)

    elsewhere = tmp_path / "pyargs"
    elsewhere.mkdir()
    done = run([str(python), "-m", "pytest", "--pyargs", "pytest_netarena.suites.malt", *QUICK], cwd=elsewhere)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "4 passed" in done.stdout and (elsewhere / "reports").is_dir()
    assert not list(Path(package).rglob("reports"))


def test_the_readmes_wheel_recipe_runs_as_written_in_a_fresh_venv(wheel: Path, tmp_path: Path, run_clean) -> None:
    """README's "Without a clone" block (<!-- install: "wheel recipe" -->), word for word, where a user has the
    wheel and the lock: a venv of the system's Python, the lock's exact versions, the wheel, a suite."""
    import pytest_netarena
    from pytest_netarena.testing.doc_blocks import fenced_blocks

    (block,) = [b for b in fenced_blocks(ROOT / "README.md") if b.marker == ("install", "wheel recipe")]
    assert f"dist/{wheel.name}" in block.text, (wheel.name, pytest_netarena.__version__)  # the README names this wheel
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / wheel.name).write_bytes(wheel.read_bytes())
    (tmp_path / "requirements.lock").write_text((ROOT / "requirements.lock").read_text())
    # PIP_COMPILE=0: byte-compiling the lock is most of the install's CPU, and nothing here needs it
    done = run_clean(["bash", "-eo", "pipefail", "-c", block.text], cwd=tmp_path, timeout=1500, PIP_COMPILE="0",
                     LITELLM_LOCAL_MODEL_COST_MAP="True")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Hashes are required" not in done.stderr and " passed" in done.stdout and "failed" not in done.stdout
    assert (tmp_path / "reports").is_dir()
