"""Remote xdist workers for real: an sshd on 127.0.0.1, and a worker-side python that cannot see the reports."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import pytest_netarena
from pytest_netarena.testing.sshd import LocalSSHServer, SSHUnavailable

PACKAGE_ROOT = Path(pytest_netarena.__file__).resolve().parent.parent
TOY_DIR = Path(__file__).resolve().parent.parent / "plugin"


@pytest.fixture(scope="module")
def sshd(tmp_path_factory: pytest.TempPathFactory):
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("remote-worker tests run as root: the worker side hides the reports with `unshare -m` + tmpfs")
    try:
        server = LocalSSHServer(tmp_path_factory.mktemp("sshd")).start()
    except SSHUnavailable as error:
        pytest.skip(str(error))
    yield server
    server.stop()


@dataclass
class Remote:
    """How to start workers over ssh whose side of the disk has an empty tmpfs where the reports are."""

    project: Path
    server: LocalSSHServer
    wrapper: Path
    leaks: Path

    def tx(self, workers: int) -> list[str]:
        return ["-d", "--tx", f"{workers}*ssh=root@127.0.0.1//ssh_config={self.server.client_config}"
                              f"//chdir={self.project}//python={self.wrapper}"]

    def written_on_worker_side(self) -> list[str]:
        return self.leaks.read_text().split() if self.leaks.exists() else []


@pytest.fixture
def remote(toy: pytest.Pytester, sshd: LocalSSHServer, tmp_path_factory: pytest.TempPathFactory) -> Remote:
    """The worker's python runs in a private mount namespace with an empty tmpfs over <project>/reports;
    when it exits, whatever the worker wrote there is listed in `leaks` (it must stay empty)."""
    reports = toy.path / "reports"
    reports.mkdir()
    outside = tmp_path_factory.mktemp("worker-side")
    leaks = outside / "written-on-worker-side.txt"
    # the package under test (not another checkout's editable install) and the toy app
    pythonpath = os.pathsep.join([str(PACKAGE_ROOT), str(TOY_DIR)])
    inner = (f"mount -t tmpfs -o size=64m,mode=0700 netarena-hidden {shlex.quote(str(reports))} || exit 97\n"
             f"PYTHONPATH={shlex.quote(pythonpath)} {shlex.quote(sys.executable)} \"$@\"\n"
             "status=$?\n"
             f"find {shlex.quote(str(reports))} -mindepth 1 >> {shlex.quote(str(leaks))}\n"
             "exit $status\n")
    wrapper = outside / "remote-python"
    wrapper.write_text("#!/bin/sh\n# the worker side: python with the controller's reports folder hidden\n"
                       f"exec unshare --mount --propagation private /bin/sh -c {shlex.quote(inner)} sh \"$@\"\n")
    wrapper.chmod(0o755)
    return Remote(toy.path, sshd, wrapper, leaks)
