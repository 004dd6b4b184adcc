"""Object lifecycle shared by HTTP and Python callers: create, update, patch, delete, list, scale."""

from __future__ import annotations

import builtins
import copy
from collections.abc import Iterator
from contextlib import contextmanager

from . import addresses, admission, deletion, errors, kinds, limits, selectors, validation
from . import apply as fields
from . import patch as patches
from . import schema as sch
from .allocate import allocate
from .registry import Registry, Resource
from .store import Store
from .tables import timestamp
from .timers import Timers
from .uids import generated_name, object_uid
from .versions import from_storage, to_storage
from .workqueue import WorkQueue

NO_SPEC_GENERATION = {"ConfigMap", "Secret", "Endpoints", "EndpointSlice", "Event", "ServiceAccount", "Namespace",
                      "Service", "Node", "Lease", "PersistentVolume", "StorageClass", "IngressClass", "PriorityClass"}
SERVER_META = ("uid", "creationTimestamp", "resourceVersion", "generation", "selfLink", "managedFields",
               "deletionTimestamp", "deletionGracePeriodSeconds")


class Cluster:
    """The API semantics on top of a Store; controllers run synchronously after each write (or batch).

    Controllers only revisit what a write touched (see workqueue.py): writes of kinds no controller
    reads, such as NetworkPolicies and ConfigMaps, cost no reconcile."""

    def __init__(self, store: Store, controllers: bool = True):
        self.store = store
        self.registry = store.registry = Registry(store)
        self.controllers_enabled = controllers
        #: a runtime runs the pods (kube/rollout.py): new pods wait for it, rollouts keep old pods until new ones
        #: are ready; False: pods are Running and Ready as soon as they are made
        self.live_pods = False
        self.queue = WorkQueue(store)
        store.tracker = self.queue
        self._batch_depth = 0
        #: work the controllers asked to do later (a CronJob's schedule, a back-off): timers.py
        self.timers = store.timers = Timers(self)
        self.timer_errors: list[str] = []

    # -- reads ----------------------------------------------------------------------------------
    def get(self, res: Resource, namespace: str, name: str) -> dict:
        obj = self.store.get(res.key, namespace if res.namespaced else "", name)
        if obj is None:
            raise errors.not_found(res.plural, res.group, name)
        return copy.deepcopy(from_storage(res, obj))

    def list(self, res: Resource, namespace: str | None, label_selector: str | None = None,
             field_selector: str | None = None) -> tuple[list[dict], str]:
        label_reqs = selectors.parse_labels(label_selector)
        field_reqs = selectors.parse_fields(field_selector)
        with self.store.lock:
            rv = str(self.store.resource_version)
            items = self.store.list(res.key, namespace if res.namespaced else None)
        items = [from_storage(res, o) for o in items if label_reqs.matches(o["metadata"].get("labels"))
                 and selectors.fields_match(field_reqs, o)]
        return copy.deepcopy(items), rv

    # -- writes ---------------------------------------------------------------------------------
    def create(self, res: Resource, namespace: str, body: dict, dry_run: bool = False,
               strict: bool = False, privileged: bool = False, manager: str | None = None,
               managed: builtins.list | None = None) -> dict:
        """manager: the request's field manager, who then owns every field (None: managedFields are not kept, as
        for the harness's own writes); managed: managedFields already worked out (a server-side apply's)."""
        # Everything that depends only on the request is computed before the store lock is taken.
        obj = admission.prepare(res, namespace, body, None, strict, check_types=not privileged)
        meta = obj["metadata"]
        if res.namespaced and not privileged:
            self._check_namespace(res, meta)
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = self._generate_name(res, meta)  # a name taken meanwhile is 409, as on a real server
        obj = to_storage(res, obj)
        meta = obj["metadata"]
        for field in SERVER_META:
            meta.pop(field, None)
        if admission.owns_status(res) and not privileged and res.kind not in admission.STATUS_ON_CREATE:
            obj.pop("status", None)
        admission.complete(self, res, obj, None)
        if managed is not None:
            meta["managedFields"] = managed
        elif manager is not None:
            fields.track(res, None, obj, manager)
        limits.check_object_size(obj)
        with self.store.transaction():
            if res.namespaced and not privileged:
                self._check_namespace(res, meta)
            key_ns = meta.get("namespace", "")
            if self.store.get(res.key, key_ns, meta["name"]) is not None:
                raise errors.already_exists(res.plural, res.group, meta["name"])
            meta["uid"] = object_uid(self.store, res.key, key_ns, meta["name"], advance=not dry_run)
            meta["creationTimestamp"] = timestamp()
            kinds.created(res.kind, obj)
            if res.kind not in NO_SPEC_GENERATION:
                meta["generation"] = 1
            if res.kind == "Service":
                allocate(self.store, obj)
            size = limits.object_bytes(obj)
            if res.namespaced and not privileged:
                limits.check_namespace_quota(res.plural, res.group, meta["name"], size,
                                             self.store.namespace_bytes(key_ns))
            if dry_run:
                return from_storage(res, obj)
            self.store.put(res.key, obj, "ADDED", size)
            self._settle()
            return copy.deepcopy(from_storage(res, self.store.get(res.key, key_ns, meta["name"])))

    def _check_namespace(self, res: Resource, meta: dict) -> None:
        ns = self.store.get("namespaces", "", meta["namespace"])
        if ns is None:
            raise errors.not_found("namespaces", "", meta["namespace"])
        if ns["metadata"].get("deletionTimestamp"):
            raise errors.namespace_terminating(res.plural, res.group, meta.get("name") or "", meta["namespace"])

    def update(self, res: Resource, namespace: str, name: str, body: dict, subresource: str = "",
               dry_run: bool = False, strict: bool = False, privileged: bool = False,
               manager: str | None = None) -> dict:
        wanted = admission.prepare(res, namespace, body, name, strict, check_types=not privileged)

        def updated(old: dict) -> dict:
            wanted_rv = wanted["metadata"].get("resourceVersion")
            if wanted_rv and wanted_rv != old["metadata"].get("resourceVersion"):
                raise errors.conflict(res.plural, res.group, name)
            return self._updated(res, old, to_storage(res, copy.deepcopy(wanted)), subresource, privileged, manager)

        return self._guaranteed_update(res, namespace if res.namespaced else "", name, updated, dry_run,
                                       quota=res.namespaced and not privileged)

    def patch(self, res: Resource, namespace: str, name: str, patch_type: str, body, subresource: str = "",
              dry_run: bool = False, strict: bool = False, manager: str | None = None) -> dict:
        if patch_type == "strategic" and res.custom is not None:
            raise errors.ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - "
                                  "accepted media types include: application/json-patch+json, "
                                  "application/merge-patch+json, application/apply-patch+yaml")

        def patched(stored: dict) -> dict:
            old = from_storage(res, stored)
            if isinstance(body, dict):
                wanted_rv = (body.get("metadata") or {}).get("resourceVersion")
                if wanted_rv and wanted_rv != old["metadata"].get("resourceVersion"):
                    raise errors.conflict(res.plural, res.group, name)
            if patch_type == "json":  # json_patch and strategic_merge work on copies; merge_patch never mutates
                result = patches.json_patch(old, body)
            elif patch_type == "merge":
                if not isinstance(body, dict):
                    raise errors.bad_request("merge patch body must be a JSON object")
                result = patches.merge_patch(old, body)
            else:
                result = patches.strategic_merge(old, body, sch.kind_schema(res.definition)
                                                 if res.definition else None)
            if not isinstance(result, dict):
                raise errors.bad_request("the patch produced something that is not an object")
            obj = admission.prepare(res, namespace, result, name, strict)
            obj["metadata"].pop("resourceVersion", None)
            return self._updated(res, stored, to_storage(res, obj), subresource, False, manager)

        return self._guaranteed_update(res, namespace if res.namespaced else "", name, patched, dry_run,
                                       quota=res.namespaced)

    def apply(self, res: Resource, namespace: str, name: str, body, manager: str, force: bool = False,
              dry_run: bool = False, strict: bool = False, subresource: str = "") -> tuple[int, dict]:
        """Server-side apply: (201, created) or (200, updated) after manager applies its configuration; 409 when it
        would change fields other managers own (unless force)."""
        if not manager:
            raise errors.invalid(res.kind, res.group, name, [validation.required(
                "fieldManager", "is required for apply requests")])
        applied = admission.prepare(res, namespace, body, name, strict)
        key_ns = namespace if res.namespaced else ""
        if self.store.get(res.key, key_ns, name) is None:
            made = fields.apply(res, None, applied, manager, force)
            try:
                return 201, self.create(res, namespace, made, dry_run, managed=made["metadata"]["managedFields"])
            except errors.ApiError as error:
                if error.code != 409 or error.reason != "AlreadyExists":
                    raise  # else it was made meanwhile: apply to it

        def applied_to(stored: dict) -> dict:
            result = fields.apply(res, from_storage(res, stored), applied, manager, force)
            obj = admission.prepare(res, namespace, result, name, False)
            obj["metadata"].pop("resourceVersion", None)
            return self._updated(res, stored, to_storage(res, obj), subresource, False,
                                 managed=result["metadata"]["managedFields"])

        return 200, self._guaranteed_update(res, key_ns, name, applied_to, dry_run, quota=res.namespaced)

    def _guaranteed_update(self, res: Resource, key_ns: str, name: str, compute, dry_run: bool,
                           quota: bool = False) -> dict:
        """Write compute(old) over old, as a real server's GuaranteedUpdate does: the new version is computed
        without the store lock (its cost is the request's, bounded by its CPU time), then stored under the
        lock only if the object is still the one it was computed from, else computed again. An object being
        deleted whose last finalizer the write removes is deleted."""
        while True:
            old = self.store.get(res.key, key_ns, name)  # stored objects are never mutated: read unlocked
            if old is None:
                raise errors.not_found(res.plural, res.group, name)
            obj = compute(old)
            if obj == old:
                return copy.deepcopy(from_storage(res, old))
            size = limits.object_bytes(obj)  # measured once, outside the lock, for the quota and the tally
            with self.store.transaction():
                if self.store.get(res.key, key_ns, name) is old:
                    if quota:  # an update that grows the namespace past its quota is refused, as it is created
                        limits.check_namespace_quota(res.plural, res.group, name, size,
                                                     self.store.namespace_bytes(key_ns),
                                                     self.store.object_size(res.key, key_ns, name))
                    if dry_run:
                        return from_storage(res, obj)
                    if obj["metadata"].get("deletionTimestamp") and not obj["metadata"].get("finalizers"):
                        self.store.remove(res.key, key_ns, name)
                        self._settle()
                        return copy.deepcopy(from_storage(res, obj))
                    self.store.put(res.key, obj, "MODIFIED", size)
                    self._settle()
                    return copy.deepcopy(from_storage(res, self.store.get(res.key, key_ns, name)))
            limits.spend()  # written meanwhile: try again on the new version, within the request's time

    def delete(self, res: Resource, namespace: str, name: str, dry_run: bool = False) -> dict:
        """Delete an object: gone at once, or (finalizers) marked until they are removed. Returns it as it was
        (gone) or as it is now (marked)."""
        with self.store.transaction():
            key_ns = namespace if res.namespaced else ""
            old = self.store.get(res.key, key_ns, name)
            if old is None:
                raise errors.not_found(res.plural, res.group, name)
            if dry_run:
                return copy.deepcopy(from_storage(res, old))
            if res.kind == "Namespace":
                after = deletion.delete_namespace(self.store, name)
            else:
                after = deletion.remove_or_mark(self.store, res.key, key_ns, old)
            self._settle()
            return copy.deepcopy(from_storage(res, after if after is not None else old))

    # -- helpers --------------------------------------------------------------------------------
    def _updated(self, res: Resource, old: dict, obj: dict, subresource: str, privileged: bool,
                 manager: str | None = None, managed: builtins.list | None = None) -> dict:
        """obj (the requested new version of old, in the stored version) completed and checked as the server
        stores it; its managedFields: managed when given, else manager's update tracked (None: old's kept)."""
        meta, old_meta = obj["metadata"], old["metadata"]
        requested = meta.get("managedFields")
        if subresource == "status":
            merged = copy.deepcopy(old)
            merged["status"] = obj.get("status")
            if merged["status"] is None:
                merged.pop("status")
            obj = merged
            meta = obj["metadata"]
            if res.kind == "Pod":
                addresses.convert_pod_ips(obj.get("status"))
            validation.validate_status(res.kind, res.group, obj)
        else:
            if admission.owns_status(res) and not privileged:
                if "status" in old:
                    obj["status"] = copy.deepcopy(old["status"])
                else:
                    obj.pop("status", None)
            if res.kind == "Service":
                spec, old_spec = obj.get("spec") or {}, old.get("spec") or {}
                for field in ("clusterIP", "clusterIPs"):
                    if not spec.get(field) and old_spec.get(field):
                        spec[field] = old_spec[field]
            admission.finalizers_on_deletion(res, old, obj)
            admission.complete(self, res, obj, old)
        for field in ("uid", "creationTimestamp", "generation", "deletionTimestamp", "deletionGracePeriodSeconds"):
            if field in old_meta:
                meta[field] = old_meta[field]
            else:
                meta.pop(field, None)
        meta.pop("managedFields", None)
        if managed is not None:
            meta["managedFields"] = managed
        elif old_meta.get("managedFields"):
            meta["managedFields"] = old_meta["managedFields"]
        if manager is not None and managed is None:
            if requested is not None:
                meta["managedFields"] = requested
            fields.track(res, old, obj, manager, subresource)
        meta["resourceVersion"] = old_meta.get("resourceVersion")
        if "generation" in meta and _spec_of(obj, res) != _spec_of(old, res):
            meta["generation"] = int(old_meta.get("generation", 1)) + 1
        limits.check_object_size(obj)
        return obj

    def _generate_name(self, res: Resource, meta: dict) -> str:
        name = generated_name(self.store, res.key, meta.get("namespace", ""), meta["generateName"])
        if not name:
            raise errors.internal("could not generate a unique name")
        return name

    # -- controllers ------------------------------------------------------------------------------
    def settle_now(self) -> None:
        """Run the controllers over what is queued (the controllers' clock calls it, inside a transaction)."""
        self._settle()

    def _settle(self) -> None:
        """Run the controllers over what the writes so far touched, unless a batch defers it.

        An HTTP request's controller work counts toward its CPU time: past it, the rest waits for the
        next write (the write itself stands, as on a real cluster whose controllers lag behind)."""
        if self.controllers_enabled and self._batch_depth == 0 and self.queue:
            from . import controllers

            with self.store.transaction():
                try:
                    controllers.process(self.store, self.queue, self.live_pods)
                except errors.ApiError as error:
                    if error.code != 504:
                        raise
                    # what the interrupted round had taken off the queue is revisited by the next one
                    self.queue.mark_all(sorted(n["metadata"]["name"] for n in self.store.list("namespaces")))

    @contextmanager
    def batch(self) -> Iterator[Cluster]:
        """Hold the store lock for many writes and run the controllers once, at the end."""
        with self.store.transaction():
            self._batch_depth += 1
            try:
                yield self
            finally:
                self._batch_depth -= 1
                self._settle()

    def reconcile(self, namespace: str = "") -> None:
        """A full controller resync of one namespace ("" = all), e.g. after running with controllers off."""
        if self.controllers_enabled:
            from . import controllers

            with self.store.transaction():
                controllers.reconcile(self, namespace)

    # -- scale subresource ------------------------------------------------------------------------
    def get_scale(self, res: Resource, namespace: str, name: str) -> dict:
        return to_scale(self.get(res, namespace, name))

    def set_scale(self, res: Resource, namespace: str, name: str, scale_body: dict, dry_run: bool = False,
                  manager: str | None = None) -> dict:
        wanted_rv = (scale_body.get("metadata") or {}).get("resourceVersion")
        replicas = (scale_body.get("spec") or {}).get("replicas")

        def scaled(old: dict) -> dict:
            if wanted_rv and wanted_rv != old["metadata"]["resourceVersion"]:
                raise errors.conflict(res.plural, res.group, name)
            if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
                raise errors.invalid("Scale", "autoscaling", name,
                                     [validation.bad_value("spec.replicas", replicas,
                                                           "must be greater than or equal to 0")])
            current = copy.deepcopy(old)
            current.setdefault("spec", {})["replicas"] = replicas
            current["metadata"].pop("resourceVersion", None)
            return self._updated(res, old, admission.prepare(res, namespace, current, name, False), "scale", False,
                                 manager)

        return to_scale(self._guaranteed_update(res, namespace if res.namespaced else "", name, scaled, dry_run,
                                                quota=res.namespaced))


def _spec_of(obj: dict, res: Resource | None = None):
    """What a change of bumps metadata.generation: all but metadata, and status where a subresource owns it."""
    kept = ("metadata", "status") if res is None or admission.owns_status(res) else ("metadata",)
    return {k: v for k, v in obj.items() if k not in kept}


def to_scale(obj: dict) -> dict:
    meta = obj["metadata"]
    return {"kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {"name": meta["name"], "namespace": meta.get("namespace"), "uid": meta.get("uid"),
                         "resourceVersion": meta.get("resourceVersion"),
                         "creationTimestamp": meta.get("creationTimestamp")},
            "spec": {"replicas": (obj.get("spec") or {}).get("replicas", 1)},
            "status": {"replicas": (obj.get("status") or {}).get("replicas", 0),
                       "selector": selectors.selector_string((obj.get("spec") or {}).get("selector"))}}
