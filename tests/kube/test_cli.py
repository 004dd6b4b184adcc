"""`netarena kube serve` writes a kubeconfig once the server answers and stops on SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request

import pytest


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
        # it must stop, and cleanly; how fast is a figure, not a test (the kubelet's loop may take its 5 s to cancel)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_kube_serve_tls_writes_an_admin_kubeconfig_kubectl_trusts(tmp_path, kubectl_bin):
    from pytest_netarena.kube import kubectl_env

    kubeconfig, audit = tmp_path / "kubeconfig", tmp_path / "audit.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "pytest_netarena.cli", "kube", "serve", "--tls", "--port", "0",
                             "--kubeconfig", str(kubeconfig), "--audit-log", str(audit)], stdout=subprocess.PIPE,
                            text=True, cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("https://127.0.0.1:")
        config = json.loads(kubeconfig.read_text())
        assert config["clusters"][0]["cluster"]["certificate-authority-data"]
        assert oct(kubeconfig.stat().st_mode & 0o777) == "0o600"  # it holds the admin's private key
        env = kubectl_env(str(kubeconfig), tmp_path / "home")

        def kubectl(*args):
            return subprocess.run([kubectl_bin, *args], env=env, capture_output=True, text=True, timeout=60)

        assert kubectl("create", "serviceaccount", "bot").returncode == 0
        assert kubectl("get", "secrets", "-A").returncode == 0  # the admin client certificate: full rights
        token = kubectl("create", "token", "bot").stdout.strip()
        bot = kubectl("--token", token, "--user", "", "get", "pods")
        assert bot.returncode == 1 and 'User "system:serviceaccount:default:bot" cannot list' in bot.stderr
        assert json.loads(audit.read_text().splitlines()[-1])["user"]["username"] == "system:serviceaccount:default:bot"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n" for i in range(8))


def serve(*args, stdin: bytes = b""):
    return subprocess.run([sys.executable, "-m", "pytest_netarena.cli", "kube", "serve", "--port", "0", *args],
                          input=stdin, capture_output=True, timeout=60,
                          cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))


def test_hostile_or_unbounded_input_is_exit_2_with_a_message(tmp_path):
    cases = {
        "alias bomb": (BOMB.encode(), "aliases are expanded"),
        "deep nesting": (b"[" * 20000 + b"]" * 20000, "nest"),
        "recursive alias": (b"kind: ConfigMap\ndata: &x [*x]\n", "recursive alias"),
        "not yaml": (b"kind: [unclosed\n", "malformed YAML"),
        "not an object": (b"- 1\n- 2\n", "Kubernetes object"),
    }
    for name, (content, message) in cases.items():
        result = serve("--load", "-", stdin=content)
        assert result.returncode == 2, (name, result.stderr)
        assert message in result.stderr.decode(), (name, result.stderr)
    huge = tmp_path / "zero"
    with open(huge, "wb") as handle:
        handle.truncate(64 << 20)  # sparse: reading it whole would take 64 MiB
    result = serve("--load", str(huge))
    assert result.returncode == 2 and b"larger than" in result.stderr
    missing = serve("--load", str(tmp_path / "missing.yaml"))
    assert missing.returncode == 2 and b"cannot read" in missing.stderr


def test_server_side_yaml_bodies_are_bounded_too():
    from pytest_netarena.kube import errors
    from pytest_netarena.kube.bodies import decode_yaml

    for body in (BOMB.encode(), b"[" * 20000 + b"]" * 20000, b"a: &x [*x]\n"):
        try:
            decode_yaml(body)
        except errors.ApiError as error:
            assert error.code == 400
        else:
            raise AssertionError(f"accepted {body[:40]!r}")


def test_the_pods_option_has_pytests_spelling_and_keeps_the_old_one() -> None:
    """One spelling for one option: `--k8s-pods auto|live|off`, as pytest's; `--pods` and `on` still work."""
    from pytest_netarena.cli import build_parser

    parser = build_parser()
    for command in ("serve", "task"):
        extra = ["folder"] if command == "task" else []
        assert parser.parse_args(["kube", command, *extra]).pods == "auto"
        assert parser.parse_args(["kube", command, *extra, "--k8s-pods", "live"]).pods == "live"
        assert parser.parse_args(["kube", command, *extra, "--pods", "on"]).pods == "live"  # the old spelling
        assert parser.parse_args(["kube", command, *extra, "--k8s-pods=off"]).pods == "off"
        with pytest.raises(SystemExit):
            parser.parse_args(["kube", command, *extra, "--k8s-pods", "yes"])
    subcommands = next(action for action in parser._actions if action.dest == "command").choices
    shown = subcommands["kube"].format_help() + next(
        action for action in subcommands["kube"]._actions if action.dest == "kube_command").choices["serve"].format_help()
    assert "--k8s-pods {auto,live,off}" in shown
