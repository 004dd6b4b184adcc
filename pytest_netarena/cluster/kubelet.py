"""The kubelet: runs the store's pods, restarts their containers, runs their probes, reports their status and events.

One thread does every change of state (pods started and stopped, containers ended and restarted,
probe verdicts, status writes), in the order the changes were posted; the cluster's loop runs the
stand-ins, the probe timers and the network probes, and posts what they find. So the status a pod
reports always follows from what its processes and probes really did.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import traceback
from collections.abc import Callable

from ..kube import errors
from ..kube.node import NODE_NAME
from ..kube.registry import BY_PLURAL
from . import boxes, images, probes
from .cgroups import Groups
from .events import Recorder
from .logs import CLUSTER_READ_RATE, READ_RATE, Throttle
from .loop import Loop
from .network import ClusterNetwork
from .pods import BACKOFF_S, ContainerRun, PodRun
from .processes import ContainerProcess, ExecSession
from .standins import Identity, PodContext, StandIn
from .support import Scratch

PROBE_KINDS = (("startup", "startupProbe"), ("liveness", "livenessProbe"), ("readiness", "readinessProbe"))
#: how soon after its start a container process is seen running (the kubelet's relist, PLEG, is 1 s)
RELIST_S = 0.5


class Kubelet:
    """Keeps the pods of the API server's store running on this node."""

    def __init__(self, server, network: ClusterNetwork, loop: Loop, groups: Groups, scratch: Scratch,
                 identity: Identity, resolver, nameserver: str, backoff_s: float = BACKOFF_S) -> None:
        self.server, self.network, self.loop, self.groups = server, network, loop, groups
        self.scratch_space = scratch  #: each pod's files: a tmpfs of its own in it
        self.identity, self.resolver, self.nameserver = identity, resolver, nameserver
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
            if spec.get("nodeName") == NODE_NAME and status.get("podIP") and not pod["metadata"].get("deletionTimestamp"):
                wanted[pod["metadata"]["uid"]] = pod
        for uid in [uid for uid in self.runs if uid not in wanted]:
            self._stop_pod(self.runs.pop(uid))
        for uid, pod in wanted.items():
            if uid not in self.runs:
                self._start_pod(pod)
            elif report_all:
                self._write_status(self.runs[uid])

    def _start_pod(self, pod: dict) -> None:
        meta = pod["metadata"]
        address = pod["status"]["podIP"]
        try:
            network = self.network.add_pod(meta["uid"], address)
        except ValueError as error:  # a status rewritten before the pod started: no sandbox for it
            self.events.pod(pod, "FailedCreatePodSandBox", f"Failed to create pod sandbox: {error}", warning=True)
            return
        try:
            self.scratch_space.mount_pod(meta["uid"], _pod_disk(pod))
        except OSError as error:
            self.network.remove_pod(network)
            self.events.pod(pod, "FailedCreatePodSandBox", f"Failed to create pod sandbox: {error}", warning=True)
            return
        box_uid = boxes.pod_uid()
        limits = _pod_limits(pod)
        groups = self.groups.pod(f"pod-{meta['uid']}", **limits)
        files = {"/etc/hosts": boxes.hosts_file(meta["name"], address),
                 "/etc/resolv.conf": boxes.resolv_conf(meta["namespace"], self.nameserver)}
        containers = {c.get("name", ""): ContainerRun(c, images.resolve(c)) for c in pod["spec"].get("containers") or ()}
        run = PodRun(pod, network, box_uid, groups, files, containers)
        self.runs[meta["uid"]] = run
        self.events.pod(pod, "Scheduled", f"Successfully assigned {run.key} to {NODE_NAME}", component="default-scheduler")
        for container in containers.values():
            self._start_container(run, container)
        self._write_status(run)

    def _stop_pod(self, run: PodRun) -> None:
        run.stopping = True
        for container in run.containers.values():
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
            for container in run.containers.values():
                self._stop_runner(container)
            run.network.close()
        self.runs.clear()

    @staticmethod
    def _stop_runner(container: ContainerRun) -> None:
        runner, container.runner = container.runner, None
        if runner is not None:
            runner.stop()

    # -- containers ------------------------------------------------------------------------------
    def _start_container(self, run: PodRun, container: ContainerRun) -> None:
        container.generation += 1
        generation = container.generation
        pod, name = run.pod, container.name
        if not container.restarts:
            self.events.pod(pod, "Pulled", f'Container image "{container.spec.get("image", "")}" already present '
                                           "on machine", container=name)
        self.events.pod(pod, "Created", f"Created container: {name}", container=name)
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
                            container=name)
            self.post(lambda: self._ended(run, container, generation, 128, started=False))
            return
        container.running()
        self.events.pod(pod, "Started", f"Started container {name}", container=name)
        if container.image.runs_process:  # seen running at the next relist: a process that dies at once never is
            self.loop.loop.call_soon_threadsafe(self.loop.loop.call_later, RELIST_S, lambda: self.post(
                lambda: self._observed(run, container, generation)))
        else:
            self._observed(run, container, generation, write=False)

    def _observed(self, run: PodRun, container: ContainerRun, generation: int, write: bool = True) -> None:
        """The container is seen running: its probes start, and without them it is started and ready."""
        if run.stopping or generation != container.generation or container.state != "running":
            return
        container.started = not container.spec.get("startupProbe")
        container.ready = container.started and not container.spec.get("readinessProbe")
        for kind, field in PROBE_KINDS:
            if container.spec.get(field):
                self.loop.submit(self._probe_loop(run, container, generation, kind, container.spec[field]))
        if write:
            self._write_status(run)

    def _runner(self, run: PodRun, container: ContainerRun, generation: int):
        image = container.image
        if image.runs_process:
            spec = self._box(run, container)
            return ContainerProcess(spec, image.argv, run.groups, container.log,
                                    lambda code: self.post(lambda: self._ended(run, container, generation, code)),
                                    (Throttle(READ_RATE), self.log_throttle))
        meta = run.pod["metadata"]
        context = PodContext(run.network.namespace, run.key, meta["uid"], self.nameserver,
                             (f"{meta['namespace']}.svc.cluster.local", "svc.cluster.local", "cluster.local"))
        return StandIn(self.loop, context, container.spec, image, container.log, self.identity,
                       images.dependencies(container.spec, image), self.resolver if image.kind == "coredns" else None)

    def _box(self, run: PodRun, container: ContainerRun, limits=boxes.CONTAINER_LIMITS):
        with self._roots:  # an exec session may make a stand-in's root while the kubelet starts it
            if container.root is None:
                container.root = boxes.make_root(self.scratch_space.pod_disk(run.uid) / container.name, run.box_uid)
        meta = run.pod["metadata"]
        env = boxes.container_env(container.spec, meta["name"], _service_variables(self.server, meta["namespace"]))
        return boxes.spec(network=run.network.namespace, root=container.root, uid=run.box_uid,
                          hostname=meta["name"], files=run.files, env=env, limits=limits)

    def _ended(self, run: PodRun, container: ContainerRun, generation: int, code: int, started: bool = True) -> None:
        if run.stopping or generation != container.generation:
            return
        if started and container.state != "running":
            return  # the kubelet killed it (a failed probe) and handled its end already
        if started:
            container.runner = None
            container.terminated(code, "Error" if code and container.reason != "OOMKilled" else None)
        container.ended(run.uid)
        if run.restarts(container):
            delay = container.backoff(self.backoff_s)
            if delay:
                container.state, container.reason = "waiting", "CrashLoopBackOff"
                container.message = (f"back-off {delay:g}s restarting failed container={container.name} "
                                     f"pod={run.pod['metadata']['name']}_{run.pod['metadata']['namespace']}({run.uid})")
                self.events.pod(run.pod, "BackOff", f"Back-off restarting failed container {container.name} in pod "
                                f"{run.pod['metadata']['name']}_{run.pod['metadata']['namespace']}({run.uid})",
                                warning=True, container=container.name)
            self._write_status(run)
            self.loop.loop.call_soon_threadsafe(
                self.loop.loop.call_later, delay, lambda: self.post(lambda: self._restart(run, container, generation)))
            return
        container.state = "terminated"
        self._write_status(run)

    def _restart(self, run: PodRun, container: ContainerRun, generation: int) -> None:
        if run.stopping or generation != container.generation:
            return
        container.restarts += 1
        self._start_container(run, container)
        self._write_status(run)

    # -- probes ----------------------------------------------------------------------------------
    async def _probe_loop(self, run: PodRun, container: ContainerRun, generation: int, kind: str, probe: dict) -> None:
        period = float(probe.get("periodSeconds") or 10)
        need_ok = int(probe.get("successThreshold") or 1)
        need_bad = int(probe.get("failureThreshold") or 3)
        await asyncio.sleep(float(probe.get("initialDelaySeconds") or 0))
        good = bad = 0
        while not run.stopping and generation == container.generation and container.state == "running":
            if kind != "startup" and not container.started:
                await asyncio.sleep(min(period, 1.0))
                continue
            if kind == "startup" and container.started:
                return
            ok, why = await self._attempt(run, container, probe)
            good, bad = (good + 1, 0) if ok else (0, bad + 1)
            if not ok:
                self.post(lambda why=why: self._unhealthy(run, container, generation, kind, why))
            if (ok and good >= need_ok) or (not ok and bad >= need_bad):
                self.post(lambda ok=ok: self._verdict(run, container, generation, kind, ok))
                if kind in ("startup", "liveness") and not ok:
                    return  # the container is killed: the next run has a probe loop of its own
            await asyncio.sleep(period)

    async def _attempt(self, run: PodRun, container: ContainerRun, probe: dict) -> tuple[bool, str]:
        if "exec" in probe:
            argv = tuple((probe.get("exec") or {}).get("command") or ())
            code, output = await asyncio.get_running_loop().run_in_executor(
                None, self._exec_probe, run, container, argv, probes.timeout_of(probe))
            return code == 0, output.strip() or (f"command {list(argv)} exited with {code}" if code is not None
                                                  else f"command timed out after {probes.timeout_of(probe):g}s")
        return await probes.network(self.network.node, run.network.address, container.spec, probe, self.nameserver)

    def _exec_probe(self, run: PodRun, container: ContainerRun, argv: tuple[str, ...], timeout: float):
        if not argv:
            return 1, "no command"
        output: list[bytes] = []
        session = ExecSession(self._box(run, container), argv, run.groups, False, timeout, 64 * 1024)
        code = session.run(lambda channel, data: output.append(data), None)
        return code, b"".join(output).decode(errors="replace")[:1024]

    def _unhealthy(self, run: PodRun, container: ContainerRun, generation: int, kind: str, why: str) -> None:
        if run.stopping or generation != container.generation:
            return
        self.events.pod(run.pod, "Unhealthy", f"{kind.capitalize()} probe failed: {why}", warning=True,
                        container=container.name)

    def _verdict(self, run: PodRun, container: ContainerRun, generation: int, kind: str, ok: bool) -> None:
        if run.stopping or generation != container.generation or container.state != "running":
            return
        if kind == "readiness":
            container.ready = ok
        elif kind == "startup" and ok:
            container.started = True
            container.ready = not container.spec.get("readinessProbe")
        elif not ok:  # a failed liveness or startup probe: the container is killed and restarted
            self.events.pod(run.pod, "Killing", f"Container {container.name} failed {kind} probe, will be restarted",
                            container=container.name)
            self._stop_runner(container)
            container.terminated(137, "Error")
            self._ended(run, container, generation, 137, started=False)
            return
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

    # -- exec and logs -----------------------------------------------------------------------------
    def find(self, pod: dict, container: str) -> tuple[PodRun, ContainerRun]:
        run = self.runs.get(pod["metadata"].get("uid", ""))
        if run is None or container not in run.containers:
            raise errors.ApiError(500, "InternalError", f'container not found ("{container}")')
        return run, run.containers[container]

    def exec_session(self, pod: dict, container_name: str, argv: tuple[str, ...], stdin: bool, wall_s: float,
                     output_bytes: int) -> ExecSession:
        run, container = self.find(pod, container_name)
        if container.state != "running":
            raise errors.ApiError(500, "InternalError", f'container not found ("{container_name}")')
        return ExecSession(self._box(run, container), argv, run.groups, stdin, wall_s, output_bytes)


def _pod_limits(pod: dict) -> dict:
    """The pod's cgroup bounds: its containers' limits where they set them, never above the defaults."""
    from .cgroups import POD_CPU, POD_MEMORY

    cpu = memory = 0.0
    for container in (pod.get("spec") or {}).get("containers") or ():
        limits = (container.get("resources") or {}).get("limits") or {}
        cpu += _cpu(limits.get("cpu")) or POD_CPU
        memory += _memory(limits.get("memory")) or POD_MEMORY
    return {"cpu": min(cpu or POD_CPU, POD_CPU), "memory": int(min(memory or POD_MEMORY, POD_MEMORY))}


def _pod_disk(pod: dict) -> int:
    """Bytes of the pod's own tmpfs: its containers' ephemeral-storage limits when each sets one, else the default;
    never more than the most a pod may have."""
    from .support import MAX_POD_DISK_BYTES, POD_DISK_BYTES

    limits = [_memory(((c.get("resources") or {}).get("limits") or {}).get("ephemeral-storage"))
              for c in (pod.get("spec") or {}).get("containers") or ()]
    total = sum(limits) if limits and all(limits) else POD_DISK_BYTES
    return int(min(total, MAX_POD_DISK_BYTES))


def _cpu(value) -> float:
    text = str(value or "")
    try:
        return float(text[:-1]) / 1000 if text.endswith("m") else float(text or 0)
    except ValueError:
        return 0.0


def _memory(value) -> float:
    text = str(value or "")
    units = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "K": 1000, "M": 1000 ** 2, "G": 1000 ** 3}
    for suffix, factor in units.items():
        if text.endswith(suffix):
            try:
                return float(text[:-len(suffix)]) * factor
            except ValueError:
                return 0.0
    try:
        return float(text or 0)
    except ValueError:
        return 0.0


def _service_variables(server, namespace: str) -> dict[str, str]:
    """The service links a kubelet gives containers: NAME_SERVICE_HOST and NAME_SERVICE_PORT per Service."""
    found = {}
    for svc in server.store.list("services", namespace):
        spec = svc.get("spec") or {}
        address, ports = spec.get("clusterIP"), spec.get("ports") or []
        if not address or address == "None" or not ports:
            continue
        prefix = svc["metadata"]["name"].upper().replace("-", "_")
        found[f"{prefix}_SERVICE_HOST"] = address
        found[f"{prefix}_SERVICE_PORT"] = str(ports[0].get("port"))
    found.setdefault("KUBERNETES_SERVICE_HOST", "10.96.0.1")
    found.setdefault("KUBERNETES_SERVICE_PORT", "443")
    return found
