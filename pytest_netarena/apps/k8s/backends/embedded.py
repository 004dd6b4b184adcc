"""The default backend: the embedded API server with the healthy app loaded once, reset per episode.

The matrix comes from the NetworkPolicy engine over the objects in the server's store; a reading is
skipped entirely when the server's resourceVersion did not move (read-only commands cost nothing).

The server listens only inside a network namespace made for this backend (agent boxes join it, so
they reach this server and nothing else), and that listener acts as an identity bound to the
episode's namespace: other namespaces and cluster-wide listings are 403 Forbidden. The harness reads
the store in process; its own tools (kubectl_env()) use a second, unscoped listener on the host's
127.0.0.1, which no box can reach. With --unsandboxed the one listener is scoped, on the host's 127.0.0.1.
"""

from __future__ import annotations

import collections
import copy
import json
import socket
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ....core.errors import BackendUnavailable, InfraError
from ..matrix import MatrixChecker
from ..protected import FingerprintCache
from ..workloads.model import AppSpec
from .base import Backend, ClusterBusy, ClusterState

if TYPE_CHECKING:
    from ....cluster import LiveCluster
    from ....kube.server import EmbeddedAPIServer
    from ....sandbox import NetNamespace, UserNetNamespace

KINDS = ("Namespace", "Deployment", "ReplicaSet", "Pod", "Service")
#: the stored kinds the matrix is computed from (a write of any other kind cannot change it)
MATRIX_PLURALS = {"networkpolicies": "NetworkPolicy", "pods": "Pod", "services": "Service", "namespaces": "Namespace"}
#: where agents reach the server, inside each environment's own network namespace: one address for
#: every environment, so their kubeconfigs and kubectl discovery caches are the same (shared per process)
AGENT_PORT = 6443
#: the longest the harness waits to read the store after an action: a request holds its lock for
#: milliseconds (patches are computed outside it, within a CPU budget), so this is never reached by a fair one
READ_TIMEOUT_S = 30.0
#: while a step's writes are judged, the longest a write request waits for the one before it to be judged;
#: then it is answered 429 TooManyRequests, as a real server answers when it cannot take a request now
WRITE_WAIT_S = 10.0


class EmbeddedBackend(Backend):
    """One EmbeddedAPIServer per worker, snapshotted with the healthy app."""

    name = "embedded"

    def __init__(self, app: AppSpec, namespace: str = "default", sandboxed: bool = True, pods: str = "off",
                 distractors: bool = False) -> None:
        """pods: "live" runs the pods (pytest_netarena.cluster: processes, a data plane, exec and logs; the backend
        is unavailable where they cannot run), "auto" runs them where they can, "off" keeps the API server alone.
        distractors: the operator story's cluster: the app's workloads name their dependencies in their configuration
        (story.configured), and unrelated healthy workloads and noisy events stand beside them."""
        self.app = app
        self.distractors = distractors
        self.namespace = namespace
        self.sandboxed = sandboxed
        self.pods = pods
        self.live: LiveCluster | None = None  #: the LiveCluster running the pods, when they run
        self.mode = "api-only"  #: "live" when the pods run (the reports say which mode ran)
        self.network: NetNamespace | UserNetNamespace | None = None
        self.server: EmbeddedAPIServer | None = None  #: None until prepared, and once closed
        self._tmp: str | None = None
        self._env: dict[str, str] | None = None
        self._agent_config = b""
        self._checker = MatrixChecker(app, namespace)
        self._cache = FingerprintCache()
        self._last: tuple[int, ClusterState] | None = None
        self._lock = threading.RLock()  #: the checker is synced by the harness and by per-write checks
        self.read_timeout_s = READ_TIMEOUT_S

    def prepare(self) -> None:
        try:
            from ....kube.kubectl import KubectlNotFound, kubectl_env, kubectl_path, save_kubeconfig
            from ....kube.server import EmbeddedAPIServer
        except ImportError as error:  # pragma: no cover - a broken install
            raise BackendUnavailable(f"the embedded Kubernetes server cannot be imported: {error}") from error
        try:
            self.kubectl = kubectl_path()
        except KubectlNotFound as error:
            raise BackendUnavailable(str(error)) from error
        sock = None
        if self.sandboxed:
            from ....sandbox import new_network_namespace

            try:
                self.network = network = new_network_namespace()  # as root directly, else through a user namespace
                sock = network.socket(socket.AF_INET, socket.SOCK_STREAM)
                sock.bind(("127.0.0.1", AGENT_PORT))
            except OSError as error:
                raise BackendUnavailable(f"cannot make the network namespace agent boxes reach the "
                                         f"API server in: {error}") from error
        self.server = server = EmbeddedAPIServer(sock=sock, scope=self.namespace).start()
        if self.pods != "off":
            self._start_pods(server)
        self._tmp = tempfile.mkdtemp(prefix="netarena-k8s-")
        # the harness's own listener (tools, tests): unscoped, on the host's loopback, which no box reaches
        self.harness_url = server.listen() if self.sandboxed else server.url
        config = server.kubeconfig(self.namespace)
        config["clusters"][0]["cluster"]["server"] = self.harness_url
        self._env = kubectl_env(save_kubeconfig(f"{self._tmp}/kubeconfig", config), self._tmp)
        self._agent_config = json.dumps(server.kubeconfig(self.namespace)).encode()
        # One controller run for the whole app: O(N), not one reconcile per object.
        manifests, extra = list(self.app.manifests), []
        if self.distractors:  # the operator story: workloads that name what they call, and unrelated ones beside
            from ..matrix import intended_matrix
            from ..story import configured, distractors

            manifests, extra = configured(self.app, intended_matrix(self.app)), distractors(self.namespace)
        server.apply_objects([self._namespaced(m) for m in (*manifests, *self.app.policies, *extra)])
        if self.live is not None:  # the snapshot holds the pods as they run, so a reset restarts nothing
            self.live.wait_ready(60)
        server.snapshot()
        # Build the policy engine's model of the healthy app now, once per worker: episodes then
        # only update it (the faulted policies), so the first one costs no more than the others.
        self.observe()

    def _start_pods(self, server: EmbeddedAPIServer) -> None:
        from ....cluster import LiveUnavailable, live_support, start_live

        if self.pods == "live" and not live_support().ok:
            raise BackendUnavailable(f"pods cannot run here: {live_support().reason}")
        try:
            self.live = start_live(server)
        except (LiveUnavailable, OSError) as error:
            raise BackendUnavailable(f"pods cannot run here: {error}") from error
        self.mode = server.mode

    def _namespaced(self, manifest: Mapping) -> dict:
        obj = copy.deepcopy(dict(manifest))
        obj.setdefault("metadata", {})["namespace"] = self.namespace
        return obj

    def kubectl_env(self) -> dict[str, str]:
        return dict(self._env or {})

    def agent_kubeconfig(self) -> bytes:
        return self._agent_config

    def begin(self, policies: Mapping[str, dict], overrides: Sequence[dict] = ()) -> None:
        """Reset to the healthy snapshot and write the policies that differ from the healthy ones."""
        server = self.prepared()
        server.reset()
        healthy = self.app.healthy_view()
        changed = [self._namespaced(p) for name, p in policies.items()
                   if healthy.get(name) is not p and healthy.get(name) != p]
        with server.batch():  # NetworkPolicy writes cost no controller work anyway
            server.apply_objects(changed + [self._namespaced(o) for o in overrides])
            for name in healthy:
                if name not in policies:
                    server.delete_object("NetworkPolicy", self.namespace, name)

    def prepared(self) -> EmbeddedAPIServer:
        """The API server; InfraError before `prepare` or after `close`."""
        if self.server is None:
            raise InfraError("the embedded backend was not prepared")
        return self.server

    def observe(self) -> ClusterState:
        with self._lock:
            return self._observe()

    def _observe(self) -> ClusterState:
        server = self.prepared()
        try:
            # read-only views, no copies: nothing below mutates them
            with server.reading(self.read_timeout_s) as version:
                if self._last is not None and self._last[0] == version:
                    return self._last[1]
                objects = {kind: list(server.iter_objects(kind)) for kind in KINDS}
                policies = list(server.iter_objects("NetworkPolicy", self.namespace))
        except TimeoutError as error:
            raise ClusterBusy(f"the cluster could not be read after the command: {error} (a request the "
                              "command sent was still being served)") from None
        self._sync(objects["Pod"], objects["Service"], policies, objects["Namespace"])
        protected = {}
        for kind, items in objects.items():
            protected.update(self._cache.of_listing(kind, items))
        state = ClusterState(self._checker.matrix(), protected)
        self._last = (version, state)
        return state

    def _sync(self, pods, services, policies, namespaces) -> None:
        ns = self.namespace

        def local(items):
            return [o for o in items if o["metadata"].get("namespace") == ns]

        self._checker.sync(local(pods), local(services), policies, namespaces)

    def _matrix_objects(self) -> tuple[list[dict], list[dict], list[dict], list[dict]]:
        """The objects the matrix is computed from (pods, services, policies of the namespace; all namespaces),
        as stored now: references, no copies (stored objects are never mutated). Called under the store lock."""
        store, ns = self.prepared().store, self.namespace
        return (store.list("pods", ns, ordered=False), store.list("services", ns, ordered=False),
                store.list("networkpolicies", ns, ordered=False), store.list("namespaces", ordered=False))

    @contextmanager
    def watching_writes(self, check) -> Iterator[None]:
        """Per-write checks: each request that writes what the matrix reads is judged on the state it left.

        Inside the store lock, as the request's writes are done, the objects the matrix reads are listed
        (references only) and queued; in the request's thread, before its answer, the queue is judged in
        the order the writes were made. A request that lands while an earlier one waits for the checker
        cannot change what the earlier one is judged on; and write requests are served one at a time, each
        after the one before it was judged."""
        from ..writes import write_label

        namespace, live = self.namespace, self.live
        queue: collections.deque = collections.deque()  #: (label, objects) of each write not judged yet

        def label_of(event_type: str, plural: str, obj) -> str | None:
            kind = MATRIX_PLURALS.get(plural)
            if kind is None or obj is None:
                return None
            if live is not None and live.node_writing():
                # the running pods' status reports are not the step's writes: counting them would number
                # the agent's writes by when the pods happen to answer (the check after the step sees them)
                return None
            meta = obj["metadata"]
            if kind != "Namespace" and meta.get("namespace") != namespace:
                return None
            return write_label(event_type, kind, meta.get("namespace", ""), meta["name"])

        def committed(events: list) -> None:  # under the store lock: the state this request's writes left
            try:
                label = next(filter(None, (label_of(*event) for event in events)), None)
                if label is not None:
                    queue.append((label, self._matrix_objects()))
            except Exception as error:  # the store swallows it: the environment raises it
                check.failed(error)

        def judge() -> None:
            with self._lock:  # one at a time, in the order the writes were made
                while queue:
                    label, objects = queue.popleft()
                    try:
                        started = time.perf_counter()
                        self._checker.sync(*objects)
                        check.written(label, self._checker.view(), time.perf_counter() - started,
                                      self._checker.last_changed)
                    except Exception as error:  # the store swallows a listener's errors: the environment raises it
                        check.failed(error)

        def written(event_type: str, plural: str, obj) -> None:  # in the request's thread, before its answer
            if label_of(event_type, plural, obj) is not None:
                judge()

        slot, ended = threading.Lock(), threading.Event()

        @contextmanager
        def one_write_at_a_time() -> Iterator[None]:
            """No write request is served while an earlier one is unjudged: writes cannot outrun the checker,
            so its work stays bounded by the command's time (a flood of large writes queues nothing). One still
            waiting when the step ends is refused: it would land unjudged, between steps."""
            if not slot.acquire(timeout=WRITE_WAIT_S):
                from ....kube import errors

                raise errors.too_many_requests()
            try:
                if ended.is_set():
                    from ....kube import errors

                    raise errors.too_many_requests()
                yield
            finally:
                slot.release()

        server = self.prepared()
        server.add_committer(committed)
        server.add_listener(written)
        server.write_gate = one_write_at_a_time
        try:
            yield
        finally:
            ended.set()
            server.write_gate = None
            server.remove_committer(committed)
            server.remove_listener(written)
            judge()  # a write whose request has not judged it yet (e.g. a command stopped at its limit)

    def explain(self, flow) -> str:
        return self._checker.explain(flow)

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None
        if self.server is not None:
            self.server.stop()
            self.server = None
        super().close()
