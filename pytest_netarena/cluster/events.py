"""Events as the scheduler and the kubelet write them: one per object, reason and message, counted when repeated."""

from __future__ import annotations

import collections
import hashlib
import threading

from ..kube.node import NODE_NAME
from ..kube.tables import timestamp

#: events kept per namespace (the oldest go first; a real cluster keeps them an hour)
MAX_EVENTS = 300


class Recorder:
    """Writes core/v1 Events into the API server's store (as the harness: never refused by quotas)."""

    def __init__(self, server) -> None:
        self.server = server
        self._lock = threading.Lock()
        self._known: dict[tuple, tuple[str, int, str]] = {}  #: (uid, reason, message) -> (name, count, first seen)
        self._order: dict[str, collections.deque] = {}

    def pod(self, pod: dict, reason: str, message: str, warning: bool = False, container: str | None = None,
            component: str = "kubelet") -> None:
        meta = pod["metadata"]
        involved = {"kind": "Pod", "namespace": meta["namespace"], "name": meta["name"], "uid": meta.get("uid", ""),
                    "apiVersion": "v1", "resourceVersion": meta.get("resourceVersion", "")}
        if container is not None:  # a container's name, or its field path (spec.initContainers{name})
            involved["fieldPath"] = container if container.startswith("spec.") else f"spec.containers{{{container}}}"
        self.record(involved, reason, message, warning, component)

    def record(self, involved: dict, reason: str, message: str, warning: bool = False,
               component: str = "kubelet") -> None:
        namespace = involved["namespace"]
        key = (involved.get("uid"), involved.get("fieldPath"), reason, message)
        now = timestamp()
        with self._lock:
            name, count, first = self._known.get(key, ("", 0, now))
            if not name:
                # from what the event says, never from when: an evicted key's object is deleted, so reusing its
                # name later is safe, and two runs name their events alike whatever order the pods answer in
                digest = hashlib.sha256(repr(key).encode()).hexdigest()[:16]
                name = f"{involved['name']}.{digest}"
                order = self._order.setdefault(namespace, collections.deque())
                order.append((name, key))
                while len(order) > MAX_EVENTS:
                    old_name, old_key = order.popleft()
                    self._known.pop(old_key, None)
                    self.server.delete_object("Event", namespace, old_name)
            self._known[key] = (name, count + 1, first)
            source = {"component": component}
            if component == "kubelet":
                source["host"] = NODE_NAME
            self.server.apply_object({
                "apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": namespace},
                "involvedObject": involved, "reason": reason, "message": message, "source": source,
                "firstTimestamp": first, "lastTimestamp": now, "count": count + 1,
                "type": "Warning" if warning else "Normal", "eventTime": None,
                "reportingComponent": component, "reportingInstance": NODE_NAME if component == "kubelet" else ""})

    def forget(self) -> None:
        """After a reset of the store: the events written before are gone with it."""
        with self._lock:
            self._known.clear()
            self._order.clear()
