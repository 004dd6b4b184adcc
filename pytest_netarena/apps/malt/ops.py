"""Ground-truth operations on MALT graphs (add, remove, update, count, list, rank) and a program runner.

Safe by construction: adding a switch adds its ports, removing a switch removes its ports, every
capacity is a positive integer, and an operation that would break a constraint raises ValueError
instead. This module imports only networkx and is self-contained on purpose: the built-in oracle
ships its source, unchanged, as the Python code it answers with (see agents/builtin.py).
"""

from __future__ import annotations

CONTAINS = "RK_CONTAINS"
PORT = "EK_PORT"
SWITCH = "EK_PACKET_SWITCH"
CAPACITY = "physical_capacity_bps"
#: kinds a switch may be added to
SWITCH_PARENTS = ("EK_AGG_BLOCK", "EK_SPINEBLOCK", "EK_CONTROL_DOMAIN")


def has_kind(graph, name, kind):
    kinds = graph.nodes[name].get("type") or ()
    return kind == kinds if isinstance(kinds, str) else kind in kinds


def children(graph, name):
    """Direct RK_CONTAINS children of a node, in graph order (self-loops excluded)."""
    return [z for z, data in graph.succ[name].items() if z != name and data.get("type") == CONTAINS]


def ports_of(graph, switch):
    return [z for z in children(graph, switch) if has_kind(graph, z, PORT)]


def descendants(graph, name):
    """Every node reachable from name over RK_CONTAINS edges (name itself excluded)."""
    seen = {name}
    order = []
    stack = [name]
    while stack:
        for child in children(graph, stack.pop()):
            if child not in seen:
                seen.add(child)
                order.append(child)
                stack.append(child)
    return order


def total_capacity(graph, name):
    """Sum of physical_capacity_bps of the ports at or below name."""
    nodes = [name, *descendants(graph, name)]
    return sum(graph.nodes[n].get(CAPACITY, 0) for n in nodes if has_kind(graph, n, PORT))


def _require(graph, name, kind):
    if name not in graph:
        raise ValueError(f"no node named {name!r}")
    if not has_kind(graph, name, kind):
        raise ValueError(f"{name!r} is not an {kind}")


def _check_capacity(capacity):
    if not isinstance(capacity, int) or isinstance(capacity, bool) or capacity <= 0:
        raise ValueError(f"capacity must be a positive integer, not {capacity!r}")


def add_port(graph, switch, port, capacity):
    _require(graph, switch, SWITCH)
    _check_capacity(capacity)
    if port in graph:
        raise ValueError(f"a node named {port!r} exists already")
    graph.add_node(port, name=port, type=[PORT], **{CAPACITY: capacity})
    graph.add_edge(switch, port, type=CONTAINS)


def add_switch(graph, switch, parent, ports):
    """Add a packet switch under parent with its ports ([name, capacity] pairs, at least one)."""
    if parent not in graph or not any(has_kind(graph, parent, k) for k in SWITCH_PARENTS):
        raise ValueError(f"{parent!r} cannot contain a packet switch")
    if switch in graph:
        raise ValueError(f"a node named {switch!r} exists already")
    if not ports:
        raise ValueError("a packet switch needs at least one port")
    for port, capacity in ports:
        _check_capacity(capacity)
        if port in graph or port == switch:
            raise ValueError(f"a node named {port!r} exists already")
    graph.add_node(switch, name=switch, type=[SWITCH])
    graph.add_edge(parent, switch, type=CONTAINS)
    for port, capacity in ports:
        add_port(graph, switch, port, capacity)


def removal(graph, name):
    """The nodes removing name takes away (a switch goes with its ports); ValueError if unsafe."""
    if name not in graph:
        raise ValueError(f"no node named {name!r}")
    doomed = [name]
    if has_kind(graph, name, SWITCH):
        doomed += ports_of(graph, name)
    elif has_kind(graph, name, PORT):
        for switch in graph.pred[name]:
            if switch != name and has_kind(graph, switch, SWITCH) and len(ports_of(graph, switch)) < 2:
                raise ValueError(f"removing {name!r} would leave switch {switch!r} without a port")
    else:
        raise ValueError(f"only ports and packet switches are removed, not {name!r}")
    gone = set(doomed)
    for node in doomed:
        for neighbour in (*graph.pred[node], *graph.succ[node]):
            if neighbour not in gone and all(
                n in gone for n in (*graph.pred[neighbour], *graph.succ[neighbour]) if n != neighbour
            ):
                raise ValueError(f"removing {name!r} would leave {neighbour!r} isolated")
    return doomed


def remove(graph, name):
    """Remove a port, or a switch together with its ports; refuse what would strand a node."""
    graph.remove_nodes_from(removal(graph, name))


def update(graph, port, capacity):
    _require(graph, port, PORT)
    _check_capacity(capacity)
    graph.nodes[port][CAPACITY] = capacity


def count(graph, parent, kind):
    """How many nodes of kind lie below parent (over RK_CONTAINS, each node once)."""
    if parent not in graph:
        raise ValueError(f"no node named {parent!r}")
    return sum(1 for n in descendants(graph, parent) if has_kind(graph, n, kind))


def list_children(graph, parent):
    if parent not in graph:
        raise ValueError(f"no node named {parent!r}")
    return sorted(children(graph, parent))


def rank_children(graph, parent):
    """[name, total capacity] of parent's children, highest capacity first, ties by name."""
    if parent not in graph:
        raise ValueError(f"no node named {parent!r}")
    pairs = [[child, total_capacity(graph, child)] for child in children(graph, parent)]
    return sorted(pairs, key=lambda pair: (-pair[1], pair[0]))


MUTATIONS = ("add_port", "add_switch", "remove", "update", "for_update", "if")


def run_step(graph, step):
    """Apply one program step; returns (answer type, data) for reads, None for mutations."""
    op = step["op"]
    if op == "add_port":
        add_port(graph, step["switch"], step["port"], step["capacity"])
    elif op == "add_switch":
        add_switch(graph, step["switch"], step["parent"], step["ports"])
    elif op == "remove":
        remove(graph, step["name"])
    elif op == "update":
        update(graph, step["port"], step["capacity"])
    elif op == "for_update":  # for each switch in parent: set the capacity of its port <switch>.<suffix>
        for switch in children(graph, step["parent"]):
            if has_kind(graph, switch, SWITCH):
                update(graph, switch + "." + step["suffix"], step["capacity"])
    elif op == "if":  # if the switch's total capacity exceeds the threshold: then, else: otherwise
        branch = "then" if total_capacity(graph, step["switch"]) > step["above"] else "else"
        for inner in step[branch]:
            run_step(graph, inner)
    elif op == "count":
        return "text", count(graph, step["parent"], step["kind"])
    elif op == "list":
        return "list", list_children(graph, step["parent"])
    elif op == "rank":
        return "list", rank_children(graph, step["parent"])
    else:
        raise ValueError(f"unknown operation {op!r}")
    return None


def run_program(graph, program):
    """Run steps in order on graph (changed in place); returns (type, data, changed).

    The answer is the last read's result; a program without reads answers with the graph.
    """
    answer = None
    changed = False
    for step in program:
        result = run_step(graph, step)
        if result is None:
            changed = True
        else:
            answer = result
    if answer is None:
        return "graph", None, changed
    return answer[0], answer[1], changed
