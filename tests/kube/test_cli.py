"""`netarena kube serve` writes a kubeconfig once the server answers and stops on SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request


def test_kube_serve_runs_until_sigterm(tmp_path):
    kubeconfig = tmp_path / "kubeconfig"
    proc = subprocess.Popen([sys.executable, "-m", "pytest_netarena.cli", "kube", "serve", "--port", "0",
                             "--kubeconfig", str(kubeconfig)], stdout=subprocess.PIPE, text=True,
                            cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        assert kubeconfig.exists()
        assert json.loads(kubeconfig.read_text())["clusters"][0]["cluster"]["server"] == url
        with urllib.request.urlopen(url + "/readyz", timeout=5) as response:
            assert response.read() == b"ok"
        proc.send_signal(signal.SIGTERM)
        started = time.monotonic()
        assert proc.wait(timeout=10) == 0 and time.monotonic() - started < 5
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
