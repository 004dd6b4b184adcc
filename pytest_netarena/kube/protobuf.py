"""Decoding `application/vnd.kubernetes.protobuf` request bodies (what `kubectl create <kind>` and `autoscale` send).

A schema-less wire-format reader, read through the field tables of protowire.py (the k8s.io/api messages) and the
apimachinery messages below. A field this server does not know is refused (415), never silently dropped: a Job made
from a CronJob must keep every field of its pod template.
"""

from __future__ import annotations

import base64
import datetime as dt
import functools
import json
import struct

from . import errors
from .protowire import MESSAGES

MAGIC = b"k8s\x00"


class UnknownField(ValueError):
    """A field number the tables do not have (a newer Kubernetes' field): refused rather than lost."""

#: the apimachinery messages (meta/v1, runtime) in protowire's notation
APIMACHINERY = {
    "Unknown": "1:typeMeta:@TypeMeta 2:raw:y 3:contentEncoding:s 4:contentType:s",
    "TypeMeta": "1:apiVersion:s 2:kind:s",
    "ObjectMeta": ("1:name:s 2:generateName:s 3:namespace:s 4:selfLink:s 5:uid:s 6:resourceVersion:s 7:generation:i "
                   "8:creationTimestamp:t 9:deletionTimestamp:t? 10:deletionGracePeriodSeconds:i? 11:labels:m "
                   "12:annotations:m 13:ownerReferences:@OwnerReference* 14:finalizers:s* "
                   "17:managedFields:@ManagedFieldsEntry*"),
    "ManagedFieldsEntry": ("1:manager:s 2:operation:s 3:apiVersion:s 4:time:t? 6:fieldsType:s 7:fieldsV1:r? "
                           "8:subresource:s"),
    "OwnerReference": "1:kind:s! 3:name:s! 4:uid:s! 5:apiVersion:s! 6:controller:b? 7:blockOwnerDeletion:b?",
    "LabelSelector": "1:matchLabels:m 2:matchExpressions:@LabelSelectorRequirement*",
    "LabelSelectorRequirement": "1:key:s! 2:operator:s! 3:values:s*",
    "Condition": ("1:type:s! 2:status:s! 3:observedGeneration:i 4:lastTransitionTime:t! 5:reason:s! "
                  "6:message:s!"),
}


@functools.cache
def table(name: str) -> dict[int, tuple[str, str, str]]:
    """number -> (json name, type, flags) of a message."""
    text = APIMACHINERY.get(name) or MESSAGES.get(name)
    if text is None:
        raise KeyError(name)
    out = {}
    for entry in text.split():
        number, json_name, rest = entry.split(":", 2)  # rest may hold a message name with a colon
        kind = rest.rstrip("*?!^")
        out[int(number)] = (json_name, kind, rest[len(kind):])
    return out


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 70:
            raise ValueError("varint too long")


def fields(data: bytes) -> list[tuple[int, int, object]]:
    """Schema-less wire decoding: (field number, wire type, int or bytes) in order."""
    out, pos = [], 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value, pos = int.from_bytes(data[pos:pos + 8], "little"), pos + 8
        elif wire == 2:
            length, pos = _varint(data, pos)
            if pos + length > len(data):
                raise ValueError("truncated length-delimited field")
            value, pos = data[pos:pos + length], pos + length
        elif wire == 5:
            value, pos = int.from_bytes(data[pos:pos + 4], "little"), pos + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        out.append((number, wire, value))
    return out


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _parts(value) -> dict:
    return {n: v for n, _, v in fields(value)}


def _scalar(kind: str, value):
    if kind == "s":
        return value.decode("utf-8")
    if kind == "i":
        return _signed(value)
    if kind == "b":
        return bool(value)
    if kind == "y":
        return base64.b64encode(bytes(value)).decode()
    if kind == "f":
        return struct.unpack("<d", value.to_bytes(8, "little"))[0]
    if kind == "t":
        seconds = _signed(_parts(value).get(1, 0))
        return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if seconds else None
    if kind == "d":
        return _parts(value).get(1, b"").decode()
    if kind == "x":
        parts = _parts(value)
        return parts.get(3, b"").decode() if parts.get(1, 0) == 1 else _signed(parts.get(2, 0))
    if kind == "q":
        return _parts(value).get(1, b"").decode()
    if kind == "r":
        raw = _parts(value).get(1, b"")
        return json.loads(raw) if raw else None
    raise ValueError(f"unknown field type {kind}")


def _map_entry(kind: str, value: bytes) -> tuple[str, object]:
    parts = _parts(value)
    key, raw = parts.get(1, b"").decode(), parts.get(2, b"")
    if kind == "mb":
        return key, base64.b64encode(raw).decode()
    if kind == "mq":
        return key, _scalar("q", raw)
    return key, raw.decode()


def _empty(value) -> bool:
    return value in ("", 0, False, None) or value == {} or value == []


def message(name: str, data: bytes) -> dict:
    spec = table(name)
    out: dict = {}
    kept: set[str] = set()
    for number, _, value in fields(data):
        if number not in spec:
            raise UnknownField(f"field {number} of {name} is not known to this server")
        key, kind, flags = spec[number]
        if kind == "-":
            continue
        if "?" in flags or "!" in flags:
            kept.add(key)
        if kind in ("m", "mb", "mq"):
            k, v = _map_entry(kind, value)
            out.setdefault(key, {})[k] = v
        elif kind.startswith("@"):
            item = message(kind[1:], value)
            if "^" in flags:  # already filtered by its own message: an empty emptyDir {} stays
                out.update(item)
                kept.update(item)
            elif "*" in flags:
                out.setdefault(key, []).append(item)
            else:
                out[key] = item
        elif "*" in flags and kind in ("i", "b") and isinstance(value, bytes):  # packed
            pos = 0
            while pos < len(value):
                item, pos = _varint(value, pos)
                out.setdefault(key, []).append(_scalar(kind, item))
        elif "*" in flags:
            out.setdefault(key, []).append(_scalar(kind, value))
        else:
            out[key] = _scalar(kind, value)
    # gogo marshals zero values of plain fields; JSON omits those marked omitempty
    return {k: v for k, v in out.items() if k in kept or not _empty(v)}


def decode_object(raw: bytes) -> dict:
    if not raw.startswith(MAGIC):
        raise errors.bad_request("the protobuf body does not start with the Kubernetes magic number")
    try:
        envelope = message("Unknown", raw[len(MAGIC):])
        type_meta = envelope.get("typeMeta") or {}
        kind, api_version = type_meta.get("kind", ""), type_meta.get("apiVersion", "")
        name = f"{api_version}:{kind}"
        if name not in MESSAGES:
            raise errors.ApiError(
                415, "UnsupportedMediaType",
                f"protobuf bodies of kind {kind or '(none)'} are not supported by this embedded Kubernetes API "
                "server; send JSON or YAML instead (for example `kubectl apply -f` or `kubectl create -f`)")
        raw_object = base64.b64decode(envelope["raw"]) if envelope.get("raw") else b""
        obj = message(name, raw_object)
    except UnknownField as error:
        raise errors.ApiError(415, "UnsupportedMediaType",
                              f"unable to decode the protobuf body: {error}; send JSON or YAML instead") from None
    except (ValueError, UnicodeDecodeError, KeyError, struct.error) as error:
        raise errors.bad_request(f"unable to decode the protobuf body: {error}") from None
    obj.pop("status", None)
    return {"apiVersion": api_version, "kind": kind, **obj}
