"""Bounded plain-data decoding of an answer's bytes: JSON types only, capped in size, items and depth.

The grader never unpickles or evaluates what an answer produced, and never holds an object whose
methods the answer wrote: dict, list, str, int, float, bool and None are all it gets. The caps keep
a hostile answer from growing the grader (a 3-byte `{}` becomes a 64-byte dict: items are capped,
not only bytes).
"""

from __future__ import annotations

import json
from typing import Any


class Undecodable(ValueError):
    """The bytes are not a plain JSON value within the caps (an agent error; the message says why)."""


def _no_constant(name: str) -> Any:
    raise Undecodable(f"{name} is not a JSON number (return finite numbers)")


def plain(data: bytes, max_bytes: int, max_items: int, max_depth: int = 40) -> Any:
    if len(data) > max_bytes:
        raise Undecodable(f"the return value is {len(data)} bytes of JSON, over the limit of {max_bytes}")
    items = data.count(b",") + data.count(b"[") + data.count(b"{")  # >= the containers and their elements
    if items > max_items:
        raise Undecodable(f"the return value holds over {max_items} items (lists, objects and their elements)")
    try:
        value = json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except Undecodable:
        raise
    except RecursionError as error:
        raise Undecodable(f"the return value is nested deeper than {max_depth} levels") from error
    except (ValueError, UnicodeDecodeError) as error:
        raise Undecodable(f"the return value is not valid JSON: {str(error)[:200]}") from error
    _check_depth(value, max_depth)
    return value


def _check_depth(value: Any, max_depth: int) -> None:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > max_depth:
            raise Undecodable(f"the return value is nested deeper than {max_depth} levels")
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values() if isinstance(child, (dict, list)))
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item if isinstance(child, (dict, list)))
