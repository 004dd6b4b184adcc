"""Bounded plain-data decoding of what a boxed child returned: JSON types only, capped in size, items and depth.

The grader never unpickles or evaluates what an answer produced, and never holds an object whose
methods the answer wrote: dict, list, str, int, float, bool and None are all it gets. The caps keep
a hostile answer from growing the grader (a 3-byte `{}` becomes a 64-byte dict: items are capped,
not only bytes).
"""

from __future__ import annotations

import json
from typing import Any


#: how deep a returned value may nest
MAX_DEPTH = 40


class Undecodable(ValueError):
    """The bytes are not a plain JSON value within the caps (an agent error; the message says why)."""


def _no_constant(name: str) -> Any:
    raise Undecodable(f"{name} is not a JSON number (return finite numbers)")


def over_items(max_items: int) -> str:
    return f"the return value holds over {max_items} items (lists, objects and their elements)"


def too_deep(max_depth: int) -> str:
    return f"the return value is nested deeper than {max_depth} levels"


def plain(data: bytes, max_bytes: int, max_items: int, max_depth: int = MAX_DEPTH, check_depth: bool = True) -> Any:
    """The value; check_depth False leaves the depth of valid JSON to the caller (nested_too_deep)."""
    if len(data) > max_bytes:
        raise Undecodable(f"the return value is {len(data)} bytes of JSON, over the limit of {max_bytes}")
    items = data.count(b",") + data.count(b"[") + data.count(b"{")  # >= the containers and their elements
    if items > max_items:
        raise Undecodable(over_items(max_items))
    try:
        value = json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except Undecodable:
        raise
    except RecursionError as error:
        raise Undecodable(too_deep(max_depth)) from error
    except (ValueError, UnicodeDecodeError) as error:
        raise Undecodable(f"the return value is not valid JSON: {str(error)[:200]}") from error
    if check_depth and nested_too_deep(data, value, max_depth):
        raise Undecodable(too_deep(max_depth))
    return value


def nested_too_deep(data: bytes, value: Any, max_depth: int) -> bool:
    """Whether valid JSON text nests deeper than max_depth, read off its brackets at C speed (a graph's
    text: 3 ms, where walking the decoded value takes 30); text with a backslash, where a quote may be
    escaped, has its decoded value walked."""
    if b"\\" in data:
        return _walk_too_deep(value, max_depth)
    import numpy as np

    text = np.frombuffer(data, dtype=np.uint8)
    # unescaped, every quote opens or closes a string (no byte of a multi-byte UTF-8 character is ASCII):
    # a bracket after an odd number of quotes is inside one
    outside = np.bitwise_xor.accumulate(text == ord('"')) == 0
    opens = ((text == ord("[")) | (text == ord("{"))) & outside
    closes = ((text == ord("]")) | (text == ord("}"))) & outside
    steps = opens[opens | closes].astype(np.int32) * 2 - 1  # +1 per opening bracket, -1 per closing one
    return bool(len(steps)) and int(np.cumsum(steps).max()) > max_depth


def _walk_too_deep(value: Any, max_depth: int) -> bool:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > max_depth:
            return True
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values() if isinstance(child, (dict, list)))
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item if isinstance(child, (dict, list)))
    return False


#: the kinds a result's notes may name (zygote.scan): restored by --compat netarena
NOTED_KINDS = ("tuple", "set")
NOTED_PREFIXES = ("numpy.", "networkx.")


def notes(data: bytes, max_bytes: int, max_items: int) -> tuple[tuple[tuple[str | int, ...], str], ...]:
    """A result's notes, [[path, kind], ...], as ((path, kind), ...); Undecodable unless well formed."""
    if not data:
        return ()
    listed = plain(data, max_bytes, max_items)
    found = []
    for entry in listed if isinstance(listed, list) else [None]:
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], list) and isinstance(entry[1], str)
                and all(type(step) in (str, int) for step in entry[0])
                and (entry[1] in NOTED_KINDS or entry[1].startswith(NOTED_PREFIXES))):
            raise Undecodable("the result's notes on converted types are malformed")
        found.append((tuple(entry[0]), entry[1]))
    return tuple(found)
