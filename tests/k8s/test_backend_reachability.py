"""A run on a real cluster that cannot be reached ends at once with a one-line usage error (exit 4), not in skips."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_netarena.apps.k8s.backends.real import unreachable

SUITE = Path(__file__).resolve().parents[2] / "suites" / "k8s"
KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: gone, cluster: {server: "http://127.0.0.1:%d"}}]
users: [{name: me, user: {}}]
contexts: [{name: gone, context: {cluster: gone, user: me}}]
current-context: gone
"""


@pytest.fixture
def closed_port_kubeconfig(tmp_path: Path) -> Path:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    path = tmp_path / "kubeconfig"
    path.write_text(KUBECONFIG % port)
    return path


def run_suite(tmp_path: Path, backend: str, kubeconfig: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
    return subprocess.run([sys.executable, "-m", "pytest", str(SUITE), "--agent=builtin:oracle", "--queries=1",
                           f"--k8s-backend={backend}", f"--reports-dir={tmp_path / 'reports'}", "-p", "no:cacheprovider",
                           *extra], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize(("backend", "said"), [("kubeconfig", "the cluster does not answer"),
                                               ("kubeconfig:gone", "the cluster does not answer"),
                                               ("kubeconfig:elsewhere", "elsewhere")])
def test_an_unreachable_cluster_is_a_one_line_usage_error(tmp_path, closed_port_kubeconfig, backend, said) -> None:
    done = run_suite(tmp_path, backend, closed_port_kubeconfig)
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout[-2000:] + done.stderr[-2000:]
    errors = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and errors[0].startswith(f"ERROR: pytest-netarena: --k8s-backend {backend}: "), errors
    assert said in errors[0]
    assert not (tmp_path / "reports").exists()  # nothing ran


def test_a_missing_kubeconfig_is_a_usage_error_too(tmp_path) -> None:
    done = run_suite(tmp_path, "kubeconfig", tmp_path / "absent")
    assert done.returncode == pytest.ExitCode.USAGE_ERROR
    assert f"no kubeconfig at {tmp_path / 'absent'}" in done.stderr


def test_collecting_needs_no_cluster(tmp_path, closed_port_kubeconfig) -> None:
    done = run_suite(tmp_path, "kubeconfig", closed_port_kubeconfig, "--collect-only", "-q")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def test_a_cluster_that_answers_passes_the_check(closed_port_kubeconfig) -> None:
    from pytest_netarena.kube.server import EmbeddedAPIServer

    assert unreachable(None, kubeconfig=str(closed_port_kubeconfig))
    with EmbeddedAPIServer() as api:
        assert unreachable(None, kubeconfig=api.kubeconfig_path) is None
