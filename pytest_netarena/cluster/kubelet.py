"""The kubelet: runs the store's pods, restarts their containers, runs their probes, reports their status and events.

One thread does every change of state (pods started and stopped, containers ended and restarted,
probe verdicts, status writes), in the order the changes were posted; the cluster's loop runs the
stand-ins, the probe timers and the network probes, and posts what they find. So the status a pod
reports always follows from what its processes and probes really did.
"""

from __future__ import annotations

import queue
import threading
import traceback
from collections.abc import Callable

from ..kube import errors
from ..kube.node import NODE_NAME
from ..kube.registry import BY_PLURAL
from . import boxes, envvars, images, ingress
from .cgroups import Groups, pod_bounds
from .events import Recorder
from .files import ContainerFiles
from .logs import CLUSTER_READ_RATE, READ_RATE, Throttle
from .loop import Loop
from .network import ClusterNetwork
from .pods import BACKOFF_S, ContainerRun, PodRun
from .probing import PROBE_KINDS, Probing
from .processes import ContainerProcess, ExecSession
from .standins import Identity, PodContext, StandIn
from .support import Scratch
from .volumes import PodVolumes, VolumeError

#: how soon after its start a container process is seen running (the kubelet's relist, PLEG, is 1 s)
RELIST_S = 0.5
#: how soon a start that lacked something (a ConfigMap key, a volume's source) is tried again
RETRY_S = 1.0
#: how often every pod's content volumes are brought up to date whatever was written (projected tokens renew)
REFRESH_S = 60.0


class Kubelet(Probing):
    """Keeps the pods of the API server's store running on this node."""

    def __init__(self, server, network: ClusterNetwork, loop: Loop, groups: Groups, scratch: Scratch,
                 identity: Identity, resolver, nameserver: str, backoff_s: float = BACKOFF_S) -> None:
        self.server, self.network, self.loop, self.groups = server, network, loop, groups
        self.scratch_space = scratch  #: each pod's files (its containers' roots and its own volumes): a tmpfs each
        self.identity, self.resolver, self.nameserver = identity, resolver, nameserver
        self.storage = scratch.path / "nodes"  #: the nodes' own folders: hostPath volumes, claims' volumes
        self.log_throttle = Throttle(CLUSTER_READ_RATE)  #: what all containers' output is read at, together
        self.backoff_s = backoff_s
        self.events = Recorder(server)
        self.runs: dict[str, PodRun] = {}
        self.errors: list[str] = []  #: what went wrong in the kubelet's thread (for tests and reports)
        self._queue: queue.Queue = queue.Queue()
        self._sync_pending = threading.Event()
        self._report_all = False
        self._roots = threading.Lock()
        self._closing = False  #: stop_all() began: queued work is skipped
        self._idle = threading.Condition()
        self._busy = 0
        self._thread = threading.Thread(target=self._work, name="netarena-kubelet", daemon=True)
        self._thread.start()
        self._later(REFRESH_S, self._periodic_refresh)

    def in_own_thread(self) -> bool:
        """True while the kubelet itself writes (pod status as the pods run), not a client's request."""
        return threading.current_thread() is self._thread

    # -- the work queue ------------------------------------------------------------------------
    def post(self, work: Callable[[], None]) -> None:
        with self._idle:
            self._busy += 1
        self._queue.put(work)

    def request_sync(self, reset: bool = False) -> None:
        """Compare the store's pods with the running ones soon (one pending sync covers many writes); after a
        reset of the store, report every running pod's status again (the store's may be an older one)."""
        if reset:
            self._report_all = True
        if not self._sync_pending.is_set():
            self._sync_pending.set()
            self.post(self._sync)

    def wait_idle(self, timeout: float) -> bool:
        """Wait until nothing is queued (True) or timeout passes (False)."""
        with self._idle:
            return self._idle.wait_for(lambda: self._busy == 0, timeout)

    def _work(self) -> None:
        while True:
            work = self._queue.get()
            if work is None:
                return
            try:
                if not self._closing:
                    work()
            except Exception:  # one pod's trouble must not stop the node
                self.errors.append(traceback.format_exc())
            finally:
                with self._idle:
                    self._busy -= 1
                    self._idle.notify_all()

    # -- pods come and go ------------------------------------------------------------------------
    def _sync(self) -> None:
        self._sync_pending.clear()
        report_all, self._report_all = self._report_all, False
        wanted = {}
        for pod in self.server.store.list("pods"):
            status, spec = pod.get("status") or {}, pod.get("spec") or {}
            if spec.get("nodeName") in self.nodes() and status.get("podIP") \
                    and not pod["metadata"].get("deletionTimestamp"):
                wanted[pod["metadata"]["uid"]] = pod
        for uid in [uid for uid in self.runs if uid not in wanted]:
            self._stop_pod(self.runs.pop(uid))
        for uid, pod in wanted.items():
            if uid not in self.runs:
                self._start_pod(pod)
            elif report_all:
                self._write_status(self.runs[uid])

    def nodes(self) -> set[str]:
        """The nodes this kubelet runs pods for: every Node of the cluster (one process plays them all)."""
        return {n["metadata"]["name"] for n in self.server.store.list("nodes")} or {NODE_NAME}

    def _start_pod(self, pod: dict) -> None:
        meta = pod["metadata"]
        address = pod["status"]["podIP"]
        try:
            network = self.network.add_pod(meta["uid"], address)
        except ValueError as error:  # a status rewritten before the pod started: no sandbox for it
            self.events.pod(pod, "FailedCreatePodSandBox", f"Failed to create pod sandbox: {error}", warning=True)
            return
        try:
            disk = self.scratch_space.mount_pod(meta["uid"], _pod_disk(pod))
        except OSError as error:
            self.network.remove_pod(network)
            self.events.pod(pod, "FailedCreatePodSandBox", f"Failed to create pod sandbox: {error}", warning=True)
            return
        box_uid = boxes.pod_uid()
        groups = self.groups.pod(f"pod-{meta['uid']}", **pod_bounds(pod))
        files = {"/etc/hosts": boxes.hosts_file(_hostname(pod), address, _fqdn(pod)),
                 "/etc/resolv.conf": boxes.resolv_conf(meta["namespace"], self.nameserver)}
        spec = pod.get("spec") or {}
        containers = {c.get("name", ""): ContainerRun(c, images.resolve(c)) for c in spec.get("containers") or ()}
        inits = [ContainerRun(c, images.resolve(c), init=True) for c in spec.get("initContainers") or ()]
        if inits:
            for container in containers.values():
                container.reason = "PodInitializing"
        run = PodRun(pod, network, box_uid, groups, files, containers, inits)
        run.volumes = PodVolumes(disk / "volumes", pod, box_uid, self.server.store,
                                 self.storage, self._token, self._allocatable(pod))
        self.runs[meta["uid"]] = run
        self._advance(run)
        self._write_status(run)

    def _advance(self, run: PodRun) -> None:
        """Start what comes next: the volumes, then each init container in turn, then the others."""
        if run.stopping:
            return
        if not run.volumes_ready:
            try:
                run.volumes.setup()
            except VolumeError as error:
                if str(error) != run.mount_error:
                    self.events.pod(run.pod, "FailedMount", str(error), warning=True)
                run.mount_error = str(error)
                self._later(RETRY_S, lambda: self._advance(run))
                return
            run.volumes_ready, run.mount_error = True, ""
        for init in run.inits:
            if init.done:
                continue
            if not init.generation and not init.retry_pending:
                self._start_container(run, init)
                self._write_status(run)
            if not init.done:
                return
        for container in run.containers.values():
            if not container.generation and not container.retry_pending:
                container.reason = "ContainerCreating" if container.reason == "PodInitializing" else container.reason
                self._start_container(run, container)
        self._write_status(run)

    def config_changed(self) -> None:
        """A ConfigMap, Secret or claim was written: content volumes follow it, and waiting starts are retried."""
        self.post(self._refresh_all)

    def _periodic_refresh(self) -> None:
        if not self._closing:
            self._refresh_all()
            self._later(REFRESH_S, self._periodic_refresh)

    def _refresh_all(self) -> None:
        for run in list(self.runs.values()):
            if run.stopping:
                continue
            if run.volumes_ready:
                run.volumes.refresh()
            else:
                self._advance(run)

    def _stop_pod(self, run: PodRun) -> None:
        run.stopping = True
        for container in run.all_containers():
            self._stop_runner(container)
        self.groups.remove_pod(run.groups)
        self.network.remove_pod(run.network)
        self.scratch_space.unmount_pod(run.uid)

    def stop_all(self) -> None:
        """Stop every pod (the cluster ends): kill the boxes, close the stand-ins; the namespaces go with them.

        The work thread is told to stop first and skips what is still queued, so no pod starts while they go."""
        self._closing = True
        self._queue.put(None)
        self._thread.join(timeout=10)
        for run in list(self.runs.values()):  # a copy: a work item that outlived the join may still add one
            run.stopping = True
            for container in run.all_containers():
                self._stop_runner(container)
            run.network.close()
        self.runs.clear()

    @staticmethod
    def _stop_runner(container: ContainerRun) -> None:
        runner, container.runner = container.runner, None
        if runner is not None:
            runner.stop()

    def _later(self, delay: float, work) -> None:
        """work() on the kubelet's thread after delay seconds."""
        self.loop.loop.call_soon_threadsafe(self.loop.loop.call_later, delay, lambda: self.post(work))

    # -- containers ------------------------------------------------------------------------------
    def _configure(self, run: PodRun, container: ContainerRun) -> bool:
        """Resolve the container's environment; False (waiting as CreateContainerConfigError, retried) when a
        reference is missing."""
        pod = run.pod
        links = envvars.service_links(self.server.store, pod["metadata"]["namespace"],
                                      (pod.get("spec") or {}).get("enableServiceLinks", True) is not False)
        try:
            env, skipped = envvars.environment(self.server.store, pod, container.spec, links, self._allocatable(pod))
        except envvars.ConfigError as error:
            if container.reason != "CreateContainerConfigError" or container.message != str(error):
                self.events.pod(pod, "Failed", f"Error: {error}", warning=True, container=container.field_path)
            container.waiting("CreateContainerConfigError", str(error))
            container.retry_pending = True
            generation = container.generation
            self._later(RETRY_S, lambda: self._retry(run, container, generation))
            return False
        if skipped:
            self.events.pod(pod, "InvalidEnvironmentVariableNames", "Keys [" + ", ".join(skipped) + "] from the "
                            "EnvFrom configMap were skipped since they are considered invalid environment variable "
                            "names.", warning=True, container=container.field_path)
        container.env = {"HOSTNAME": pod["metadata"]["name"], "HOME": "/root",
                         "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", **env}
        return True

    def _retry(self, run: PodRun, container: ContainerRun, generation: int) -> None:
        if run.stopping or generation != container.generation or not container.retry_pending:
            return
        container.retry_pending = False
        if container.init or run.initialized:
            self._start_container(run, container, again=True)
            self._write_status(run)
            if container.init and container.done:
                self._advance(run)

    def _start_container(self, run: PodRun, container: ContainerRun, again: bool = False) -> None:
        pod, name = run.pod, container.name
        if not container.restarts and not again:
            self.events.pod(pod, "Pulled", f'Container image "{container.spec.get("image", "")}" already present '
                                           "on machine", container=container.field_path)
        if not self._configure(run, container):
            return
        container.generation += 1
        generation = container.generation
        self.events.pod(pod, "Created", f"Created container: {name}", container=container.field_path)
        try:
            container.runner = self._runner(run, container, generation)
            container.runner.start()
        except OSError as error:
            container.runner = None
            container.log.line(f"{error}")
            container.log.close()
            container.running()
            container.terminated(128, "StartError")
            container.message = str(error)
            self.events.pod(pod, "Failed", f"Error: failed to start container {name!r}: {error}", warning=True,
                            container=container.field_path)
            self.post(lambda: self._ended(run, container, generation, 128, started=False))
            return
        container.running()
        self.events.pod(pod, "Started", f"Started container {name}", container=container.field_path)
        if container.image.runs_process:  # seen running at the next relist: a process that dies at once never is
            self._later(RELIST_S, lambda: self._observed(run, container, generation))
        else:
            self._observed(run, container, generation, write=False)

    def _observed(self, run: PodRun, container: ContainerRun, generation: int, write: bool = True) -> None:
        """The container is seen running: its probes start, and without them it is started and ready."""
        if run.stopping or generation != container.generation or container.state != "running":
            return
        container.started = not container.spec.get("startupProbe")
        container.ready = container.started and not container.spec.get("readinessProbe")
        if container.init and not container.sidecar:
            container.ready = False
        for kind, field in PROBE_KINDS:
            if container.spec.get(field) and (not container.init or container.sidecar):
                self.loop.submit(self._probe_loop(run, container, generation, kind, container.spec[field]))
        if container.sidecar and container.started:
            self._advance(run)
        if write:
            self._write_status(run)

    def _runner(self, run: PodRun, container: ContainerRun, generation: int):
        image = container.image
        if image.runs_process:
            spec = self._box(run, container)
            argv = envvars.command(image.argv, container.env)
            return ContainerProcess(spec, argv, self.container_groups(run, container), container.log,
                                    lambda code: self.post(lambda: self._ended(run, container, generation, code)),
                                    (Throttle(READ_RATE), self.log_throttle))
        meta = run.pod["metadata"]
        context = PodContext(run.network.namespace, run.key, meta["uid"], self.nameserver,
                             (f"{meta['namespace']}.svc.cluster.local", "svc.cluster.local", "cluster.local"))
        files = ContainerFiles(self._root(run, container), run.volumes.mounts(container.spec))
        return StandIn(self.loop, context, container.spec, image, container.log, self.identity,
                       images.dependencies(container.spec, image), self.resolver if image.kind == "coredns" else None,
                       files, self._routes(container.spec) if image.kind == "ingress" else None)

    def container_groups(self, run: PodRun, container: ContainerRun) -> list[str]:
        """The cgroups the container's processes join: the pod's, with the container's own (its usage, metrics.py)."""
        with self._roots:
            if not container.groups and run.groups:
                container.groups = self.groups.container(run.groups, container.name)
        return container.groups or run.groups

    def _root(self, run: PodRun, container: ContainerRun) -> str:
        with self._roots:  # an exec session may make a stand-in's root while the kubelet starts it
            if container.root is None:
                container.root = boxes.make_root(self.scratch_space.pod_disk(run.uid) / "roots" / container.name)
        return container.root

    def _box(self, run: PodRun, container: ContainerRun, limits=boxes.CONTAINER_LIMITS):
        files = {**run.files, **boxes.cgroup_files(container.spec)}
        return boxes.spec(network=run.network.namespace, root=self._root(run, container), uid=run.box_uid,
                          hostname=_hostname(run.pod), files=files, env=container.env, limits=limits,
                          mounts=run.volumes.mounts(container.spec), image=container.image)

    def _ended(self, run: PodRun, container: ContainerRun, generation: int, code: int, started: bool = True) -> None:
        if run.stopping or generation != container.generation:
            return
        if started and container.state != "running":
            return  # the kubelet killed it (a failed probe) and handled its end already
        if started:
            container.runner = None
            container.terminated(code, "Error" if code and container.reason != "OOMKilled" else None)
        container.ended(run.uid)
        if container.init and container.done:
            self._write_status(run)
            self._advance(run)
            return
        if run.restarts(container):
            delay = container.backoff(self.backoff_s)
            if delay:
                pod_name = f"{run.pod['metadata']['name']}_{run.pod['metadata']['namespace']}({run.uid})"
                container.waiting("CrashLoopBackOff", f"back-off {delay:g}s restarting failed container="
                                                      f"{container.name} pod={pod_name}")
                self.events.pod(run.pod, "BackOff", f"Back-off restarting failed container {container.name} in pod "
                                f"{pod_name}", warning=True, container=container.field_path)
            self._write_status(run)
            self._later(delay, lambda: self._restart(run, container, generation))
            return
        container.state = "terminated"
        self._write_status(run)

    def _restart(self, run: PodRun, container: ContainerRun, generation: int) -> None:
        if run.stopping or generation != container.generation:
            return
        container.restarts += 1
        self._start_container(run, container)
        self._write_status(run)

    # -- status ----------------------------------------------------------------------------------
    def _write_status(self, run: PodRun) -> None:
        meta = run.pod["metadata"]
        stored = self.server.store.get("pods", meta["namespace"], meta["name"])
        if stored is None or stored["metadata"].get("uid") != run.uid:
            return
        old = stored.get("status") or {}
        status = run.status(old)
        if status == old:
            return
        body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": meta["name"], "namespace": meta["namespace"]},
                "status": status}
        try:
            self.server.cluster.update(BY_PLURAL["pods"], meta["namespace"], meta["name"], body, "status",
                                       privileged=True)
        except errors.ApiError as error:
            if error.code != 404:
                raise

    # -- what pods are given -----------------------------------------------------------------------
    def _routes(self, container: dict):
        """An ingress controller's routing table, read from the store per request."""
        name = ingress.controller_class(str(container.get("image") or ""))[0]
        store = self.server.store

        def table():
            with store.lock:
                ingresses, services = list(store.list("ingresses")), list(store.list("services"))
                classes = list(store.list("ingressclasses"))
            return ingress.routes(ingresses, services, classes, name)

        return table

    def _token(self, pod: dict, seconds: int, audiences: list[str] | None) -> str:
        """A token of the pod's ServiceAccount bound to the pod (the kubelet's TokenRequest for a projected volume)."""
        account = (pod.get("spec") or {}).get("serviceAccountName") or "default"
        try:
            return self.server.token(pod["metadata"]["namespace"], account, max(seconds, 600), pod, audiences)
        except KeyError:
            raise VolumeError(f'serviceaccounts "{account}" not found') from None

    def _allocatable(self, pod: dict) -> dict:
        node = self.server.store.get("nodes", "", (pod.get("spec") or {}).get("nodeName") or "")
        return ((node or {}).get("status") or {}).get("allocatable") or {"cpu": "8", "memory": "32Gi"}

    # -- exec and logs -----------------------------------------------------------------------------
    def find(self, pod: dict, container: str) -> tuple[PodRun, ContainerRun]:
        run = self.runs.get(pod["metadata"].get("uid", ""))
        found = run.find(container) if run is not None else None
        if found is None:
            raise errors.ApiError(500, "InternalError", f'container not found ("{container}")')
        return run, found

    def exec_session(self, pod: dict, container_name: str, argv: tuple[str, ...], stdin: bool, wall_s: float,
                     output_bytes: int) -> ExecSession:
        run, container = self.find(pod, container_name)
        if container.state != "running":
            raise errors.ApiError(500, "InternalError", f'container not found ("{container_name}")')
        return ExecSession(self._box(run, container), argv, self.container_groups(run, container), stdin, wall_s,
                           output_bytes)


def _hostname(pod: dict) -> str:
    """The pod's hostname: spec.hostname, else its name (63 characters at most)."""
    return ((pod.get("spec") or {}).get("hostname") or pod["metadata"]["name"])[:63]


def _fqdn(pod: dict) -> str:
    """HOSTNAME.SUBDOMAIN.NAMESPACE.svc.cluster.local for a pod with a subdomain (a StatefulSet's), else ""."""
    spec = pod.get("spec") or {}
    if not spec.get("subdomain"):
        return ""
    return f"{_hostname(pod)}.{spec['subdomain']}.{pod['metadata']['namespace']}.svc.cluster.local"


def _pod_disk(pod: dict) -> int:
    """Bytes of the pod's own tmpfs (its containers' roots and its emptyDir volumes): its containers'
    ephemeral-storage limits when each sets one, else the default; never more than the most a pod may have."""
    from ..kube.quantity import parse
    from .support import MAX_POD_DISK_BYTES, POD_DISK_BYTES

    limits = [parse(((c.get("resources") or {}).get("limits") or {}).get("ephemeral-storage"))
              for c in (pod.get("spec") or {}).get("containers") or ()]
    total = sum(limits) if limits and all(limits) else POD_DISK_BYTES
    return int(min(total, MAX_POD_DISK_BYTES))
