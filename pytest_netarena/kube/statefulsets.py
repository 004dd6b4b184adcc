"""The StatefulSet controller: pods with stable names and claims, started in order, updated from the last one down.

As apps/v1's controller does: pod `<set>-<ordinal>` with hostname = its name and subdomain = the set's
serviceName (its DNS name through the headless Service), labels statefulset.kubernetes.io/pod-name,
apps.kubernetes.io/pod-index and controller-revision-hash; a PersistentVolumeClaim
`<template>-<set>-<ordinal>` per volumeClaimTemplate, made before the pod and kept after it (the pod's
volume of that name claims it). OrderedReady (the default) makes ordinal n only once 0..n-1 are Running
and Ready and removes from the highest ordinal down, one at a time; Parallel makes and removes them all at
once. A RollingUpdate replaces pods of an old revision from the highest ordinal down (above the partition),
one at a time, each once the one replaced before it is ready (OrderedReady: and every other pod too); OnDelete
waits for the user. Status: replicas,
readyReplicas, currentReplicas, updatedReplicas, currentRevision, updateRevision, availableReplicas,
observedGeneration, as `kubectl rollout status statefulset` reads them.
"""

from __future__ import annotations

import copy
import json
import re

from . import limits, recorder
from .workloads import Writer, create_pod, owned_by, owner, pod_from_template, ready, suffix

COMPONENT = "statefulset-controller"
REVISION = "controller-revision-hash"
POD_NAME = "statefulset.kubernetes.io/pod-name"
POD_INDEX = "apps.kubernetes.io/pod-index"
#: replicas one set keeps at most
MAX_REPLICAS = 1000


def revision(sts: dict) -> str:
    template = (sts.get("spec") or {}).get("template") or {}
    return f"{sts['metadata']['name']}-{suffix(json.dumps(template, sort_keys=True), 10)}"


def _ordinal(sts: dict, pod: dict) -> int:
    match = re.fullmatch(re.escape(sts["metadata"]["name"]) + r"-(\d+)", pod["metadata"]["name"])
    return int(match.group(1)) if match else -1


def _claim_name(template: dict, sts: dict, ordinal: int) -> str:
    return f"{(template.get('metadata') or {}).get('name', '')}-{sts['metadata']['name']}-{ordinal}"


def _claims(writer: Writer, sts: dict, ordinal: int) -> None:
    """Make the pod's claims from the set's volumeClaimTemplates (never replaced once made)."""
    spec, meta = sts.get("spec") or {}, sts["metadata"]
    labels = dict(((spec.get("selector") or {}).get("matchLabels")) or {})
    for template in spec.get("volumeClaimTemplates") or []:
        name = _claim_name(template, sts, ordinal)
        if writer.store.get("persistentvolumeclaims", meta["namespace"], name) is not None:
            continue
        body = copy.deepcopy(template)
        claim_meta = body.get("metadata") or {}
        claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                 "metadata": {"name": name, "namespace": meta["namespace"],
                              "labels": {**(claim_meta.get("labels") or {}), **labels}},
                 "spec": body.get("spec") or {}, "status": {"phase": "Pending"}}
        if claim_meta.get("annotations"):
            claim["metadata"]["annotations"] = claim_meta["annotations"]
        policy = (spec.get("persistentVolumeClaimRetentionPolicy") or {}).get("whenDeleted")
        if policy == "Delete":
            claim["metadata"]["ownerReferences"] = [owner(sts)]
        _claim_defaults(writer.store, claim)
        writer.create("persistentvolumeclaims", claim)
        recorder.record(writer, sts, "SuccessfulCreate", f"create Claim {name} Pod {meta['name']}-{ordinal} in "
                                                         f"StatefulSet {meta['name']} success", component=COMPONENT)


def _claim_defaults(store, claim: dict) -> None:
    """The defaults and default class the API server gives a new claim."""
    from . import storage

    storage.claim_defaults(claim)
    storage.admit_claim(store, claim, None)


def _new_pod(sts: dict, ordinal: int, update: str) -> dict:
    spec, meta = sts.get("spec") or {}, sts["metadata"]
    name = f"{meta['name']}-{ordinal}"
    template = copy.deepcopy(spec.get("template") or {})
    pod_spec = template.setdefault("spec", {})
    pod_spec["hostname"] = name
    if spec.get("serviceName"):
        pod_spec["subdomain"] = spec["serviceName"]
    volumes = [v for v in pod_spec.get("volumes") or []
               if v.get("name") not in {(t.get("metadata") or {}).get("name") for t in spec.get("volumeClaimTemplates")
                                        or []}]
    for claim in spec.get("volumeClaimTemplates") or []:
        claim_name = (claim.get("metadata") or {}).get("name", "")
        volumes.append({"name": claim_name, "persistentVolumeClaim": {"claimName": _claim_name(claim, sts, ordinal)}})
    if volumes:
        pod_spec["volumes"] = volumes
    labels = {REVISION: update, POD_NAME: name, POD_INDEX: str(ordinal)}
    return pod_from_template(sts, template, name, "", labels)


def reconcile(writer: Writer, sts: dict) -> None:
    store, meta, spec = writer.store, sts["metadata"], sts.get("spec") or {}
    namespace = meta["namespace"]
    replicas = min(int(spec.get("replicas", 1)), MAX_REPLICAS)
    update = revision(sts)
    pods = {_ordinal(sts, p): p for p in store.list("pods", namespace) if owned_by(p, sts)}
    pods.pop(-1, None)
    ordered = spec.get("podManagementPolicy", "OrderedReady") != "Parallel"
    for ordinal in range(replicas):  # make the missing ones, in order
        limits.spend()
        if ordinal in pods:
            if ordered and not ready(pods[ordinal]):
                break
            continue
        _claims(writer, sts, ordinal)
        made = create_pod(writer, sts, _new_pod(sts, ordinal, update), COMPONENT, "statefulsets", announce=True)
        if made is None:
            break
        pods[ordinal] = made
        if ordered:
            break
    for ordinal in sorted((o for o in pods if o >= replicas), reverse=True):  # then the ones beyond, last first
        if ordered and any(not ready(p) for o, p in pods.items() if o < replicas and o in pods):
            break
        writer.remove("pods", namespace, pods.pop(ordinal)["metadata"]["name"])
        recorder.record(writer, sts, "SuccessfulDelete", f"delete Pod {meta['name']}-{ordinal} in StatefulSet "
                                                         f"{meta['name']} successful", component=COMPONENT)
        if ordered:
            break
    _roll(writer, sts, pods, replicas, update)
    _status(writer, sts, pods, replicas, update)


def _roll(writer: Writer, sts: dict, pods: dict, replicas: int, update: str) -> None:
    """RollingUpdate, from the highest ordinal down to the partition: replace the first pod of an old revision, and
    wait while the last one replaced is not ready. OrderedReady starts only once every pod is ready; Parallel does
    not wait for the pods of the old revision (a set whose pods cannot get ready as they are can be rolled out)."""
    spec = sts.get("spec") or {}
    strategy = spec.get("updateStrategy") or {}
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return
    partition = int((strategy.get("rollingUpdate") or {}).get("partition") or 0)
    current = [o for o in range(replicas) if o in pods]
    ordered = spec.get("podManagementPolicy", "OrderedReady") != "Parallel"
    if len(current) < replicas or (ordered and any(not ready(pods[o]) for o in current)):
        return
    for ordinal in sorted(current, reverse=True):
        if ordinal < partition:
            break
        pod = pods[ordinal]
        if (pod["metadata"].get("labels") or {}).get(REVISION) != update:
            if not pod["metadata"].get("deletionTimestamp"):
                writer.remove("pods", pod["metadata"]["namespace"], pod["metadata"]["name"])
                del pods[ordinal]
            return
        if not ready(pod):  # the pod this update made: the next waits for it
            return


def _status(writer: Writer, sts: dict, pods: dict, replicas: int, update: str) -> None:
    old = sts.get("status") or {}
    live = list(pods.values())
    updated = sum(1 for p in live if (p["metadata"].get("labels") or {}).get(REVISION) == update)
    ready_count = sum(1 for p in live if ready(p))
    current_revision = old.get("currentRevision") or update
    if updated == len(live) and len(live) == replicas and ready_count == replicas:
        current_revision = update
    current = sum(1 for p in live if (p["metadata"].get("labels") or {}).get(REVISION) == current_revision)
    status = {"observedGeneration": sts["metadata"].get("generation", 1), "replicas": len(live),
              "readyReplicas": ready_count, "currentReplicas": current, "updatedReplicas": updated,
              "currentRevision": current_revision, "updateRevision": update, "collisionCount": 0,
              "availableReplicas": ready_count}
    for key in ("readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"):
        if not status[key]:
            del status[key]
    if status != old:
        changed = copy.deepcopy(sts)
        changed["status"] = status
        writer.put("statefulsets", changed, sts)
