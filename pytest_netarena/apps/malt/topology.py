"""MALT topologies: a fast textproto loader, a seeded synthetic generator, and the graph conventions.

Graph conventions (stated to agents in the prompt):

* A `networkx.DiGraph`. The node key is the entity name; every node has `name` (== key) and
  `type`, a **sorted list** of EK_* kinds. Entities that share a name are one node whose `type`
  lists all their kinds (in MALT a switch's EK_CHASSIS, EK_CONTROL_POINT and EK_PACKET_SWITCH
  share a name). The fields of an entity's `*_attr` message become node attributes
  (`physical_capacity_bps`, `switch_loc` = {"stage": 2}, `index_within_jupiter`, `jupiter_type`).
* Numbers stay numbers as written: integers are `int` (NetArena's loader turns them into floats).
* Edges run parent -> child and carry `type` = the relationship kind, a string. Several
  relationships joining the same two names are one edge whose type is the last one in file order
  (NetArena's behaviour). In the real file the 320 chassis->control point, chassis->switch and
  control point->switch relationships of each merged switch collapse into one self-loop typed
  RK_CONTROLS per switch: the real topology gives NetArena's 5,493 nodes and 6,424 edges.

The parser is a single-regex tokenizer for the text format of protocol buffers (nested messages,
repeated fields, strings, numbers, enums, comments); it does not need the .proto schema.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...core.errors import UsageError
from . import schema as s

if TYPE_CHECKING:
    import networkx as nx

# one token per match: (field name, value | "" for a message opening, closing brace, bad text)
_TOKEN = re.compile(
    r"""([A-Za-z_][\w.]*)\s*(?::\s*("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|[^\s{}<>#;,"']+)|:?\s*[{<])"""
    r"|([}>])|#[^\n]*|[;,]|(\S)"
)


class TextprotoError(UsageError):
    """The topology file is not valid textproto."""


def _scalar(text: str) -> Any:
    first = text[0]
    if first == '"' or first == "'":
        body = text[1:-1]
        if "\\" in body:
            body = body.encode("latin-1", "backslashreplace").decode("unicode_escape")
        return body
    if first.isdigit() or first in "-+.":
        try:
            return int(text)
        except ValueError:
            pass
        try:
            return float(text.rstrip("fF"))
        except ValueError:
            return text
    if text in _WORDS:
        return _WORDS[text]
    return text  # an enum value such as EK_PORT or JDT_COLO


_WORDS = {"true": True, "True": True, "false": False, "False": False, "inf": float("inf"), "nan": float("nan")}


def parse_textproto(text: str) -> list[tuple[str, dict[str, Any]]]:
    """Top-level fields of a textproto document as (name, value) pairs, in order.

    A message is a dict; a field given more than once becomes a list of its values.
    """
    top: list[tuple[str, Any]] = []
    stack: list[tuple[str, dict[str, Any]]] = []
    message: dict[str, Any] | None = None
    for name, value, close, bad in _TOKEN.findall(text):
        if value:
            item: Any = _scalar(value)
        elif name:
            stack.append((name, message))  # type: ignore[arg-type]
            message = {}
            continue
        elif close:
            if not stack:
                raise TextprotoError("unbalanced closing brace")
            item = message
            name, message = stack.pop()
        elif bad:
            raise TextprotoError(f"unexpected {bad!r} near {_near(text, bad)!r}")
        else:
            continue  # a comment or separator
        if message is None:
            top.append((name, item))
        elif name not in message:
            message[name] = item
        elif isinstance(message[name], list):
            message[name].append(item)
        else:
            message[name] = [message[name], item]
    if stack:
        raise TextprotoError(f"message {stack[-1][0]!r} is not closed")
    return top


def _near(text: str, bad: str) -> str:
    index = text.find(bad)
    return text[max(0, index - 30) : index + 10]


@dataclass(frozen=True)
class Entity:
    kind: str
    name: str
    attrs: dict[str, Any]


@dataclass(frozen=True)
class Relationship:
    kind: str
    a: str  #: parent name
    z: str  #: child name


def records_from_textproto(text: str) -> tuple[list[Entity], list[Relationship]]:
    """The entities and relationships of a MALT textproto document."""
    entities: list[Entity] = []
    relationships: list[Relationship] = []
    for name, value in parse_textproto(text):
        if not isinstance(value, dict):
            continue
        try:
            if name == "entity":
                attrs: dict[str, Any] = {}
                for key, item in value.items():
                    if key == "id":
                        continue
                    if isinstance(item, dict):
                        attrs.update(item)  # flatten port_attr { physical_capacity_bps: ... }
                    else:
                        attrs[key] = item
                entities.append(Entity(value["id"]["kind"], str(value["id"]["name"]), attrs))
            elif name == "relationship":
                relationships.append(
                    Relationship(value["kind"], str(value["a"]["name"]), str(value["z"]["name"]))
                )
        except (KeyError, TypeError) as error:
            raise TextprotoError(f"malformed {name}: missing {error}") from error
    return entities, relationships


def build_graph(entities: Iterable[Entity], relationships: Iterable[Relationship]) -> nx.DiGraph:
    """The DiGraph of the conventions above (entities sharing a name merged into one node)."""
    import networkx as nx

    nodes: dict[str, dict[str, Any]] = {}
    for entity in entities:
        node = nodes.get(entity.name)
        if node is None:
            nodes[entity.name] = {"name": entity.name, "type": [entity.kind], **entity.attrs}
        else:
            if entity.kind not in node["type"]:
                node["type"].append(entity.kind)
            node.update(entity.attrs)
    for node in nodes.values():
        node["type"].sort()
    edges: dict[tuple[str, str], str] = {}
    for rel in relationships:
        edges[(rel.a, rel.z)] = rel.kind
    graph = nx.DiGraph()
    graph.add_nodes_from(nodes.items())
    missing = {n for edge in edges for n in edge if n not in nodes}
    if missing:
        raise TextprotoError(f"relationships name unknown entities: {sorted(missing)[:5]}")
    graph.add_edges_from((a, z, {"type": kind}) for (a, z), kind in edges.items())
    return graph


def copy_graph(graph: nx.DiGraph) -> nx.DiGraph:
    """What `graph.copy()` returns (same class, node, successor and predecessor order, attribute dicts copied
    one level deep), built from networkx's own dicts at once: a quarter of the time on the 5,493-node
    topology, where each mutating query's expected answer needs a copy."""
    if graph.is_multigraph() or not graph.is_directed():
        return graph.copy()
    new = graph.__class__()
    new.graph.update(graph.graph)
    new._node.update((node, data.copy()) for node, data in graph._node.items())
    succ: dict[Any, dict[Any, dict[str, Any]]] = {node: {} for node in graph._node}
    pred: dict[Any, dict[Any, dict[str, Any]]] = {node: {} for node in graph._node}
    for source, targets in graph._adj.items():
        out = succ[source]
        for target, data in targets.items():
            out[target] = pred[target][source] = data.copy()
    new._adj, new._pred = succ, pred
    return new


def load_textproto(path: str | Path) -> nx.DiGraph:
    """Load a MALT textproto file into the DiGraph of the conventions above."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise UsageError(f"cannot read MALT topology {path}: {error.strerror or error}") from error
    return build_graph(*records_from_textproto(text))


# --- synthetic topologies -------------------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    """Dimensions of a synthetic topology (the defaults reproduce the real one's 5,493 nodes)."""

    superblocks: int = 4
    aggs_per_superblock: int = 4
    switches_per_agg: int = 16
    spineblocks: int = 4
    switches_per_spine: int = 16
    ports_per_switch: int = 16

    @property
    def nodes(self) -> int:
        per_switch = 1 + self.ports_per_switch
        superblock = 2 + self.aggs_per_superblock * (2 + self.switches_per_agg * per_switch)
        spine = 3 + self.switches_per_spine * per_switch
        return 1 + self.superblocks * superblock + self.spineblocks * spine


def shape_for_nodes(nodes: int) -> Shape:
    """The shape whose node count is closest to `nodes` (blocks scale; small sizes shrink blocks)."""
    if nodes <= 0:
        raise UsageError("a synthetic topology needs at least one node")
    base = Shape()
    per_block = (base.nodes - 1) // 4
    if nodes >= per_block:
        blocks = max(1, round((nodes - 1) / per_block))
        return Shape(superblocks=blocks, spineblocks=blocks)
    candidates = (
        Shape(1, aggs, switches, 1, switches, ports)
        for aggs in range(1, 5)
        for switches in range(2, 17, 2)
        for ports in range(2, 17)
    )
    return min(candidates, key=lambda shape: (abs(shape.nodes - nodes), -shape.ports_per_switch))


def synthetic_records(shape: Shape = Shape(), seed: int = 0) -> tuple[list[Entity], list[Relationship]]:
    """Entities and relationships of a synthetic MALT topology, a pure function of (shape, seed)."""
    rng = random.Random(seed)
    entities: list[Entity] = []
    rels: list[Relationship] = []

    def entity(kind: str, name: str, **attrs: Any) -> None:
        entities.append(Entity(kind, name, attrs))

    def contains(a: str, z: str) -> None:
        rels.append(Relationship(s.CONTAINS, a, z))

    def switch(name: str, stage: int, parent: str, rack: str, domain: str) -> None:
        entity(s.PACKET_SWITCH, name, switch_loc={"stage": stage})
        entity(s.CHASSIS, name)
        entity(s.CONTROL_POINT, name)
        contains(parent, name)
        contains(rack, name)
        contains(domain, name)
        contains(name, name)  # chassis -> control point
        rels.append(Relationship(s.CONTROLS, name, name))
        for index in range(1, shape.ports_per_switch + 1):
            capacity = 1_000_000_000
            if rng.random() < 0.02:
                capacity = rng.choice((2, 4, 5, 10)) * 1_000_000_000
            entity(s.PORT, f"{name}.p{index}", physical_capacity_bps=capacity)
            contains(name, f"{name}.p{index}")

    def switches(prefix: str, count: int, low_stage: int, parent: str, rack: str, domain: str) -> None:
        half = (count + 1) // 2
        for index in range(count):
            stage = low_stage if index < half else low_stage + 1
            chassis = index + 1 if index < half else index - half + 1
            switch(f"{prefix}.s{stage}c{chassis}", stage, parent, rack, domain)

    root = "ju1"
    entity(s.JUPITER, root, jupiter_type="JDT_COLO")
    for sb in range(1, shape.superblocks + 1):
        block = f"{root}.a{sb}"
        entity(s.SUPERBLOCK, block, index_within_jupiter=sb)
        contains(root, block)
        domain = f"{block}.dom"
        entity(s.CONTROL_DOMAIN, domain)
        for ag in range(1, shape.aggs_per_superblock + 1):
            agg = f"{block}.m{ag}"
            entity(s.AGG_BLOCK, agg)
            contains(block, agg)
            rack = f"{agg}rack"
            entity(s.RACK, rack)
            switches(agg, shape.switches_per_agg, 2, agg, rack, domain)
    for sp in range(1, shape.spineblocks + 1):
        spine = f"{root}.s{sp}"
        entity(s.SPINEBLOCK, spine)
        contains(root, spine)
        rack, domain = f"{spine}rack", f"{spine}.dom"
        entity(s.RACK, rack)
        entity(s.CONTROL_DOMAIN, domain)
        switches(spine, shape.switches_per_spine, 1, spine, rack, domain)
    return entities, rels


def synthetic_topology(shape: Shape | None = None, seed: int = 0, nodes: int | None = None) -> nx.DiGraph:
    """A synthetic MALT DiGraph (give a shape, or a target node count; default: the real size)."""
    if shape is None:
        shape = shape_for_nodes(nodes) if nodes else Shape()
    return build_graph(*synthetic_records(shape, seed))


def to_textproto(entities: Iterable[Entity], relationships: Iterable[Relationship]) -> str:
    """Render records in MALT's textproto format (for tests and for exporting synthetic data)."""
    kinds: dict[str, str] = {}
    out: list[str] = []

    def value(v: Any) -> str:
        if isinstance(v, str):
            return v if re.fullmatch(r"[A-Z][A-Z0-9_]*", v) else '"' + v.replace('"', '\\"') + '"'
        return str(v).lower() if isinstance(v, bool) else str(v)

    def message(fields: dict[str, Any], indent: str) -> None:
        for key, item in fields.items():
            if isinstance(item, dict):
                out.append(f"{indent}{key} {{")
                message(item, indent + "  ")
                out.append(f"{indent}}}")
            else:
                out.append(f"{indent}{key}: {value(item)}")

    for e in entities:
        kinds.setdefault(e.name, e.kind)
        out.append(f'entity {{\n  id {{\n    kind: {e.kind}\n    name: "{e.name}"\n  }}')
        if e.attrs:
            out.append(f"  {e.kind[3:].lower()}_attr {{")
            message(e.attrs, "    ")
            out.append("  }")
        out.append("}")
    for r in relationships:
        out.append(
            f"relationship {{\n  kind: {r.kind}\n  a {{\n    kind: {kinds[r.a]}\n"
            f'    name: "{r.a}"\n  }}\n  z {{\n    kind: {kinds[r.z]}\n    name: "{r.z}"\n  }}\n}}'
        )
    return "\n".join(out) + "\n"


# --- selection by option ---------------------------------------------------------------------

SYNTHETIC = "synthetic"


@lru_cache(maxsize=4)
def load_topology(spec: str | None = None) -> nx.DiGraph:
    """The topology an option value names: a textproto path, or `synthetic[:NODES[:SEED]]`.

    The result is shared: treat it as read-only (copy before changing it).
    """
    text = (spec or SYNTHETIC).strip()
    if text == SYNTHETIC or text.startswith(SYNTHETIC + ":"):
        parts = text.split(":")[1:]
        try:
            nodes = int(parts[0]) if parts and parts[0] else None
            seed = int(parts[1]) if len(parts) > 1 else 0
        except ValueError as error:
            raise UsageError(f"bad --malt-topology {text!r}: expected synthetic[:NODES[:SEED]]") from error
        if nodes is not None and not 1 <= nodes <= 1_000_000:
            raise UsageError(f"bad --malt-topology {text!r}: NODES must be 1..1000000")
        return synthetic_topology(seed=seed, nodes=nodes)
    return load_textproto(text)


def names_by_kind(graph: nx.DiGraph) -> dict[str, list[str]]:
    """Node names per kind (a node with several kinds is listed under each), in graph order."""
    index: dict[str, list[str]] = {kind: [] for kind in s.ENTITY_KINDS}
    for name, data in graph.nodes(data=True):
        for kind in data.get("type", ()):
            index.setdefault(kind, []).append(name)
    return index
