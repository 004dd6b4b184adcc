"""scripts/bootstrap makes .venv from requirements.lock with the pip a fresh Python ships, then leaves it be."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from packaging.utils import canonicalize_name


def test_bootstrap_installs_the_lock_with_a_stock_pip_and_a_suite_runs(tmp_path: Path, copy_checkout_to,
                                                                         run_clean) -> None:
    checkout = copy_checkout_to(tmp_path / "clone", extra=("scripts/bootstrap", "requirements.lock"))
    user = tmp_path / "user-venv"  # what a new user has: a fresh venv whose pip was never upgraded, first on PATH
    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", str(user)], check=True)
    stock = run_clean([str(user / "bin" / "python"), "-m", "pip", "--version"], cwd=tmp_path).stdout
    # PIP_COMPILE=0: byte-compiling the lock is most of the install's CPU (38 s against 8 s for litellm, kubernetes,
    # botocore and networkx) and nothing here reads it; the suite's run compiles what it imports. (PIP_NO_COMPILE=1
    # does the opposite: pip reads it as --no-compile's destination, `compile`, set to true.)
    path = f"{user / 'bin'}{os.pathsep}{os.environ['PATH']}"
    quick = {"PATH": path, "PIP_COMPILE": "0", "NETARENA_PROGRESS_S": "3"}

    first = run_clean([str(checkout / "scripts" / "bootstrap")], cwd=checkout, timeout=900, **quick)
    assert first.returncode == 0, stock + first.stdout[-3000:] + first.stderr[-3000:]
    assert "bootstrap: making .venv from requirements.lock" in first.stdout
    # minutes of installing are never silent: what is installed, and a line now and then saying how far it got
    total = sum(1 for line in (checkout / "requirements.lock").read_text().splitlines() if re.match(r"[\w.-]+==", line))
    assert f"bootstrap: installing the {total} packages of requirements.lock" in first.stdout
    progress = re.findall(rf"^bootstrap: requirements.lock: (\d+) of {total} packages fetched, (\d+) installed "
                          r"\((\d+) s so far\)$", first.stdout, re.M)
    assert len(progress) >= 2, first.stdout
    assert [int(seconds) for *_, seconds in progress] == sorted(int(seconds) for *_, seconds in progress)
    python = checkout / ".venv" / "bin" / "python"
    compiled = [str(pyc) for pyc in checkout.glob(".venv/lib/python*/site-packages/litellm/**/*.pyc")][:3]
    assert not compiled, compiled  # nothing imported litellm yet: a .pyc means pip compiled the lock after all
    frozen = run_clean([str(python), "-m", "pip", "freeze", "--all", "--exclude-editable"], cwd=checkout).stdout
    installed = {canonicalize_name(name): version for name, version in
                 (line.split("==") for line in frozen.splitlines() if "==" in line)}
    pinned = {canonicalize_name(name): version for name, version in
              (line.split(" ")[0].split("==") for line in (checkout / "requirements.lock").read_text().splitlines()
               if "==" in line and not line.startswith((" ", "#")))}
    assert {name: installed.get(name) for name in pinned} == pinned  # exactly the lock, its pip included
    assert set(installed) == set(pinned), sorted(set(installed) ^ set(pinned))

    suite = run_clean([str(python), "-m", "pytest", "suites/malt", "--agent=builtin:oracle", "--queries=1",
                       "--levels=1", "-q", "-p", "no:randomly"], cwd=checkout, timeout=600, PATH=path)
    assert suite.returncode == 0 and " passed" in suite.stdout, suite.stdout[-3000:] + suite.stderr[-2000:]

    again = run_clean([str(checkout / "scripts" / "bootstrap")], cwd=checkout, timeout=600, **quick)
    assert again.returncode == 0 and again.stdout.strip() == "bootstrap: ready (.venv/bin/python)", \
        again.stdout + again.stderr
