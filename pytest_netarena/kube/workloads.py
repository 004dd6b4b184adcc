"""What the workload controllers share: their writer, owner references, pod names, and making pods as the API does.

A controller makes a pod as a real one does, through the API server's admission: the ServiceAccount's
(podaccounts.py: a missing account refused, the token volume added) and the namespace's Pod Security
level (podsecurity.py). A refused pod is the controller's FailedCreate event ("Error creating: pods
"web-" is forbidden: ..."), and the controller tries again later (timers.py), as its rate-limited queue does.
"""

from __future__ import annotations

import copy
import hashlib

from . import defaults, errors, podaccounts, recorder
from .tables import timestamp
from .uids import object_uid

ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
#: seconds before a controller whose pod was refused tries again
RETRY_S = 2.0


def suffix(text: str, length: int) -> str:
    digest = hashlib.sha256(text.encode()).digest()
    return "".join(ALPHABET[b % len(ALPHABET)] for b in digest[:length])


def owner(obj: dict, block: bool = True) -> dict:
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": obj["metadata"]["name"],
            "uid": obj["metadata"]["uid"], "controller": True, "blockOwnerDeletion": block}


def owned_by(obj: dict, parent: dict) -> bool:
    return any(ref.get("uid") == parent["metadata"]["uid"] for ref in obj["metadata"].get("ownerReferences") or [])


def ready(pod: dict) -> bool:
    status = pod.get("status") or {}
    if pod["metadata"].get("deletionTimestamp") or status.get("phase") != "Running":
        return False
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])


class Writer:
    """The controllers' writes into the store (as the harness: no quota, no admission beyond their own)."""

    def __init__(self, store, live: bool = False):
        self.store = store
        self.live = live  #: a runtime runs the pods (rollout.py): pods wait for it, rollouts keep availability

    def put(self, plural: str, obj: dict, old: dict | None) -> dict:
        if old is not None:
            obj["metadata"]["resourceVersion"] = old["metadata"].get("resourceVersion")
            if obj == old:
                return old
        return self.store.put(plural, obj, "MODIFIED" if old is not None else "ADDED")

    def create(self, plural: str, obj: dict) -> dict:
        from .kinds import created

        meta = obj["metadata"]
        meta["uid"] = object_uid(self.store, plural, meta.get("namespace", ""), meta["name"])
        meta["creationTimestamp"] = timestamp()
        created(obj.get("kind", ""), obj)  # what the server adds once the object has its uid (a Job's selector)
        return self.put(plural, obj, None)

    def remove(self, plural: str, namespace: str, name: str) -> None:
        self.store.remove(plural, namespace, name)


def pod_from_template(parent: dict, template: dict, name: str, generate_name: str, labels: dict | None = None) -> dict:
    """A new pod of parent's template (deep copies are the caller's), owned by parent."""
    meta = template.get("metadata") or {}
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "generateName": generate_name, "namespace": parent["metadata"]["namespace"],
                        "labels": {**(meta.get("labels") or {}), **(labels or {})}, "ownerReferences": [owner(parent)]},
           "spec": template.get("spec") or {}}
    if not generate_name:
        del pod["metadata"]["generateName"]
    if meta.get("annotations"):
        pod["metadata"]["annotations"] = meta["annotations"]
    return pod


def create_pod(writer: Writer, parent: dict, pod: dict, component: str, stage: str = "",
               announce: bool = False) -> dict | None:
    """Admit and create a pod for parent; None (a FailedCreate event, a retry of stage later) when it is refused.
    announce: record SuccessfulCreate too (the Job and StatefulSet controllers' events describe shows)."""
    from . import podsecurity

    defaults.pod(pod)
    try:
        podaccounts.admit(writer.store, pod)
        # admission sees the pod before its name is generated: refusals name it by its generateName
        named = {**pod, "metadata": {**pod["metadata"], "name": pod["metadata"].get("generateName")
                                     or pod["metadata"]["name"]}}
        refusal = podsecurity.pod_refusal(writer.store, named)
        if refusal is not None:
            raise refusal
    except errors.ApiError as error:
        _refused(writer, parent, error.message, component, stage)
        return None
    created = writer.create("pods", pod)
    if announce:
        recorder.record(writer, parent, "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}",
                        component=component)
    return created


def _refused(writer: Writer, parent: dict, message: str, component: str, stage: str) -> None:
    """A refused pod: the parent's FailedCreate event (a ReplicaSet's ReplicaFailure condition too), a retry later."""
    recorder.record(writer, parent, "FailedCreate", f"Error creating: {message}", warning=True, component=component)
    if parent.get("kind") == "ReplicaSet":
        old = (parent.get("status") or {}).get("conditions") or []
        kept = next((c for c in old if c.get("type") == "ReplicaFailure"), None)  # the first refusal stays reported
        condition = kept or {"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate", "message": message,
                             "lastTransitionTime": timestamp()}
        updated = copy.deepcopy(parent)
        updated.setdefault("status", {})["conditions"] = [condition]
        writer.put("replicasets", updated, parent)
    timers = getattr(writer.store, "timers", None)
    if timers is not None and stage:
        timers.after(RETRY_S, stage, (parent["metadata"]["namespace"], parent["metadata"]["name"]))
