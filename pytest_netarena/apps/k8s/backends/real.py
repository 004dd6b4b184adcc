"""`--k8s-backend kubeconfig[:CONTEXT]`: episodes on a real cluster, one namespace each, measured by probes.

Per episode: a fresh namespace (labelled netarena.io/episode) with agnhost stand-ins for every
workload, the faulted policies, readiness waits; the agent gets a kubeconfig for a ServiceAccount
bound to the `edit` role in that namespace only, so it cannot reach other episodes or the rest of
the cluster. The matrix is measured with one batched `agnhost connect` run per source pod, all
sources in parallel, against Service ClusterIPs (no DNS, so egress faults do not hide behind
name resolution). The namespace is deleted when the episode ends, on failure too. With
prober="engine" the matrix is computed from the objects instead (an API server without a
policy-enforcing CNI, such as the embedded one: this is how the backend is tested).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ....core.errors import BackendUnavailable, InfraError
from .base import Backend, ClusterState
from ..matrix import MatrixChecker, workload_of
from ..workloads.model import AppSpec, Flow
from .probes import AGNHOST_IMAGE, PROBE_TIMEOUT_S, parse_probe_output, probe_argv, stand_in_manifests
from ..protected import FingerprintCache

EPISODE_LABEL = "netarena.io/episode"
AGENT_ACCOUNT = "netarena-agent"
KINDS = "deployments,replicasets,pods,services,networkpolicies"
KIND_NAMES = {"Deployment", "ReplicaSet", "Pod", "Service"}


def default_kubeconfig() -> str:
    """The kubeconfig kubectl would read: the first of $KUBECONFIG, else ~/.kube/config."""
    return os.environ.get("KUBECONFIG", "").split(os.pathsep)[0] or os.path.expanduser("~/.kube/config")


def unreachable(context: str | None, kubeconfig: str | None = None, timeout_s: float = 10.0) -> str | None:
    """Why the cluster of this kubeconfig and context cannot be used now (one line), or None when it answers."""
    from ....kube.kubectl import KubectlNotFound, kubectl_env, kubectl_path

    kubeconfig = kubeconfig or default_kubeconfig()
    if not os.path.isfile(kubeconfig):
        return f"no kubeconfig at {kubeconfig} (set KUBECONFIG; see docs/k8s.md)"
    try:
        argv = [kubectl_path(), f"--kubeconfig={kubeconfig}", *([f"--context={context}"] if context else []),
                "version", "-o", "json", f"--request-timeout={int(timeout_s)}s"]
    except KubectlNotFound as error:
        return " ".join(str(error).split())
    with tempfile.TemporaryDirectory(prefix="netarena-k8s-reach-") as tmp:
        try:
            done = subprocess.run(argv, env=kubectl_env(kubeconfig, tmp), capture_output=True, text=True,
                                  timeout=timeout_s + 20)
        except subprocess.TimeoutExpired:
            return f"the cluster does not answer (kubectl version took over {timeout_s + 20:g} s)"
    if done.returncode == 0:
        return None
    said = [line.strip() for line in done.stderr.splitlines() if line.strip()]
    return "the cluster does not answer: " + (said[-1][:300] if said else f"kubectl version exited {done.returncode}")


class RealClusterBackend(Backend):
    name = "kubeconfig"

    def __init__(self, app: AppSpec, context: str | None = None, kubeconfig: str | None = None,
                 scoped: bool = True, prober: str = "probe", image: str = AGNHOST_IMAGE,
                 ready_timeout_s: float = 300.0, settle_s: float = 2.0, prefix: str = "netarena") -> None:
        self.app = app
        self.context = context
        self.admin_kubeconfig = kubeconfig or default_kubeconfig()
        self.scoped = scoped
        self.prober = prober
        self.image = image
        self.ready_timeout_s = ready_timeout_s
        self.settle_s = settle_s
        self.prefix = prefix
        self.namespace = ""
        self._tmp: str | None = None
        self._agent_env: dict[str, str] = {}
        self._cache = FingerprintCache()
        self._checker: MatrixChecker | None = None
        self._probed: tuple[Any, dict[Flow, bool]] | None = None
        self._counter = 0
        self._agent_config = b""
        self._lock = threading.Lock()  #: the engine model is synced by observe() and by the watch's threads
        self._listed: dict[str, dict[str, str]] = {}  #: plural -> name -> resourceVersion, at the last reading
        self._namespace_object: dict | None = None
        self._prefetched: tuple[dict[str, list[dict]], dict] | None = None  #: a listing the next observe() uses
        self._watch = None  #: the episode's watch streams (watching.ClusterWatch), from its first action on
        self.network = None
        self.binds = tuple((path, path) for path in ("/etc/resolv.conf",) if os.path.exists(path))

    # ----- admin kubectl -------------------------------------------------------------------------

    def _admin_argv(self) -> list[str]:
        argv = [self.kubectl, f"--kubeconfig={self.admin_kubeconfig}"]
        if self.context:
            argv.append(f"--context={self.context}")
        return argv

    def _admin(self, *args: str, stdin: str | None = None, timeout: float = 60.0, check: bool = True) -> str:
        argv = self._admin_argv()
        try:
            done = subprocess.run([*argv, *args], input=stdin, capture_output=True, text=True, timeout=timeout,
                                  env=self._admin_env)
        except subprocess.TimeoutExpired as error:
            raise InfraError(f"kubectl {' '.join(args[:3])} timed out after {timeout:g} s") from error
        if check and done.returncode != 0:
            raise InfraError(f"kubectl {' '.join(args[:4])} failed: {done.stderr.strip()[:500]}")
        return done.stdout

    def prepare(self) -> None:
        from ....kube.kubectl import KubectlNotFound, kubectl_env, kubectl_path

        try:
            self.kubectl = kubectl_path()
        except KubectlNotFound as error:
            raise BackendUnavailable(str(error)) from error
        if not os.path.isfile(self.admin_kubeconfig):
            raise BackendUnavailable(f"no kubeconfig at {self.admin_kubeconfig} (set KUBECONFIG; see docs/k8s.md)")
        from ....sandbox import NetNamespace

        self.network = NetNamespace.of_process(os.getpid())  # agent boxes need the route to the cluster
        self._tmp = tempfile.mkdtemp(prefix="netarena-k8s-real-")
        self._admin_env = kubectl_env(self.admin_kubeconfig, os.path.join(self._tmp, "admin"))
        try:
            self._admin("version", "-o", "json", timeout=30)
        except InfraError as error:
            raise BackendUnavailable(f"the cluster does not answer: {error}") from error

    # ----- episodes ------------------------------------------------------------------------------

    def begin(self, policies: Mapping[str, dict], overrides: Sequence[dict] = ()) -> None:
        self._counter += 1
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        self.namespace = f"{self.prefix}-{worker}-{self._counter}-{secrets.token_hex(3)}"[:63]
        self._checker = MatrixChecker(self.app, self.namespace)
        self._probed = None
        namespace = {"apiVersion": "v1", "kind": "Namespace",
                     "metadata": {"name": self.namespace, "labels": {EPISODE_LABEL: "true"}}}
        self._apply([namespace], verb="create")
        manifests = stand_in_manifests(self.app, self.image) if self.prober == "probe" else list(self.app.manifests)
        replaced = {(o["kind"], o["metadata"]["name"]): o for o in overrides}
        manifests = [replaced.get((m.get("kind"), m["metadata"]["name"]), m) for m in manifests]
        self._apply([self._namespaced(m) for m in manifests] + [self._namespaced(p) for p in policies.values()],
                    verb="create")  # a fresh namespace: create is one request per object, apply three
        timeout = f"--timeout={int(self.ready_timeout_s)}s"
        self._admin("wait", "-n", self.namespace, "--for=condition=Available", "deployment", "--all", timeout,
                    timeout=self.ready_timeout_s + 30)
        self._admin("wait", "-n", self.namespace, "--for=condition=Ready", "pod", "--all", timeout,
                    timeout=self.ready_timeout_s + 30)
        self._agent_env = self._agent_environment()

    def _namespaced(self, manifest: Mapping[str, Any]) -> dict[str, Any]:
        return {**manifest, "metadata": {**manifest.get("metadata", {}), "namespace": self.namespace}}

    def _apply(self, objects: Sequence[Mapping[str, Any]], verb: str = "apply") -> None:
        body = json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objects)})
        self._admin(verb, "-f", "-", stdin=body)

    def _agent_environment(self) -> dict[str, str]:
        from ....kube.kubectl import kubectl_env, save_kubeconfig

        args = ["config", "view", "--raw", "--minify", "--flatten", "-o", "json"]
        config = json.loads(self._admin(*args))
        config["contexts"][0]["context"]["namespace"] = self.namespace
        if self.scoped:
            self._apply(verb="create", objects=[
                {"apiVersion": "v1", "kind": "ServiceAccount",
                 "metadata": {"name": AGENT_ACCOUNT, "namespace": self.namespace}},
                {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                 "metadata": {"name": AGENT_ACCOUNT, "namespace": self.namespace},
                 "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
                 "subjects": [{"kind": "ServiceAccount", "name": AGENT_ACCOUNT, "namespace": self.namespace}]},
            ])
            token = self._admin("create", "token", AGENT_ACCOUNT, "-n", self.namespace, "--duration=2h").strip()
            config["users"][0]["user"] = {"token": token}
        folder = os.path.join(self._tmp, self.namespace)
        os.makedirs(folder, exist_ok=True)
        self._agent_config = json.dumps(config).encode()
        return kubectl_env(save_kubeconfig(os.path.join(folder, "kubeconfig"), self._agent_config), folder)

    def kubectl_env(self) -> dict[str, str]:
        return dict(self._agent_env)

    def agent_kubeconfig(self) -> bytes:
        return self._agent_config

    def end(self) -> None:
        if self._watch is not None:
            watch, self._watch = self._watch, None
            watch.stop()
        self._prefetched = None
        if self.namespace:
            namespace, self.namespace = self.namespace, ""
            shutil.rmtree(os.path.join(self._tmp or "", namespace), ignore_errors=True)
            self._admin("delete", "namespace", namespace, "--wait=false", "--ignore-not-found", timeout=60)

    def close(self) -> None:
        try:
            self.end()
        finally:
            super().close()

    # ----- observation -----------------------------------------------------------------------------

    def _objects(self) -> tuple[dict[str, list[dict]], dict]:
        items = json.loads(self._admin("get", KINDS, "-n", self.namespace, "-o", "json"))["items"]
        namespace = json.loads(self._admin("get", "namespace", self.namespace, "-o", "json", check=False) or "null")
        grouped: dict[str, list[dict]] = {}
        for item in items:
            grouped.setdefault(item["kind"], []).append(item)
        return grouped, namespace

    def observe(self) -> ClusterState:
        if self._prefetched is not None:
            (grouped, namespace), self._prefetched = self._prefetched, None
        else:
            grouped, namespace = self._objects()
        self._namespace_object = namespace
        self._listed = _versions(grouped)
        protected_items = [(kind, obj) for kind, objects in grouped.items() if kind in KIND_NAMES for obj in objects]
        if namespace:
            protected_items.append(("Namespace", namespace))
        protected = self._cache.fingerprints(protected_items)
        pods, services = grouped.get("Pod", []), grouped.get("Service", [])
        policies = grouped.get("NetworkPolicy", [])
        # the engine model is kept in sync in probe mode too: least privilege is judged on it
        with self._lock:
            self._checker.sync(pods, services, policies, [namespace] if namespace else [])
            if self.prober == "engine":
                return ClusterState(self._checker.matrix(), protected)
        key = (tuple(sorted((p["metadata"]["name"], p["metadata"].get("resourceVersion")) for p in policies)),
               tuple(sorted(protected.items())))
        if self._probed is None or self._probed[0] != key:
            if self._probed is not None:
                time.sleep(self.settle_s)  # give the CNI time to program the change
            self._probed = (key, self.probe(pods, services))
        return ClusterState(dict(self._probed[1]), protected)

    @contextmanager
    def watching_writes(self, check) -> Iterator[None]:
        """Per-write checks from the cluster's watch streams (watching.py): the policy engine judges the
        state after every write, compared with its own reading of the state before the action (in probe
        mode too: the probes judge step ends, the engine what lies between)."""
        from .watching import PLURALS, ClusterWatch

        namespaces = [self._namespace_object] if self._namespace_object else []

        def sync(objects: dict[str, dict[str, dict]]) -> None:
            self._checker.sync(list(objects["pods"].values()), list(objects["services"].values()),
                               list(objects["networkpolicies"].values()), namespaces)

        def written(label: str, objects: dict[str, dict[str, dict]]) -> None:
            started = time.perf_counter()
            with self._lock:
                sync(objects)
                check.written(label, self._checker.view(), time.perf_counter() - started, self._checker.last_changed)

        if self._watch is None:  # once per episode: the streams stay open from step to step
            self._watch = ClusterWatch(self._admin_argv(), self._admin_env, self.namespace).start()
        def ready(objects: dict[str, dict[str, dict]]) -> None:
            with self._lock:  # the engine's reading of the state before the action
                sync(objects)
                check.rebase(self._checker.matrix())

        watch = self._watch
        if not watch.follow(written, {plural: set(self._listed.get(plural, {})) for plural in PLURALS}, ready):
            raise InfraError(f"the cluster's watch streams did not list the episode's objects: "
                             f"{watch.error or 'timed out'}")
        try:
            yield
        finally:
            self._prefetched = self._objects()  # the listing the end-of-step reading uses
            watch.unfollow(_versions(self._prefetched[0]))
        if watch.error is not None:
            check.failed(watch.error)

    def probe(self, pods: list[dict], services: list[dict]) -> dict[Flow, bool]:
        """Measure every flow: one batched exec per running source pod, all sources in parallel."""
        addresses = {svc["metadata"]["name"]: svc.get("spec", {}).get("clusterIP") for svc in services}
        sources: dict[str, list[tuple[str, str]]] = {}
        for pod in pods:
            workload = workload_of(pod)
            if workload in self.app.names and (pod.get("status") or {}).get("phase") == "Running" \
                    and not pod["metadata"].get("deletionTimestamp"):
                sources.setdefault(workload, []).append(
                    (pod["metadata"]["name"], self.app.workload(workload).container))
        flows = self.app.flows()
        per_source: dict[str, list[tuple[str, int, str]]] = {}
        for flow in flows:
            ip = addresses.get(flow.service)
            if ip and ip != "None":
                per_source.setdefault(flow.source, []).append((ip, flow.port, flow.protocol))

        def run(pod: str, container: str, targets: list[tuple[str, int, str]]):
            output = self._admin("-n", self.namespace, *probe_argv(pod, container, targets, PROBE_TIMEOUT_S),
                                 timeout=PROBE_TIMEOUT_S * len(targets) + 30, check=False)
            return parse_probe_output(output, targets)

        jobs = [(workload, pod, container, per_source.get(workload, []))
                for workload, instances in sources.items() for pod, container in instances]
        results: dict[tuple[str, str], dict] = {}
        with ThreadPoolExecutor(max_workers=min(16, max(1, len(jobs)))) as pool:
            futures = {(w, p): pool.submit(run, p, c, targets) for w, p, c, targets in jobs if targets}
            for key, future in futures.items():
                results[key] = future.result()
        matrix = {}
        for flow in flows:
            ip = addresses.get(flow.service)
            verdicts = [results.get((flow.source, pod), {}).get((ip, flow.port, flow.protocol), False)
                        for pod, _ in sources.get(flow.source, [])]
            matrix[flow] = bool(verdicts) and all(verdicts)
        return matrix


def _versions(grouped: Mapping[str, list[dict]]) -> dict[str, dict[str, str]]:
    """plural -> name -> resourceVersion of the kinds the watch streams follow, from a listing by kind."""
    from .watching import PLURALS

    return {plural: {o["metadata"]["name"]: o["metadata"].get("resourceVersion") for o in grouped.get(kind, [])}
            for plural, kind in PLURALS.items()}
