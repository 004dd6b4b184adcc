"""kubectl exec and kubectl logs: what the API server checks before it hands a pod's streams to the runtime running it.

The server runs no pod itself. A runtime (`pytest_netarena/cluster/`) attaches to it as
`EmbeddedAPIServer.runtime`, an object with the `PodRuntime` methods; without one, `exec`, `log` and
their kin answer that this server runs no pods. The checks here are the API server's own: the pod
exists, the container is one of its containers (or the only one), the command is not empty.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from . import errors

DEFAULT_CONTAINER = "kubectl.kubernetes.io/default-container"


@dataclass(frozen=True)
class ExecRequest:
    """One `kubectl exec`: the pod (as stored when it was asked), the container and the command."""

    pod: dict
    container: str
    command: tuple[str, ...]
    stdin: bool
    tty: bool
    websocket_key: str  #: "" when the client did not ask for a WebSocket (SPDY)
    protocol: str  #: the channel protocol chosen from the client's offer ("" for none we speak)


@dataclass(frozen=True)
class LogRequest:
    """One `kubectl logs`."""

    pod: dict
    container: str
    previous: bool = False
    follow: bool = False
    tail_lines: int | None = None
    limit_bytes: int | None = None
    timestamps: bool = False
    since_seconds: int | None = None


class PodRuntime(Protocol):
    """What a runtime that runs the pods gives the API server."""

    def exec(self, request: ExecRequest, channel) -> dict:
        """Run request.command in the container, streaming over channel (a websocket.ChannelSocket); return the
        final Status (`{"status": "Success"}` or a Failure naming the exit code). May raise errors.ApiError."""

    def logs(self, request: LogRequest) -> Iterator[bytes]:
        """The container's log as chunks (with follow, until the container ends or the time bound); may raise
        errors.ApiError (a container waiting to start, no previous container)."""


def container_of(pod: dict, wanted: str | None) -> str:
    """The container a request names, or the pod's only (or default) one; 400 as a real server says otherwise."""
    containers = [c.get("name") for c in (pod.get("spec") or {}).get("containers") or []]
    inits = [c.get("name") for c in (pod.get("spec") or {}).get("initContainers") or []]
    name = pod["metadata"]["name"]
    if not wanted:
        default = (pod["metadata"].get("annotations") or {}).get(DEFAULT_CONTAINER)
        if default in containers:
            return default
        if len(containers) == 1:
            return containers[0]
        also = f" or one of the init containers: [{' '.join(inits)}]" if inits else ""
        raise errors.bad_request(f"a container name must be specified for pod {name}, choose one of: "
                                 f"[{' '.join(containers)}]{also}")
    if wanted not in containers and wanted not in inits:
        raise errors.bad_request(f"container {wanted} is not valid for pod {name}")
    return wanted


def _flag(req, name: str) -> bool:
    return (req.q(name) or "").lower() in ("true", "1")


def _number(req, name: str) -> int | None:
    raw = req.q(name)
    if raw in (None, ""):
        return None
    try:
        return int(raw)
    except ValueError:
        raise errors.bad_request(f"{name}: invalid value {raw!r}: must be an integer") from None


def exec_request(req, pod: dict) -> ExecRequest:
    from .websocket import choose_protocol

    container = container_of(pod, req.q("container"))
    command = tuple(req.query.get("command") or ())
    if not command:
        raise errors.bad_request("you must specify at least one command for the container")
    phase = (pod.get("status") or {}).get("phase")
    if phase in ("Succeeded", "Failed"):
        raise errors.bad_request(f"cannot exec into a container in a completed pod; current phase is {phase}")
    key = req.headers.get("sec-websocket-key", "") if "websocket" in req.headers.get("upgrade", "").lower() else ""
    return ExecRequest(pod, container, command, _flag(req, "stdin"), _flag(req, "tty"), key,
                       choose_protocol(req.headers.get("sec-websocket-protocol", "")) or "")


def log_request(req, pod: dict) -> LogRequest:
    container = container_of(pod, req.q("container"))
    tail = _number(req, "tailLines")
    limit = _number(req, "limitBytes")
    since = _number(req, "sinceSeconds")
    for name, value in (("tailLines", tail), ("limitBytes", limit), ("sinceSeconds", since)):
        if value is not None and value < (0 if name == "tailLines" else 1):
            raise errors.invalid("PodLogOptions", "", "", [(name, "FieldValueInvalid",
                                                              f"Invalid value: {value}: must be greater than "
                                                              f"{'or equal to ' if name == 'tailLines' else ''}0")])
    return LogRequest(pod, container, _flag(req, "previous"), _flag(req, "follow"), tail, limit,
                      _flag(req, "timestamps"), since)
