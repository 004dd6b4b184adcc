"""Streaming watch responses (chunked newline-delimited JSON), bounded by timeoutSeconds and server stop."""

from __future__ import annotations

import time

from . import columns, errors, selectors
from .handlers import TABLE_TYPE, WatchRequest, dumps
from .versions import from_storage

DEFAULT_TIMEOUT = 1800.0
POLL = 0.5


def _event_object(watch: WatchRequest, obj: dict, first: list[bool]) -> dict:
    if not watch.table:
        return obj
    table = columns.table_for(watch.res, [obj], obj["metadata"].get("resourceVersion", ""), watch.include_object)
    if not first[0]:
        table["columnDefinitions"] = []
    first[0] = False
    return table


def stream(app, watch: WatchRequest, write_chunk, begin=lambda: None, alive=lambda: True) -> None:
    """Write events with write_chunk(bytes) until timeout, reset, stop, a broken connection, or alive() is False
    (its listener was closed)."""
    store, cluster = app.store, app.cluster
    query = watch.query

    def q(name, default=None):
        values = query.get(name)
        return values[-1] if values else default

    label_reqs = selectors.parse_labels(q("labelSelector"))
    field_reqs = selectors.parse_fields(q("fieldSelector"))
    try:
        timeout = min(float(q("timeoutSeconds") or DEFAULT_TIMEOUT), DEFAULT_TIMEOUT)
    except ValueError:
        raise errors.bad_request("timeoutSeconds must be a number") from None
    deadline = time.monotonic() + timeout
    namespace = watch.namespace if watch.res.namespaced else None
    first = [True]

    def matches(obj: dict) -> bool:
        if namespace is not None and obj["metadata"].get("namespace") != namespace:
            return False
        return label_reqs.matches(obj["metadata"].get("labels")) and \
            selectors.fields_match(field_reqs, obj)

    def send(event_type: str, obj: dict) -> None:
        write_chunk(dumps({"type": event_type, "object": _event_object(watch, obj, first)}) + b"\n")

    with store.lock:
        epoch = store.epoch
        start_rv = store.resource_version
        rv_param = q("resourceVersion")
        initial = []
        if not rv_param or rv_param == "0" or q("sendInitialEvents") == "true":
            initial, _ = cluster.list(watch.res, namespace, q("labelSelector"), q("fieldSelector"))
        else:
            try:
                start_rv = int(rv_param)
            except ValueError:
                raise errors.bad_request(f"invalid resource version: {rv_param}") from None
    begin()  # the request is valid: send the 200 headers now, as the real server does
    for obj in initial:
        send("ADDED", obj)
    if q("sendInitialEvents") == "true":
        mark = {"kind": watch.res.kind, "apiVersion": watch.res.api_version,
                "metadata": {"resourceVersion": str(start_rv),
                             "annotations": {"k8s.io/initial-events-end": "true"}}}
        write_chunk(dumps({"type": "BOOKMARK", "object": mark}) + b"\n")
    while not app.stopping and not store.closed and store.epoch == epoch and alive():
        events, ok = store.events_since(start_rv, watch.res.key)
        if not ok:
            gone = errors.ApiError(410, "Expired", f"too old resource version: {start_rv}")
            write_chunk(dumps({"type": "ERROR", "object": gone.status()}) + b"\n")
            return
        for rv, event_type, obj in events:
            start_rv = max(start_rv, rv)
            if matches(obj):
                send(event_type, from_storage(watch.res, obj))
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return
        if not events:
            store.wait(min(POLL, remaining))


CONTENT_TYPES = {True: TABLE_TYPE, False: "application/json"}
