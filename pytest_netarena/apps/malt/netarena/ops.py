"""Ground-truth operations with NetArena's MALT semantics (add, remove, count, list, rank) and a program runner.

Our own code for NetArena's rules (rules.py lists them): removing a node removes only that node;
a new node's `type` is a string; a new port gets physical_capacity_bps 1000; a new packet switch
also gets one port named after the repr of the new-node dict plus ".p1"; counting counts each
RK_CONTAINS edge into a node of the kind; ranking adds a child's own capacity (a port) to its direct
ports'. Nodes are looked up by their `name` attribute. Self-contained on purpose (networkx only):
the built-in oracle ships this source, unchanged, as its answer under --compat netarena.
"""

from __future__ import annotations

CONTAINS = "RK_CONTAINS"
PORT = "EK_PORT"
SWITCH = "EK_PACKET_SWITCH"
CAPACITY = "physical_capacity_bps"
NEW_PORT_CAPACITY = 1000
MUTATIONS = ("add", "remove")


def find(graph, name):
    """The key of the first node whose `name` attribute is name, or None."""
    if name in graph and graph.nodes[name].get("name") == name:
        return name
    return next((key for key, value in graph.nodes(data="name") if value == name), None)


def _free_key(graph, name):
    """Node keys do not matter to NetArena's comparison; keep the name unless it is taken."""
    if name not in graph:
        return name
    key = graph.number_of_nodes() + 1
    while key in graph:
        key += 1
    return key


def switch_port_name(name, kind=SWITCH):
    """The name of the one port NetArena's add gives a new switch: repr of the new-node dict + ".p1"."""
    return repr({"name": name, "type": kind}) + ".p1"


def add(graph, name, kind, parent):
    attrs = {"name": name, "type": kind}
    if PORT in kind:
        attrs[CAPACITY] = NEW_PORT_CAPACITY
    key = _free_key(graph, name)
    graph.add_node(key, **attrs)
    if kind == SWITCH:
        port = switch_port_name(name, kind)
        port_key = _free_key(graph, port)
        graph.add_node(port_key, **{"name": port, "type": PORT, CAPACITY: NEW_PORT_CAPACITY})
        graph.add_edge(key, port_key, type=CONTAINS)
    parent_key = find(graph, parent)
    if parent_key is not None:
        graph.add_edge(parent_key, key, type=CONTAINS)


def remove(graph, name):
    """Remove that node only (its children stay, possibly isolated); a missing name changes nothing."""
    key = find(graph, name)
    if key is not None:
        graph.remove_node(key)


def _contained(graph, key):
    return [z for _, z, kind in graph.out_edges(key, data="type") if kind == CONTAINS]


def count(graph, parent, kind):
    """Breadth-first over RK_CONTAINS from parent: each edge into a node whose type contains kind counts."""
    start = find(graph, parent)
    if start is None:
        return {parent: "not found"}
    total = 0
    queue, seen = [start], set()
    while queue:
        node = queue.pop(0)
        if node in seen:
            continue
        seen.add(node)
        for child in _contained(graph, node):
            if kind in graph.nodes[child]["type"]:
                total += 1
            queue.append(child)
    return total


def list_children(graph, parent):
    key = find(graph, parent)
    return [] if key is None else [graph.nodes[z]["name"] for z in _contained(graph, key)]


def _port_capacity(graph, key):
    attrs = graph.nodes[key]
    return attrs.get(CAPACITY, 0) if PORT in attrs["type"] else 0


def rank_children(graph, parent):
    """[name, capacity] of each direct child, highest first (ties in edge order)."""
    key = find(graph, parent)
    if key is None:
        return []
    ranked = []
    for child in _contained(graph, key):
        total = _port_capacity(graph, child) + sum(_port_capacity(graph, z) for z in _contained(graph, child))
        ranked.append([graph.nodes[child]["name"], total])
    ranked.sort(key=lambda pair: pair[1], reverse=True)
    return ranked


def run_program(graph, program):
    """Run steps in order on graph (changed in place); returns (answer type, data, changed).

    The answer is the last read's result; a program without reads answers with the graph itself.
    """
    answer = None
    changed = False
    for step in program:
        op = step["op"]
        if op == "add":
            add(graph, step["name"], step["kind"], step["parent"])
        elif op == "remove":
            remove(graph, step["name"])
        elif op == "count":
            answer = ("text", count(graph, step["parent"], step["kind"]))
        elif op == "list":
            answer = ("list", list_children(graph, step["parent"]))
        elif op == "rank":
            answer = ("list", rank_children(graph, step["parent"]))
        else:
            raise ValueError(f"unknown NetArena MALT operation {op!r}")
        changed = changed or op in MUTATIONS
    if answer is None:
        return "graph", graph, changed
    return answer[0], answer[1], changed
