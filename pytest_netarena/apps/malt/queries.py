"""The MALT query catalogue: categories by level and `draw`, which builds a query's program and question.

Every random decision goes through the Chooser, simplest option first (so Hypothesis shrinks
towards ports before switches, the first candidate node, the smallest capacity). A query's params
are {"program": [steps for ops.run_program], "question": text, "mutates": bool}: everything the
ground truth and the question need, all JSON values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...core.catalogue import Category, Chooser
from . import ops
from . import schema as s

if TYPE_CHECKING:
    import networkx as nx

CATEGORIES: tuple[Category, ...] = (
    Category(1, "add"),
    Category(1, "rank"),
    Category(1, "remove"),
    Category(1, "list"),
    Category(2, "remove+list"),
    Category(2, "remove+rank"),
    Category(2, "remove+count"),
    Category(3, "add+list"),
    Category(3, "add+rank"),
    Category(3, "add+count"),
    Category(3, "for+rank"),
    Category(3, "if+count"),
)

CAPACITIES = (1_000_000_000, 10_000_000_000, 40_000_000_000, 100_000_000_000)
LIST_PARENTS = (s.AGG_BLOCK, s.PACKET_SWITCH, s.RACK, s.CONTROL_DOMAIN, s.SUPERBLOCK, s.SPINEBLOCK)
RANK_PARENTS = (s.AGG_BLOCK, s.SUPERBLOCK, s.CONTROL_DOMAIN, s.PACKET_SWITCH, s.SPINEBLOCK)


class TopologyIndex:
    """Names per kind and the removable nodes of one topology (built once, read-only)."""

    def __init__(self, graph: nx.DiGraph) -> None:
        from .topology import names_by_kind

        self.graph = graph
        self.by_kind = names_by_kind(graph)
        self.names = set(graph)
        switches = self.by_kind[s.PACKET_SWITCH]
        #: ports whose switch keeps another port after their removal
        self.removable_ports = [
            port for sw in switches if len(ps := ops.ports_of(graph, sw)) >= 2 for port in ps
        ]
        self.removable_switches = [sw for sw in switches if _removable(graph, sw)]
        self.switches_with_ports = [sw for sw in switches if len(ops.ports_of(graph, sw)) >= 2]
        #: parents whose switch children all have a port named "<switch>.p1"
        self.for_parents = [
            p for p in self.by_kind[s.AGG_BLOCK] + self.by_kind[s.SPINEBLOCK]
            if (sws := [c for c in ops.children(graph, p) if ops.has_kind(graph, c, s.PACKET_SWITCH)])
            and all(f"{sw}.p1" in graph and ops.has_kind(graph, f"{sw}.p1", s.PORT) for sw in sws)
        ]

    def of_kinds(self, kinds: Sequence[str]) -> list[str]:
        return [name for kind in kinds for name in self.by_kind.get(kind, ())]


def _removable(graph: nx.DiGraph, switch: str) -> bool:
    try:
        ops.removal(graph, switch)
    except ValueError:
        return False
    return True


def _word(kind: str) -> str:
    return s.KIND_WORDS[kind]


def _kind_of(graph: nx.DiGraph, name: str) -> str:
    """The kind a question names a node by (a switch is a packet switch even when merged)."""
    kinds = graph.nodes[name]["type"]
    return s.PACKET_SWITCH if s.PACKET_SWITCH in kinds else kinds[0]


def _gbps(bps: int) -> str:
    return f"{bps} bps ({bps // 1_000_000_000} Gbps)"


def pick(chooser: Chooser, names: Sequence[str], what: str) -> str:
    """One of names, chosen; ValueError naming `what` when the topology has none."""
    if not names:
        raise ValueError(f"the topology has no {what}")
    return chooser.choice(names)


def _free_name(chooser: Chooser, taken: set[str], pattern: str) -> str:
    number = chooser.integer(1, 99)
    name = pattern.format(number)
    while name in taken:
        number += 100
        name = pattern.format(number)
    return name


def _next_port(index: TopologyIndex, chooser: Chooser, switch: str) -> str:
    """A free name for a new port of switch: <switch>.p<highest number + 1>."""
    numbers = [p.rsplit(".p", 1)[-1] for p in ops.ports_of(index.graph, switch)]
    name = f"{switch}.p{max((int(n) for n in numbers if n.isdigit()), default=0) + 1}"
    return name if name not in index.names else _free_name(chooser, index.names, switch + ".x{}")


def _block_of(graph: nx.DiGraph, name: str) -> str:
    """The aggregation or spine block holding a switch (else its first container by name)."""
    parents = sorted(p for p in graph.pred[name] if p != name)
    blocks = [p for p in parents if ops.has_kind(graph, p, s.AGG_BLOCK) or ops.has_kind(graph, p, s.SPINEBLOCK)]
    return (blocks or parents)[0]


def _draw_add(index: TopologyIndex, chooser: Chooser) -> tuple[dict[str, Any], str, str]:
    """An add step, its sentence, and the node the follow-up read looks at."""
    what = chooser.choice(("port", "switch"))
    if what == "port":
        switch = pick(chooser, index.by_kind[s.PACKET_SWITCH], "packet switch")
        port = _next_port(index, chooser, switch)
        capacity = chooser.choice(CAPACITIES)
        step = {"op": "add_port", "switch": switch, "port": port, "capacity": capacity}
        text = (f"Add a new port named {port} with {s.CAPACITY} {_gbps(capacity)} to the packet "
                f"switch {switch}.")
        return step, text, switch
    parent_kind = chooser.choice(ops.SWITCH_PARENTS)
    parent = pick(chooser, index.by_kind[parent_kind], _word(parent_kind))
    switch = _free_name(chooser, index.names, "new_sw{}")
    count = chooser.integer(1, 4)
    capacity = chooser.choice(CAPACITIES)
    ports = [[f"{switch}.p{i}", capacity] for i in range(1, count + 1)]
    step = {"op": "add_switch", "switch": switch, "parent": parent, "ports": ports}
    port_names = ", ".join(p for p, _ in ports)
    text = (f"Add a new packet switch named {switch} to the {_word(parent_kind)} {parent}, with "
            f"{count} port{'s' if count > 1 else ''} ({port_names}), each with {s.CAPACITY} "
            f"{_gbps(capacity)}.")
    return step, text, parent


def _draw_remove(index: TopologyIndex, chooser: Chooser) -> tuple[dict[str, Any], str, str]:
    graph = index.graph
    what = chooser.choice(("port", "switch"))
    if what == "port":
        name = pick(chooser, index.removable_ports, "removable port")
        parent = next(p for p in graph.pred[name] if ops.has_kind(graph, p, s.PACKET_SWITCH))
    else:
        name = pick(chooser, index.removable_switches, "removable packet switch")
        parent = _block_of(graph, name)
    step = {"op": "remove", "name": name}
    return step, f"Remove the {what if what == 'port' else 'packet switch'} {name} from the graph.", parent


def _read(op: str, graph: nx.DiGraph, parent: str, count_kind: str | None = None) -> tuple[dict[str, Any], str]:
    word = _word(_kind_of(graph, parent))
    if op == "list":
        return ({"op": "list", "parent": parent},
                (f"List the names of all direct children of the {word} {parent} (nodes it RK_CONTAINS). "
                "Return type 'list': a list of names (any order)."))
    if op == "rank":
        return ({"op": "rank", "parent": parent},
                (f"Rank the direct children of the {word} {parent} by total {s.CAPACITY}, highest "
                "first (ties by name, ascending). Return type 'list': a list of [name, capacity] pairs."))
    kind = count_kind or s.PORT
    return ({"op": "count", "parent": parent, "kind": kind},
            (f"Count the {kind} nodes contained in the {word} {parent} at any depth. "
            "Return type 'text': the number."))


def draw(category: Category, chooser: Chooser, graph: nx.DiGraph, index: TopologyIndex | None = None) -> dict[str, Any]:
    """Draw one query of a category: its program, question and whether it changes the graph."""
    index = index or TopologyIndex(graph)
    ops_ = category.name.split("+")
    steps: list[dict[str, Any]] = []
    sentences: list[str] = []
    head = ops_[0]
    if head in ("list", "rank"):
        kind = chooser.choice(LIST_PARENTS if head == "list" else RANK_PARENTS)
        parent = pick(chooser, index.by_kind[kind], _word(kind))
        step, text = _read(head, graph, parent)
        steps.append(step)
        sentences.append(text)
    elif head in ("add", "remove"):
        step, text, focus = (_draw_add if head == "add" else _draw_remove)(index, chooser)
        steps.append(step)
        sentences.append(text)
        if len(ops_) == 1:
            sentences.append("Return type 'graph' with the updated graph.")
        else:
            count_kind = None
            if ops_[1] == "count":
                is_port = step["op"] == "add_port" or (
                    step["op"] == "remove" and ops.has_kind(graph, step["name"], s.PORT)
                )
                count_kind = s.PORT if is_port else chooser.choice((s.PACKET_SWITCH, s.PORT))
            read, text = _read(ops_[1], graph, focus, count_kind)
            steps.append(read)
            sentences.append("Then, on the updated graph: " + text)
    elif head == "for":
        parent = pick(chooser, index.for_parents, "block whose switches all have a port .p1")
        capacity = chooser.choice(CAPACITIES)
        steps.append({"op": "for_update", "parent": parent, "suffix": "p1", "capacity": capacity})
        word = _word(_kind_of(graph, parent))
        sentences.append(f"For each packet switch directly contained in the {word} {parent}, set the "
                         f"{s.CAPACITY} of its port named <switch name>.p1 to {_gbps(capacity)}.")
        read, text = _read("rank", graph, parent)
        steps.append(read)
        sentences.append("Then, on the updated graph: " + text)
    elif head == "if":
        switch = pick(chooser, index.switches_with_ports, "packet switch with two ports")
        branch = chooser.choice(("else", "then"))
        total = ops.total_capacity(graph, switch)
        threshold = total - 1_000_000_000 if branch == "then" else total
        last = ops.ports_of(graph, switch)[-1]
        capacity = chooser.choice(CAPACITIES)
        new_port = _next_port(index, chooser, switch)
        steps.append({
            "op": "if", "switch": switch, "above": threshold,
            "then": [{"op": "remove", "name": last}],
            "else": [{"op": "add_port", "switch": switch, "port": new_port, "capacity": capacity}],
        })
        sentences.append(
            f"If the total {s.CAPACITY} of the ports of the packet switch {switch} is greater than "
            f"{threshold} bps, remove its port {last}; otherwise add a new port named {new_port} "
            f"with {s.CAPACITY} {_gbps(capacity)} to it.")
        read, text = _read("count", graph, _block_of(graph, switch), s.PORT)
        steps.append(read)
        sentences.append("Then, on the updated graph: " + text)
    else:
        raise ValueError(f"unknown MALT category {category.name!r}")
    mutates = any(step["op"] in ops.MUTATIONS for step in steps)
    if mutates and len(steps) > 1:
        sentences.append("Also return the changed graph as updated_graph.")
    return {"program": steps, "question": " ".join(sentences), "mutates": mutates}
