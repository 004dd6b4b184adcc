"""Reading an agent's reply (its code block) and judging the JSON answer its code returned."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from . import canon
from .canon import Canon

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+.-]*)[^\n]*\n(.*?)(?:\n[ \t]*```|```|\Z)", re.DOTALL)
ANSWER_TYPES = ("text", "list", "graph")


def extract_code(reply: str) -> str | None:
    """The Python code in a reply: the fenced block defining process_graph, else the first Python
    block, else the text from `def process_graph` on; None when there is no code at all."""
    blocks = [(lang.lower(), body) for lang, body in _FENCE.findall(reply)]
    for _, body in blocks:
        if re.search(r"^\s*def\s+process_graph\s*\(", body, re.MULTILINE):
            return body.strip("\n")
    for lang, body in blocks:
        if lang in ("python", "py", "python3") and body.strip():
            return body.strip("\n")
    start = re.search(r"^[ \t]*def\s+process_graph\s*\(", reply, re.MULTILINE)
    if start:
        return reply[start.start():].split("```")[0].strip("\n")
    return None


class BadAnswer(ValueError):
    """The returned value does not follow the answer format (an agent error)."""


@dataclass(frozen=True)
class Answer:
    type: str
    data: Any
    graph: Canon | None  #: the updated graph, when one was returned


def parse_answer(value: Any) -> Answer:
    if not isinstance(value, dict):
        raise BadAnswer(f"process_graph must return a dict with 'type' and 'data', not {type(value).__name__}")
    kind = value.get("type")
    if kind not in ANSWER_TYPES:
        raise BadAnswer(f"the answer's 'type' must be one of {', '.join(ANSWER_TYPES)}, not {kind!r}")
    graph_value = value.get("updated_graph")
    if graph_value is None and kind == "graph" and isinstance(value.get("data"), dict):
        graph_value = value["data"]  # tolerated: the graph given as data
    try:
        graph = canon.from_node_link(graph_value) if graph_value is not None else None
    except canon.BadGraph as error:
        raise BadAnswer(str(error)) from error
    if kind == "graph" and graph is None:
        raise BadAnswer("a 'graph' answer needs the new graph in 'updated_graph' (node-link JSON)")
    return Answer(kind, value.get("data"), graph)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def compare_count(expected: int, actual: Any) -> str:
    number = _number(actual)
    if number is None:
        return f"expected the number {expected}, got {actual!r}"
    return "" if number == expected else f"expected {expected}, got {actual!r}"


def compare_names(expected: list[str], actual: Any) -> str:
    if not isinstance(actual, list) or not all(isinstance(x, str) for x in actual):
        return f"expected a list of names, got {str(actual)[:200]}"
    if sorted(actual) == sorted(expected):
        return ""
    missing = sorted(set(expected) - set(actual))[:5]
    extra = sorted(set(actual) - set(expected))[:5]
    dupes = len(actual) != len(set(actual))
    return (f"wrong names: missing {missing}, unexpected {extra}"
            + (", duplicates in the answer" if dupes else "") + f" ({len(actual)} given, {len(expected)} expected)")


def compare_ranking(expected: list[list[Any]], actual: Any) -> str:
    """Order matters; names of equal capacity may come in any order among themselves."""
    if not isinstance(actual, list) or not all(
        isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) and _number(p[1]) is not None
        for p in actual
    ):
        return f"expected a list of [name, capacity] pairs, got {str(actual)[:200]}"
    if len(actual) != len(expected):
        return f"expected {len(expected)} pairs, got {len(actual)}"
    for position, ((name, capacity), (got_name, got_capacity)) in enumerate(zip(expected, actual), 1):
        if not math.isclose(capacity, _number(got_capacity), rel_tol=canon.REL_TOL):  # type: ignore[arg-type]
            return f"position {position}: capacity {got_capacity!r}, expected {capacity!r} ({name})"
    groups: dict[Any, tuple[list[str], list[str]]] = {}
    for (name, capacity), (got_name, _) in zip(expected, actual):
        want, got = groups.setdefault(capacity, ([], []))
        want.append(name)
        got.append(got_name)
    for capacity, (want, got) in groups.items():
        if sorted(want) != sorted(got):
            return f"wrong names among capacity {capacity}: {sorted(got)[:5]}, expected {sorted(want)[:5]}"
    return ""
