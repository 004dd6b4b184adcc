"""Red team: pods that flood what the node keeps for them (an agent can edit a Deployment, so a pod's command is agent
code): their disk, exec sessions, and their logs.

Each flood stays within its bound while the cluster serves others: a pod filling its disk leaves every other pod's
room; exec sessions opened without end get a Status past a cap, and end with their client; a container writing its
output without end costs the harness a bounded share of CPU and memory."""

from __future__ import annotations

import base64
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from pytest_netarena.cluster import live_support
from pytest_netarena.kube import EmbeddedAPIServer, kubectl_env, kubectl_path

from .pods import pod

pytestmark = pytest.mark.skipif(not live_support().ok, reason=f"pods cannot run here: {live_support().reason}")


class Cluster:
    def __init__(self, tmp, **options) -> None:
        from pytest_netarena.cluster import LiveCluster

        self.server = EmbeddedAPIServer().start()
        self.live = LiveCluster(self.server, backoff_s=0.5, **options).start()
        self.env = kubectl_env(self.server, tmp)

    def run(self, *objects: dict) -> None:
        self.server.apply_objects(list(objects))
        self.live.wait_ready(60, "default")

    def exec(self, name: str, command: str, timeout: float = 60) -> subprocess.CompletedProcess:
        return subprocess.run([kubectl_path(), "exec", name, "--", "sh", "-c", command], env=self.env,
                              capture_output=True, text=True, timeout=timeout)

    def stop(self) -> None:
        self.live.stop()
        self.server.stop()


@pytest.fixture
def cluster(tmp_path):
    made = Cluster(tmp_path)
    yield made
    made.stop()


def _sleeping(seconds: str) -> list[int]:
    """The pids of `sleep SECONDS` processes (the boxes around them name it too, but are not it)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes() == f"sleep\0{seconds}\0".encode():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_a_pod_filling_its_disk_leaves_every_other_pod_its_room(cluster):
    fill = ("i=0; while dd if=/dev/zero of=/fill$i bs=1M count=8 2>/dev/null; do i=$((i+1)); done; "
            "echo filled $(ls -l /fill* | awk '{s += $5} END {print int(s / 1024)}'); rm -f /fill*; "
            "i=0; while [ $i -lt 30000 ] && printf '' > /n$i; do i=$((i+1)); done 2>/dev/null; echo files $i; "
            "exec sleep 3600")
    cluster.run(pod("filler", fill), pod("victim", "exec sleep 3600"))
    deadline = time.monotonic() + 120
    log = ""
    while "files" not in log and time.monotonic() < deadline:
        time.sleep(0.5)
        log = subprocess.run([kubectl_path(), "logs", "filler"], env=cluster.env, capture_output=True, text=True,
                             timeout=30).stdout
    assert "files" in log, log
    written_kib = int(log.split("filled ")[1].split()[0])
    assert written_kib <= 65 * 1024, log  # its own 64 MiB (the whole cluster's 256 MiB before)
    assert int(log.split("files ")[1].split()[0]) < 20000, log  # and a bounded number of files
    done = cluster.exec("victim", "dd if=/dev/zero of=/room bs=1M count=4 && echo wrote")
    assert "wrote" in done.stdout, done.stdout + done.stderr
    done = cluster.exec("filler", "echo more > /more && echo wrote")
    assert "wrote" not in done.stdout  # the filler's own disk is what is full


def test_exec_sessions_opened_without_end_stop_at_a_cap_and_end_with_their_client(tmp_path):
    made = Cluster(tmp_path, exec_sessions=(4, 6))
    marker = f"{3000 + os.getpid() % 1000}.{int(time.time()) % 1000 + 1}"
    sockets: list[socket.socket] = []
    try:
        made.run(pod("one", "exec sleep 3600"), pod("two", "exec sleep 3600"))
        answers = []
        for name in ("one",) * 8 + ("two",) * 5:
            sock, answer = _open_exec(made.server.port, name, ["sleep", marker])
            sockets.append(sock)
            answers.append(answer)
        time.sleep(2)
        running = _sleeping(marker)
        assert 0 < len(running) <= 6, len(running)  # 13 asked; 4 in one, 2 more in two (the cluster's 6)
        refused = [a for a in answers if b"TooManyRequests" in a or b"exec sessions" in a]
        assert len(refused) >= 13 - 6, answers
        honest = subprocess.run([kubectl_path(), "exec", "two", "--", "echo", "still-here"], env=made.env,
                                capture_output=True, text=True, timeout=30)
        assert "exec sessions" in honest.stderr or honest.stdout.strip() == "still-here"
        for sock in sockets:  # the clients go away: their sessions end
            sock.close()
        sockets = []
        deadline = time.monotonic() + 10
        while _sleeping(marker) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _sleeping(marker) == []
        done = subprocess.run([kubectl_path(), "exec", "two", "--", "echo", "still-here"], env=made.env,
                              capture_output=True, text=True, timeout=30)
        assert done.stdout.strip() == "still-here", done.stderr
    finally:
        for sock in sockets:
            sock.close()
        made.stop()


def _open_exec(port: int, pod: str, command: list[str]) -> tuple[socket.socket, bytes]:
    """A raw WebSocket exec session (what kubectl opens), and what the server sent in its first second."""
    query = "&".join(f"command={part}" for part in command) + "&stdout=true&stderr=true"
    key = base64.b64encode(os.urandom(16)).decode()
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(f"GET /api/v1/namespaces/default/pods/{pod}/exec?{query} HTTP/1.1\r\nHost: x\r\n"
                 f"Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
                 f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n".encode())
    sock.settimeout(1.0)
    received = b""
    try:
        while len(received) < 65536:
            chunk = sock.recv(4096)
            if not chunk:
                break
            received += chunk
    except (TimeoutError, socket.timeout):
        pass
    return sock, received


def test_a_container_writing_without_end_costs_the_harness_a_bounded_share(cluster):
    cluster.run(pod("quiet", "exec sleep 3600"))
    cluster.server.apply_objects([pod("loud", "exec yes")])
    cluster.live.wait_ready(60, "default")
    time.sleep(1)
    started_cpu, started = time.process_time(), time.monotonic()
    time.sleep(4)
    share = (time.process_time() - started_cpu) / (time.monotonic() - started)
    assert share < 0.15, f"the harness spent {share:.2f} CPU seconds a second reading one pod's output"
    uid = cluster.server.get_object("Pod", "default", "loud")["metadata"]["uid"]
    log = cluster.live.kubelet.runs[uid].containers["main"].log
    assert log.size <= log.limit
    tail = subprocess.run([kubectl_path(), "logs", "loud", "--tail=3"], env=cluster.env, capture_output=True,
                          text=True, timeout=30)
    assert tail.stdout == "y\ny\ny\n", tail.stdout[:200] + tail.stderr
    done = cluster.exec("quiet", "echo fine")
    assert done.stdout.strip() == "fine"


def test_a_cluster_starting_leaves_another_clusters_pod_disks_alone():
    # a cluster starting unmounts the scratch spaces of processes that died; a pod's tmpfs inside a live one, whose
    # folder's digits read as a dead process's pid, was taken for one (its files vanished under its containers)
    from pytest_netarena.cluster.support import Scratch, remove_leftovers

    scratch = Scratch()
    try:
        disk = scratch.mount_pod("304a327b-b031-4072-afc5-9467d5c67747", 1 << 20)
        (disk / "kept").write_text("still here")
        remove_leftovers()
        assert (disk / "kept").read_text() == "still here"
        assert str(disk) in Path("/proc/self/mounts").read_text()
    finally:
        scratch.remove()
    assert str(scratch.path) not in Path("/proc/self/mounts").read_text()
