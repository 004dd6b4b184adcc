"""Events the API side's controllers record (FailedGetScale, SuccessfulRescale, FailedCreate), counted when repeated."""

from __future__ import annotations

import copy
import hashlib

from .tables import timestamp


def record(writer, involved: dict, reason: str, message: str, warning: bool = False, component: str = "") -> None:
    """One Event about involved (a stored object), written through the controllers' writer; the same reason and
    message again bumps its count and lastTimestamp, as a real event recorder does."""
    meta = involved["metadata"]
    namespace = meta.get("namespace") or "default"
    digest = hashlib.sha256(f"{meta.get('uid')}/{reason}/{message}".encode()).hexdigest()[:16]
    name = f"{meta['name']}.{digest}"
    now = timestamp()
    old = writer.store.get("events", namespace, name)
    if old is not None:
        event = copy.deepcopy(old)
        event["count"] = int(old.get("count", 1)) + 1
        event["lastTimestamp"] = now
        writer.put("events", event, old)
        return
    ref = {"kind": involved.get("kind", ""), "namespace": meta.get("namespace", ""), "name": meta["name"],
           "uid": meta.get("uid", ""), "apiVersion": involved.get("apiVersion", ""),
           "resourceVersion": meta.get("resourceVersion", "")}
    writer.create("events", {
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": namespace},
        "involvedObject": ref, "reason": reason, "message": message, "source": {"component": component},
        "firstTimestamp": now, "lastTimestamp": now, "count": 1, "type": "Warning" if warning else "Normal",
        "eventTime": None, "reportingComponent": component, "reportingInstance": ""})
