"""The MALT query catalogue: categories by level and `draw`, which builds a query's program and its question.

A draw picks concrete nodes and values (the program ops.run_program answers), then the request an
operator would make of them: each node pointed at by a reference (questions/refs.py) of at most as
many nested references as the level (from level 2 on, what the change acts on is pointed at through
the graph wherever the graph offers a way), then the words (questions/wording.py). Before it is kept, the
request is read back on the graph (questions/meaning.py) and must give the same program: one answer.
Every random decision goes through the Chooser, simplest option first (so Hypothesis shrinks towards
ports before switches, the first candidate node, a node named outright, the smallest capacity). A
query's params are {"program": [steps], "question": text, "mutates": bool, "request": the request}:
all JSON values, none shown to the agent but the question.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...core.catalogue import Category, Chooser
from . import ops
from . import schema as s
from .questions.facts import After, Facts
from .questions.grammar import strip_hints
from .questions.meaning import Ambiguous, focus, next_port, program_of
from .questions.refs import BLOCK, Describer, referents, resolve
from .questions.wording import write_question

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
#: capacities a context sentence may mention that the request is not about
OTHER_CAPACITIES = (200_000_000_000, 400_000_000_000, 800_000_000_000)
LIST_PARENTS = (s.AGG_BLOCK, s.PACKET_SWITCH, s.RACK, s.CONTROL_DOMAIN, s.SUPERBLOCK, s.SPINEBLOCK)
RANK_PARENTS = (s.AGG_BLOCK, s.SUPERBLOCK, s.CONTROL_DOMAIN, s.PACKET_SWITCH, s.SPINEBLOCK)
#: the most references one reference holds, at the deepest level (a level holds as many as its number)
MAX_DEPTH = 3


class TopologyIndex:
    """Names per kind and the removable nodes of one topology (built once, read-only)."""

    def __init__(self, graph: nx.DiGraph) -> None:
        from .topology import names_by_kind

        self.graph = graph
        self.by_kind = names_by_kind(graph)
        #: what questions' references read of the graph (figures kept as they are computed)
        self.facts = Facts(graph, self.by_kind)
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


def _draw_add(index: TopologyIndex, chooser: Chooser, describer: Describer,
              depth: int) -> tuple[dict[str, Any], dict[str, Any], str]:
    """An add step, its clause, and the node a follow-up read looks at."""
    what = chooser.choice(("port", "switch"))
    if what == "port":
        switch = pick(chooser, index.by_kind[s.PACKET_SWITCH], "packet switch")
        port = _next_port(index, chooser, switch)
        capacity = chooser.choice(CAPACITIES)
        step = {"op": "add_port", "switch": switch, "port": port, "capacity": capacity}
        said = ("named", "next") if port == next_port(index.facts, switch) else ("named",)
        naming = {"form": "named", "name": port} if chooser.choice(said) == "named" else {"form": "next"}
        clause = {"op": "add_port", "switch": describer.describe(switch, depth, outright=depth < 2), "port": naming,
                  "capacity": capacity}
        return step, clause, switch
    parent_kind = chooser.choice(ops.SWITCH_PARENTS)
    parent = pick(chooser, index.by_kind[parent_kind], _word(parent_kind))
    switch = _free_name(chooser, index.names, "new_sw{}")
    count = chooser.integer(1, 4)
    capacity = chooser.choice(CAPACITIES)
    step = {"op": "add_switch", "switch": switch, "parent": parent,
            "ports": [[f"{switch}.p{i}", capacity] for i in range(1, count + 1)]}
    clause = {"op": "add_switch", "switch": switch, "parent": describer.describe(parent, depth, outright=depth < 2),
              "count": count,
              "capacity": capacity, "_many": count > 1}
    return step, clause, parent


def _draw_remove(index: TopologyIndex, chooser: Chooser, describer: Describer,
                 depth: int) -> tuple[dict[str, Any], dict[str, Any], str]:
    graph = index.graph
    what = chooser.choice(("port", "switch"))
    if what == "port":
        name = pick(chooser, index.removable_ports, "removable port")
        parent = next(p for p in graph.pred[name] if ops.has_kind(graph, p, s.PACKET_SWITCH))
    else:
        name = pick(chooser, index.removable_switches, "removable packet switch")
        parent = _block_of(graph, name)
    target = describer.describe(name, depth, outright=depth < 2)
    return {"op": "remove", "name": name}, {"op": "remove", "target": target}, parent


def _read(op: str, parent: str, target: dict[str, Any], count_kind: str | None = None
          ) -> tuple[dict[str, Any], dict[str, Any]]:
    if op == "count":
        kind = count_kind or s.PORT
        return {"op": "count", "parent": parent, "kind": kind}, {"op": "count", "parent": target, "kind": kind}
    return {"op": op, "parent": parent}, {"op": op, "parent": target}


def _said_again(index: TopologyIndex, chooser: Chooser, describer: Describer, focus: str, anaphora: dict[str, Any],
                changes: list[dict[str, Any]], depth: int, orders: tuple[str, ...]) -> tuple[dict[str, Any], str]:
    """How a follow-up read points at the focus, and whether it comes after the change in the words ("first") or
    before it ("read"). A fresh reference whose meaning the change would move is not used: that read has an
    "it" (what the change was about) instead, which can only come after the change."""
    order = chooser.choice(orders)
    if order == "first" and chooser.choice(("it", "fresh")) == "it":
        return anaphora, order
    ref = describer.describe(focus, depth)
    if resolve(ref, After(index.facts, changes)) != [focus]:
        return anaphora, "first"
    return ref, order


def _block_kind(graph: nx.DiGraph, node: str, chooser: Chooser) -> str:
    return chooser.choice((_kind_of(graph, node), BLOCK))


def _question_value(index: TopologyIndex, chooser: Chooser, request: dict[str, Any],
                    program: list[dict[str, Any]]) -> dict[str, Any]:
    """The request with what may be said around it: a ticket number, a capacity and a node it is not about.

    That node is neither in the program nor held by or holding anything the request points at, and there is none
    when a reference compares the whole datacenter (naming a node "left out" would change what it compares)."""
    facts = index.facts
    context: dict[str, Any] = {"_ticket": chooser.integer(1000, 9999), "_capacity": chooser.choice(OTHER_CAPACITIES)}
    refs_said = [value for clause in request.values() if isinstance(clause, dict) for key, value in clause.items()
                 if isinstance(value, dict) and key not in ("port", "new")]  # the new port's name is no reference
    if not any(_compares_everything(ref) for ref in refs_said):
        it = focus(request["first"], facts) if "first" in request else None
        pointed = {n for ref in refs_said for n in referents(ref, facts, it)}
        pointed |= {v for step in program for v in step.values() if isinstance(v, str) and v in index.names}
        involved = {m for n in pointed for m in (n, *facts.above(n), *facts.below(n))}
        others = [n for n in index.of_kinds((s.AGG_BLOCK, s.SPINEBLOCK)) if n not in involved]
        if others:
            context["_other"] = chooser.choice(others)
    return {"request": request, "_pre": context, "_post": context}


def _compares_everything(ref: dict[str, Any] | None) -> bool:
    if not isinstance(ref, dict):
        return False
    if ref.get("form") == "extreme" and ref.get("in") is None:
        return True
    return any(_compares_everything(ref.get(key)) for key in ("of", "with", "in"))


def draw(category: Category, chooser: Chooser, graph: nx.DiGraph, index: TopologyIndex | None = None) -> dict[str, Any]:
    """Draw one query of a category: its program, its question and request, and whether it changes the graph."""
    index = index or TopologyIndex(graph)
    facts = index.facts
    depth = min(category.level, MAX_DEPTH)
    describer = Describer(facts, chooser)
    ops_ = category.name.split("+")
    head, read = ops_[0], (ops_[1] if len(ops_) > 1 else None)
    request: dict[str, Any] = {}
    if head in ("list", "rank"):
        kind = chooser.choice(LIST_PARENTS if head == "list" else RANK_PARENTS)
        parent = pick(chooser, index.by_kind[kind], _word(kind))
        step, clause = _read(head, parent, describer.describe(parent, depth))
        program, request["read"] = [step], clause
    elif head in ("add", "remove", "for", "if"):
        step, clause, focus_node, anaphora = _draw_change(head, index, chooser, describer, depth)
        program, request["first"] = [step], clause
        if read is not None:
            count_kind = None
            if read == "count":
                is_port = step["op"] == "add_port" or (step["op"] == "remove" and ops.has_kind(graph, step["name"], s.PORT))
                count_kind = s.PORT if is_port or head == "if" else chooser.choice((s.PACKET_SWITCH, s.PORT))
            orders = ("first",) if head == "if" else ("first", "read")  # a condition is said before what follows it
            target, order = _said_again(index, chooser, describer, focus_node, anaphora, program, depth, orders)
            read_step, request["read"] = _read(read, focus_node, target, count_kind)
            program.append(read_step)
            request["_order"] = order
    else:
        raise ValueError(f"unknown MALT category {category.name!r}")
    if program_of(request, facts) != program:  # the words must mean this program, and only it
        raise Ambiguous(f"the request {request!r} does not read back as {program!r}")
    question = write_question(_question_value(index, chooser, request, program), chooser, depth)
    mutates = any(step["op"] in ops.MUTATIONS for step in program)
    return {"program": program, "question": question, "mutates": mutates, "request": strip_hints(request)}


def _draw_change(head: str, index: TopologyIndex, chooser: Chooser, describer: Describer,
                 depth: int) -> tuple[dict[str, Any], dict[str, Any], str, dict[str, Any]]:
    """A change's step and clause, the node a read after it looks at, and how that read may say "that node"."""
    graph = index.graph
    if head == "add":
        step, clause, focus_node = _draw_add(index, chooser, describer, depth)
        return step, clause, focus_node, {"form": "it", "_kind": _kind_of(graph, focus_node)}
    if head == "remove":
        step, clause, focus_node = _draw_remove(index, chooser, describer, depth)
        kind = s.PACKET_SWITCH if ops.has_kind(graph, step["name"], s.PORT) else _block_kind(graph, focus_node, chooser)
        return step, clause, focus_node, {"form": "holder", "kind": kind, "of": {"form": "it"}, "_gone": True}
    if head == "for":
        parent = pick(chooser, index.for_parents, "block whose switches all have a port .p1")
        capacity = chooser.choice(CAPACITIES)
        step = {"op": "for_update", "parent": parent, "suffix": "p1", "capacity": capacity}
        clause = {"op": "for_update", "parent": describer.describe(parent, depth, outright=False), "suffix": "p1",
                  "capacity": capacity}
        return step, clause, parent, {"form": "it", "_kind": _kind_of(graph, parent)}
    switch = pick(chooser, index.switches_with_ports, "packet switch with two ports")
    branch = chooser.choice(("else", "then"))
    total = ops.total_capacity(graph, switch)
    threshold = total - 1_000_000_000 if branch == "then" else total
    last = ops.ports_of(graph, switch)[-1]
    capacity = chooser.choice(CAPACITIES)
    new_port = _next_port(index, chooser, switch)
    step = {"op": "if", "switch": switch, "above": threshold, "then": [{"op": "remove", "name": last}],
            "else": [{"op": "add_port", "switch": switch, "port": new_port, "capacity": capacity}]}
    said = ("named", "next") if new_port == next_port(index.facts, switch) else ("named",)
    naming = {"form": "named", "name": new_port} if chooser.choice(said) == "named" else {"form": "next"}
    clause = {"op": "if", "switch": describer.describe(switch, depth, outright=False), "above": threshold,
              "port": describer.describe(last, depth), "new": naming, "capacity": capacity}
    block = _block_of(graph, switch)
    return step, clause, block, {"form": "holder", "kind": _block_kind(graph, block, chooser), "of": {"form": "it"},
                                 "_gone": False}
