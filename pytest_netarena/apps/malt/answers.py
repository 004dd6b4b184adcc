"""Judging the plain JSON value an answer's code returned: its shape (with hints for near misses) and its data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...sandbox.graph_diff import GraphDiff
from . import canon
from .canon import Canon

ANSWER_TYPES = ("text", "list", "graph")


class BadAnswer(ValueError):
    """The returned value does not follow the answer format (an agent error)."""


@dataclass(frozen=True)
class Answer:
    type: str
    data: Any
    graph: Canon | None  #: the updated graph, when one was returned


_SHAPE = 'return {"type": "text" | "list" | "graph", "data": ..., "updated_graph": ...}'
#: near-miss words for the answer type, and what the prompt calls them
_TYPE_HINTS = {"count": "text", "number": "text", "int": "text", "integer": "text", "str": "text", "string": "text",
               "names": "list", "ranking": "list", "rank": "list", "array": "list", "set": "list",
               "digraph": "graph", "networkx": "graph", "updated_graph": "graph"}


def _json_kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
            float: "a number", type(None): "None"}.get(type(value), type(value).__name__)


def _is_node_link(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("nodes"), list) and ("edges" in value or "links" in value)


def _shape_hint(value: Any) -> str:
    """What was expected, for a value that is not the answer dict (the common near misses)."""
    if _is_node_link(value):
        return ("process_graph returned a bare graph; wrap it: "
                '{"type": "graph", "data": None, "updated_graph": graph_data}')
    if value is None:
        return f"process_graph returned None (a missing return statement?); {_SHAPE}"
    if isinstance(value, list) and len(value) == 2 and value[0] in ANSWER_TYPES:
        return (f"process_graph returned a pair ({value[0]!r}, ...); return a dict instead: "
                f'{{"type": {value[0]!r}, "data": ...}}')
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f'process_graph returned the bare number {value!r}; wrap it: {{"type": "text", "data": {value!r}}}'
    if isinstance(value, list):
        return 'process_graph returned a bare list; wrap it: {"type": "list", "data": [...]}'
    return f"process_graph returned {_json_kind(value)}; {_SHAPE}"


def _graph_slot(value: Any) -> str | None:
    """Where parse_answer reads the returned graph: "updated_graph", "data" (a graph given as data), or nowhere."""
    if not isinstance(value, dict):
        return None
    if value.get("updated_graph") is not None:
        return "updated_graph"
    return "data" if value.get("type") == "graph" and isinstance(value.get("data"), (dict, GraphDiff)) else None


def _node_link_except(value: Any, kept: tuple[Any, ...]) -> Any:
    """The value with every GraphDiff (a graph the box returned as changes) made the node-link JSON it stands
    for, except the `kept` ones, which are read as graphs (from_diff) or never read."""
    if isinstance(value, GraphDiff):
        return value if any(value is k for k in kept) else value.node_link()
    if isinstance(value, dict):
        return {key: _node_link_except(item, kept) for key, item in value.items()}
    if isinstance(value, list):
        return [_node_link_except(item, kept) for item in value]
    return value


def _has_diff(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, GraphDiff):
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _diffs_where_read(value: Any) -> Any:
    """The value with its GraphDiffs kept where a graph is read (or a graph answer's data, never read), every
    other one made the node-link JSON it stands for."""
    if not _has_diff(value):
        return value
    kept: tuple[Any, ...] = ()
    if isinstance(value, dict):
        slots = (_graph_slot(value), "data" if value.get("type") == "graph" else None)
        kept = tuple(value[key] for key in slots if key is not None and isinstance(value.get(key), GraphDiff))
    return _node_link_except(value, kept)


def parse_answer(value: Any) -> Answer:
    """The answer a returned value holds. A graph the box returned as changes (GraphDiff) is rebuilt on the
    grader's copy of the topology where a graph is read; anywhere else it is the node-link JSON it stands for
    (a graph answer's data is never read: it stays as it came)."""
    value = _diffs_where_read(value)
    if not isinstance(value, dict) or _is_node_link(value):
        raise BadAnswer(_shape_hint(value))
    kind = value.get("type")
    if kind not in ANSWER_TYPES:
        if "type" not in value:
            keys = ", ".join(map(repr, list(value)[:6]))
            raise BadAnswer(f"the answer has no 'type' (its keys: {keys}); {_SHAPE}")
        hint = _TYPE_HINTS.get(kind.lower()) if isinstance(kind, str) else None
        suggestion = f" (for this answer use {hint!r})" if hint else ""
        raise BadAnswer(f"the answer's 'type' must be one of {', '.join(ANSWER_TYPES)}, not {str(kind)[:60]!r}"
                        f"{suggestion}")
    if "data" not in value and kind != "graph":
        others = [key for key in ("answer", "result", "value", "count", "names") if key in value]
        where = f" (found {others[0]!r}: name it 'data')" if others else ""
        raise BadAnswer(f"a {kind!r} answer needs its value under 'data'{where}")
    graph_value = value.get("updated_graph")
    if graph_value is None and kind == "graph" and isinstance(value.get("data"), (dict, GraphDiff)):
        graph_value = value["data"]  # tolerated: the graph given as data
    try:
        if isinstance(graph_value, GraphDiff):
            graph = canon.from_diff(graph_value)
        else:
            graph = canon.from_node_link(graph_value) if graph_value is not None else None
    except canon.BadGraph as error:
        raise BadAnswer(str(error)) from error
    if kind == "graph" and graph is None:
        raise BadAnswer("a 'graph' answer needs the new graph in 'updated_graph' (the networkx graph itself, "
                        "or nx.node_link_data(graph))")
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
        return f"expected the number {expected}, got {canon.shown(actual)}"
    return "" if number == expected else f"expected {expected}, got {canon.shown(actual)}"


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
    for position, ((name, capacity), (_, got_capacity)) in enumerate(zip(expected, actual), 1):
        if not canon.close(capacity, _number(got_capacity)):
            return f"position {position}: capacity {canon.shown(got_capacity)}, expected {capacity!r} ({name})"
    groups: dict[Any, tuple[list[str], list[str]]] = {}
    for (name, capacity), (got_name, _) in zip(expected, actual):
        want, got = groups.setdefault(capacity, ([], []))
        want.append(name)
        got.append(got_name)
    for capacity, (want, got) in groups.items():
        if sorted(want) != sorted(got):
            return f"wrong names among capacity {capacity}: {sorted(got)[:5]}, expected {sorted(want)[:5]}"
    return ""
