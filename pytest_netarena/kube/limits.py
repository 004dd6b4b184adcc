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
#: CPU seconds one HTTP request may spend in the server (a real server's requests time out after 60 s
#: of wall clock; this one runs inside the harness, so it is bounded by what it computes)
REQUEST_CPU_S = 2.0

_local = threading.local()


@contextmanager
def cpu_budget(seconds: float | None) -> Iterator[None]:
    """Bound the CPU time of the request this thread serves (None: unbounded, the harness's own calls)."""
    previous = getattr(_local, "deadline", None)
    _local.deadline = None if seconds is None else time.thread_time() + seconds
    try:
        yield
    finally:
        _local.deadline = previous


def spend() -> None:
    """Called inside loops whose length the request chooses: 504 Timeout once its CPU time is used up."""
    deadline = getattr(_local, "deadline", None)
    if deadline is not None and time.thread_time() > deadline:
        raise errors.timeout()


def check_json_patch(operations) -> None:
    """413 for a JSON Patch of more operations than a real server applies."""
    if isinstance(operations, list) and len(operations) > MAX_JSON_PATCH_OPERATIONS:
        raise errors.entity_too_large(f"The allowed maximum operations in a JSON patch is "
                                      f"{MAX_JSON_PATCH_OPERATIONS}, got {len(operations)}")


def encoded_size(value, limit: int) -> int:
    """The size of value as compact JSON, counted only until it passes limit (then some number > limit).

    Strings count their characters plus quotes (escapes are not priced): an estimate, never a
    serialisation, so a copy of a huge subtree costs no more than limit to price."""
    size, stack = 0, [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            size += 1 + len(item)  # braces, colons and commas
            for key, child in item.items():
                size += len(key) + 3
                stack.append(child)
        elif isinstance(item, list):
            size += 1 + len(item)
            stack.extend(item)
        elif isinstance(item, str):
            size += len(item) + 2
        else:
            size += 5  # numbers, booleans, null
        if size > limit:
            return size
    return size


def check_object_size(obj: dict) -> None:
    """The error etcd gives a write of an object over its request limit (a real server answers 500 with it)."""
    if len(json.dumps(obj, separators=(",", ":")).encode()) > MAX_OBJECT_BYTES:
        raise errors.ApiError(500, "", "etcdserver: request is too large")
