"""LiveCluster: pods that run for an embedded API server, with a data plane of real packets, exec, logs and events.

    server = EmbeddedAPIServer().start()
    live = LiveCluster(server).start()      # LiveUnavailable where pods cannot run (server.mode stays "api-only")
    ...                                     # kubectl apply / exec / logs / get events through server.url
    live.stop()

Attaching sets `server.runtime` (so `kubectl exec` and `logs` are served) and `server.cluster.live_pods`
(so new pods wait for the kubelet and rollouts keep availability), and adds the cluster DNS (a
`coredns` Deployment and the `kube-dns` Service, ClusterIP 10.96.0.10, in kube-system).
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

from ..kube import errors
from ..kube.node import NODE_IP
from ..kube.podio import ExecRequest, LogRequest
from . import boxes, dns
from .cgroups import Groups
from .dataplane import DataPlane
from .firewall import SERVED_BURST, SERVED_RATE
from .kubelet import Kubelet
from .loop import Loop, connect, udp_socket
from .metrics import PodMetrics
from .network import ClusterNetwork
from .pods import BACKOFF_S
from .standins import PROBE, Identity
from .support import LiveUnavailable, Scratch, live_support

KUBE_DNS_IP = "10.96.0.10"
#: exec sessions that may run at once in one pod, and in the whole cluster (past them: 429 TooManyRequests)
EXEC_PER_POD, EXEC_PER_CLUSTER = 8, 32
#: the API server's port for pods, at the control plane node's address (the `kubernetes` Service's endpoint)
API_PORT = 6443
COREDNS_IMAGE = "registry.k8s.io/coredns/coredns:v1.12.0"
#: writes of these kinds reach running pods (volumes rewritten, waiting starts retried)
CONFIG_KINDS = frozenset({"configmaps", "secrets", "persistentvolumeclaims", "persistentvolumes", "serviceaccounts"})
#: how long a connected probe waits for the identity answer (the connection itself proves reachability)
ANSWER_S = 2.0


def default_storage_class() -> dict:
    """A default StorageClass of the local provisioner (as kind ships `standard`): claims of no class get a folder on
    their pod's node, made when the first pod using them is placed."""
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": "standard", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
            "provisioner": "rancher.io/local-path", "reclaimPolicy": "Delete",
            "volumeBindingMode": "WaitForFirstConsumer"}


def system_objects() -> list[dict]:
    """The cluster DNS, as kubeadm installs it (one replica here)."""
    labels = {"k8s-app": "kube-dns"}
    ports = [{"name": "dns", "containerPort": 53, "protocol": "UDP"},
             {"name": "dns-tcp", "containerPort": 53, "protocol": "TCP"},
             {"name": "metrics", "containerPort": 9153, "protocol": "TCP"}]
    return [
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": "coredns", "namespace": "kube-system", "labels": labels},
         "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                  "template": {"metadata": {"labels": labels}, "spec": {"containers": [{
                      "name": "coredns", "image": COREDNS_IMAGE, "args": [], "ports": ports,
                      "readinessProbe": {"httpGet": {"path": "/ready", "port": 8181}, "periodSeconds": 10}}]}}}},
        {"apiVersion": "v1", "kind": "Service",
         "metadata": {"name": "kube-dns", "namespace": "kube-system",
                      "labels": {"k8s-app": "kube-dns", "kubernetes.io/name": "CoreDNS"}},
         "spec": {"clusterIP": KUBE_DNS_IP, "selector": labels, "ports": [
             {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53},
             {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53},
             {"name": "metrics", "port": 9153, "protocol": "TCP", "targetPort": 9153}]}}]


@dataclass(frozen=True)
class Reach:
    """What one harness probe through the data plane found."""

    connected: bool  #: a connection was made (TCP) or an answer came back (UDP)
    pod: str | None = None  #: the namespace/name whose stand-in proved it answered (None: no proof)
    error: str = ""


class LiveCluster:
    """Runs the pods of one EmbeddedAPIServer (see the module's docstring)."""

    mode = "live"

    def __init__(self, server, backoff_s: float = BACKOFF_S, exec_wall_s: float = boxes.EXEC_WALL_S,
                 served_rate: tuple[int, int] = (SERVED_RATE, SERVED_BURST),
                 exec_sessions: tuple[int, int] = (EXEC_PER_POD, EXEC_PER_CLUSTER)) -> None:
        """backoff_s: the first restart back-off of a crashing container (a kubelet's 10 s); exec_wall_s: the
        longest an exec session may run; served_rate: packets per second (and burst) the stand-ins are sent;
        exec_sessions: how many exec sessions may run at once in one pod, and in the whole cluster."""
        self.server = server
        self.backoff_s = backoff_s
        self.exec_wall_s = exec_wall_s
        self.served_rate = served_rate
        self.exec_sessions = exec_sessions
        self._execs: dict[str, int] = {}  #: pod uid -> its exec sessions running now
        self._execs_lock = threading.Lock()
        self.started = False

    # -- life ------------------------------------------------------------------------------------
    def start(self) -> LiveCluster:
        found = live_support()
        if not found.ok:
            raise LiveUnavailable(found.reason)
        self.scratch = Scratch()
        if not self.scratch.mounted:  # the pods' files would land on the host's disk
            self.scratch.remove()
            raise LiveUnavailable(self.scratch.reason)
        self.network = ClusterNetwork()
        self.groups = Groups()
        self.loop = Loop()
        self.identity = Identity()
        self.api_url = self.server.listen(sock=self.network.api_socket(NODE_IP, API_PORT), tls=True,
                                         small_clients=True)
        self.dataplane = DataPlane(self.server, self.network, self.served_rate, (NODE_IP, API_PORT))
        resolver = dns.Responder(lambda: self.dataplane.records)
        self.kubelet = Kubelet(self.server, self.network, self.loop, self.groups, self.scratch, self.identity,
                               resolver, KUBE_DNS_IP, self.backoff_s)
        server = self.server
        profile = getattr(server, "profile", None)
        # the pods' metrics, as metrics-server gives them (k3s's unless --disable=metrics-server)
        self.metrics = PodMetrics(server, self.kubelet, self.groups)
        if profile is None or profile.has("metrics-server"):
            self.metrics.start()
        server.cluster.live_pods = True
        server.runtime = self
        server.add_listener(self._written)
        self.started = True
        if server.get_object("Service", "kube-system", "kube-dns") is None:
            server.apply_objects(system_objects())
        if not any((sc["metadata"].get("annotations") or {}).get("storageclass.kubernetes.io/is-default-class") == "true"
                   for sc in server.store.list("storageclasses")):
            server.apply_objects([default_storage_class()])
        self._written("RESET", "", None)
        return self

    def _written(self, event_type: str, plural: str, obj) -> None:
        self.dataplane.written(event_type, plural, obj)
        if event_type == "RESET":
            self.kubelet.events.forget()
        if plural == "pods" or event_type == "RESET":
            self.kubelet.request_sync(reset=event_type == "RESET")
        if plural in CONFIG_KINDS:
            self.kubelet.config_changed()

    def stop(self) -> None:
        """Stop every pod and remove everything the cluster made (namespaces, rules, cgroups, files)."""
        if not self.started:
            return
        self.started = False
        server = self.server
        server.remove_listener(self._written)
        self.metrics.stop()
        server.close_listener(self.api_url)
        server.runtime = None
        server.cluster.live_pods = False
        self.kubelet.stop_all()
        self.loop.stop()
        self.dataplane.stop()
        self.groups.remove()
        self.network.close()
        self.scratch.remove()

    def __enter__(self) -> LiveCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def bounds(self) -> dict[str, str]:
        """Which bounds hold beyond the per-process ones (for reports): cgroups and the scratch tmpfs."""
        return {"cgroups": f"v{self.groups.version}" if self.groups.ok else self.groups.reason,
                "scratch": "tmpfs" if self.scratch.mounted else self.scratch.reason}

    # -- waiting ---------------------------------------------------------------------------------
    def settle(self, timeout: float = 10.0) -> bool:
        """Wait until the kubelet handled every change so far and the rules follow every object."""
        deadline = time.monotonic() + timeout
        return (self.kubelet.wait_idle(timeout)
                and self.dataplane.settle(max(0.0, deadline - time.monotonic())))

    def node_writing(self) -> bool:
        """True when the calling thread is the node's own (the kubelet reporting how the pods run)."""
        return self.kubelet.in_own_thread()

    def wait_ready(self, timeout: float = 30.0, namespace: str | None = None) -> None:
        """Wait until every pod (of the namespace) is Running and Ready, or finished; TimeoutError names the others."""
        deadline = time.monotonic() + timeout
        while True:
            waiting = [p["metadata"]["name"] for p in self.server.store.list("pods", namespace) if not _settled(p)]
            if not waiting and self.settle(max(0.1, deadline - time.monotonic())):
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"pods not ready after {timeout:g} s: {', '.join(waiting[:10])}")
            time.sleep(0.01)

    # -- the API server's PodRuntime ---------------------------------------------------------------
    def exec(self, request: ExecRequest, channel) -> dict:
        uid = request.pod["metadata"].get("uid", "")
        with self._execs_lock:
            per_pod, in_all = self.exec_sessions
            if self._execs.get(uid, 0) >= per_pod or sum(self._execs.values()) >= in_all:
                name = request.pod["metadata"].get("name", "")
                return {**_failure(f"too many exec sessions: pod {name} runs {self._execs.get(uid, 0)} and the cluster "
                                   f"{sum(self._execs.values())}; this cluster runs at most {per_pod} per pod and "
                                   f"{in_all} in all at once (retry when one ends)", "TooManyRequests"), "code": 429}
            self._execs[uid] = self._execs.get(uid, 0) + 1
        try:
            return self._exec(request, channel)
        finally:
            with self._execs_lock:
                self._execs[uid] -= 1
                if not self._execs[uid]:
                    del self._execs[uid]

    def _exec(self, request: ExecRequest, channel) -> dict:
        self.dataplane.settle()
        session = self.kubelet.exec_session(request.pod, request.container, request.command, request.stdin,
                                            self.exec_wall_s, boxes.EXEC_OUTPUT_BYTES)
        if not _runnable(request.command[0], session.spec):
            return _failure(f'OCI runtime exec failed: exec failed: unable to start container process: exec: '
                            f'"{request.command[0]}": executable file not found in $PATH: unknown', "InternalError")
        code = session.run(channel.send, channel.receive if request.stdin else None,
                           getattr(channel, "connection", None))
        if session.abandoned:  # nobody is left to read a Status
            return _exit_failure(request.command, 137, " (its client went away)")
        if code is None:
            why = (f"the command ran longer than {self.exec_wall_s:g} s" if session.timed_out
                   else f"the command wrote more than {boxes.EXEC_OUTPUT_BYTES} bytes")
            try:  # kubectl prints only the exit code of a Status: the reason goes to the session's stderr
                channel.send(2, f"exec session stopped: {why} (this cluster's exec limit)\n".encode())
            except Exception:
                pass
            return _exit_failure(request.command, 137, f" ({why}, this cluster's exec limit)")
        if code == 0:
            return {"metadata": {}, "status": "Success"}
        return _exit_failure(request.command, code)

    def logs(self, request: LogRequest) -> Iterator[bytes]:
        meta = request.pod["metadata"]
        run = self.kubelet.runs.get(meta.get("uid", ""))
        container = run.find(request.container) if run is not None else None
        if container is None or (container.generation == 0 and not request.previous):
            reason = container.reason if container is not None else "ContainerCreating"
            raise errors.bad_request(f'container "{request.container}" in pod "{meta["name"]}" is waiting to start: '
                                     f"{reason}")
        log = container.previous if request.previous else container.log
        if request.previous and log is None:
            raise errors.bad_request(f'previous terminated container "{request.container}" in pod "{meta["name"]}" '
                                     "not found")
        if not request.previous and container.state != "running" and container.previous is not None \
                and not log.written:
            log = container.previous  # between runs the kubelet shows the last run's log
        options = (request.tail_lines, request.limit_bytes, request.timestamps, request.since_seconds)
        if request.follow:
            return log.follow(*options)
        return iter([log.text(*options)])

    # -- probing through the data plane --------------------------------------------------------------
    def probe(self, source: str, address: str, port: int, protocol: str = "TCP", timeout: float = 1.0) -> Reach:
        """Connect from pod `source` (namespace/name) to address:port and ask who answers (settles first)."""
        return self.probe_many([(source, address, port, protocol)], timeout)[0]

    def probe_many(self, probes: list[tuple[str, str, int, str]], timeout: float = 1.0) -> list[Reach]:
        """Many probes (source, address, port, protocol) at once: the whole costs one timeout, not one each."""
        self.settle()
        runs = {run.key: run for run in self.kubelet.runs.values()}
        missing = sorted({source for source, *_ in probes if source not in runs})
        if missing:
            raise KeyError(f"pods do not run here: {', '.join(missing)}")

        async def all_of() -> list[Reach]:
            return list(await asyncio.gather(*(self._probe(runs[source].network.namespace, address, port, protocol,
                                                           timeout) for source, address, port, protocol in probes)))

        return self.loop.run(all_of(), timeout * 2 + 10)

    def http(self, address: str, port: int, path: str = "/", host: str = "", timeout: float = 10.0) -> bytes:
        """An HTTP GET from the node (as the harness reaches a Service: its ClusterIP, an ingress controller's), the
        whole answer as it came (settles first)."""
        self.settle()

        async def fetch() -> bytes:
            sock = await connect(self.network.node, address, port, timeout)
            reader, writer = await asyncio.open_connection(sock=sock)
            writer.write(f"GET {path} HTTP/1.1\r\nHost: {host or address}\r\nConnection: close\r\n\r\n".encode())
            answer = await asyncio.wait_for(reader.read(1 << 20), timeout)
            while True:
                more = await asyncio.wait_for(reader.read(1 << 20), timeout)
                if not more or len(answer) > 4 << 20:
                    break
                answer += more
            writer.close()
            return answer

        return self.loop.run(fetch(), timeout * 2 + 5)

    async def _probe(self, namespace, address: str, port: int, protocol: str, timeout: float) -> Reach:
        nonce = os.urandom(16).hex().encode()
        loop = asyncio.get_running_loop()
        if protocol == "UDP":
            if not _is_ipv4(address):  # a name would go to the harness's own resolver
                return Reach(False, None, f"not an IPv4 address: {address!r}")
            sock = udp_socket(namespace)
            try:
                await loop.sock_connect(sock, (address, port))
                await loop.sock_sendall(sock, PROBE + nonce + b"\n")
                reply = await asyncio.wait_for(loop.sock_recv(sock, 512), timeout)
            except (TimeoutError, OSError) as error:
                return Reach(False, None, str(error) or "timed out")
            finally:
                sock.close()
            proof = self.identity.verify(nonce, reply)
            return Reach(True, proof[0] if proof else None)
        try:
            sock = await connect(namespace, address, port, timeout)
        except (TimeoutError, OSError) as error:
            return Reach(False, None, str(error) or "timed out")
        try:
            reader, writer = await asyncio.open_connection(sock=sock)
            writer.write(PROBE + nonce + b"\n")
            reply = await asyncio.wait_for(reader.readline(), max(timeout, ANSWER_S))
            writer.close()
        except (TimeoutError, OSError, ValueError):
            return Reach(True, None, "no answer to the identity challenge")
        proof = self.identity.verify(nonce, reply)
        return Reach(True, proof[0] if proof else None)


def _is_ipv4(address: str) -> bool:
    try:
        ipaddress.IPv4Address(address)
    except ValueError:
        return False
    return True


def _settled(pod: dict) -> bool:
    status = pod.get("status") or {}
    if status.get("phase") in ("Succeeded", "Failed"):
        return True
    return status.get("phase") == "Running" and any(c.get("type") == "Ready" and c.get("status") == "True"
                                                     for c in status.get("conditions") or [])


def _runnable(command: str, spec) -> bool:
    names, root = set(spec.programs), spec.root
    if "/" not in command:
        return command in names
    for prefix in ("/usr/bin/", "/bin/", "/sbin/", "/usr/sbin/"):
        if command.startswith(prefix) and command[len(prefix):] in names:
            return True
    return root is not None and command.startswith("/") and os.path.exists(root + command)


def _failure(message: str, reason: str, causes: list | None = None) -> dict:
    status = {"metadata": {}, "status": "Failure", "message": message, "reason": reason}
    if causes:
        status["details"] = {"causes": causes}
    return status


def _exit_failure(command, code: int, note: str = "") -> dict:
    return _failure(f"command terminated with non-zero exit code: error executing command {list(command)}, "
                    f"exit code {code}{note}", "NonZeroExitCode", [{"reason": "ExitCode", "message": str(code)}])

