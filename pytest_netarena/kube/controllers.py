"""The synchronous controllers: Deployment -> ReplicaSet -> Pods, the other workloads, scheduling, endpoints, GC.

Each write queues the keys it touches (workqueue.py); `process` runs the controllers over them in the
order a real cluster's cascade runs, until nothing is left. Deployments and ReplicaSets are here; the
other workload controllers (jobs.py, cronjobs.py, statefulsets.py, daemonsets.py), the scheduler
(node.py), the endpoints (endpoints.py) and the API side's (disruption, autoscaler, accounts) have
modules of their own.
"""

from __future__ import annotations

import copy
import json

from . import (accounts, autoscaler, cronjobs, daemonsets, defaults, deletion, disruption, endpoints, jobs, limits, rollout,
               statefulsets, storage)
from .node import start_pod
from .tables import timestamp
from .workloads import Writer, create_pod, owned_by, owner, pod_from_template, ready, suffix

HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
#: pods the ReplicaSet controller keeps in one namespace at most (as a ResourceQuota of `pods` would):
#: a scale to millions of replicas stops there instead of filling the harness's memory
MAX_PODS_PER_NAMESPACE = 10_000
#: annotations of a Deployment its ReplicaSets do not get (the controller's own, kubectl's last applied state)
NOT_COPIED = frozenset({"kubectl.kubernetes.io/last-applied-configuration", REVISION,
                        "deployment.kubernetes.io/revision-history", "deployment.kubernetes.io/desired-replicas",
                        "deployment.kubernetes.io/max-replicas"})
MAX_ROUNDS = 50  # cascades (deployment -> rs -> pods -> status -> endpoints) settle in a few rounds


def template_hash(template: dict) -> str:
    return suffix(json.dumps(template, sort_keys=True), 10)


def reconcile(cluster, namespace: str = "") -> None:
    """A full resync of one namespace ("" = all): every controlled object is revisited."""
    store = cluster.store
    namespaces = [namespace] if namespace else sorted(n["metadata"]["name"] for n in store.list("namespaces"))
    cluster.queue.mark_all(namespaces)
    process(store, cluster.queue, cluster.live_pods)


def process(store, queue, live: bool = False) -> None:
    """Run the controllers over the queued keys until nothing is left (their own writes queue more)."""
    writer = Writer(store, live)
    for _ in range(MAX_ROUNDS):
        if not queue:
            return
        namespaces = queue.drain("garbage")
        if namespaces:
            _collect_garbage(writer, namespaces)
        accounts.process(writer, queue)  # a new namespace's default ServiceAccount before the pods that use it
        for stage, plural, controller in _STAGES:
            for ns, name in queue.drain(stage):
                limits.spend()
                obj = store.get(plural, ns, name)
                if obj is not None:
                    controller(writer, obj)
        for ns, name in queue.drain("services"):  # a deleted service's endpoints go too
            endpoints.service_endpoints(writer, ns, name)
        for ns in queue.drain("disruption"):
            disruption.reconcile(writer, ns)
        autoscaler.process(writer, queue.drain("autoscalers"))
        if queue.volumes:
            queue.volumes = False
            storage.process(writer)
        accounts.process(writer, queue)
        deletion.process(store, queue)
    queue.clear()  # a controller that never settles must not spin forever


#: what the garbage collector looks at: objects that may have owners
DEPENDENTS = ("replicasets", "pods", "endpointslices", "endpoints", "jobs", "persistentvolumeclaims", "configmaps",
              "secrets", "services")


def _collect_garbage(writer: Writer, namespaces: list[str]) -> None:
    """Remove what lost every owner (background propagation): an owner is alive when an object of its kind, name and
    uid is stored (any kind the server serves, custom ones too)."""
    store = writer.store
    alive: dict[tuple, bool] = {}

    def owner_alive(ns: str, ref: dict) -> bool:
        key = (ns, ref.get("apiVersion"), ref.get("kind"), ref.get("name"), ref.get("uid"))
        if key not in alive:
            try:
                res = store.registry.for_kind(ref.get("kind", ""), ref.get("apiVersion", ""))
            except Exception:  # noqa: BLE001  (a kind this server does not serve: its owner cannot be alive here)
                res = None
            found = store.get(res.key, ns if res.namespaced else "", ref.get("name", "")) if res is not None else None
            alive[key] = found is not None and found["metadata"].get("uid") == ref.get("uid")
        return alive[key]

    for ns in namespaces:
        for plural in DEPENDENTS:
            for obj in store.list(plural, ns):
                refs = obj["metadata"].get("ownerReferences") or []
                if refs and not any(owner_alive(ns, ref) for ref in refs):
                    writer.remove(plural, ns, obj["metadata"]["name"])
                    alive.clear()


def _revision(obj: dict) -> int:
    return int((obj["metadata"].get("annotations") or {}).get(REVISION, "0"))


def _hash(obj: dict) -> str | None:
    return (obj["metadata"].get("labels") or {}).get(HASH_LABEL)


def _deployment(writer: Writer, deploy: dict) -> None:
    spec = deploy.get("spec") or {}
    template = copy.deepcopy(spec.get("template") or {})
    digest = template_hash(template)
    owned = [rs for rs in writer.store.list("replicasets", deploy["metadata"]["namespace"]) if owned_by(rs, deploy)]
    current = next((rs for rs in owned if _hash(rs) == digest), None)
    if spec.get("paused") and current is None:
        return
    old_sets = [rs for rs in owned if _hash(rs) != digest]
    desired = spec.get("replicas", 1)
    replicas = _new_set_replicas(spec, current, old_sets) if writer.live else desired
    top = max((_revision(rs) for rs in owned), default=0)
    # a new template, or a rollback to an older one, takes the next revision
    revision = top + 1 if current is None or _revision(current) < top else _revision(current)
    # the Deployment's own annotations go to its current ReplicaSet (kubernetes.io/change-cause for rollout history)
    copied = {k: v for k, v in (deploy["metadata"].get("annotations") or {}).items() if k not in NOT_COPIED}
    annotations = {**copied, "deployment.kubernetes.io/desired-replicas": str(desired),
                   "deployment.kubernetes.io/max-replicas": str(desired + 1), REVISION: str(revision)}
    if current is None:
        rs = _new_replicaset(writer, deploy, template, digest, replicas, annotations)
    else:
        rs = _update_replicaset(writer, current, replicas, annotations)
    _scale_down_old(writer, spec, desired, replicas, rs, old_sets)
    _prune_history(writer, old_sets, spec.get("revisionHistoryLimit", 10))
    _record_revision(writer, deploy, revision)


def _new_set_replicas(spec: dict, current: dict | None, old_sets: list[dict]) -> int:
    """With a runtime, the new ReplicaSet grows only as far as the rollout's surge allows."""
    old_total = sum((rs.get("spec") or {}).get("replicas", 0) for rs in old_sets)
    current_count = (current.get("spec") or {}).get("replicas", 0) if current is not None else 0
    return rollout.new_replicas(spec, spec.get("replicas", 1), current_count, old_total)


def _record_revision(writer: Writer, deploy: dict, revision: int) -> None:
    if (deploy["metadata"].get("annotations") or {}).get(REVISION) != str(revision):
        updated = copy.deepcopy(deploy)
        updated["metadata"].setdefault("annotations", {})[REVISION] = str(revision)
        writer.put("deployments", updated, deploy)


def _update_replicaset(writer: Writer, current: dict, replicas: int, annotations: dict) -> dict:
    rs = copy.deepcopy(current)
    rs["metadata"].setdefault("annotations", {}).update(annotations)
    if rs["spec"].get("replicas") != replicas:
        _rescale(rs, replicas)
    writer.put("replicasets", rs, current)
    return rs


def _rescale(rs: dict, replicas: int) -> None:
    rs["spec"]["replicas"] = replicas
    rs["metadata"]["generation"] = rs["metadata"].get("generation", 1) + 1


def _new_replicaset(writer: Writer, deploy: dict, template: dict, digest: str, replicas: int,
                    annotations: dict) -> dict:
    """Create the ReplicaSet of a template none of the Deployment's ReplicaSets has yet."""
    spec, meta = deploy.get("spec") or {}, deploy["metadata"]
    labels = dict((template.get("metadata") or {}).get("labels") or {}, **{HASH_LABEL: digest})
    template.setdefault("metadata", {})["labels"] = labels
    selector = copy.deepcopy(spec.get("selector") or {})
    selector.setdefault("matchLabels", {})[HASH_LABEL] = digest
    rs_spec = {"replicas": replicas, "selector": selector, "template": template}
    if spec.get("minReadySeconds"):
        rs_spec["minReadySeconds"] = spec["minReadySeconds"]
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
          "metadata": {"name": f"{meta['name']}-{digest}", "namespace": meta["namespace"], "labels": labels,
                       "annotations": annotations, "ownerReferences": [owner(deploy)], "generation": 1},
          "spec": rs_spec}
    defaults.replicaset(rs)
    writer.create("replicasets", rs)
    return rs


def _scale_down_old(writer: Writer, spec: dict, desired: int, replicas: int, new_rs: dict,
                    old_sets: list[dict]) -> None:
    """Old ReplicaSets go to zero, or (live) to what keeps the rollout available."""
    kept = {}
    if writer.live and old_sets:
        ready = (new_rs.get("status") or {}).get("readyReplicas", 0)
        kept = rollout.old_scale_down(spec, desired, replicas, ready, old_sets)
    for old in old_sets:
        if old["spec"].get("replicas") != kept.get(old["metadata"]["name"], 0):
            scaled = copy.deepcopy(old)
            _rescale(scaled, kept.get(old["metadata"]["name"], 0))
            writer.put("replicasets", scaled, old)


def _prune_history(writer: Writer, old_sets: list[dict], limit: int) -> None:
    """Remove the oldest old ReplicaSets beyond the Deployment's revisionHistoryLimit (scaling them kept their
    names and revisions, so the list read at the start of the reconcile still names them)."""
    history = sorted(old_sets, key=_revision)
    for rs in history[:max(0, len(history) - limit)]:
        writer.remove("replicasets", rs["metadata"]["namespace"], rs["metadata"]["name"])


def _replicaset(writer: Writer, rs: dict) -> None:
    store, ns = writer.store, rs["metadata"]["namespace"]
    pods = [p for p in store.list("pods", ns) if owned_by(p, rs)]
    wanted = (rs.get("spec") or {}).get("replicas", 1)
    counter_key = f"rs-pods/{ns}/{rs['metadata']['uid']}"
    room = MAX_PODS_PER_NAMESPACE - len(store.list("pods", ns)) if len(pods) < wanted else 0
    wanted = min(wanted, len(pods) + max(room, 0))
    while len(pods) < wanted:
        limits.spend()  # a request's controller work counts toward its CPU time
        n = store.counters.get(counter_key, 0)
        store.counters[counter_key] = n + 1
        # from the ReplicaSet's name and its own count of pods made: never from the uid, whose count of objects
        # of that name outlives resets, so an episode's pod names do not depend on the episodes before it
        name = f"{rs['metadata']['name']}-{suffix(rs['metadata']['name'] + '/' + str(n), 5)}"
        if store.get("pods", ns, name) is not None:
            continue
        template = copy.deepcopy((rs.get("spec") or {}).get("template") or {})
        pod = pod_from_template(rs, template, name, f"{rs['metadata']['name']}-")
        made = create_pod(writer, rs, pod, "replicaset-controller", "replicasets")
        if made is None:
            break
        pods.append(made)
    if len(pods) > wanted:
        # Newest first, like the ReplicaSet controller's preference for young pods.
        pods.sort(key=lambda p: (p["metadata"].get("creationTimestamp", ""), p["metadata"]["name"]), reverse=True)
        for pod in pods[:len(pods) - wanted]:
            writer.remove("pods", ns, pod["metadata"]["name"])


def _set(status: dict, key: str, value: int) -> None:
    if value:
        status[key] = value
    else:
        status.pop(key, None)


def _replicaset_status(writer: Writer, rs: dict) -> None:
    pods = [p for p in writer.store.list("pods", rs["metadata"]["namespace"]) if owned_by(p, rs)]
    ready_count = sum(1 for p in pods if ready(p))
    status: dict = {"replicas": len(pods)}
    _set(status, "fullyLabeledReplicas", len(pods))
    _set(status, "readyReplicas", ready_count)
    _set(status, "availableReplicas", ready_count)
    status["observedGeneration"] = rs["metadata"].get("generation", 1)
    if len(pods) < (rs.get("spec") or {}).get("replicas", 1) and (rs.get("status") or {}).get("conditions"):
        status["conditions"] = rs["status"]["conditions"]  # a refused pod (podsecurity.refused) stays reported
    if status != rs.get("status"):
        updated = copy.deepcopy(rs)
        updated["status"] = status
        writer.put("replicasets", updated, rs)


def _condition(old: list, kind: str, reason: str, message: str) -> dict:
    now = timestamp()
    previous = next((c for c in old if c.get("type") == kind), None)
    if previous and previous.get("status") == "True" and previous.get("reason") == reason \
            and previous.get("message") == message:
        return previous
    transition = previous.get("lastTransitionTime") if previous and previous.get("status") == "True" else now
    return {"type": kind, "status": "True", "lastUpdateTime": now, "lastTransitionTime": transition,
            "reason": reason, "message": message}


def _deployment_status(writer: Writer, deploy: dict) -> None:
    owned = [rs for rs in writer.store.list("replicasets", deploy["metadata"]["namespace"]) if owned_by(rs, deploy)]
    digest = template_hash((deploy.get("spec") or {}).get("template") or {})
    new_rs = next((rs for rs in owned if _hash(rs) == digest), None)
    ready = sum(_count(rs, "readyReplicas") for rs in owned)
    status: dict = {"observedGeneration": deploy["metadata"].get("generation", 1)}
    _set(status, "replicas", sum(_count(rs, "replicas") for rs in owned))
    _set(status, "updatedReplicas", _count(new_rs, "replicas") if new_rs else 0)
    _set(status, "readyReplicas", ready)
    _set(status, "availableReplicas", ready)
    if writer.live:  # every ReplicaSet's wanted pods less the available ones (old and new, mid-rollout)
        wanted = sum((rs.get("spec") or {}).get("replicas", 0) for rs in owned)
        _set(status, "unavailableReplicas", max(0, wanted - ready))
    status["conditions"] = _deployment_conditions(deploy, new_rs, ready, writer.live, owned)
    if status != deploy.get("status"):
        updated = copy.deepcopy(deploy)
        updated["status"] = status
        writer.put("deployments", updated, deploy)


def _count(obj: dict, key: str) -> int:
    return (obj.get("status") or {}).get(key, 0)


def _deployment_conditions(deploy: dict, new_rs: dict | None, ready: int, live: bool, owned: list) -> list[dict]:
    """Available (or, live, not yet), and Progressing once the current template's ReplicaSet exists (live: "is
    progressing" until it has all its pods available and the old ones are gone)."""
    spec = deploy.get("spec") or {}
    old = (deploy.get("status") or {}).get("conditions") or []
    if live and not rollout.available(spec, spec.get("replicas", 1), ready):
        conditions = [rollout.unavailable_condition(old, timestamp())]
    else:
        conditions = [_condition(old, "Available", "MinimumReplicasAvailable", "Deployment has minimum availability.")]
    if new_rs is not None:
        name = new_rs["metadata"]["name"]
        olds = sum((rs.get("spec") or {}).get("replicas", 0) for rs in owned if rs is not new_rs)
        if live and (olds or _count(new_rs, "availableReplicas") < spec.get("replicas", 1)):
            conditions.append(_condition(old, "Progressing", "ReplicaSetUpdated", f'ReplicaSet "{name}" is progressing.'))
        else:
            conditions.append(_condition(old, "Progressing", "NewReplicaSetAvailable",
                                         f'ReplicaSet "{name}" has successfully progressed.'))
        conditions += [c for c in (new_rs.get("status") or {}).get("conditions") or []
                       if c.get("type") == "ReplicaFailure"]  # a refused pod, as the Deployment reports it
    return conditions


# (queue stage, plural, controller) in the order a real cluster's cascade runs.
_STAGES = (("deployments", "deployments", _deployment), ("replicasets", "replicasets", _replicaset),
           ("cronjobs", "cronjobs", cronjobs.reconcile), ("jobs", "jobs", jobs.reconcile),
           ("statefulsets", "statefulsets", statefulsets.reconcile), ("daemonsets", "daemonsets", daemonsets.reconcile),
           ("pods", "pods", start_pod), ("replicaset_status", "replicasets", _replicaset_status),
           ("deployment_status", "deployments", _deployment_status))
