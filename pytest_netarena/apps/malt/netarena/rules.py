"""NetArena's MALT rules as our own pure functions: its query catalogue, question wording and labels (see ops.py beside it).

Facts from NetArena's code (HEAD 93225b4, app-malt), reimplemented, not copied:

* ten active query types, levels 1-3, a default run of levels 1 and 2; labels such as
  "capacity planning, level-2, remove-list" (our category "remove+list");
* removing a node removes that node only: a switch's ports stay behind, isolated;
* adding a node gives it `type` as a string; a port gets physical_capacity_bps 1000 (never stated
  in the question); a packet switch also gets one port named after the Python repr of the new-node
  dict plus ".p1"; level-3 add-list and add-rank may put a port straight into a block or domain;
* counting walks RK_CONTAINS edges from the parent and counts each edge whose target's type
  contains the kind; ranking sums a child's own capacity (if a port) and its direct ports'.

Programs (run by netarena/ops.run_program) use the step vocabulary of the app's ops.run_program where the
meaning is shared (remove, list, rank, count, each with NetArena's semantics) plus
{"op": "add", "name", "kind", "parent"}.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ....core.app import NETARENA
from ....core.catalogue import Category, Chooser
from .. import schema as s
from ..queries import CATEGORIES as OUR_CATEGORIES, pick
from .ops import MUTATIONS, NEW_PORT_CAPACITY, run_program, switch_port_name

__all__ = ["NEW_PORT_CAPACITY", "run_program", "switch_port_name"]

#: levels a NetArena MALT run uses when none are given (its MaltConfig default)
DEFAULT_LEVELS = (1, 2)

#: its 10 active query types: ours without the for-loop and if/else control sequences it disabled
CATEGORIES: tuple[Category, ...] = tuple(c for c in OUR_CATEGORIES if c.name not in ("for+rank", "if+count"))

_LABEL = re.compile(r"capacity planning, level-(\d), ([a-z]+(?:-[a-z]+)?)")


def label(category: Category) -> str:
    """NetArena's task label of a category, e.g. "capacity planning, level-1, add"."""
    return f"capacity planning, level-{category.level}, {category.name.replace('+', '-')}"


def category_of_label(text: str) -> Category | None:
    """The category a NetArena task label names, or None if it is not one of the ten active ones."""
    match = _LABEL.fullmatch(str(text).strip())
    if not match:
        return None
    category = Category(int(match.group(1)), match.group(2).replace("-", "+"))
    return category if category in CATEGORIES else None


# --- the query catalogue and NetArena's wording ----------------------------------------------------

#: kinds a new node may have (the simplest first) and where each may be added at levels 1 and 3-count
ADD_KINDS = (s.PORT, s.PACKET_SWITCH)
BLOCKS = (s.AGG_BLOCK, s.CONTROL_DOMAIN)
LIST_PARENTS = (s.AGG_BLOCK, s.CONTROL_DOMAIN, s.RACK, s.PACKET_SWITCH)
REMOVE_KINDS = (s.PORT, s.PACKET_SWITCH)


def add_question(name: str, kind: str, parent: str) -> str:
    return f"Add new node with name {name} type {kind}, to {parent}. Return a graph."


def remove_question(name: str) -> str:
    return f"Remove {name} from the graph. Return a graph."


def list_question(parent: str) -> str:
    return f"List all the child nodes of {parent}. Return a list of child node names."


def rank_question(parent_kind: str, parent: str) -> str:
    return (f"Rank all child nodes of {parent_kind} type {parent} based on physical_capacity_bps attribute. "
            "Return a list of tuple, each tuple has child node name and its total physical capacity.")


def then_question(first: str, read: str, parent: str, kind: str = "") -> str:
    """A level-2/3 question: `first` (e.g. "Remove X from the graph.") then a read of parent."""
    if read == "list":
        tail = f"List direct child nodes of {parent} in the updated graph. Return a list of child nodes name."
    elif read == "rank":
        tail = (f"Rank direct child nodes of {parent} in the updated graph based on physical_capacity_bps "
                "attribute. Return a list of tuple, each tuple has node name and its total physical capacity.")
    else:
        tail = f"Count the {kind} in {parent} in the updated graph. Return the count number as text."
    return f"{first} {tail}"


def add_sentence(name: str, parent: str, read: str) -> str:
    if read == "rank":
        return f"Add node with name '{name}' to {parent}."
    return f"Add {name} to {parent}."


def parent_by_name(name: str) -> str:
    """NetArena's parent of a removed node: its name without the last dotted part."""
    return ".".join(name.split(".")[:-1])


def params(program: list[dict[str, Any]], question: str, category: Category) -> dict[str, Any]:
    return {
        "program": program,
        "question": question,
        "mutates": any(step["op"] in MUTATIONS for step in program),
        "label": label(category),
        "rules": NETARENA,
    }


def draw(category: Category, chooser: Chooser, by_kind: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """Draw one query of a category the way NetArena's generator does (its choices, its wording).

    by_kind: node names per kind (a merged switch/chassis/control-point node is a packet switch).
    """
    ops_ = category.name.split("+")
    head, read = ops_[0], (ops_[1] if len(ops_) > 1 else None)
    if head == "list":
        kind = chooser.choice(LIST_PARENTS)
        parent = pick(chooser, by_kind.get(kind, ()), f"{kind} node")
        return params([{"op": "list", "parent": parent}], list_question(parent), category)
    if head == "rank":
        kind = chooser.choice(BLOCKS)
        parent = pick(chooser, by_kind.get(kind, ()), f"{kind} node")
        return params([{"op": "rank", "parent": parent}], rank_question(kind, parent), category)
    if head == "remove":
        kind = chooser.choice(REMOVE_KINDS)
        name = pick(chooser, by_kind.get(kind, ()), f"{kind} node")
        step = {"op": "remove", "name": name}
        if read is None:
            return params([step], remove_question(name), category)
        parent = parent_by_name(name)
        program = [step, _read_step(read, parent, kind)]
        return params(program, then_question(f"Remove {name} from the graph.", read, parent, kind), category)
    if head == "add":
        kind = chooser.choice(ADD_KINDS)
        # level-3 add-list and add-rank put either kind into a block or domain
        if kind == s.PORT and read not in ("list", "rank"):
            parent_kind = s.PACKET_SWITCH
        else:
            parent_kind = chooser.choice(BLOCKS)
        name = f"new_{kind}_{chooser.integer(1, 100)}"
        parent = pick(chooser, by_kind.get(parent_kind, ()), f"{parent_kind} node")
        step = {"op": "add", "name": name, "kind": kind, "parent": parent}
        if read is None:
            return params([step], add_question(name, kind, parent), category)
        program = [step, _read_step(read, parent, kind)]
        return params(program, then_question(add_sentence(name, parent, read), read, parent, kind), category)
    raise ValueError(f"NetArena has no MALT category {category.name!r}")


def _read_step(read: str, parent: str, kind: str) -> dict[str, Any]:
    if read == "count":
        return {"op": "count", "parent": parent, "kind": kind}
    return {"op": read, "parent": parent}
