"""The audit log of refused requests (403 by RBAC, 401 for a bad credential), as audit.k8s.io/v1 Events."""

from __future__ import annotations

import collections
import datetime as dt
import json
import threading
import uuid

#: events kept in memory (the oldest go first)
MAX_EVENTS = 10_000


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class RefusalLog:
    """Where a real cluster with an audit policy shows refused requests: its audit log, not Events.

    Each entry is an audit.k8s.io/v1 Event at level Metadata (who, what verb on which object, the answer's
    code, and the authorizer's decision and reason); `path` also appends them as JSON lines to a file."""

    def __init__(self, path: str | None = None) -> None:
        self.events: collections.deque = collections.deque(maxlen=MAX_EVENTS)
        self.path = path
        self._lock = threading.Lock()

    def record(self, method: str, uri: str, code: int, message: str, user=None, attrs=None, reason: str = "",
               source: str = "") -> dict:
        event = {"kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "Metadata",
                 "auditID": str(uuid.uuid4()), "stage": "ResponseComplete", "requestURI": uri,
                 "verb": attrs.verb if attrs is not None else method.lower(),
                 "user": user.info() if user is not None else {},
                 "sourceIPs": [source] if source else [],
                 "responseStatus": {"metadata": {}, "status": "Failure", "message": message,
                                    "reason": "Forbidden" if code == 403 else "Unauthorized", "code": code},
                 "requestReceivedTimestamp": _now(), "stageTimestamp": _now()}
        if attrs is not None and attrs.resource:
            ref = {"resource": attrs.resource, "apiGroup": attrs.group, "apiVersion": "v1"}
            if attrs.namespace:
                ref["namespace"] = attrs.namespace
            if attrs.name:
                ref["name"] = attrs.name
            if attrs.subresource:
                ref["subresource"] = attrs.subresource
            event["objectRef"] = ref
        if code == 403:
            event["annotations"] = {"authorization.k8s.io/decision": "forbid",
                                    "authorization.k8s.io/reason": reason}
        with self._lock:
            self.events.append(event)
            if self.path:
                with open(self.path, "a", encoding="utf-8") as handle:
                    handle.write(json.dumps(event, separators=(",", ":")) + "\n")
        return event

    def denied(self) -> list[dict]:
        """The refused requests so far, oldest first."""
        with self._lock:
            return list(self.events)
