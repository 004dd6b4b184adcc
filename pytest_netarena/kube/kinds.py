"""The kinds beyond the core ones: their defaults, admission and validation, looked up by kind.

Custom resource definitions, storage, autoscaling, ingress, disruption budgets, leases, priority classes.
"""

from __future__ import annotations

from . import crds, disruption, hpa, ingress, storage


def _nothing(*_args) -> list:
    return []


#: kind -> (validate(obj), validate_update(old, new)): lists of 422 causes
VALIDATORS = {
    "CustomResourceDefinition": (crds.validate, crds.validate_update),
    "HorizontalPodAutoscaler": (hpa.validate, hpa.validate_update),
    "PodDisruptionBudget": (disruption.validate, disruption.validate_update),
    "PersistentVolume": (storage.validate_volume, storage.validate_volume_update),
    "PersistentVolumeClaim": (storage.validate_claim, storage.validate_claim_update),
    "StorageClass": (storage.validate_class, storage.validate_class_update),
    "Ingress": (ingress.validate, ingress.validate_update),
    "IngressClass": (ingress.validate_class, ingress.validate_class_update),
}

#: kind -> default(obj), in place, after the common defaults
DEFAULTS = {
    "CustomResourceDefinition": crds.apply_defaults,
    "HorizontalPodAutoscaler": hpa.apply_defaults,
    "PersistentVolume": storage.volume_defaults,
    "PersistentVolumeClaim": storage.claim_defaults,
    "StorageClass": storage.class_defaults,
}


def default(kind: str, obj: dict) -> None:
    fn = DEFAULTS.get(kind)
    if fn is not None:
        fn(obj)


def admit(store, res, obj: dict, old: dict | None) -> None:
    """Admission beyond defaults, by kind: a node's cordon taint, a claim's default StorageClass and an Ingress's default
    IngressClass, a namespace's Pod
    Security labels (checked, and a stricter enforce level warned about the pods it would refuse)."""
    if res.kind == "Node":
        from .nodes import cordon_taint

        cordon_taint(obj)
    elif res.kind == "Pod" and old is None:
        from . import podaccounts

        podaccounts.admit(store, obj)
    elif res.kind == "PersistentVolumeClaim":
        storage.admit_claim(store, obj, old)
    elif res.kind == "Ingress":
        ingress.admit(store, obj, old)
    elif res.kind == "Namespace":
        from . import errors, notices, podsecurity

        labels = obj["metadata"].get("labels")
        causes = podsecurity.label_causes(labels)
        if causes:
            raise errors.invalid("Namespace", "", obj["metadata"].get("name", ""), causes)
        if old is not None:
            for warning in podsecurity.namespace_warnings(store, obj["metadata"]["name"],
                                                          old["metadata"].get("labels"), labels):
                notices.warn(warning)


def created(kind: str, obj: dict) -> None:
    """What the server adds once a new object has its uid: a Job's generated selector and template labels."""
    if kind == "Job":
        job_selector(obj)


def job_selector(job: dict) -> None:
    """The selector and pod labels the real server gives a Job (unless spec.manualSelector), in place."""
    spec = job.setdefault("spec", {})
    if spec.get("manualSelector") or not isinstance(spec.get("template"), dict):
        return
    uid, name = job["metadata"]["uid"], job["metadata"]["name"]
    labels = spec["template"].setdefault("metadata", {}).setdefault("labels", {})
    labels.update({"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name,
                   "controller-uid": uid, "job-name": name})
    spec.setdefault("selector", {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}})
