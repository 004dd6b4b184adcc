"""The Python side of the embedded API server: snapshot and reset, store listeners, and trusted reads and writes."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from . import errors, registry

if TYPE_CHECKING:
    from .ops import Cluster
    from .store import Store


class StoreAPI:
    """What the harness calls in process (EmbeddedAPIServer inherits it): no HTTP, no RBAC, no request bounds.

    Expects `store` (store.Store) and `cluster` (ops.Cluster) attributes."""

    store: Store
    cluster: Cluster

    # -- snapshot / reset -------------------------------------------------------------------------
    def snapshot(self) -> None:
        """Remember the current objects; reset() returns to them."""
        self.store.snapshot()

    def reset(self) -> None:
        """Restore the last snapshot (the baseline cluster if snapshot() was never called); ends watches."""
        self.store.reset()

    @property
    def resource_version(self) -> int:
        """Increases on every change (and on reset): compare two readings to see whether anything changed."""
        return self.store.resource_version

    def add_listener(self, fn) -> None:
        """fn(event_type, plural, obj) after each change, outside the lock ("RESET", "", None on reset)."""
        self.store.add_listener(fn)

    def remove_listener(self, fn) -> None:
        self.store.remove_listener(fn)

    def add_committer(self, fn) -> None:
        """fn(events) inside the store lock when a request's writes are done, [(event_type, plural, obj), ...]:
        what it reads of the store is the state those writes left (no other write can land first). Quick only;
        adding and removing it never wait for the lock."""
        self.store.add_committer(fn)

    def remove_committer(self, fn) -> None:
        self.store.remove_committer(fn)

    # -- Python-side store API ------------------------------------------------------------------
    def apply_object(self, obj: dict) -> dict:
        """Create or replace obj (a manifest dict); status given here is kept. Returns the stored object."""
        res = self.cluster.registry.for_kind(obj.get("kind", ""), obj.get("apiVersion", ""))
        body = copy.deepcopy(obj)
        meta = body.setdefault("metadata", {})
        namespace = meta.get("namespace") or ("default" if res.namespaced else "")
        with self.store.transaction():
            if res.namespaced and self.store.get("namespaces", "", namespace) is None:
                self.cluster.create(registry.BY_KIND["Namespace"], "", {"metadata": {"name": namespace}},
                                    privileged=True)
            existing = self.store.get(res.key, namespace if res.namespaced else "", meta.get("name", ""))
            if existing is None:
                return self.cluster.create(res, namespace, body, privileged=True)
            meta.pop("resourceVersion", None)
            return self.cluster.update(res, namespace, meta["name"], body, privileged=True)

    def apply_objects(self, objects: Iterable[dict], reconcile_once: bool = True) -> list[dict]:
        """apply_object for each; with reconcile_once the controllers run once at the end (a bulk load
        of N workloads costs O(N), not O(N^2)), and the returned objects are as written, before the
        controllers' changes (no status yet)."""
        if not reconcile_once:
            return [self.apply_object(o) for o in objects]
        with self.batch():
            return [self.apply_object(o) for o in objects]

    @contextmanager
    def batch(self) -> Iterator[StoreAPI]:
        """Group Python-side writes: the store lock is held throughout (HTTP clients wait, watches see
        the writes after it), and the controllers run once when the outermost batch ends."""
        with self.cluster.batch():
            yield self

    def reconcile(self, namespace: str | None = None) -> None:
        """Run every controller over one namespace (None = all), e.g. after a run with controllers off."""
        self.cluster.reconcile(namespace or "")

    def get_object(self, kind: str, namespace: str | None, name: str) -> dict | None:
        res = self.cluster.registry.for_kind(kind)
        obj = self.store.get(res.key, (namespace or "default") if res.namespaced else "", name)
        return copy.deepcopy(obj) if obj is not None else None

    def list_objects(self, kind: str, namespace: str | None = None) -> list[dict]:
        """Deep copies the caller may change (see iter_objects for a read-only, no-copy listing)."""
        res = self.cluster.registry.for_kind(kind)
        return copy.deepcopy(self.store.list(res.key, namespace if res.namespaced else None))

    def iter_objects(self, kind: str, namespace: str | None = None) -> Iterator[dict]:
        """The stored objects of kind (in one namespace, or all), sorted by (namespace, name), without copies.

        For trusted callers that read many objects often: the dicts are the store's own and must never
        be mutated (the store replaces objects on write, so a view stays valid and consistent). The
        listing is taken when called; wrap several calls in reading() for one consistent version."""
        res = self.cluster.registry.for_kind(kind)
        return iter(self.store.list(res.key, namespace if res.namespaced else None))

    @contextmanager
    def reading(self, timeout: float | None = None) -> Iterator[int]:
        """Hold the store lock (no write can happen) and give the resourceVersion the reads will see.

        timeout: the longest to wait for the lock (None: no limit), then TimeoutError."""
        if not self.store.lock.acquire(timeout=-1 if timeout is None else timeout):
            raise TimeoutError(f"the API server's store was busy for {timeout:g} s")
        try:
            yield self.store.resource_version
        finally:
            self.store.lock.release()

    def delete_object(self, kind: str, namespace: str | None, name: str) -> bool:
        res = self.cluster.registry.for_kind(kind)
        try:
            self.cluster.delete(res, (namespace or "default") if res.namespaced else "", name)
        except errors.ApiError as error:
            if error.code == 404:
                return False
            raise
        return True
