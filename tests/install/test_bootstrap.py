"""scripts/bootstrap installs this checkout when the machine's pytest-netarena is another checkout, then leaves it be."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest


@pytest.fixture
def two_checkouts(tmp_path: Path, copy_checkout_to) -> tuple[Path, Path]:
    other = copy_checkout_to(tmp_path / "other")
    this = copy_checkout_to(tmp_path / "this", extra=("scripts/bootstrap",))
    return other, this


def installed_from(python: Path, run) -> tuple[str, dict]:
    """(the imported package's folder, direct_url.json) as seen from / by the venv's interpreter."""
    probe = run([str(python), "-c", "import json, pytest_netarena; from importlib import metadata; "
                 "print(json.dumps([pytest_netarena.__file__, "
                 "json.loads(metadata.distribution('pytest-netarena').read_text('direct_url.json'))]))"], cwd=Path("/"))
    assert probe.returncode == 0, probe.stderr
    file, origin = json.loads(probe.stdout)
    return str(Path(file).parent), origin


def test_another_checkout_installed_is_replaced_by_this_one(two_checkouts, make_venv, run_clean) -> None:
    other, this = two_checkouts
    venv = make_venv()
    python = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--disable-pip-version-check"]
    assert run_clean([*pip, "--no-deps", "-e", str(other)], cwd=venv).returncode == 0
    assert installed_from(python, run_clean)[0] == str(other / "pytest_netarena")
    path = f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"

    first = run_clean([str(this / "scripts" / "bootstrap")], cwd=this, timeout=600, PATH=path)
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    assert f"bootstrap: installing pytest-netarena from {this} (pytest-netarena 0.1.0 is installed from {other})" \
        in first.stdout, first.stdout
    assert first.stdout.rstrip().endswith("bootstrap: ready")
    package, origin = installed_from(python, run_clean)
    assert package == str(this / "pytest_netarena")
    assert origin == {"dir_info": {"editable": True}, "url": this.as_uri()}

    again = run_clean([str(this / "scripts" / "bootstrap")], cwd=this, timeout=600, PATH=path)
    assert again.returncode == 0 and again.stdout.strip() == "bootstrap: ready", again.stdout + again.stderr
