"""What the kubelet knows of a running pod and its containers, and the status it reports from that."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from ..kube.tables import timestamp
from .images import Image
from .logs import ContainerLog
from .network import PodNetwork

#: restart back-off of a crashing container: the kubelet's 10 s, doubled each time, at most 300 s
BACKOFF_S = 10.0
MAX_BACKOFF_S = 300.0
IMAGE_DIGEST = "sha256:" + "0" * 64


@dataclass
class ContainerRun:
    """One container of a running pod: its current run, its last ended run, its restarts."""

    spec: dict
    image: Image
    log: ContainerLog = field(default_factory=ContainerLog)
    previous: ContainerLog | None = None
    restarts: int = 0
    state: str = "waiting"  #: waiting, running or terminated
    reason: str = "ContainerCreating"
    message: str = ""
    started_at: str = ""
    finished_at: str = ""
    exit_code: int | None = None
    last: dict | None = None  #: lastState.terminated of the previous run
    ready: bool = False
    started: bool = False  #: its startup probe passed (or it has none) while running
    runner: object = None  #: processes.ContainerProcess or standins.StandIn
    root: str | None = None  #: its root folder (made when a process or an exec session needs one)
    generation: int = 0  #: counts runs: reports about an older run are ignored
    init: bool = False  #: one of the pod's initContainers (run to completion, in order, before the others)
    env: dict = field(default_factory=dict)  #: its environment as resolved at its last start
    groups: list = field(default_factory=list)  #: the cgroups its processes join (the pod's and its own)
    retry_pending: bool = False  #: a start that could not be made (a missing key) will be tried again

    @property
    def sidecar(self) -> bool:
        """An init container with restartPolicy Always: started in order, then kept running beside the others."""
        return self.init and self.spec.get("restartPolicy") == "Always"

    @property
    def field_path(self) -> str:
        return f"spec.{'initContainers' if self.init else 'containers'}{{{self.name}}}"

    @property
    def done(self) -> bool:
        """An init container that lets the next one start: it completed (a sidecar: it started)."""
        if self.sidecar:
            return self.state == "running" and self.started
        return self.state == "terminated" and self.exit_code == 0

    @property
    def name(self) -> str:
        return self.spec.get("name", "")

    def container_id(self, pod_uid: str) -> str:
        return "containerd://" + hashlib.sha256(f"{pod_uid}/{self.name}/{self.generation}".encode()).hexdigest()

    def waiting(self, reason: str, message: str = "") -> None:
        self.state, self.reason, self.message = "waiting", reason, message

    def running(self) -> None:
        self.state, self.reason, self.message = "running", "", ""
        self.started_at, self.exit_code = timestamp(), None

    def terminated(self, code: int, reason: str | None = None) -> None:
        self.state, self.exit_code, self.finished_at = "terminated", code, timestamp()
        self.reason = reason or ("Completed" if code == 0 else "Error")
        self.ready = False
        self.started = False

    def status(self, pod_uid: str) -> dict:
        if self.state == "running":
            state = {"running": {"startedAt": self.started_at}}
        elif self.state == "terminated":
            state = {"terminated": self._termination(pod_uid)}
        else:
            state = {"waiting": {"reason": self.reason, **({"message": self.message} if self.message else {})}}
        status = {"name": self.name, "image": self.spec.get("image", ""),
                  "imageID": f"{self.spec.get('image', '')}@{IMAGE_DIGEST}", "ready": self.ready,
                  "started": self.state == "running" and self.started, "restartCount": self.restarts,
                  "state": state, "lastState": {"terminated": self.last} if self.last else {}}
        if self.generation:
            status["containerID"] = self.container_id(pod_uid)
        return status

    def _termination(self, pod_uid: str) -> dict:
        ended = {"exitCode": self.exit_code, "reason": self.reason, "startedAt": self.started_at or None,
                 "finishedAt": self.finished_at, "containerID": self.container_id(pod_uid)}
        if self.message and self.reason == "StartError":
            ended["message"] = self.message
        return ended

    def ended(self, pod_uid: str) -> None:
        """The run that terminated becomes the last state, its log the previous log."""
        self.last = self._termination(pod_uid)
        self.previous = self.log
        self.log = ContainerLog()

    def backoff(self, initial: float) -> float:
        """Seconds before the next restart: the first comes at once, then initial, doubled, capped."""
        if self.restarts == 0:
            return 0.0
        return min(initial * 2 ** (self.restarts - 1), MAX_BACKOFF_S)


@dataclass
class PodRun:
    """A pod this node runs: its network, its box identity, its containers."""

    pod: dict  #: the pod as it was when started (its spec never changes)
    network: PodNetwork
    box_uid: int
    groups: list[str]
    files: dict[str, bytes]
    containers: dict[str, ContainerRun]
    inits: list[ContainerRun] = field(default_factory=list)
    volumes: object = None  #: volumes.PodVolumes
    volumes_ready: bool = False
    mount_error: str = ""  #: why its volumes are not set up yet (the FailedMount event's message)
    started_at: str = field(default_factory=timestamp)
    stopping: bool = False

    @property
    def uid(self) -> str:
        return self.pod["metadata"]["uid"]

    @property
    def key(self) -> str:
        return f"{self.pod['metadata']['namespace']}/{self.pod['metadata']['name']}"

    @property
    def restart_policy(self) -> str:
        return (self.pod.get("spec") or {}).get("restartPolicy") or "Always"

    def restarts(self, container: ContainerRun) -> bool:
        """Whether an ended container runs again (restartPolicy; an init container that failed runs again unless
        the pod's policy is Never, a sidecar always)."""
        if container.sidecar:
            return True
        policy = self.restart_policy
        if container.init:
            return policy != "Never" and container.exit_code != 0
        return policy == "Always" or (policy == "OnFailure" and container.exit_code != 0)

    @property
    def initialized(self) -> bool:
        return all(c.done or (c.sidecar and c.generation) for c in self.inits)

    def all_containers(self) -> list[ContainerRun]:
        return [*self.inits, *self.containers.values()]

    def find(self, name: str) -> ContainerRun | None:
        return self.containers.get(name) or next((c for c in self.inits if c.name == name), None)

    def phase(self) -> str:
        if any(c.state == "terminated" and not c.done and not self.restarts(c) for c in self.inits if not c.sidecar):
            return "Failed"
        runs = list(self.containers.values())
        if not self.initialized or all(c.state == "waiting" and not c.generation for c in runs):
            return "Pending"
        if all(c.state == "terminated" for c in runs) and not any(self.restarts(c) for c in runs):
            return "Succeeded" if all(c.exit_code == 0 for c in runs) else "Failed"
        return "Running"

    def status(self, old: dict) -> dict:
        """The pod's status from what runs, keeping what the scheduler set and the transition times."""
        phase = self.phase()
        sidecars = [c for c in self.inits if c.sidecar]
        ready = phase == "Running" and all(c.ready for c in [*sidecars, *self.containers.values()])
        done = phase in ("Succeeded", "Failed")
        unready = " ".join(c.name for c in [*sidecars, *self.containers.values()] if not c.ready)
        pending_inits = " ".join(c.name for c in self.inits if not c.done)
        wanted = {"PodReadyToStartContainers": (True, ""),
                  "Initialized": (self.initialized, "ContainersNotInitialized"),
                  "Ready": (ready, "PodCompleted" if done else "ContainersNotReady"),
                  "ContainersReady": (ready, "PodCompleted" if done else "ContainersNotReady"),
                  "PodScheduled": (True, "")}
        previous = {c.get("type"): c for c in old.get("conditions") or []}
        conditions = []
        for kind, (value, reason) in wanted.items():
            text = "True" if value else "False"
            before = previous.get(kind)
            kept = before is not None and before.get("status") == text
            condition = {"type": kind, "status": text, "lastProbeTime": None,
                         "lastTransitionTime": before.get("lastTransitionTime") if kept else timestamp()}
            if not value and reason:
                condition["reason"] = reason
                if reason == "ContainersNotReady":
                    condition["message"] = f"containers with unready status: [{unready}]"
                elif reason == "ContainersNotInitialized":
                    condition["message"] = f"containers with incomplete status: [{pending_inits}]"
            conditions.append(condition)
        status = {key: old[key] for key in ("hostIP", "hostIPs", "podIP", "podIPs", "qosClass") if key in old}
        status.update(phase=phase, conditions=conditions, startTime=old.get("startTime") or self.started_at)
        if self.inits:
            status["initContainerStatuses"] = [c.status(self.uid) for c in self.inits]
        status["containerStatuses"] = [c.status(self.uid) for c in self.containers.values()]
        return status
