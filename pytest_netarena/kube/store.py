"""Thread-safe object store: one lock, a global resourceVersion, a watch event log, snapshot/reset."""

from __future__ import annotations

import builtins
import collections
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from .limits import object_bytes

if TYPE_CHECKING:
    from .pki import Authority
    from .workqueue import WorkQueue

Listener = Callable[[str, str, "dict | None"], None]  # (event type, plural, object)
Committer = Callable[[list], None]  # the (event type, plural, object) of one transaction's writes

EVENT_LOG_SIZE = 20000


class Store:
    """Objects are never mutated once stored, so snapshots are shallow dict copies."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._objects: dict[str, dict[tuple[str, str], dict]] = {}  # plural -> (namespace, name) -> object
        self._sizes: dict[tuple[str, str, str], int] = {}  # (plural, namespace, name) -> bytes of the object
        self._namespace_bytes: dict[str, int] = {}  # namespace -> bytes of its objects (the quota's measure)
        self._rv = 0
        self._written: dict[str, int] = {}  # plural -> the resourceVersion of its last write
        self._events: collections.deque = collections.deque(maxlen=EVENT_LOG_SIZE)
        self._cond = threading.Condition()
        self._listeners: list[Listener] = []
        self._committers: tuple[Committer, ...] = ()
        self._pending: list[tuple[str, str, dict | None]] = []
        self._depth = 0
        self._snapshot: tuple[dict, dict, dict, dict] | None = None
        self.epoch = 0  # bumped by reset() and close(): open watches end
        self.closed = False
        self.counters: dict[str, int] = {}  # allocator state that must survive reset deterministically
        #: objects made per (plural, namespace, name) in the server's life (uids.object_uid); kept across resets
        self.made: dict[tuple[str, str, str], int] = {}
        # Told of every write inside the lock: changed(plural, old, new) (None for a missing side), and
        # reset(); the cluster's controller work queue.
        self.tracker: WorkQueue | None = None
        #: the server's pki.Authority (CA, token signing key) the identity controllers use; None: no credentials
        self.authority: Authority | None = None
        #: where the HorizontalPodAutoscaler controller reads the pods' usage (autoscaler.py); None: no metrics API
        self.metrics = None
        #: the server's registry.Registry (the resources it serves), set by ops.Cluster
        self.registry = None

    # -- transactions -------------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[Store]:
        """Hold the lock; listeners run after the outermost transaction released it."""
        with self.lock:
            self._depth += 1
            try:
                yield self
            finally:
                self._depth -= 1
                pending, flush = (self._pending, True) if self._depth == 0 else ([], False)
                if flush:
                    self._pending = []
                    self._committed(pending)
        if flush and pending:
            with self._cond:
                self._cond.notify_all()
            for listener in list(self._listeners):
                for event_type, plural, obj in pending:
                    try:
                        listener(event_type, plural, obj)
                    except Exception:  # a listener bug must not break the server
                        pass

    def add_listener(self, fn: Listener) -> None:
        self._listeners.append(fn)

    def add_committer(self, fn: Committer) -> None:
        """fn(events) inside the lock when a transaction's writes are done (the outermost one; a write outside
        any transaction is one): it sees the store exactly as those writes left it. It must be quick.
        Adding and removing never wait for the lock (a request may hold it): a commit under way as fn is
        removed may still call it once."""
        self._committers = (*self._committers, fn)

    def remove_committer(self, fn: Committer) -> None:
        self._committers = tuple(c for c in self._committers if c is not fn)

    def _committed(self, events: list) -> None:
        if events:
            for committer in self._committers:
                try:
                    committer(events)
                except Exception:  # a committer bug must not break the server (its owner records its errors)
                    pass

    def remove_listener(self, fn: Listener) -> None:
        if fn in self._listeners:
            self._listeners.remove(fn)

    # -- reads ---------------------------------------------------------------------------------
    @property
    def resource_version(self) -> int:
        return self._rv

    def get(self, plural: str, namespace: str, name: str) -> dict | None:
        return self._objects.get(plural, {}).get((namespace, name))

    def written(self, plural: str) -> tuple[int, int]:
        """Changes whenever an object of plural is written (and on a reset): a cache of what they say is stale."""
        return self.epoch, self._written.get(plural, 0)

    def namespace_bytes(self, namespace: str) -> int:
        """Bytes (compact JSON) of every object stored in the namespace."""
        return self._namespace_bytes.get(namespace, 0)

    def object_size(self, plural: str, namespace: str, name: str) -> int:
        return self._sizes.get((plural, namespace, name), 0)

    def list(self, plural: str, namespace: str | None = None, ordered: bool = True) -> list[dict]:
        """The stored objects themselves, sorted by (namespace, name) unless not ordered: callers must not
        mutate them."""
        with self.lock:
            if not ordered:
                objects = self._objects.get(plural, {})
                return list(objects.values()) if namespace is None else [
                    o for k, o in objects.items() if k[0] == namespace]
            items = [(k, o) for k, o in self._objects.get(plural, {}).items()
                     if namespace is None or k[0] == namespace]
        items.sort(key=lambda item: item[0])
        return [o for _, o in items]

    # -- writes (callers hold a transaction) -----------------------------------------------------
    def put(self, plural: str, obj: dict, event_type: str, size: int | None = None) -> dict:
        """Store obj (taking ownership of it) with a fresh resourceVersion; size: its bytes when the caller
        measured them already (the namespace tally's measure), else measured here."""
        with self.lock:
            self._rv += 1
            obj["metadata"]["resourceVersion"] = str(self._rv)
            self._written[plural] = self._rv
            meta = obj["metadata"]
            objects = self._objects.setdefault(plural, {})
            key = (meta.get("namespace", ""), meta["name"])
            old = objects.get(key)
            objects[key] = obj
            self._count(plural, key, object_bytes(obj) if size is None else size)
            if self.tracker is not None:
                self.tracker.changed(plural, old, obj)
            self._record(event_type, plural, obj)
            return obj

    def remove(self, plural: str, namespace: str, name: str) -> dict | None:
        with self.lock:
            obj = self._objects.get(plural, {}).pop((namespace, name), None)
            if obj is not None:
                self._count(plural, (namespace, name), 0)
                self._rv += 1
                self._written[plural] = self._rv
                gone = dict(obj)
                gone["metadata"] = dict(obj["metadata"], resourceVersion=str(self._rv))
                if self.tracker is not None:
                    self.tracker.changed(plural, obj, None)
                self._record("DELETED", plural, gone)
            return obj

    def _count(self, plural: str, key: tuple[str, str], size: int) -> None:
        """Keep the byte tally of key's namespace: the object now takes size bytes (0: removed)."""
        sized = (plural, *key)
        self._namespace_bytes[key[0]] = self._namespace_bytes.get(key[0], 0) - self._sizes.pop(sized, 0) + size
        if size:
            self._sizes[sized] = size

    def _record(self, event_type: str, plural: str, obj: dict) -> None:
        self._events.append((self._rv, event_type, plural, obj))
        self._pending.append((event_type, plural, obj))
        if self._depth == 0:  # a write outside any transaction: notify now
            pending, self._pending = self._pending, []
            self._committed(pending)
            with self._cond:
                self._cond.notify_all()
            for listener in list(self._listeners):
                for item in pending:
                    try:
                        listener(*item)
                    except Exception:
                        pass

    # -- watch support ---------------------------------------------------------------------------
    def events_since(self, rv: int, plural: str) -> tuple[builtins.list[tuple[int, str, dict]], bool]:
        """Events for plural after rv, and whether rv is still inside the log (False = too old)."""
        with self.lock:
            if self._events and rv < self._events[0][0] - 1 and rv < self._rv - len(self._events):
                return [], False
            return [(r, t, o) for r, t, p, o in self._events if r > rv and p == plural], True

    def wait(self, timeout: float) -> None:
        with self._cond:
            self._cond.wait(timeout)

    # -- snapshot / reset ----------------------------------------------------------------------
    def snapshot(self) -> None:
        with self.lock:
            self._snapshot = ({p: dict(objs) for p, objs in self._objects.items()}, dict(self.counters),
                              dict(self._sizes), dict(self._namespace_bytes))

    def reset(self) -> None:
        with self.transaction():
            if self._snapshot is None:
                raise RuntimeError("reset() needs a snapshot() first")
            objects, counters, sizes, namespace_bytes = self._snapshot
            self._objects = {p: dict(objs) for p, objs in objects.items()}
            self.counters = dict(counters)
            self._sizes, self._namespace_bytes = dict(sizes), dict(namespace_bytes)
            if self.tracker is not None:
                self.tracker.reset()
            self._rv += 1
            self._events.clear()
            self.epoch += 1
            self._pending.append(("RESET", "", None))

    def close(self) -> None:
        with self.lock:
            self.closed = True
            self.epoch += 1
        with self._cond:
            self._cond.notify_all()
