"""What one request may cost the embedded API server: a real server's patch and object limits, and CPU time."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from . import errors

#: operations in one JSON Patch (the apiserver's maxJSONPatchOperations)
MAX_JSON_PATCH_OPERATIONS = 10_000
#: bytes all `copy` operations of one JSON Patch may add (the apiserver's JSONPatchMaxCopyBytes)
MAX_COPY_BYTES = 3 * 1024 * 1024
#: the largest stored object, as compact JSON (etcd's default --max-request-bytes, 1.5 MiB)
MAX_OBJECT_BYTES = 1_572_864
#: bytes (compact JSON) of all objects stored in one namespace past which no request may write (the
#: harness's and the controllers' own objects count, but they are never refused): it bounds the server's
#: memory and the harness's checks, which read every policy after every step
MAX_NAMESPACE_BYTES = 8 * 1024 * 1024
#: CPU seconds one HTTP request may spend in the server (a real server's requests time out after 60 s
#: of wall clock; this one runs inside the harness, so it is bounded by what it computes)
REQUEST_CPU_S = 2.0

_local = threading.local()


class _Budget:
    """A CPU-time deadline, checked through the wall clock first: a thread cannot have used more CPU
    time than wall time, and reading the wall clock costs far less than reading the thread's CPU clock."""

    def __init__(self, seconds: float) -> None:
        self.cpu_deadline = time.thread_time() + seconds
        self.wall_deadline = time.monotonic() + seconds

    def spend(self) -> None:
        if time.monotonic() < self.wall_deadline:
            return
        left = self.cpu_deadline - time.thread_time()
        if left <= 0:
            raise errors.timeout()
        self.wall_deadline = time.monotonic() + left


@contextmanager
def cpu_budget(seconds: float | None) -> Iterator[None]:
    """Bound the CPU time of the request this thread serves (None: unbounded, the harness's own calls)."""
    previous = getattr(_local, "budget", None)
    _local.budget = None if seconds is None else _Budget(seconds)
    try:
        yield
    finally:
        _local.budget = previous


def spend() -> None:
    """Called inside loops whose length the request chooses: 504 Timeout once its CPU time is used up."""
    budget = getattr(_local, "budget", None)
    if budget is not None:
        budget.spend()


def compact_json(value) -> str:
    """value as the compact JSON whose length the size limits count."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def check_json_patch(operations) -> None:
    """413 for a JSON Patch of more operations than a real server applies."""
    if isinstance(operations, list) and len(operations) > MAX_JSON_PATCH_OPERATIONS:
        raise errors.entity_too_large(f"The allowed maximum operations in a JSON patch is "
                                      f"{MAX_JSON_PATCH_OPERATIONS}, got {len(operations)}")


def object_bytes(obj: dict) -> int:
    """The size the limits count: obj as compact JSON, in bytes."""
    return len(compact_json(obj).encode())


def check_object_size(obj: dict) -> None:
    """The error etcd gives a write of an object over its request limit (a real server answers 500 with it)."""
    if object_bytes(obj) > MAX_OBJECT_BYTES:
        raise errors.ApiError(500, "", "etcdserver: request is too large")


def check_namespace_quota(plural: str, group: str, name: str, size: int, used: int, replaced: int = 0) -> None:
    """403 when writing an object of `size` bytes (in place of one of `replaced` bytes) takes its namespace's
    stored objects, now `used` bytes, over MAX_NAMESPACE_BYTES; a write that does not grow it always passes."""
    if size > replaced and used - replaced + size > MAX_NAMESPACE_BYTES:
        raise errors.quota_exceeded(plural, group, name, size, used, MAX_NAMESPACE_BYTES)
