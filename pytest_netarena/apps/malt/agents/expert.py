"""The MALT `expert` agent: reads only the question text and writes its own process_graph code.

Unlike the oracle it never sees a query's params: `act` reads the question in its observation with
the grammar the questions are written in (questions/wording.py; one reading, or the first of
several), and answers with code of its own, written from the prompt's definitions (not ops.py,
not the generator's resolver): it resolves the question's references on `graph_data` itself
(what holds what, the switches two nodes share, the most or least of something), then makes the
change and reads the answer. A question it cannot read is answered honestly with a best attempt.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ....core.types import Reply, Task


def read_request(question: str) -> tuple[dict[str, Any] | None, str]:
    """The request a question makes, and a note when it could not be read (or could be read several ways)."""
    from ..questions.wording import read_question

    readings = read_question(question)
    if not readings:
        return None, f"I could not read: {question[:200]!r}; best attempt below."
    note = f"The question reads {len(readings)} ways; answering the first.\n\n" if len(readings) > 1 else ""
    return readings[0], note


# The code the expert ships: written from the prompt's definitions (not a copy of ops.py or questions/).
_HELPERS = '''
CONTAINS, PORT, SWITCH, CAP = "RK_CONTAINS", "EK_PORT", "EK_PACKET_SWITCH", "physical_capacity_bps"
BLOCKS = ("EK_AGG_BLOCK", "EK_SPINEBLOCK")
HOLDERS = ("EK_AGG_BLOCK", "EK_SPINEBLOCK", "EK_SUPERBLOCK", "EK_RACK", "EK_CONTROL_DOMAIN")


def is_kind(g, n, kind):
    kinds = g.nodes[n].get("type") or ()
    kinds = [kinds] if isinstance(kinds, str) else kinds
    return any(k in kinds for k in BLOCKS) if kind == "block" else kind in kinds


def kids(g, n):
    return [c for c, e in g.succ[n].items() if c != n and e.get("type") == CONTAINS]


def walk(g, n, up):
    seen, stack = {n}, [n]
    while stack:
        m = stack.pop()
        nxt = [p for p, e in g.pred[m].items() if p != m and e.get("type") == CONTAINS] if up else kids(g, m)
        for x in nxt:
            if x not in seen:
                seen.add(x)
                stack.append(x)
    seen.discard(n)
    return seen


def capacity(g, n):
    return sum(g.nodes[x].get(CAP, 0) for x in walk(g, n, False) | {n} if is_kind(g, x, PORT))


def port_count(g, n):
    return sum(1 for x in walk(g, n, False) | {n} if is_kind(g, x, PORT))


def resolve(g, ref, it):
    form = ref["form"]
    if form == "name":
        return {ref["name"]} & set(g)
    if form == "it":
        return {it} if it is not None else set()
    if form == "holder":
        return {a for n in resolve(g, ref["of"], it) for a in walk(g, n, True) if is_kind(g, a, ref["kind"])}
    if form == "sharing":
        switches = {s for n in resolve(g, ref["with"], it) for s in walk(g, n, False) | {n} if is_kind(g, s, SWITCH)}
        return {a for s in switches for a in walk(g, s, True) if is_kind(g, a, ref["kind"])}
    if form == "extreme":
        if ref["in"] is None:
            nodes = [n for n in g if is_kind(g, n, ref["kind"])]
        else:
            nodes = [n for scope in resolve(g, ref["in"], it) for n in walk(g, scope, False) if is_kind(g, n, ref["kind"])]
        score = capacity if ref["metric"] == "capacity" else port_count
        values = {n: score(g, n) for n in nodes}
        if not values:
            return set()
        best = max(values.values()) if ref["most"] else min(values.values())
        return {n for n, v in values.items() if v == best}
    if form == "port_at":
        return {p for s in resolve(g, ref["of"], it) for p in kids(g, s)
                if is_kind(g, p, PORT) and g.nodes[p].get(CAP) == ref["capacity"]}
    raise ValueError("unknown reference " + form)


def one(g, ref, it=None):
    found = resolve(g, ref, it)
    if len(found) != 1:
        raise ValueError(f"{ref} means {len(found)} nodes, not one")
    return found.pop()


def next_port(g, switch):
    numbers = [p.rsplit(".p", 1)[-1] for p in kids(g, switch) if is_kind(g, p, PORT)]
    return f"{switch}.p{max((int(x) for x in numbers if x.isdigit()), default=0) + 1}"


def new_port(g, said, switch):
    return said["name"] if said["form"] == "named" else next_port(g, switch)


def about(g, clause):
    """The node a later "it" means: the first clause's switch, target or parent."""
    for key in ("switch", "target", "parent"):
        if isinstance(clause.get(key), dict):
            return one(g, clause[key])
    return None


def step(g, c, it=None):
    op = c["op"]
    if op == "add_port":
        sw = one(g, c["switch"], it)
        return {"op": op, "switch": sw, "port": new_port(g, c["port"], sw), "capacity": c["capacity"]}
    if op == "add_switch":
        ports = [[f"{c['switch']}.p{i}", c["capacity"]] for i in range(1, c["count"] + 1)]
        return {"op": op, "switch": c["switch"], "parent": one(g, c["parent"], it), "ports": ports}
    if op == "remove":
        return {"op": op, "name": one(g, c["target"], it)}
    if op == "for_update":
        return {"op": op, "parent": one(g, c["parent"], it), "suffix": c["suffix"], "capacity": c["capacity"]}
    if op == "if":
        sw = one(g, c["switch"], it)
        return {"op": op, "switch": sw, "above": c["above"], "then": [{"op": "remove", "name": one(g, c["port"], it)}],
                "else": [{"op": "add_port", "switch": sw, "port": new_port(g, c["new"], sw), "capacity": c["capacity"]}]}
    if op == "count":
        return {"op": op, "parent": one(g, c["parent"], it), "kind": c["kind"]}
    return {"op": op, "parent": one(g, c["parent"], it)}


def apply(g, s):
    op = s["op"]
    if op == "add_port":
        g.add_node(s["port"], name=s["port"], type=[PORT], **{CAP: s["capacity"]})
        g.add_edge(s["switch"], s["port"], type=CONTAINS)
    elif op == "add_switch":
        g.add_node(s["switch"], name=s["switch"], type=[SWITCH])
        g.add_edge(s["parent"], s["switch"], type=CONTAINS)
        for port, cap in s["ports"]:
            apply(g, {"op": "add_port", "switch": s["switch"], "port": port, "capacity": cap})
    elif op == "remove":
        name = s["name"]
        g.remove_nodes_from([name] + ([c for c in kids(g, name) if is_kind(g, c, PORT)] if is_kind(g, name, SWITCH) else []))
    elif op == "for_update":
        for sw in kids(g, s["parent"]):
            if is_kind(g, sw, SWITCH) and sw + "." + s["suffix"] in g:
                g.nodes[sw + "." + s["suffix"]][CAP] = s["capacity"]
    elif op == "if":
        for inner in s["then" if capacity(g, s["switch"]) > s["above"] else "else"]:
            apply(g, inner)
    elif op == "list":
        return "list", sorted(kids(g, s["parent"]))
    elif op == "rank":
        return "list", sorted(([c, capacity(g, c)] for c in kids(g, s["parent"])), key=lambda p: (-p[1], p[0]))
    elif op == "count":
        return "text", sum(1 for x in walk(g, s["parent"], False) if is_kind(g, x, s["kind"]))
    return None


def process_graph(graph_data):
    # every reference is read on the graph as given, before the change
    steps, it = [], None
    if "first" in REQUEST:
        steps.append(step(graph_data, REQUEST["first"]))
        it = about(graph_data, REQUEST["first"])
    if "read" in REQUEST:
        steps.append(step(graph_data, REQUEST["read"], it))
    answer, changed = None, False
    for s in steps:
        result = apply(graph_data, s)
        if result is None:
            changed = True
        else:
            answer = result
    reply = {"type": "graph", "data": None} if answer is None else {"type": answer[0], "data": answer[1]}
    if changed:
        reply["updated_graph"] = graph_data
    return reply
'''


def expert_code(question: str) -> tuple[str, list[str]]:
    """process_graph code answering a question, and what it could not read (empty when all was read)."""
    request, note = read_request(question)
    program = f"import json\n\nREQUEST = json.loads({json.dumps(request or {})!r})\n"
    return program + _HELPERS, ([note] if request is None else [])


class ExpertAgent:
    """Answers the observation's question with code it writes from the question text alone."""

    def reset(self, task: Task) -> None:
        self.task = task  # the system prompt carries no per-query facts; the question does

    def act(self, observation: str) -> Reply:
        match = re.search(r"Question:\s*(.*?)(?:\n\n|$)", observation, re.S)
        question = match[1] if match else observation
        code, unread = expert_code(question)
        return Reply("".join(f"{note}\n\n" for note in unread) + f"```python\n{code}```\n")

    def close(self) -> None:
        pass
