"""Light synchronous controllers: Deployment -> ReplicaSet -> Pods, the node's pods (node.py), endpoints, GC."""

from __future__ import annotations

import copy
import hashlib
import ipaddress
import json

from ..core.selectors import selector_from_dict
from . import accounts, autoscaler, defaults, deletion, disruption, limits, podsecurity, rollout, storage
from .node import NODE_NAME, start_pod
from .tables import timestamp
from .uids import object_uid

ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
MANAGED_EP = "endpoints.kubernetes.io/managed-by"
#: pods the ReplicaSet controller keeps in one namespace at most (as a ResourceQuota of `pods` would):
#: a scale to millions of replicas stops there instead of filling the harness's memory
MAX_PODS_PER_NAMESPACE = 10_000


def _suffix(text: str, length: int) -> str:
    digest = hashlib.sha256(text.encode()).digest()
    return "".join(ALPHABET[b % len(ALPHABET)] for b in digest[:length])


def template_hash(template: dict) -> str:
    return _suffix(json.dumps(template, sort_keys=True), 10)


def _owner(obj: dict, block: bool = True) -> dict:
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": obj["metadata"]["name"],
            "uid": obj["metadata"]["uid"], "controller": True, "blockOwnerDeletion": block}


def _owned_by(obj: dict, owner: dict) -> bool:
    return any(ref.get("uid") == owner["metadata"]["uid"] for ref in obj["metadata"].get("ownerReferences") or [])


class _Writer:
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
        meta = obj["metadata"]
        meta["uid"] = object_uid(self.store, plural, meta.get("namespace", ""), meta["name"])
        meta["creationTimestamp"] = timestamp()
        return self.put(plural, obj, None)

    def remove(self, plural: str, namespace: str, name: str) -> None:
        self.store.remove(plural, namespace, name)


MAX_ROUNDS = 50  # cascades (deployment -> rs -> pods -> status -> endpoints) settle in a few rounds


def reconcile(cluster, namespace: str = "") -> None:
    """A full resync of one namespace ("" = all): every controlled object is revisited."""
    store = cluster.store
    namespaces = [namespace] if namespace else sorted(n["metadata"]["name"] for n in store.list("namespaces"))
    cluster.queue.mark_all(namespaces)
    process(store, cluster.queue, cluster.live_pods)


def process(store, queue, live: bool = False) -> None:
    """Run the controllers over the queued keys until nothing is left (their own writes queue more)."""
    writer = _Writer(store, live)
    for _ in range(MAX_ROUNDS):
        if not queue:
            return
        namespaces = queue.drain("garbage")
        if namespaces:
            _collect_garbage(writer, namespaces)
        for stage, plural, controller in _STAGES:
            for ns, name in queue.drain(stage):
                limits.spend()
                obj = store.get(plural, ns, name)
                if obj is not None:
                    controller(writer, obj)
        for ns, name in queue.drain("services"):  # a deleted service's endpoints go too
            _service_endpoints(writer, ns, name)
        for ns in queue.drain("disruption"):
            disruption.reconcile(writer, ns)
        autoscaler.process(writer, queue.drain("autoscalers"))
        if queue.volumes:
            queue.volumes = False
            storage.process(writer)
        accounts.process(writer, queue)
        deletion.process(store, queue)
    queue.clear()  # a controller that never settles must not spin forever


def _collect_garbage(writer: _Writer, namespaces: list[str]) -> None:
    store = writer.store
    for ns in namespaces:
        uids = None
        for plural in ("replicasets", "pods", "endpointslices", "endpoints"):
            for obj in store.list(plural, ns):
                refs = obj["metadata"].get("ownerReferences") or []
                if not refs:
                    continue
                if uids is None:
                    uids = {o["metadata"]["uid"] for p in ("deployments", "replicasets", "services")
                            for o in store.list(p, ns)}
                if not any(ref.get("uid") in uids for ref in refs):
                    writer.remove(plural, ns, obj["metadata"]["name"])
                    uids = None


def _revision(obj: dict) -> int:
    return int((obj["metadata"].get("annotations") or {}).get(REVISION, "0"))


def _hash(obj: dict) -> str | None:
    return (obj["metadata"].get("labels") or {}).get(HASH_LABEL)


def _deployment(writer: _Writer, deploy: dict) -> None:
    spec = deploy.get("spec") or {}
    template = copy.deepcopy(spec.get("template") or {})
    digest = template_hash(template)
    owned = [rs for rs in writer.store.list("replicasets", deploy["metadata"]["namespace"]) if _owned_by(rs, deploy)]
    current = next((rs for rs in owned if _hash(rs) == digest), None)
    if spec.get("paused") and current is None:
        return
    old_sets = [rs for rs in owned if _hash(rs) != digest]
    desired = spec.get("replicas", 1)
    replicas = _new_set_replicas(spec, current, old_sets) if writer.live else desired
    top = max((_revision(rs) for rs in owned), default=0)
    # a new template, or a rollback to an older one, takes the next revision
    revision = top + 1 if current is None or _revision(current) < top else _revision(current)
    annotations = {"deployment.kubernetes.io/desired-replicas": str(desired),
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


def _record_revision(writer: _Writer, deploy: dict, revision: int) -> None:
    if (deploy["metadata"].get("annotations") or {}).get(REVISION) != str(revision):
        updated = copy.deepcopy(deploy)
        updated["metadata"].setdefault("annotations", {})[REVISION] = str(revision)
        writer.put("deployments", updated, deploy)


def _update_replicaset(writer: _Writer, current: dict, replicas: int, annotations: dict) -> dict:
    rs = copy.deepcopy(current)
    rs["metadata"].setdefault("annotations", {}).update(annotations)
    if rs["spec"].get("replicas") != replicas:
        _rescale(rs, replicas)
    writer.put("replicasets", rs, current)
    return rs


def _rescale(rs: dict, replicas: int) -> None:
    rs["spec"]["replicas"] = replicas
    rs["metadata"]["generation"] = rs["metadata"].get("generation", 1) + 1


def _new_replicaset(writer: _Writer, deploy: dict, template: dict, digest: str, replicas: int,
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
                       "annotations": annotations, "ownerReferences": [_owner(deploy)], "generation": 1},
          "spec": rs_spec}
    defaults.replicaset(rs)
    writer.create("replicasets", rs)
    return rs


def _scale_down_old(writer: _Writer, spec: dict, desired: int, replicas: int, new_rs: dict,
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


def _prune_history(writer: _Writer, old_sets: list[dict], limit: int) -> None:
    """Remove the oldest old ReplicaSets beyond the Deployment's revisionHistoryLimit (scaling them kept their
    names and revisions, so the list read at the start of the reconcile still names them)."""
    history = sorted(old_sets, key=_revision)
    for rs in history[:max(0, len(history) - limit)]:
        writer.remove("replicasets", rs["metadata"]["namespace"], rs["metadata"]["name"])


def _replicaset(writer: _Writer, rs: dict) -> None:
    store, ns = writer.store, rs["metadata"]["namespace"]
    pods = [p for p in store.list("pods", ns) if _owned_by(p, rs)]
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
        name = f"{rs['metadata']['name']}-{_suffix(rs['metadata']['name'] + '/' + str(n), 5)}"
        if store.get("pods", ns, name) is not None:
            continue
        template = copy.deepcopy((rs.get("spec") or {}).get("template") or {})
        meta = template.get("metadata") or {}
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": name, "generateName": f"{rs['metadata']['name']}-", "namespace": ns,
                            "labels": meta.get("labels") or {}, "ownerReferences": [_owner(rs)]},
               "spec": template.get("spec") or {}}
        if meta.get("annotations"):
            pod["metadata"]["annotations"] = meta["annotations"]
        defaults.pod(pod)
        if podsecurity.refused(writer, rs, pod):
            break
        pods.append(writer.create("pods", pod))
    if len(pods) > wanted:
        # Newest first, like the ReplicaSet controller's preference for young pods.
        pods.sort(key=lambda p: (p["metadata"].get("creationTimestamp", ""), p["metadata"]["name"]), reverse=True)
        for pod in pods[:len(pods) - wanted]:
            writer.remove("pods", ns, pod["metadata"]["name"])


def _ready(pod: dict) -> bool:
    status = pod.get("status") or {}
    if pod["metadata"].get("deletionTimestamp") or status.get("phase") != "Running":
        return False
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])


def _set(status: dict, key: str, value: int) -> None:
    if value:
        status[key] = value
    else:
        status.pop(key, None)


def _replicaset_status(writer: _Writer, rs: dict) -> None:
    pods = [p for p in writer.store.list("pods", rs["metadata"]["namespace"]) if _owned_by(p, rs)]
    ready = sum(1 for p in pods if _ready(p))
    status: dict = {"replicas": len(pods)}
    _set(status, "fullyLabeledReplicas", len(pods))
    _set(status, "readyReplicas", ready)
    _set(status, "availableReplicas", ready)
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


def _deployment_status(writer: _Writer, deploy: dict) -> None:
    owned = [rs for rs in writer.store.list("replicasets", deploy["metadata"]["namespace"]) if _owned_by(rs, deploy)]
    digest = template_hash((deploy.get("spec") or {}).get("template") or {})
    new_rs = next((rs for rs in owned if _hash(rs) == digest), None)
    ready = sum(_count(rs, "readyReplicas") for rs in owned)
    status: dict = {"observedGeneration": deploy["metadata"].get("generation", 1)}
    _set(status, "replicas", sum(_count(rs, "replicas") for rs in owned))
    _set(status, "updatedReplicas", _count(new_rs, "replicas") if new_rs else 0)
    _set(status, "readyReplicas", ready)
    _set(status, "availableReplicas", ready)
    if writer.live:
        _set(status, "unavailableReplicas", max(0, (deploy.get("spec") or {}).get("replicas", 1) - ready))
    status["conditions"] = _deployment_conditions(deploy, new_rs, ready, writer.live)
    if status != deploy.get("status"):
        updated = copy.deepcopy(deploy)
        updated["status"] = status
        writer.put("deployments", updated, deploy)


def _count(obj: dict, key: str) -> int:
    return (obj.get("status") or {}).get(key, 0)


def _deployment_conditions(deploy: dict, new_rs: dict | None, ready: int, live: bool) -> list[dict]:
    """Available (or, live, not yet), and Progressing once the current template's ReplicaSet exists."""
    spec = deploy.get("spec") or {}
    old = (deploy.get("status") or {}).get("conditions") or []
    if live and not rollout.available(spec, spec.get("replicas", 1), ready):
        conditions = [rollout.unavailable_condition(old, timestamp())]
    else:
        conditions = [_condition(old, "Available", "MinimumReplicasAvailable", "Deployment has minimum availability.")]
    if new_rs is not None:
        conditions.append(_condition(old, "Progressing", "NewReplicaSetAvailable",
                                     f'ReplicaSet "{new_rs["metadata"]["name"]}" has successfully progressed.'))
        conditions += [c for c in (new_rs.get("status") or {}).get("conditions") or []
                       if c.get("type") == "ReplicaFailure"]  # a refused pod, as the Deployment reports it
    return conditions


def _resolve_port(pod: dict, target, protocol: str) -> int | None:
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    for c in (pod.get("spec") or {}).get("containers") or []:
        for port in c.get("ports") or []:
            if port.get("name") == target and port.get("protocol", "TCP") == protocol:
                return port.get("containerPort")
    return None


def _service_endpoints(writer: _Writer, ns: str, name: str) -> None:
    store = writer.store
    svc = store.get("services", ns, name)
    if svc is None:
        ep = store.get("endpoints", ns, name)
        if ep is not None and (ep["metadata"].get("labels") or {}).get(MANAGED_EP):
            writer.remove("endpoints", ns, name)
        return
    selector = (svc.get("spec") or {}).get("selector")
    if not selector or (svc.get("spec") or {}).get("type") == "ExternalName":
        return
    chosen = selector_from_dict({"matchLabels": selector})  # read once, matched against every pod
    members = [p for p in store.list("pods", ns) if _ready(p) and (p.get("status") or {}).get("podIP")
               and chosen.matches(p["metadata"].get("labels"))]
    groups: dict[str, tuple[list, list]] = {}  # pods with the same resolved ports share a subset and a slice
    for pod in members:
        ports = _endpoint_ports(svc, pod)
        groups.setdefault(json.dumps(ports, sort_keys=True), (ports, []))[1].append(pod)
    _write_endpoints(writer, svc, groups)
    _write_slices(writer, svc, groups)


def _endpoint_ports(svc: dict, pod: dict) -> list[dict]:
    """The service's ports as this pod serves them (target ports it does not name are left out)."""
    ports = []
    for port in (svc.get("spec") or {}).get("ports") or []:
        number = _resolve_port(pod, port.get("targetPort", port.get("port")), port.get("protocol", "TCP"))
        if number is None:
            continue
        entry = {"port": number, "protocol": port.get("protocol", "TCP")}
        if port.get("name"):
            entry = {"name": port["name"], **entry}
        if port.get("appProtocol"):
            entry["appProtocol"] = port["appProtocol"]
        ports.append(entry)
    return ports


def _target(pod: dict) -> dict:
    meta = pod["metadata"]
    return {"kind": "Pod", "namespace": meta["namespace"], "name": meta["name"], "uid": meta["uid"]}


def _ip_key(pod: dict):
    return ipaddress.ip_address(pod["status"]["podIP"])


def _write_endpoints(writer: _Writer, svc: dict, groups) -> None:
    ns, name = svc["metadata"]["namespace"], svc["metadata"]["name"]
    subsets = []
    for key in sorted(groups):
        ports, pods = groups[key]
        subset = {"addresses": [{"ip": p["status"]["podIP"], "nodeName": p["spec"].get("nodeName", NODE_NAME),
                                 "targetRef": _target(p)} for p in sorted(pods, key=_ip_key)]}
        if ports:
            subset["ports"] = ports
        subsets.append(subset)
    labels = dict(svc["metadata"].get("labels") or {}, **{MANAGED_EP: "endpoint-controller"})
    old = writer.store.get("endpoints", ns, name)
    if old is not None and not (old["metadata"].get("labels") or {}).get(MANAGED_EP):
        return  # hand-written endpoints of a service that also has a selector: leave alone
    ep = copy.deepcopy(old) if old else {"apiVersion": "v1", "kind": "Endpoints",
                                         "metadata": {"name": name, "namespace": ns}}
    ep["metadata"]["labels"] = labels
    if subsets:
        ep["subsets"] = subsets
    else:
        ep.pop("subsets", None)
    if old is None:
        writer.create("endpoints", ep)
    else:
        writer.put("endpoints", ep, old)


def _write_slices(writer: _Writer, svc: dict, groups) -> None:
    ns, name = svc["metadata"]["namespace"], svc["metadata"]["name"]
    existing = {s["metadata"]["name"]: s for s in writer.store.list("endpointslices", ns)
                if (s["metadata"].get("labels") or {}).get("kubernetes.io/service-name") == name
                and _owned_by(s, svc)}
    wanted = {}
    for index, key in enumerate(sorted(groups) or [""]):
        ports, pods = groups.get(key, ([], []))
        slice_name = f"{name}-{_suffix(svc['metadata']['uid'] + str(index), 5)}"
        wanted[slice_name] = {
            "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": slice_name, "generateName": f"{name}-", "namespace": ns,
                         "labels": dict(svc["metadata"].get("labels") or {}, **{
                             "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
                             "kubernetes.io/service-name": name}),
                         "ownerReferences": [_owner(svc)], "generation": 1},
            "addressType": "IPv4",
            "endpoints": [{"addresses": [p["status"]["podIP"]],
                           "conditions": {"ready": True, "serving": True, "terminating": False},
                           "nodeName": p["spec"].get("nodeName", NODE_NAME), "targetRef": _target(p)}
                          for p in sorted(pods, key=_ip_key)],
            "ports": [{"name": p.get("name", ""), **{k: v for k, v in p.items() if k != "name"}} for p in ports]}
    for slice_name, obj in wanted.items():
        old = existing.pop(slice_name, None)
        if old is None:
            writer.create("endpointslices", obj)
        else:
            merged = copy.deepcopy(old)
            merged["endpoints"], merged["ports"] = obj["endpoints"], obj["ports"]
            merged["metadata"]["labels"] = obj["metadata"]["labels"]
            writer.put("endpointslices", merged, old)
    for slice_name in existing:
        writer.remove("endpointslices", ns, slice_name)


# (queue stage, plural, controller) in the order a real cluster's cascade runs.
_STAGES = (("deployments", "deployments", _deployment), ("replicasets", "replicasets", _replicaset),
           ("pods", "pods", start_pod), ("replicaset_status", "replicasets", _replicaset_status),
           ("deployment_status", "deployments", _deployment_status))
