"""What a request means on a graph: each reference resolved (on the graph as given), the program ops.run_program runs.

The inverse of drawing: queries.py draws concrete nodes and describes them; `program_of` reads the
description back on the graph and must find the same program, which is how every drawn question is
verified to have one answer. A reference that resolves to no node or to several is `Ambiguous`.
"""

from __future__ import annotations

from typing import Any

from .. import schema as s
from .facts import Facts
from .refs import resolve


class Ambiguous(ValueError):
    """A reference of the request does not point at exactly one node."""


def node_of(ref: dict[str, Any], facts: Facts, it: str | None = None) -> str:
    found = resolve(ref, facts, it)
    if len(found) != 1:
        raise Ambiguous(f"{ref!r} resolves to {len(found)} nodes: {found[:5]}")
    return found[0]


def next_port(facts: Facts, switch: str) -> str:
    """<switch>.p<its highest port number + 1> (ports without a number after .p count as none)."""
    numbers = [p.rsplit(".p", 1)[-1] for p in facts.children(switch) if facts.has_kind(p, s.PORT)]
    return f"{switch}.p{max((int(n) for n in numbers if n.isdigit()), default=0) + 1}"


def _new_port(value: dict[str, Any], facts: Facts, switch: str) -> str:
    return value["name"] if value["form"] == "named" else next_port(facts, switch)


def focus(clause: dict[str, Any], facts: Facts) -> str:
    """The node a request's later "it" means: what the first clause is about (a new switch's parent)."""
    op = clause["op"]
    if op == "add_switch":
        return node_of(clause["parent"], facts)
    if op in ("add_port", "if"):
        return node_of(clause["switch"], facts)
    if op == "remove":
        return node_of(clause["target"], facts)
    return node_of(clause["parent"], facts)


def step_of(clause: dict[str, Any], facts: Facts, it: str | None = None) -> dict[str, Any]:
    """One clause as a program step, its references resolved on facts."""
    op = clause["op"]
    if op == "add_port":
        switch = node_of(clause["switch"], facts, it)
        return {"op": "add_port", "switch": switch, "port": _new_port(clause["port"], facts, switch),
                "capacity": clause["capacity"]}
    if op == "add_switch":
        name, count = clause["switch"], clause["count"]
        return {"op": "add_switch", "switch": name, "parent": node_of(clause["parent"], facts, it),
                "ports": [[f"{name}.p{i}", clause["capacity"]] for i in range(1, count + 1)]}
    if op == "remove":
        return {"op": "remove", "name": node_of(clause["target"], facts, it)}
    if op == "for_update":
        return {"op": "for_update", "parent": node_of(clause["parent"], facts, it), "suffix": clause["suffix"],
                "capacity": clause["capacity"]}
    if op == "if":
        switch = node_of(clause["switch"], facts, it)
        return {"op": "if", "switch": switch, "above": clause["above"],
                "then": [{"op": "remove", "name": node_of(clause["port"], facts, it)}],
                "else": [{"op": "add_port", "switch": switch, "port": _new_port(clause["new"], facts, switch),
                          "capacity": clause["capacity"]}]}
    if op == "count":
        return {"op": "count", "parent": node_of(clause["parent"], facts, it), "kind": clause["kind"]}
    if op in ("list", "rank"):
        return {"op": op, "parent": node_of(clause["parent"], facts, it)}
    raise ValueError(f"unknown clause {op!r}")


def program_of(request: dict[str, Any], facts: Facts) -> list[dict[str, Any]]:
    """The program a request asks for: the first clause (a change), then the read, every reference on `facts`."""
    program = []
    it = None
    if "first" in request:
        program.append(step_of(request["first"], facts))
        it = focus(request["first"], facts)
    if "read" in request:
        program.append(step_of(request["read"], facts, it))
    return program
