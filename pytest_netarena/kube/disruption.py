"""PodDisruptionBudgets (policy/v1): validation, the status the disruption controller keeps, and the Eviction API."""

from __future__ import annotations

import copy
import json
import math
import re

from ..core.selectors import selector_from_dict
from . import errors
from .tables import timestamp
from .validation import Cause, bad_value, unsupported

PERCENT = re.compile(r"^[0-9]+%$")
POLICIES = ("AlwaysAllow", "IfHealthyBudget")
CANNOT_EVICT = "Cannot evict pod as it would violate the pod's disruption budget."


def _int_or_percent(field: str, value) -> list[Cause]:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return [bad_value(field, value, "must be an integer or percentage (e.g '5%')")]
    if isinstance(value, int):
        return [bad_value(field, value, "must be greater than or equal to 0")] if value < 0 else []
    if not PERCENT.match(value):
        return [bad_value(field, value, "a valid percent string must be a numeric string followed by an ending '%' "
                                        "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")]
    if int(value[:-1]) > 100:
        return [bad_value(field, value, "must not be greater than 100%")]
    return []


def validate(obj: dict) -> list[Cause]:
    from .validation import _selector

    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    causes: list[Cause] = []
    if "minAvailable" in spec and "maxUnavailable" in spec:
        causes.append(bad_value("spec", json.dumps(spec, separators=(",", ":")),
                                "minAvailable and maxUnavailable cannot be both set"))
    for field in ("minAvailable", "maxUnavailable"):
        if field in spec:
            causes += _int_or_percent(f"spec.{field}", spec[field])
    causes += _selector("spec.selector", spec.get("selector"))
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in POLICIES:
        causes.append(unsupported("spec.unhealthyPodEvictionPolicy", policy, POLICIES))
    return causes


def validate_update(old: dict, new: dict) -> list[Cause]:
    return []


# -- the disruption controller -----------------------------------------------------------------------------------
def matches(pdb: dict, pod: dict) -> bool:
    """policy/v1: an empty selector selects every pod of the namespace, a missing one none."""
    selector = (pdb.get("spec") or {}).get("selector")
    if selector is None:
        return False
    return selector_from_dict(selector).matches(pod["metadata"].get("labels"))


def healthy(pod: dict) -> bool:
    status = pod.get("status") or {}
    return not pod["metadata"].get("deletionTimestamp") and status.get("phase") == "Running" and any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])


def _controller_scale(store, namespace: str, pod: dict, seen: set) -> int | None:
    """The replicas of the pod's controller (a Deployment through its ReplicaSet), counted once; None: no controller
    whose scale is known."""
    ref = next((r for r in pod["metadata"].get("ownerReferences") or [] if r.get("controller")), None)
    if ref is None:
        return None
    kind, name = ref.get("kind"), ref.get("name", "")
    owner = None
    if kind == "ReplicaSet":
        rs = store.get("replicasets", namespace, name)
        if rs is None:
            return None
        parent = next((r for r in rs["metadata"].get("ownerReferences") or [] if r.get("controller")), None)
        if parent is not None and parent.get("kind") == "Deployment":
            kind, name, owner = "Deployment", parent.get("name", ""), store.get("deployments", namespace,
                                                                                parent.get("name", ""))
        else:
            owner = rs
    elif kind == "StatefulSet":
        owner = store.get("statefulsets", namespace, name)
    if owner is None:
        return None
    if (kind, name) in seen:
        return 0
    seen.add((kind, name))
    return int((owner.get("spec") or {}).get("replicas", 1))


def _scaled(value, total: int, round_up: bool) -> int:
    if isinstance(value, str) and value.endswith("%"):
        share = int(value[:-1]) * total / 100
        return math.ceil(share) if round_up else math.floor(share)
    return int(value)


def status_of(store, pdb: dict, now: str) -> dict:
    """The status the disruption controller writes for pdb, from the pods it selects now."""
    namespace = pdb["metadata"]["namespace"]
    spec, old = pdb.get("spec") or {}, pdb.get("status") or {}
    pods = [p for p in store.list("pods", namespace) if matches(pdb, p)]
    present = {p["metadata"]["name"] for p in pods}
    disrupted = {k: v for k, v in (old.get("disruptedPods") or {}).items() if k in present}
    current = sum(1 for p in pods if healthy(p) and p["metadata"]["name"] not in disrupted)
    expected, desired = len(pods), 0
    if "maxUnavailable" in spec or isinstance(spec.get("minAvailable"), str):
        seen: set = set()
        scales = [_controller_scale(store, namespace, p, seen) for p in pods]
        expected = sum(s for s in scales if s is not None)
        if "maxUnavailable" in spec:
            desired = max(0, expected - _scaled(spec["maxUnavailable"], expected, True))
        else:
            desired = _scaled(spec["minAvailable"], expected, True)
    elif "minAvailable" in spec:
        desired = int(spec["minAvailable"])
    allowed = max(0, current - desired)
    kept = next((c for c in old.get("conditions") or [] if c.get("type") == "DisruptionAllowed"), None)
    flag = "True" if allowed > 0 else "False"
    condition = {"type": "DisruptionAllowed", "status": flag, "reason": "SufficientPods" if allowed else
                 "InsufficientPods", "message": "", "observedGeneration": pdb["metadata"].get("generation", 1),
                 "lastTransitionTime": kept["lastTransitionTime"] if kept and kept.get("status") == flag else now}
    status = {"observedGeneration": pdb["metadata"].get("generation", 1), "disruptionsAllowed": allowed,
              "currentHealthy": current, "desiredHealthy": desired, "expectedPods": expected,
              "conditions": [condition]}
    if disrupted:
        status["disruptedPods"] = disrupted
    return status


def reconcile(writer, namespace: str) -> None:
    now = timestamp()
    for pdb in writer.store.list("poddisruptionbudgets", namespace):
        status = status_of(writer.store, pdb, now)
        if status != pdb.get("status"):
            updated = copy.deepcopy(pdb)
            updated["status"] = status
            writer.put("poddisruptionbudgets", updated, pdb)


# -- the Eviction API --------------------------------------------------------------------------------------------
def _too_many(message: str) -> errors.ApiError:
    return errors.ApiError(429, "TooManyRequests", CANNOT_EVICT,
                           {"causes": [{"reason": "DisruptionBudget", "message": message}]})


def evict(cluster, namespace: str, name: str, body, dry_run: bool) -> dict:
    """POST pods/NAME/eviction: the pod is deleted if no PodDisruptionBudget forbids it (429 if one does), and the
    budget it used is charged. Returns the Status of success (201)."""
    from .registry import BY_PLURAL

    if not isinstance(body, dict) or body.get("kind") not in (None, "Eviction"):
        raise errors.bad_request("the body must be an Eviction object")
    options = body.get("deleteOptions") if isinstance(body.get("deleteOptions"), dict) else {}
    dry_run = dry_run or "All" in (options.get("dryRun") or [])
    store = cluster.store
    with store.transaction():
        pod = store.get("pods", namespace, name)
        if pod is None:
            raise errors.not_found("pods", "", name)
        phase = (pod.get("status") or {}).get("phase")
        budgets = [] if phase in ("Succeeded", "Failed", "Pending") or pod["metadata"].get("deletionTimestamp") else \
            [p for p in store.list("poddisruptionbudgets", namespace) if matches(p, pod)]
        if len(budgets) > 1:
            raise errors.ApiError(500, "InternalError", "This pod has more than one PodDisruptionBudget, which the "
                                                        "eviction subresource does not support.")
        if budgets:
            _charge(store, budgets[0], pod, dry_run)
        if not dry_run:
            cluster.delete(BY_PLURAL["pods"], namespace, name)
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


def _charge(store, pdb: dict, pod: dict, dry_run: bool) -> None:
    """Take one disruption from pdb for pod, or refuse the eviction as the real server does."""
    status, spec = pdb.get("status") or {}, pdb.get("spec") or {}
    if status.get("observedGeneration", 0) < pdb["metadata"].get("generation", 1):
        raise _too_many(f"The disruption budget {pdb['metadata']['name']} is still being processed by the server.")
    allowed = int(status.get("disruptionsAllowed", 0))
    if allowed < 0:
        raise errors.ApiError(403, "Forbidden", "pdb disruptions allowed is negative")
    if not healthy(pod):
        policy = spec.get("unhealthyPodEvictionPolicy", "IfHealthyBudget")
        current, desired = int(status.get("currentHealthy", 0)), int(status.get("desiredHealthy", 0))
        if policy == "AlwaysAllow" or (current >= desired > 0):
            return
    if allowed == 0:
        raise _too_many(f"The disruption budget {pdb['metadata']['name']} needs {status.get('desiredHealthy', 0)} "
                        f"healthy pods and has {status.get('currentHealthy', 0)} currently")
    if dry_run:
        return
    updated = copy.deepcopy(pdb)
    updated["status"]["disruptionsAllowed"] = allowed - 1
    updated["status"].setdefault("disruptedPods", {})[pod["metadata"]["name"]] = timestamp()
    store.put("poddisruptionbudgets", updated, "MODIFIED")
