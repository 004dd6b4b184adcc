"""Red team: a pod's command is agent code (an agent can edit a Deployment), so pods attack the machine running them.

Each attack runs in real pods of a live cluster, against canary files and listeners the test made: reaching the
host, outliving the cluster, forking without end, flooding the data plane, passing for another pod."""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from pytest_netarena.cluster import live_support
from pytest_netarena.kube import kubectl_path

from .pods import PodCluster, pod

pytestmark = pytest.mark.skipif(not live_support().ok, reason=f"pods cannot run here: {live_support().reason}")


class Cluster(PodCluster):
    def box_uid(self, name: str) -> int:
        uid = self.server.get_object("Pod", "default", name)["metadata"]["uid"]
        return self.live.kubelet.runs[uid].box_uid


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    made = Cluster(tmp_path_factory.mktemp("kubectl"))
    yield made
    made.stop()


class Listener:
    """A TCP listener the test made on the host, counting the connections it gets."""

    def __init__(self, host: str) -> None:
        self.sock = socket.socket()
        self.sock.bind((host, 0))
        self.sock.listen()
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._stop = False
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop:
            try:
                connection, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            connection.close()

    def close(self) -> None:
        self._stop = True
        self._thread.join()
        self.sock.close()


def host_addresses() -> list[str]:
    out = subprocess.run(["ip", "-4", "-o", "addr", "show"], capture_output=True, text=True).stdout
    return sorted({line.split()[3].split("/")[0] for line in out.splitlines()})


def uid_processes(uid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("Uid:") and int(line.split()[1]) == uid:
                found.append(int(entry.name))
    return found


def test_a_pod_reaches_nothing_of_the_host(cluster, tmp_path):
    canary = tmp_path / "canary.txt"
    secret = secrets.token_hex(16)
    canary.write_text(secret)
    listeners = [Listener("127.0.0.1"), Listener("0.0.0.0")]
    try:
        cluster.run(pod("prowler", "sleep 3600"))
        targets = [("127.0.0.1", listeners[0].port), ("10.244.0.1", listeners[1].port),
                   ("169.254.1.1", listeners[1].port), ("127.0.0.1", cluster.server.port),
                   *((address, listeners[1].port) for address in host_addresses())]
        attempts = "; ".join(f"wget -qO- -T 1 http://{address}:{port}/; nc -w 1 {address} {port} </dev/null"
                             for address, port in targets)
        result = cluster.exec("prowler", f"{attempts}; cat {canary}; ls {tmp_path}; cat /proc/1/cmdline; echo; "
                                         "ls /proc | grep -c '^[0-9]'", timeout=120)
        output = result.stdout + result.stderr
        assert secret not in output
        assert all(listener.accepted == 0 for listener in listeners), [listener.accepted for listener in listeners]
        assert int(result.stdout.strip().splitlines()[-1]) < 10  # the box sees only its own few processes
    finally:
        for listener in listeners:
            listener.close()


def test_nothing_a_pod_starts_outlives_it_or_the_cluster(tmp_path):
    made = Cluster(tmp_path)
    try:
        daemons = "setsid sleep 3001 & (sh -c 'sleep 3002 &') & (sleep 3003 &) ; exec sleep 3004"
        made.run(pod("stayer", daemons), pod("other", daemons))
        uids = [made.box_uid("stayer"), made.box_uid("other")]
        made.live.wait_ready(30)
        assert all(len(uid_processes(uid)) >= 4 for uid in uids)
        made.server.delete_object("Pod", "default", "stayer")
        made.live.settle()
        assert uid_processes(uids[0]) == []
        groups = [Path(folder) for folder in made.live.groups.parents]
        scratch = made.live.scratch.path
    finally:
        made.stop()
    deadline = time.monotonic() + 10
    while uid_processes(uids[1]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert uid_processes(uids[1]) == []
    assert not any(group.exists() for group in groups)
    assert not scratch.exists() and str(scratch) not in Path("/proc/self/mounts").read_text()


def test_a_fork_bomb_is_bounded_and_the_cluster_goes_on(cluster):
    cluster.run(pod("bomb", "sleep 3600"), pod("bystander", "sleep 3600"))
    uid = cluster.box_uid("bomb")
    subprocess.Popen([kubectl_path(), "exec", "bomb", "--", "sh", "-c", "f(){ f | f & }; f"], env=cluster.env,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(2)
    assert len(uid_processes(uid)) <= 256  # the pod's process limits (its uid's, its cgroup's)
    assert cluster.exec("bystander", "echo still here", timeout=60).stdout == "still here\n"
    cluster.server.delete_object("Pod", "default", "bomb")
    cluster.live.settle()
    deadline = time.monotonic() + 10
    while uid_processes(uid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert uid_processes(uid) == []


def cpu_seconds(uid: int) -> float:
    """CPU time (user + system) the live processes of a uid have used."""
    ticks = 0
    for pid in uid_processes(uid):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def test_a_flood_is_dropped_in_the_kernel_and_bounded(tmp_path):
    """Floods at the harness's stand-ins (the cluster DNS here) are cut by the node's rate limit in the kernel, a
    pod's CPU by its cgroup, and the host sees none of it. (Busybox makes packets no faster than processes, so
    this cluster's stand-in rate is lowered to show the limit at work.)"""
    made = Cluster(tmp_path, served_rate=(20, 5))
    listener = Listener("0.0.0.0")
    try:
        made.run(pod("flooder", "sleep 3600"), pod("burner", "while :; do :; done"), pod("witness", "sleep 3600"))
        flood = ("for n in 1 2 3; do (while :; do nslookup kube-dns.kube-system.svc.cluster.local; done "
                 f">/dev/null 2>&1 &); done; while :; do nc -w 1 10.244.0.1 {listener.port} </dev/null; done")
        flooding = subprocess.Popen([kubectl_path(), "exec", "flooder", "--", "sh", "-c", flood], env=made.env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        burner = made.box_uid("burner")
        used, started = cpu_seconds(burner), time.monotonic()
        time.sleep(3)
        used, elapsed = cpu_seconds(burner) - used, time.monotonic() - started
        assert used <= 0.5 * elapsed * 1.25 + 0.2, (used, elapsed)  # its cgroup's half a CPU at most
        dropped, counters = 0, ""
        deadline = time.monotonic() + 30  # the flood starts through kubectl exec, which a busy machine makes slow
        while not dropped and time.monotonic() < deadline:
            counters = made.live.network.node.call(lambda: subprocess.run(
                ["iptables", "-L", "STANDIN-LIMIT", "-v", "-x", "-n"], capture_output=True, text=True).stdout)
            dropped = int(counters.splitlines()[-1].split()[0])
            time.sleep(0 if dropped else 0.5)
        assert dropped > 0, counters
        assert listener.accepted == 0
        flooding.kill()
    finally:
        listener.close()
        made.stop()


def ready(cluster, name: str) -> bool:
    status = cluster.server.get_object("Pod", "default", name).get("status") or {}
    return any(c["type"] == "Ready" and c["status"] == "True" for c in status.get("conditions") or [])


def test_no_pod_passes_for_another(cluster):
    """An attacker with NET_RAW claims a victim's address (address, ARP, source) and answers its port: the kubelet's
    probes of the victim and the harness's identity probes are not fooled."""
    not_ready = {"httpGet": {"path": "/", "port": 8080}, "periodSeconds": 1, "failureThreshold": 1}
    victim = pod("victim", "sleep 3600", readinessProbe=not_ready)
    attacker = pod("attacker", "mkdir -p /www && echo fake > /www/index.html && httpd -p 8080 -h /www && "
                               "(while true; do printf 'NETARENA-POD default/victim x y\\n' | nc -l -p 9000; done) & "
                               "sleep 3600")
    cluster.server.apply_objects([victim, pod("third", "sleep 3600"), attacker])
    deadline = time.monotonic() + 60
    while not all(ready(cluster, name) for name in ("third", "attacker")):
        assert time.monotonic() < deadline, "third and attacker did not become ready"
        time.sleep(0.05)
    cluster.live.settle()
    victim_ip = cluster.address("victim")
    forged = cluster.exec("attacker", f"ip addr add {victim_ip}/32 dev eth0; "
                                      f"arping -U -c 3 -I eth0 -s {victim_ip} 169.254.1.1; "
                                      f"echo x | nc -u -s {victim_ip} {cluster.address('third')} 53; echo done")
    assert "done" in forged.stdout
    assert "Operation not permitted" in forged.stderr  # no NET_ADMIN: the address is not taken
    time.sleep(3)  # three probe periods
    status = cluster.server.get_object("Pod", "default", "victim")["status"]
    assert status["containerStatuses"][0]["ready"] is False
    reach = cluster.live.probe("default/third", victim_ip, 8080, timeout=0.5)
    assert reach.pod is None and not reach.connected  # refused by the victim itself, never the attacker's httpd
    fake = cluster.live.probe("default/third", cluster.address("attacker"), 9000, timeout=1)
    assert fake.connected and fake.pod is None  # an answer, but no proof: it is nobody's


def test_exec_sessions_end_at_their_bounds(tmp_path):
    """A session that never ends, or floods its output, is stopped (exit 137 with the reason), as is everything it
    started."""
    made = Cluster(tmp_path, exec_wall_s=2)
    try:
        made.run(pod("box", "sleep 3600"))
        uid = made.box_uid("box")
        started = time.monotonic()
        endless = made.exec("box", "sleep 1000 & sleep 1001")
        assert endless.returncode == 137 and "ran longer than 2 s" in endless.stderr
        assert time.monotonic() - started < 30
        flood = made.exec("box", "yes")
        assert flood.returncode == 137 and "wrote more than" in flood.stderr
        assert len(flood.stdout) <= 4 << 20
        time.sleep(0.5)
        assert len(uid_processes(uid)) == 1  # only the container's own `sleep 3600`
    finally:
        made.stop()
