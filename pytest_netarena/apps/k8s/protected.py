"""Fingerprints of the objects an agent must not touch, and the differences between two readings."""

from __future__ import annotations

import hashlib
import json
import operator
from collections.abc import Iterable, Mapping
from typing import Any

WORKLOAD_KINDS = frozenset({"Deployment", "ReplicaSet", "Pod", "StatefulSet", "DaemonSet", "Job", "CronJob"})
#: annotations controllers write themselves (not the agent's doing)
CONTROLLER_ANNOTATIONS = ("deployment.kubernetes.io/",)
#: the status fields the matrix reads (a pod's addresses, matched by ipBlock rules): set once, by the kubelet
STATUS_READ = ("podIP", "podIPs")

Fingerprints = dict[str, tuple[str, str]]  #: "Kind ns/name" -> (uid, digest of what the agent could change)


class FingerprintCache:
    """Digests keyed by (uid, resourceVersion): an unchanged object is never serialised twice."""

    def __init__(self) -> None:
        self._digests: dict[tuple[str, str], str] = {}
        self._listings: dict[str, tuple[list, Fingerprints]] = {}

    def of_listing(self, kind: str, objects: list[Mapping[str, Any]]) -> Fingerprints:
        """fingerprints() of one kind's objects; the answer is shared with the previous call when the
        listing holds the very same dicts (a store that replaces objects on write, never mutating
        them, like the embedded server's: then identity means unchanged). Do not mutate the result."""
        last = self._listings.get(kind)
        if last is not None and len(last[0]) == len(objects) and all(map(operator.is_, last[0], objects)):
            return last[1]
        result = self.fingerprints((kind, obj) for obj in objects)
        self._listings[kind] = (list(objects), result)  # holding the dicts keeps their ids unique
        return result

    def fingerprints(self, objects: Iterable[tuple[str, Mapping[str, Any]]]) -> Fingerprints:
        result: Fingerprints = {}
        for kind, obj in objects:
            meta = obj.get("metadata") or {}
            uid = meta.get("uid") or ""
            version = meta.get("resourceVersion")
            cache_key = (uid, version) if version is not None else None
            digest = self._digests.get(cache_key) if cache_key else None
            if digest is None:
                digest = _digest(obj)
                if cache_key:
                    if len(self._digests) > 200_000:
                        self._digests.clear()
                    self._digests[cache_key] = digest
            namespace = meta.get("namespace") or ""
            result[f"{kind} {namespace + '/' if namespace else ''}{meta.get('name')}"] = (uid, digest)
        return result


def _digest(obj: Mapping[str, Any]) -> str:
    """Everything of obj the agent could change that the matrix or the verdict reads, and nothing a
    controller rewrites on its own: labels, annotations, spec, the owners (which workload a pod is
    a probe of) and the addresses (what ipBlock rules match)."""
    meta = obj.get("metadata") or {}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items()
                   if not k.startswith(CONTROLLER_ANNOTATIONS)}
    spec = obj.get("spec")
    if obj.get("kind") == "Service" or "clusterIP" in (spec or {}):
        spec = {k: v for k, v in spec.items() if k not in ("clusterIP", "clusterIPs")}  # allocated by the server
    status = obj.get("status") or {}
    addresses = [status.get(field) for field in STATUS_READ] if isinstance(status, Mapping) else status
    payload = json.dumps([meta.get("labels") or {}, annotations, spec, meta.get("ownerReferences") or [],
                          addresses], sort_keys=True, default=str)
    return hashlib.blake2b(payload.encode(), digest_size=12).hexdigest()


def changes(before: Fingerprints, after: Fingerprints) -> list[str]:
    """What happened to protected objects between two readings, one line per object."""
    lines = []
    for key, (uid, digest) in before.items():
        now = after.get(key)
        if now is None:
            lines.append(f"{key} was deleted")
        elif now[0] != uid:
            lines.append(f"{key} was deleted and recreated (new UID)")
        elif now[1] != digest:
            lines.append(f"{key} was modified")
    for key in after:
        if key not in before and key.split(" ", 1)[0] in WORKLOAD_KINDS:
            lines.append(f"{key} is a new workload")
    return lines
