"""Decoding request bodies: JSON, YAML and Kubernetes protobuf, with 400/415 Status errors."""

from __future__ import annotations

import json

from . import errors


def decode_json(raw: bytes):
    if not raw.strip():
        raise errors.bad_request("the request body is empty; expected a JSON object")
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as error:
        raise errors.bad_request(f"couldn't get version/kind; json parse error: {error}") from None


def decode_yaml(raw: bytes):
    from ..core.safe_yaml import load_documents

    try:
        docs = load_documents(raw)
    except ValueError as error:
        raise errors.bad_request(f"error converting YAML to JSON: {error}") from None
    if len(docs) != 1:
        raise errors.bad_request("the request body must contain exactly one YAML document")
    return json.loads(json.dumps(docs[0], default=str))


def decode(content_type: str, raw: bytes):
    if content_type in ("application/json", "", "*/*", "text/plain"):
        return decode_json(raw)
    if content_type in ("application/yaml", "application/x-yaml", "text/yaml", "application/apply-patch+yaml"):
        return decode_yaml(raw)
    if content_type == "application/vnd.kubernetes.protobuf":
        from . import protobuf

        return protobuf.decode_object(raw)
    raise errors.unsupported_media(content_type, ["application/json", "application/yaml",
                                                  "application/vnd.kubernetes.protobuf"])
