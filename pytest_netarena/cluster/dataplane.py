"""Keeping the node's rules and the DNS records equal to the API objects, and waiting for them (`settle`).

Every write of a pod, Service, EndpointSlice, NetworkPolicy or Namespace marks the data plane stale;
one thread reads the store, writes the whole rule set with one `iptables-restore` in the node's
namespace (atomic: no packet sees half of it) and swaps the DNS records. Bursts of writes cost one
rewrite. `settle()` waits until the rules reflect every such write made before the call, so a probe
(an exec session, a harness probe) never runs against rules older than the objects it was asked after.
"""

from __future__ import annotations

import dataclasses
import subprocess
import threading
import time
import traceback

from ..netpol import Namespace, NetpolError, compile_policy
from ..netpol.manifests import pod_from_manifest
from . import dns, firewall, images
from .network import ClusterNetwork, veth_name

#: a rewrite waits until no relevant write came for COALESCE_QUIET_S, at most COALESCE_MAX_S
COALESCE_QUIET_S, COALESCE_MAX_S = 0.01, 0.05
#: what the rules and records are written from
WATCHED = frozenset({"pods", "services", "endpointslices", "networkpolicies", "namespaces"})


def api_slice(address: str, port: int) -> dict:
    """The endpoint of default/kubernetes as kube-proxy reads it: the API server's listener for pods."""
    return {"metadata": {"namespace": "default", "labels": {"kubernetes.io/service-name": "kubernetes"}},
            "endpoints": [{"addresses": [address], "conditions": {"ready": True}}],
            "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}


class DataPlane:
    """The node namespace's iptables rules and the cluster DNS records, following the store."""

    def __init__(self, server, network: ClusterNetwork, served_rate: tuple[int, int] = (
            firewall.SERVED_RATE, firewall.SERVED_BURST), api: tuple[str, int] | None = None) -> None:
        """api: where the API server listens in the node namespace for pods (the `kubernetes` Service's endpoint)."""
        self.server, self.network, self.served_rate, self.api = server, network, served_rate, api
        self.records: dict[str, tuple[str, ...]] = {}
        self.rules = ""
        self.errors: list[str] = []
        self.rewrites = 0  #: rule sets written so far
        self._wanted = 0  #: the store version of the last write that matters
        self._applied = -1
        self._changed = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._work, name="netarena-dataplane", daemon=True)
        self._thread.start()

    def written(self, event_type: str, plural: str, obj) -> None:
        """The store's listener: a write of a kind the rules follow (or a reset) makes them stale."""
        if plural in WATCHED or event_type == "RESET":
            with self._changed:
                self._wanted = max(self._wanted, self.server.store.resource_version)
                self._changed.notify_all()

    def settle(self, timeout: float = 10.0) -> bool:
        """Wait until the rules and records reflect every relevant write made so far (False: timed out)."""
        with self._changed:
            wanted = self._wanted
            return self._changed.wait_for(lambda: self._applied >= wanted or self._stopping, timeout)

    def _work(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._wanted > self._applied or self._stopping)
                # a burst of writes (pods starting one after the other) makes one rewrite, not one each
                deadline = time.monotonic() + COALESCE_MAX_S
                seen = self._wanted
                while not self._stopping and time.monotonic() < deadline:
                    self._changed.wait(COALESCE_QUIET_S)
                    if self._wanted == seen:
                        break
                    seen = self._wanted
                if self._stopping:
                    return
                version = self.server.store.resource_version
            try:
                self._apply()
            except Exception:  # keep following the store; the error is kept for whoever asks
                self.errors.append(traceback.format_exc())
            with self._changed:
                self._applied = max(self._applied, version)
                self._changed.notify_all()

    def _apply(self) -> None:
        store = self.server.store
        with store.lock:
            pods = list(store.list("pods"))
            services = list(store.list("services"))
            slices = list(store.list("endpointslices"))
            policies = list(store.list("networkpolicies"))
            namespaces = list(store.list("namespaces"))
        view = firewall.ClusterView(served_rate=self.served_rate, api=self.api)
        for obj in namespaces:
            meta = obj["metadata"]
            view.namespaces[meta["name"]] = Namespace(meta["name"], meta.get("labels") or {})
        for obj in pods:
            if not (obj.get("spec") or {}).get("nodeName") or not (obj.get("status") or {}).get("podIP"):
                continue
            try:
                pod = pod_from_manifest(obj)
            except NetpolError:
                continue
            running = self.network.addresses.get(obj["metadata"]["uid"])
            if running is not None:  # the address its eth0 holds, whatever its status says now
                pod = dataclasses.replace(pod, ip=str(running))
            view.pods.append(pod)
            view.veths[pod.key] = veth_name(obj["metadata"]["uid"])
            if any(not images.resolve(c).runs_process for c in (obj.get("spec") or {}).get("containers") or ()):
                view.served.add(pod.key)
        for obj in policies:
            try:
                view.policies.append(compile_policy(obj))
            except NetpolError as error:  # the API server took it but the engine cannot read it: left out
                self.errors.append(f"NetworkPolicy {obj['metadata'].get('name')}: {error}")
        if self.api is not None:  # the API server's Endpoints have no EndpointSlice (as the real one's mirror skips)
            slices = [*slices, api_slice(*self.api)]
        view.services = firewall.service_ports(services, slices)
        rules = firewall.ruleset(view)
        if rules != self.rules:
            result = self.network.node.call(lambda: subprocess.run(
                ["iptables-restore"], input=rules.encode(), capture_output=True, timeout=30, check=False))
            if result.returncode != 0:
                raise RuntimeError(f"iptables-restore failed: {result.stderr.decode(errors='replace')[:2000]}")
            self.rules = rules
            self.rewrites += 1
        self.records = dns.records(services, slices, pods)

    def stop(self) -> None:
        with self._changed:
            self._stopping = True
            self._changed.notify_all()
        self._thread.join(timeout=10)
