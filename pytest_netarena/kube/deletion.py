"""Deleting as the real server does: finalizers hold an object, namespaces and CRDs take their objects.

An object with finalizers is only marked (deletionTimestamp) until they are gone; a namespace and a
CustomResourceDefinition take their objects with them, waiting for the finalized ones.
"""

from __future__ import annotations

import copy

from .tables import timestamp

NAMESPACE_FINALIZER = "kubernetes"


def mark(obj: dict, now: str | None = None) -> dict:
    """A copy of obj marked for deletion (deletionTimestamp, no grace), its generation bumped as a real server does."""
    marked = copy.deepcopy(obj)
    meta = marked["metadata"]
    meta["deletionTimestamp"] = now or timestamp()
    meta["deletionGracePeriodSeconds"] = 0
    if "generation" in meta:
        meta["generation"] = int(meta["generation"]) + 1
    return marked


def remove_or_mark(store, key: str, namespace: str, obj: dict) -> dict | None:
    """Delete a stored object: removed when it has no finalizers, else marked (once). Returns what is stored after
    (None: gone). The caller holds a transaction."""
    meta = obj["metadata"]
    if not meta.get("finalizers"):
        store.remove(key, namespace, meta["name"])
        return None
    if meta.get("deletionTimestamp"):
        return obj
    return store.put(key, mark(obj), "MODIFIED")


def terminating(store, namespace: str) -> bool:
    ns = store.get("namespaces", "", namespace) if namespace else None
    return bool(ns is not None and ns["metadata"].get("deletionTimestamp"))


def delete_namespace(store, name: str) -> dict | None:
    """Delete a namespace's objects; the namespace goes now if none had finalizers, else it is Terminating until the
    last is gone (process() finishes it). Returns the namespace as stored after (None: gone)."""
    ns = store.get("namespaces", "", name)
    if ns is None:
        return None
    if not ns["metadata"].get("deletionTimestamp"):
        marked = mark(ns)
        marked["status"] = {"phase": "Terminating"}
        ns = store.put("namespaces", marked, "MODIFIED")
    return _finish_namespace(store, name)


def _finish_namespace(store, name: str) -> dict | None:
    left = False
    for res in store.registry.stored():
        if not res.namespaced:
            continue
        for item in store.list(res.key, name):
            if remove_or_mark(store, res.key, name, item) is not None:
                left = True
    if left:
        return store.get("namespaces", "", name)
    store.remove("namespaces", "", name)
    return None


def _finish_crd(store, name: str) -> None:
    """Delete a terminating CRD's objects; once none is left, drop its cleanup finalizer (and so the CRD)."""
    from .crds import CLEANUP_FINALIZER

    crd = store.get("customresourcedefinitions", "", name)
    if crd is None or not crd["metadata"].get("deletionTimestamp"):
        return
    if not any(c.get("type") == "Terminating" for c in (crd.get("status") or {}).get("conditions") or []):
        from .crds import establish

        crd = copy.deepcopy(crd)
        establish(crd, crd, timestamp())
        crd = store.put("customresourcedefinitions", crd, "MODIFIED")
    left = False
    for item in store.list(name):
        if remove_or_mark(store, name, item["metadata"].get("namespace", ""), item) is not None:
            left = True
    if left:
        return
    finalizers = [f for f in crd["metadata"].get("finalizers") or [] if f != CLEANUP_FINALIZER]
    if finalizers:
        if finalizers != crd["metadata"].get("finalizers"):
            updated = copy.deepcopy(crd)
            updated["metadata"]["finalizers"] = finalizers
            store.put("customresourcedefinitions", updated, "MODIFIED")
        return
    store.remove("customresourcedefinitions", "", name)


def process(store, queue) -> None:
    """The namespace and CRD cleanup the queue asks for (a finalized object went, or a deletion began)."""
    for name in queue.drain("terminating_namespaces"):
        if terminating(store, name):
            _finish_namespace(store, name)
    for name in queue.drain("terminating_crds"):
        _finish_crd(store, name)
