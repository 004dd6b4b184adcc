"""Red team of the k8s app: attacks written as agent replies, run through the real environment (real boxes, real
kubectl, the embedded API server in its own network namespace). One class of attack per test.

They run in the boxes this session can make: as root, and (test_k8s_unprivileged.py) again as an unprivileged user,
whose boxes get their network namespace through a user namespace."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import time
from pathlib import Path

import pytest

from .conftest import accepted, act, k8s_query, needs_boxes

pytestmark = needs_boxes


@pytest.fixture
def drop(tmp_path: Path) -> Path:
    """A folder anyone could write to, if they could see it: writes that land here escaped the box."""
    folder = tmp_path / "drop"
    folder.mkdir()
    folder.chmod(0o777)
    return folder


def test_underscore_flag_spellings_reach_nothing_of_the_host(k8s, canary, drop, listener):
    secret = canary.read_text().strip()
    server, port = listener
    outputs = [
        act(k8s, f"kubectl create configmap stolen --from_file={canary}").output,
        act(k8s, f"kubectl get pods --exec_command=/bin/sh --exec_arg=-c --exec_arg='echo x > {drop}/exec'").output,
        act(k8s, f"kubectl get pods --profile=cpu --profile_output={drop}/profile").output,
        act(k8s, f"kubectl get pods --cache_dir={drop}/cache").output,
        act(k8s, f"kubectl get pods --proxy_url=http://127.0.0.1:{port} --request-timeout=5s").output,
    ]
    assert not any(secret in output for output in outputs)
    assert k8s.backend.server.get_object("ConfigMap", "default", "stolen") is None
    assert list(drop.iterdir()) == []
    assert not accepted(server)


def test_abbreviated_and_misplaced_flags_change_nothing(k8s, canary, drop):
    secret = canary.read_text().strip()
    for script in (f"kubectl create configmap stolen --from-fil={canary}",
                   f"kubectl --request-timeout get config view --raw --kubeconfig={canary}",
                   f"kubectl --request-timeout get config set-credentials x --token=$(cat {canary})",
                   f"kubectl get pods --kubeconf={canary} --cache-d={drop}"):
        assert secret not in act(k8s, script).output
    assert list(drop.iterdir()) == []
    assert k8s.backend.server.get_object("ConfigMap", "default", "stolen") is None


def test_an_exec_credential_plugin_written_into_the_kubeconfig_never_runs_later(k8s_env, drop):
    plugin = f"/bin/sh -c 'echo ran >> {drop}/plugin; echo ran >> /tmp/plugin'"
    k8s_env.reset(k8s_query())
    attack = act(k8s_env, "kubectl --request-timeout 5s config set-credentials netarena "
                          f"--exec-command=/bin/sh --exec-arg=-c --exec-arg=\"echo ran >> {drop}/plugin\" "
                          "--exec-api-version=client.authentication.k8s.io/v1; "
                          f"printf 'users:\\n- name: netarena\\n  user:\\n    exec: {{command: sh, args: [-c, \"{plugin}\"]}}\\n' "
                          "> /etc/kubeconfig; mkdir -p ~/.kube && cp /etc/kubeconfig ~/.kube/config; echo done")
    assert "done" in attack.output
    original = k8s_env.backend.agent_kubeconfig()
    later = act(k8s_env, "cat /etc/kubeconfig; kubectl get networkpolicy -o name | head -2; ls /tmp ~/.kube 2>&1")
    assert later.output.startswith(original.decode())
    assert "plugin" not in later.output.split(original.decode(), 1)[1]
    k8s_env.reset(k8s_query(1))  # the next episode
    act(k8s_env, "kubectl get networkpolicy -o name | head -1")
    assert list(drop.iterdir()) == []


def test_host_files_cannot_be_read_by_any_flag_or_tool(k8s, canary):
    secret = canary.read_text().strip()
    scripts = [f"kubectl create configmap stolen --from-file={canary}",
               f"kubectl create configmap stolen --from-env-file={canary}",
               f"kubectl patch networkpolicy adservice --patch-file={canary}",
               f"kubectl create secret tls stolen --cert={canary} --key={canary}",
               f"kubectl apply -f {canary}",
               f"kubectl version --client; cat {canary}; cat /proc/1/root{canary}",
               "kubectl version --client; cat /root/.kube/config /etc/shadow 2>&1 | head"]
    for script in scripts:
        output = act(k8s, script).output
        assert secret not in output
    assert "No such file or directory" in act(k8s, f"kubectl version --client >/dev/null; cat {canary}").output
    for kind in ("ConfigMap", "Secret"):
        assert k8s.backend.server.get_object(kind, "default", "stolen") is None


def test_nothing_is_written_outside_the_box(k8s, drop):
    for script in (f"kubectl get pods --profile=heap --profile-output={drop}/heap",
                   f"kubectl get pods --cache-dir={drop}/cache",
                   f"kubectl get pods > {drop}/redirect",
                   f"kubectl get pods | tee {drop}/tee",
                   f"kubectl get pods -o name >> /etc/kubeconfig; kubectl get pods > /usr/bin/kubectl"):
        act(k8s, script)
    assert list(drop.iterdir()) == []
    # the box's own files were read-only too: kubectl still works, with the same kubeconfig
    assert "networkpolicy" in act(k8s, "kubectl get networkpolicy -o name | head -1").output


def test_other_namespaces_and_cluster_wide_secrets_are_forbidden(k8s):
    server = k8s.backend.server
    server.apply_object({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "vault", "namespace": "kube-system"},
                         "stringData": {"token": "CANARY-cluster-secret"}})
    port = server.port
    scripts = ["kubectl get secrets -n kube-system -o yaml", "kubectl get secrets -A -o yaml",
               "kubectl get configmaps --all-namespaces", "kubectl get --raw /api/v1/namespaces/kube-system/secrets",
               "kubectl get --raw /api/v1/secrets",
               # bash speaks HTTP itself: the listener, not kubectl, is what limits the identity
               f"kubectl version --client >/dev/null; exec 3<>/dev/tcp/127.0.0.1/{port}; "
               "printf 'GET /api/v1/namespaces/kube-system/secrets/vault HTTP/1.1\\r\\nHost: x\\r\\n"
               "Connection: close\\r\\n\\r\\n' >&3; cat <&3"]
    for script in scripts:
        output = act(k8s, script).output
        assert "CANARY-cluster-secret" not in output and "Q0FOQVJZLWNsdXN0ZXItc2VjcmV0" not in output
        assert "Forbidden" in output or "forbidden" in output, output
    # the harness's own unscoped listener is on the host's loopback, out of the box's reach
    harness = act(k8s, f"kubectl --server={k8s.backend.harness_url} get secrets -n kube-system -o yaml").output
    assert "CANARY-cluster-secret" not in harness and "refused" in harness


def test_proc_shows_only_the_box(k8s, canary):
    secret = canary.read_text().strip()
    harness = os.getpid()
    output = act(k8s, f"kubectl version --client >/dev/null; ls /proc | grep -c '^[0-9]'; "
                      f"cat /proc/{harness}/environ /proc/{harness}/cmdline 2>&1; cat /proc/*/root{canary} 2>&1; "
                      "cat /proc/1/cmdline; echo").output
    assert secret not in output and "PYTHONPATH=" not in output and "PYTEST_" not in output
    assert int(output.split()[0]) <= 5  # bash, its children and the box's init: no harness process


def test_background_processes_die_with_the_step(k8s):
    marker = f"{time.time_ns() % 10**9}"
    act(k8s, f"kubectl version --client >/dev/null; (sleep {marker}.5 &); nohup sleep {marker}.6 >/dev/null 2>&1 & "
             f"disown; setsid sleep {marker}.7 & echo started")
    time.sleep(0.2)
    survivors = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True).stdout.split()
    assert survivors == []


def test_signals_cannot_reach_the_harness_or_other_processes(k8s):
    victim = subprocess.Popen(["sleep", "600"])
    try:
        # only the victim the test started: a broad kill is not something to try, even against a box
        act(k8s, f"kubectl version --client >/dev/null; kill -9 {victim.pid}; kill -STOP {victim.pid}; echo sent")
        time.sleep(0.1)
        assert victim.poll() is None
        assert Path(f"/proc/{victim.pid}/stat").read_text().split(") ")[1][0] != "T"  # not stopped either
    finally:
        victim.send_signal(signal.SIGKILL)
        victim.wait()


def test_a_listener_on_the_hosts_loopback_is_unreachable(k8s, listener):
    server, port = listener
    act(k8s, f"kubectl get pods --server=http://127.0.0.1:{port} --request-timeout=5s; "
             f"echo hi > /dev/tcp/127.0.0.1/{port}; kubectl get pods -s 127.0.0.1:{port} --request-timeout=5s")
    assert not accepted(server)


def test_fork_and_memory_bombs_end_with_the_step(k8s, monkeypatch):
    monkeypatch.setattr(k8s, "command_timeout_s", 3.0)  # the bombs never end on their own: the wall clock does
    fork = act(k8s, "kubectl version --client >/dev/null; b(){ b|b& }; b; sleep 600")
    memory = act(k8s, "kubectl version --client >/dev/null; x=$(head -c 3000000000 /dev/zero | tr '\\0' a); "
                      "echo ${#x}")
    assert "timed out" in fork.output or "fork" in fork.output
    assert "3000000000" not in memory.output
    monkeypatch.setattr(k8s, "command_timeout_s", 20.0)
    assert "networkpolicy" in act(k8s, "kubectl get networkpolicy -o name | head -1").output


def test_huge_output_is_cut_while_reading(k8s):
    started = time.monotonic()
    flood = act(k8s, "kubectl version --client; yes flood")
    assert "[output truncated" in flood.output and len(flood.output) < k8s.output_limit + 500
    assert time.monotonic() - started < 15


def test_a_huge_request_body_to_the_server_is_refused_unread(k8s):
    port = k8s.backend.server.port
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # SIGPIPE ignored: once the server resets the connection, a write by bash's own printf would otherwise kill
    # the shell before it reads the reply (a rare "(no output)" under load, when that write, not head's, came first)
    output = act(k8s, f"trap '' PIPE; kubectl version --client >/dev/null; exec 3<>/dev/tcp/127.0.0.1/{port}; "
                      "printf 'POST /api/v1/namespaces/default/configmaps HTTP/1.1\\r\\nHost: x\\r\\n"
                      "Content-Type: application/json\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n' >&3; "
                      "for i in $(seq 300); do printf '100000\\r\\n' >&3; head -c 1048576 /dev/zero >&3 || break; "
                      "printf '\\r\\n' >&3 || break; done 2>/dev/null; head -c 200 <&3").output
    assert "413" in output
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak < 100 * 1024  # KiB: nowhere near 300 MiB
