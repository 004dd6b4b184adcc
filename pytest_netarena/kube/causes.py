"""The causes of a 422 Invalid answer (field, reason, message), worded as the real apiserver words them."""

from __future__ import annotations

import json

Cause = tuple[str, str, str]


def _quote(value) -> str:
    return json.dumps(value) if isinstance(value, str) else str(value)


def required(field: str, detail: str = "") -> Cause:
    return field, "FieldValueRequired", "Required value" + (f": {detail}" if detail else "")


def bad_value(field: str, value, detail: str) -> Cause:
    return field, "FieldValueInvalid", f"Invalid value: {_quote(value)}: {detail}"


def unsupported(field: str, value, supported) -> Cause:
    return field, "FieldValueNotSupported", (f"Unsupported value: {_quote(value)}: supported values: "
                                             + ", ".join(f'"{s}"' for s in supported))


def forbidden(field: str, detail: str) -> Cause:
    return field, "FieldValueForbidden", f"Forbidden: {detail}"


def duplicate(field: str, value) -> Cause:
    return field, "FieldValueDuplicate", f"Duplicate value: {_quote(value)}"


def too_many(field: str, count: int, most: int) -> Cause:
    return field, "FieldValueTooMany", f"Too many: {count}: must have at most {most} items"
