"""PersistentVolumes, PersistentVolumeClaims and StorageClasses: defaults, validation, the default class, and binding.

Binding is the PV controller's: a claim that names a volume (spec.volumeName) or fits an Available one of its
class is bound to it; a claim of a class with a provisioner gets a volume from `store.provisioners`
({provisioner name: fn(claim, storage_class, node_name) -> PersistentVolume or None}), at once for
volumeBindingMode Immediate, or once a pod that uses it is placed (WaitForFirstConsumer). Without a provisioner of
that name the claim stays Pending with the events a real cluster shows. The API-only provisioner for k3s's
`rancher.io/local-path` writes the PV local-path-provisioner would (a hostPath under its storage directory, pinned
to the node); a runtime replaces it to make the directory too (claimed data survives a pod's restart there).
"""

from __future__ import annotations

import copy

from . import recorder
from .tables import timestamp
from .validation import Cause, forbidden, required, unsupported

ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
RECLAIM = ("Delete", "Recycle", "Retain")
BINDING_MODES = ("Immediate", "WaitForFirstConsumer")
DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
CLAIM_PROTECTION = "kubernetes.io/pvc-protection"
VOLUME_PROTECTION = "kubernetes.io/pv-protection"
SELECTED_NODE = "volume.kubernetes.io/selected-node"
LOCAL_PATH = "rancher.io/local-path"
LOCAL_PATH_DIR = "/var/lib/rancher/k3s/storage"
SOURCES = ("hostPath", "local", "nfs", "csi", "iscsi", "fc", "cephfs", "rbd", "glusterfs", "awsElasticBlockStore",
           "gcePersistentDisk", "azureDisk", "azureFile", "cinder", "flexVolume", "portworxVolume", "vsphereVolume")


# -- defaults and validation -------------------------------------------------------------------------------------
def class_defaults(obj: dict) -> None:
    obj.setdefault("reclaimPolicy", "Delete")
    obj.setdefault("volumeBindingMode", "Immediate")


def volume_defaults(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    if isinstance(spec, dict):
        spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
        spec.setdefault("volumeMode", "Filesystem")
    _protect(obj, VOLUME_PROTECTION)
    obj.setdefault("status", {"phase": "Pending"})


def claim_defaults(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    if isinstance(spec, dict):
        spec.setdefault("volumeMode", "Filesystem")
    _protect(obj, CLAIM_PROTECTION)
    obj.setdefault("status", {"phase": "Pending"})


def _protect(obj: dict, finalizer: str) -> None:
    finalizers = obj["metadata"].setdefault("finalizers", [])
    if finalizer not in finalizers and not obj["metadata"].get("deletionTimestamp"):
        finalizers.append(finalizer)


def _modes(field: str, modes) -> list[Cause]:
    if not modes:
        return [required(field, "at least 1 access mode is required")]
    return [unsupported(field, m, ACCESS_MODES) for m in modes if m not in ACCESS_MODES]


def validate_class(obj: dict) -> list[Cause]:
    causes = [] if obj.get("provisioner") else [required("provisioner")]
    if obj.get("reclaimPolicy") not in ("Delete", "Retain"):
        causes.append(unsupported("reclaimPolicy", obj.get("reclaimPolicy", ""), ("Delete", "Retain")))
    if obj.get("volumeBindingMode") not in BINDING_MODES:
        causes.append(unsupported("volumeBindingMode", obj.get("volumeBindingMode", ""), BINDING_MODES))
    return causes


def validate_class_update(old: dict, new: dict) -> list[Cause]:
    causes = []
    for field in ("parameters", "provisioner", "reclaimPolicy", "volumeBindingMode"):
        if old.get(field) != new.get(field):
            causes.append(forbidden(field, f"updates to {field} are forbidden."))
    return causes


def validate_volume(obj: dict) -> list[Cause]:
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    causes = []
    if not (spec.get("capacity") or {}).get("storage"):
        causes.append(required("spec.capacity", "must specify a capacity"))
    causes += _modes("spec.accessModes", spec.get("accessModes"))
    sources = [s for s in SOURCES if spec.get(s) is not None]
    if not sources:
        causes.append(required("spec", "must specify a volume type"))
    elif len(sources) > 1:
        causes.append(forbidden(f"spec.{sources[1]}", "may not specify more than 1 volume type"))
    if spec.get("persistentVolumeReclaimPolicy") not in RECLAIM:
        causes.append(unsupported("spec.persistentVolumeReclaimPolicy", spec.get("persistentVolumeReclaimPolicy"),
                                  RECLAIM))
    return causes


def validate_volume_update(old: dict, new: dict) -> list[Cause]:
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    source = next((s for s in SOURCES if old_spec.get(s) is not None), None)
    if source and old_spec.get(source) != new_spec.get(source):
        return [forbidden("spec.persistentvolumesource", "spec.persistentvolumesource is immutable after creation")]
    return []


def validate_claim(obj: dict) -> list[Cause]:
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    causes = _modes("spec.accessModes", spec.get("accessModes"))
    if not ((spec.get("resources") or {}).get("requests") or {}).get("storage"):
        causes.append(required("spec.resources[storage]"))
    return causes


def validate_claim_update(old: dict, new: dict) -> list[Cause]:
    old_spec, new_spec = dict(old.get("spec") or {}), dict(new.get("spec") or {})
    if not old_spec.get("volumeName"):  # the binder fills these in on an unbound claim
        old_spec.pop("volumeName", None)
        new_spec.pop("volumeName", None)
    if old_spec.get("storageClassName") is None:
        new_spec.pop("storageClassName", None)
    before, after = _storage(old_spec), _storage(new_spec)
    for spec in (old_spec, new_spec):
        spec.pop("resources", None)
        spec.pop("volumeAttributesClassName", None)
    if old_spec != new_spec:
        return [forbidden("spec", "spec is immutable after creation except resources.requests and "
                                  "volumeAttributesClassName for bound claims")]
    if _quantity(after) < _quantity(before):
        return [forbidden("spec.resources.requests.storage", "field can not be less than status.capacity")]
    return []


def _storage(spec: dict) -> str:
    return str(((spec.get("resources") or {}).get("requests") or {}).get("storage", "0"))


def _quantity(text: str) -> float:
    from .autoscaler import _quantity as parse

    try:
        return parse(text)
    except ValueError:
        return 0.0


# -- admission: the default StorageClass -------------------------------------------------------------------------
def default_class(store) -> dict | None:
    marked = [sc for sc in store.list("storageclasses")
              if (sc["metadata"].get("annotations") or {}).get(DEFAULT_CLASS) == "true"]
    return max(marked, key=lambda sc: (sc["metadata"].get("creationTimestamp", ""), sc["metadata"]["name"])) \
        if marked else None


def admit_claim(store, obj: dict, old: dict | None) -> None:
    """The DefaultStorageClass admission plugin: a new claim that names no class gets the default one."""
    spec = obj.get("spec")
    if old is None and isinstance(spec, dict) and spec.get("storageClassName") is None:
        chosen = default_class(store)
        if chosen is not None:
            spec["storageClassName"] = chosen["metadata"]["name"]


# -- the binder --------------------------------------------------------------------------------------------------
def _fits(claim: dict, volume: dict) -> bool:
    spec, wanted = volume.get("spec") or {}, claim.get("spec") or {}
    if (spec.get("storageClassName") or "") != (wanted.get("storageClassName") or ""):
        return False
    if not set(wanted.get("accessModes") or []) <= set(spec.get("accessModes") or []):
        return False
    if spec.get("volumeMode", "Filesystem") != wanted.get("volumeMode", "Filesystem"):
        return False
    if _quantity((spec.get("capacity") or {}).get("storage", "0")) < _quantity(_storage(wanted)):
        return False
    selector = wanted.get("selector")
    if selector:
        from ..core.selectors import selector_from_dict

        return selector_from_dict(selector).matches(volume["metadata"].get("labels"))
    return True


def bind(writer, claim: dict, volume: dict) -> None:
    """Bind claim and volume both ways, as the PV controller writes it."""
    meta = claim["metadata"]
    pv = copy.deepcopy(volume)
    pv["spec"]["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": meta["namespace"], "name": meta["name"],
                              "uid": meta["uid"], "apiVersion": "v1", "resourceVersion": meta.get("resourceVersion")}
    pv["metadata"].setdefault("annotations", {})["pv.kubernetes.io/bound-by-controller"] = "yes"
    pv["status"] = {"phase": "Bound", "lastPhaseTransitionTime": timestamp()}
    writer.put("persistentvolumes", pv, volume)
    pvc = copy.deepcopy(claim)
    annotations = pvc["metadata"].setdefault("annotations", {})
    annotations["pv.kubernetes.io/bind-completed"] = "yes"
    if not claim["spec"].get("volumeName"):
        annotations["pv.kubernetes.io/bound-by-controller"] = "yes"
    pvc["spec"]["volumeName"] = volume["metadata"]["name"]
    pvc["status"] = {"phase": "Bound", "accessModes": list(volume["spec"].get("accessModes") or []),
                     "capacity": dict(volume["spec"].get("capacity") or {})}
    writer.put("persistentvolumeclaims", pvc, claim)


def _class_of(store, claim: dict) -> dict | None:
    name = (claim.get("spec") or {}).get("storageClassName")
    return store.get("storageclasses", "", name) if name else None


def reconcile_claim(writer, claim: dict, node: str | None = None) -> bool:
    """Bind a Pending claim if it can be now (node: where its first consumer was placed); True when bound."""
    store = writer.store
    if (claim.get("status") or {}).get("phase") == "Bound" or claim["metadata"].get("deletionTimestamp"):
        return (claim.get("status") or {}).get("phase") == "Bound"
    wanted = (claim.get("spec") or {}).get("volumeName")
    if wanted:
        volume = store.get("persistentvolumes", "", wanted)
        ref = ((volume or {}).get("spec") or {}).get("claimRef") or {}
        if volume is not None and (not ref or (ref.get("name"), ref.get("namespace")) ==
                                   (claim["metadata"]["name"], claim["metadata"]["namespace"])):
            bind(writer, claim, volume)
            return True
        return False
    free = [v for v in store.list("persistentvolumes") if not (v.get("spec") or {}).get("claimRef")
            and (v.get("status") or {}).get("phase") == "Available" and _fits(claim, v)]
    if free:
        bind(writer, claim, min(free, key=lambda v: (_quantity(v["spec"]["capacity"]["storage"]),
                                                     v["metadata"]["name"])))
        return True
    storage_class = _class_of(store, claim)
    if storage_class is None:
        name = (claim.get("spec") or {}).get("storageClassName")
        message = "no persistent volumes available for this claim and no storage class is set" if not name else \
            f'storageclass.storage.k8s.io "{name}" not found'
        recorder.record(writer, claim, "FailedBinding" if not name else "ProvisioningFailed", message, warning=True,
                        component="persistentvolume-controller")
        return False
    if storage_class.get("volumeBindingMode") == "WaitForFirstConsumer" and node is None:
        recorder.record(writer, claim, "WaitForFirstConsumer", "waiting for first consumer to be created before "
                        "binding", component="persistentvolume-controller")
        return False
    return _provision(writer, claim, storage_class, node)


def _provision(writer, claim: dict, storage_class: dict, node: str | None) -> bool:
    name = storage_class.get("provisioner", "")
    provisioners = getattr(writer.store, "provisioners", None) or {}
    provision = provisioners.get(name) or (local_path if name == LOCAL_PATH else None)
    volume = provision(claim, storage_class, node) if provision is not None else None
    if volume is None:
        recorder.record(writer, claim, "ExternalProvisioning", f"Waiting for a volume to be created either by the "
                        f"external provisioner '{name}' or manually by the system administrator. If volume creation "
                        "is delayed, please verify that the provisioner is running and correctly registered.",
                        component="persistentvolume-controller")
        return False
    if node is not None:
        annotated = copy.deepcopy(claim)
        annotated["metadata"].setdefault("annotations", {})[SELECTED_NODE] = node
        claim = writer.put("persistentvolumeclaims", annotated, claim)
    volume_defaults(volume)
    volume["status"] = {"phase": "Available"}
    made = writer.create("persistentvolumes", volume)
    recorder.record(writer, claim, "ProvisioningSucceeded", f"Successfully provisioned volume "
                    f"{made['metadata']['name']}", component=f"{name}_provisioner")
    bind(writer, claim, made)
    return True


def local_path(claim: dict, storage_class: dict, node: str | None) -> dict | None:
    """The PV k3s's local-path-provisioner writes for claim on node (the object only: no directory is made)."""
    if node is None:
        return None
    meta = claim["metadata"]
    name = f"pvc-{meta['uid']}"
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "annotations": {"pv.kubernetes.io/provisioned-by": LOCAL_PATH,
                                                       "local.path.provisioner/selected-node": node}},
            "spec": {"capacity": {"storage": _storage(claim.get("spec") or {})},
                     "accessModes": list((claim.get("spec") or {}).get("accessModes") or []),
                     "persistentVolumeReclaimPolicy": storage_class.get("reclaimPolicy", "Delete"),
                     "storageClassName": storage_class["metadata"]["name"], "volumeMode": "Filesystem",
                     "hostPath": {"path": f"{LOCAL_PATH_DIR}/{name}_{meta['namespace']}_{meta['name']}",
                                  "type": "DirectoryOrCreate"},
                     "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                         {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}}}}


# -- the PV controller's loop and the protection controllers -----------------------------------------------------
def _claims_of(pod: dict) -> list[str]:
    return [v["persistentVolumeClaim"].get("claimName", "") for v in (pod.get("spec") or {}).get("volumes") or []
            if isinstance(v, dict) and isinstance(v.get("persistentVolumeClaim"), dict)]


def uses_claims(pod: dict | None) -> bool:
    return pod is not None and bool(_claims_of(pod))


def _in_use(store, namespace: str, claim: str) -> bool:
    return any(claim in _claims_of(p) and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
               for p in store.list("pods", namespace, ordered=False))


def node_allows(store, pod: dict, node: dict) -> bool:
    """The volumes of the pod's bound claims may be used on node (their nodeAffinity, e.g. local-path's)."""
    from .nodes import node_matches_terms

    for name in _claims_of(pod):
        claim = store.get("persistentvolumeclaims", pod["metadata"]["namespace"], name)
        volume = store.get("persistentvolumes", "", (claim or {}).get("spec", {}).get("volumeName", "")) if claim else None
        terms = (((volume or {}).get("spec") or {}).get("nodeAffinity") or {}).get("required")
        if terms and not node_matches_terms(node, terms.get("nodeSelectorTerms") or []):
            return False
    return True


def claims_ready(writer, pod: dict, node: str) -> bool:
    """Every claim the pod uses exists and is bound (a WaitForFirstConsumer claim is provisioned for node now)."""
    for name in _claims_of(pod):
        claim = writer.store.get("persistentvolumeclaims", pod["metadata"]["namespace"], name)
        if claim is None or claim["metadata"].get("deletionTimestamp") or not reconcile_claim(writer, claim, node):
            return False
    return True


def process(writer) -> None:
    """New volumes become Available; Pending claims bind; a deleted claim's volume is released (Retain) or deleted
    (Delete); the protection finalizers go once nothing uses the claim or binds the volume."""
    store = writer.store
    for volume in store.list("persistentvolumes"):
        phase = (volume.get("status") or {}).get("phase")
        ref = (volume.get("spec") or {}).get("claimRef")
        if phase in (None, "Pending") and not ref:
            _status(writer, "persistentvolumes", volume, {"phase": "Available"})
        elif ref and phase == "Bound":
            claim = store.get("persistentvolumeclaims", ref.get("namespace", ""), ref.get("name", ""))
            if claim is None or claim["metadata"].get("uid") != ref.get("uid"):
                if volume["spec"].get("persistentVolumeReclaimPolicy") == "Delete":
                    from .deletion import remove_or_mark

                    remove_or_mark(store, "persistentvolumes", "", _unprotected(writer, "persistentvolumes",
                                                                                volume, VOLUME_PROTECTION))
                else:
                    _status(writer, "persistentvolumes", volume, {"phase": "Released"})
        if volume["metadata"].get("deletionTimestamp") and phase != "Bound":
            _unprotected(writer, "persistentvolumes", volume, VOLUME_PROTECTION)
    for claim in store.list("persistentvolumeclaims"):
        meta = claim["metadata"]
        if meta.get("deletionTimestamp"):
            if not _in_use(store, meta["namespace"], meta["name"]):
                _unprotected(writer, "persistentvolumeclaims", claim, CLAIM_PROTECTION)
        elif (claim.get("status") or {}).get("phase") != "Bound":
            reconcile_claim(writer, claim)


def _status(writer, plural: str, obj: dict, status: dict) -> dict:
    updated = copy.deepcopy(obj)
    updated["status"] = {**status, "lastPhaseTransitionTime": timestamp()} if plural == "persistentvolumes" else status
    return writer.put(plural, updated, obj)


def _unprotected(writer, plural: str, obj: dict, finalizer: str) -> dict:
    """obj without the protection finalizer (deleted when it was being deleted and that was the last)."""
    finalizers = obj["metadata"].get("finalizers") or []
    if finalizer not in finalizers:
        return obj
    updated = copy.deepcopy(obj)
    updated["metadata"]["finalizers"] = [f for f in finalizers if f != finalizer]
    if updated["metadata"].get("deletionTimestamp") and not updated["metadata"]["finalizers"]:
        writer.remove(plural, obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
        return updated
    if not updated["metadata"]["finalizers"]:
        del updated["metadata"]["finalizers"]
    return writer.put(plural, updated, obj)
