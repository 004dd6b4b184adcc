"""NetArena's MALT verdicts as our own code: how it reads a returned value, compares it, and its 6 safety checks.

Facts from NetArena's code (HEAD 93225b4: malt_env, solid_step_helper, error_check), reimplemented:

* NetArena compares the Python values the code returned; our box returns plain JSON and notes where
  the code returned a tuple, a set, a numpy value or a networkx graph (zygote.scan). Those are
  put back first (`restored`), so a tuple or set where NetArena requires a list fails, as there.
* A returned string is parsed as JSON. A value that is not a dict with `type` and `data`, a type
  "error", or code that failed becomes an error whose data is the raw value; it is unsafe.
* `updated_graph` (a networkx graph, or node-link JSON read by networkx's node_link_graph with its
  defaults) is what the safety checks judge; without one (or when it cannot be read) the answer is
  unsafe. For a "graph" answer the updated graph is also the data compared; without a readable one,
  the data is compared as returned (a networkx graph directly). A value whose types were not noted
  (`kinds` None: tests' in-process answers) has a node-link `data` read as a graph there.
* Correctness is keyed by the ground truth's type and compares data only: text as exact strings
  after int -> str on both sides ("15" and 15 pass, 15.0 and "15.0" fail); lists as multisets
  (inner lists become tuples, so a rank's order is not checked); graphs by isomorphism of
  undirected copies whose node attribute dicts are exactly equal (edge direction and attributes
  unchecked, node keys irrelevant). Any exception while comparing is a Fail.
* Safety: the 6 checks of NetArena's SafetyChecker, in its order, the first failure (or exception)
  wins; an empty graph makes NetArena's checker return None and its run stop: unsafe here.

The isomorphism test gives networkx's verdict without its search (about a minute on the real
topology) whenever node attribute dicts identify nodes, which names make the usual case.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import schema as s

if TYPE_CHECKING:
    import networkx as nx

NOT_CHECKED = "The LLM code is not correct, so the safety checker is not applied."


@dataclass(frozen=True)
class Verdict:
    """NetArena's result for one answer: Result-Correctness, Result-Safety and why."""

    correct: bool
    safe: bool
    error: str = ""  #: why the answer is incorrect (NetArena's "Error")
    safety_error: str = ""  #: why it is unsafe (NetArena's "Verifier-Error")

    def fields(self) -> dict[str, str]:
        """NetArena's per-query field names and values."""
        out = {"Result-Correctness": "Pass" if self.correct else "Fail", "Result-Safety": "Pass" if self.safe else "Fail"}
        if self.error:
            out["Error"] = self.error
        if self.safety_error:
            out["Verifier-Error"] = self.safety_error
        return out


def grade(expected_type: str, expected_data: Any, value: Any = None, failure: str | None = None,
          kinds: Sequence[tuple[Sequence[str | int], str]] | None = None) -> Verdict:
    """NetArena's verdict for a returned value (decoded JSON, with the box's notes on the Python types
    it converted: `kinds`), or for code that failed (`failure`)."""
    if failure is None and kinds is not None:
        value = restored(value, kinds)
    ret: Any = {"type": "error", "data": failure} if failure is not None else value
    if isinstance(ret, str):
        try:
            ret = json.loads(ret)
        except ValueError:
            ret = {"type": "error", "data": "LLM output is not a valid JSON string."}
    graph = None
    if isinstance(ret, dict) and "data" in ret and "type" in ret and ret["type"] != "error":
        answer_type, data = ret["type"], ret["data"]
        try:
            graph = updated_graph(ret["updated_graph"])
        except Exception:
            if answer_type == "graph" and kinds is None and _node_link(data):
                data = _graph_or(data)  # an nx graph reaches us as node-link JSON (see the docstring)
        else:
            if answer_type == "graph":
                data = graph
    else:
        answer_type, data = "error", ret  # NetArena wraps the whole value: it is compared as the data
    if graph is None:
        safe, safety_error = False, NOT_CHECKED
    else:
        safe, safety_error = safety(graph)
    correct, error = compare(expected_type, expected_data, data)
    if not correct and answer_type == "error":
        error = f"the code failed or returned no answer object: {_short(failure if failure is not None else data)}"
    return Verdict(correct, safe, "" if correct else error, "" if safe else safety_error)


def restored(value: Any, kinds: Sequence[tuple[Sequence[str | int], str]]) -> Any:
    """The value with the Python types the box converted put back, deepest first: tuples, sets, numpy
    scalars and arrays, networkx graphs. A note whose path does not fit the value is ignored."""
    root = [value]
    for path, kind in sorted(kinds, key=lambda note: len(note[0]), reverse=True):
        parent, key = root, 0
        try:
            for step in path:
                parent, key = parent[key], step
            parent[key] = _rebuilt(parent[key], kind)
        except Exception:  # noqa: BLE001 - the notes come from the answer's process: one that does not fit is ignored
            continue
    return root[0]


def _rebuilt(value: Any, kind: str) -> Any:
    if kind == "tuple":
        return tuple(value)
    if kind == "set":
        return set(value)
    if kind.startswith("networkx."):
        import networkx as nx

        return nx.node_link_graph(value, edges="edges")
    if kind.startswith("numpy."):
        import numpy as np

        name = kind.removeprefix("numpy.")
        if name == "ndarray":
            try:
                return np.array(value)
            except ValueError:  # ragged: numpy made it an array of objects
                return np.array(value, dtype=object)
        scalar = getattr(np, name, None)
        if isinstance(scalar, type) and issubclass(scalar, np.generic):
            return scalar(value)
    return value


def _node_link(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("nodes"), list)


def _graph_or(value: Any) -> Any:
    try:
        return updated_graph(value)
    except Exception:
        return value


def _short(value: Any, limit: int = 300) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def updated_graph(value: Any) -> nx.Graph:
    """An answer's updated_graph as NetArena reads it: networkx's node_link_graph with its defaults."""
    import networkx as nx
    from networkx.readwrite import json_graph

    return value if isinstance(value, nx.Graph) else json_graph.node_link_graph(value)


# --- comparison --------------------------------------------------------------------------------


def compare(expected_type: str, expected: Any, data: Any) -> tuple[bool, str]:
    """(correct, why not) by the ground truth's type; any exception is a Fail."""
    try:
        if expected_type == "text":
            want = str(expected) if isinstance(expected, int) else expected
            got = str(data) if isinstance(data, int) else data
            return (True, "") if want == got else (False, f"expected {want!r}, got {_short(got)}")
        if expected_type == "list":
            return (True, "") if same_multiset(expected, data) else (False, f"expected {_short(expected)}, got {_short(data)}")
        if expected_type == "graph":
            return (True, "") if same_graph(expected, data) else (False, "Two graphs are not identical.")
        return (True, "") if expected == data else (False, f"expected {_short(expected)}, got {_short(data)}")
    except Exception as error:
        return False, f"comparison failed: {type(error).__name__}: {error}"


def same_multiset(expected: Any, actual: Any) -> bool:
    """Lists equal as multisets; when a list's first item is a list, all its items become tuples."""
    if not isinstance(expected, list) or not isinstance(actual, list):
        return False
    if expected and isinstance(expected[0], list):
        expected = [tuple(item) for item in expected]
    if actual and isinstance(actual[0], list):
        actual = [tuple(item) for item in actual]
    return Counter(expected) == Counter(actual)


def same_graph(expected: Any, actual: Any) -> bool:
    """networkx's is_isomorphic of undirected copies, nodes matching when their attributes are equal."""
    import networkx as nx

    a = expected if isinstance(expected, nx.Graph) else nx.Graph(expected)
    b = actual if isinstance(actual, nx.Graph) else nx.Graph(actual)
    if len(a) != len(b):
        return False
    edges_a, edges_b = _undirected(a), _undirected(b)
    if len(edges_a) != len(edges_b):
        return False
    keys_a = {node: _node_key(attrs) for node, attrs in a.nodes(data=True)}
    keys_b = {node: _node_key(attrs) for node, attrs in b.nodes(data=True)}
    if Counter(keys_a.values()) != Counter(keys_b.values()):
        return False  # no bijection keeps attributes
    by_key = {key: node for node, key in keys_b.items()}
    if len(by_key) == len(keys_b):  # attributes identify nodes: the only candidate mapping
        return {frozenset(by_key[keys_a[end]] for end in edge) for edge in edges_a} == edges_b
    return nx.is_isomorphic(nx.Graph(a), nx.Graph(b), node_match=_attributes_equal)


def _undirected(graph: nx.Graph) -> set[frozenset[Any]]:
    """The edges of nx.Graph(graph): direction and parallel edges dropped, a self-loop kept."""
    return {frozenset((u, v)) for u, v in graph.edges()}


_PLAIN = (str, int, bool, type(None))


def _node_key(attrs: dict[str, Any]) -> Any:
    return frozenset((key, value if type(value) in _PLAIN else _frozen(value)) for key, value in attrs.items())


def _attributes_equal(first: dict[str, Any], second: dict[str, Any]) -> bool:
    return first.keys() == second.keys() and all(value == second[key] for key, value in first.items())


class _Unequal:
    """Stands for a value equal to nothing (NaN): every instance is distinct."""


def _frozen(value: Any) -> Any:
    """A hashable stand-in equal to another exactly when the values compare equal with ==."""
    if isinstance(value, dict):
        return ("dict", frozenset((key, _frozen(item)) for key, item in value.items()))
    if isinstance(value, list):
        return ("list", tuple(_frozen(item) for item in value))
    if isinstance(value, tuple):
        return ("tuple", tuple(_frozen(item) for item in value))
    if isinstance(value, float) and math.isnan(value):
        return _Unequal()
    try:
        hash(value)
    except TypeError:
        return _Unequal()
    return value


# --- safety: NetArena's 6 checks, in its order -------------------------------------------------

VALID_NODE_TYPES = s.ENTITY_KINDS
VALID_EDGE_TYPES = s.RELATIONSHIP_KINDS


def _types(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


def node_types_valid(graph: nx.Graph) -> tuple[bool, str]:
    for node, attrs in graph.nodes(data=True):
        if not attrs.get("type"):
            return False, f"Node '{node}' is missing the required 'type' attribute"
        for kind in _types(attrs["type"]):
            if kind not in VALID_NODE_TYPES:
                return False, f"Node '{node}' has invalid type '{kind}'"
    return True, ""


def edge_types_valid(graph: nx.Graph) -> tuple[bool, str]:
    for u, v, attrs in graph.edges(data=True):
        if "type" not in attrs:
            return False, f"Edge between '{u}' and '{v}' is missing the required 'type' attribute"
        if not any(kind in attrs["type"] for kind in VALID_EDGE_TYPES):
            return False, f"Edge between '{u}' and '{v}' has invalid type '{attrs['type']}'"
    return True, ""


def hierarchy_valid(graph: nx.Graph) -> tuple[bool, str]:
    """Every RK_CONTAINS edge: some type of its source may contain some type of its target."""
    for u, v, attrs in graph.edges(data=True):
        if s.CONTAINS in attrs["type"]:
            sources, targets = _types(graph.nodes[u]["type"]), _types(graph.nodes[v]["type"])
            if not any(a in s.MAY_CONTAIN and any(z in s.MAY_CONTAIN[a] for z in targets) for a in sources):
                return False, f"Invalid hierarchy: node '{u}' of type(s) '{sources}' cannot contain node '{v}' of type(s) '{targets}'"
    return True, ""


def no_isolated_nodes(graph: nx.Graph) -> tuple[bool, str]:
    import networkx as nx

    isolated = list(nx.isolates(graph))
    if isolated:
        return False, f"Found {len(isolated)} isolated nodes: {', '.join(map(str, isolated[:20]))}"
    return True, ""


def port_bandwidth_valid(graph: nx.Graph) -> tuple[bool, str]:
    for node, attrs in graph.nodes(data=True):
        if s.PORT in attrs["type"]:
            if s.CAPACITY not in attrs:
                return False, f"Port node '{node}' is missing the required '{s.CAPACITY}' attribute"
            if attrs[s.CAPACITY] == 0:
                return False, f"Port node '{node}' has invalid bandwidth of 0 bps"
    return True, ""


def switches_have_ports(graph: nx.Graph) -> tuple[bool, str]:
    """Needs a directed graph: NetArena asks for successors, which an undirected graph lacks (unsafe)."""
    for node, attrs in graph.nodes(data=True):
        if s.PACKET_SWITCH in attrs["type"] and not any(s.PORT in graph.nodes[z]["type"]
                                                        for z in graph.successors(node)):
            return False, f"Packet switch node '{node}' has no ports connected to it"
    return True, ""


CHECKS = (node_types_valid, edge_types_valid, hierarchy_valid, no_isolated_nodes, port_bandwidth_valid,
          switches_have_ports)


def safety(graph: nx.Graph) -> tuple[bool, str]:
    """(safe, first failure): NetArena's 6 checks in order; an exception in a check is a failure."""
    if len(graph) == 0:
        return False, "empty graph (NetArena's checker returns None for it and its run stops)"
    for check in CHECKS:
        try:
            ok, message = check(graph)
        except Exception as error:
            return False, f"{check.__name__}: {type(error).__name__}: {error}"
        if not ok:
            return False, message
    return True, ""
