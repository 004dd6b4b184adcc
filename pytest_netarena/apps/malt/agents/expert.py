"""The MALT `expert` agent: reads only the question text and writes its own process_graph code.

Unlike the oracle it never sees a query's params: `act` parses the observation (the sentences
queries.py writes) into steps and answers with self-written helpers that follow the prompt's stated
semantics, not ops.py. A sentence it cannot parse is answered honestly with a best attempt.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ....core.types import Reply, Task

_NAME = r"([^\s,()]*[^\s,().])"
_KIND = (r"(?:datacenter \(jupiter\)|superblock|spine block|aggregation block|chassis|control domain|"
         r"control point|packet switch|port|rack)")
_BPS = r"(\d+) bps"

# (pattern, builder of a step from the match), tried in this order on each sentence
_PATTERNS: tuple[tuple[re.Pattern[str], Any], ...] = (
    (re.compile(rf"If the total physical_capacity_bps of the ports of the packet switch {_NAME} is "
                rf"greater than (\d+) bps, remove its port {_NAME}; otherwise add a new port named "
                rf"{_NAME} with physical_capacity_bps {_BPS}"),
     lambda m: {"op": "if", "switch": m[1], "above": int(m[2]),
                "then": [{"op": "remove", "name": m[3]}],
                "else": [{"op": "add_port", "switch": m[1], "port": m[4], "capacity": int(m[5])}]}),
    (re.compile(rf"For each packet switch directly contained in the {_KIND} {_NAME}, set the "
                rf"physical_capacity_bps of its port named <switch name>\.(\w+) to {_BPS}"),
     lambda m: {"op": "for_update", "parent": m[1], "suffix": m[2], "capacity": int(m[3])}),
    (re.compile(rf"Add a new port named {_NAME} with physical_capacity_bps {_BPS}.*? to the packet switch {_NAME}"),
     lambda m: {"op": "add_port", "switch": m[3], "port": m[1], "capacity": int(m[2])}),
    (re.compile(rf"Add a new packet switch named {_NAME} to the {_KIND} {_NAME}, with \d+ ports? "
                rf"\(([^)]*)\), each with physical_capacity_bps {_BPS}"),
     lambda m: {"op": "add_switch", "switch": m[1], "parent": m[2],
                "ports": [[p.strip(), int(m[4])] for p in m[3].split(",") if p.strip()]}),
    (re.compile(rf"Remove the (?:port|packet switch) {_NAME} from the graph"),
     lambda m: {"op": "remove", "name": m[1]}),
    (re.compile(rf"List the names of all direct children of the {_KIND} {_NAME}"),
     lambda m: {"op": "list", "parent": m[1]}),
    (re.compile(rf"Rank the direct children of the {_KIND} {_NAME} by total physical_capacity_bps"),
     lambda m: {"op": "rank", "parent": m[1]}),
    (re.compile(rf"Count the (EK_\w+) nodes contained in the {_KIND} {_NAME}"),
     lambda m: {"op": "count", "parent": m[2], "kind": m[1]}),
)

_MUTATIONS = ("add_port", "add_switch", "remove", "for_update", "if")


def parse_question(text: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The steps a question asks for, in the order it asks, and the phrases nothing matched."""
    found: list[tuple[int, dict[str, Any]]] = []
    covered: list[tuple[int, int]] = []
    for pattern, build in _PATTERNS:
        for match in pattern.finditer(text):
            if any(a <= match.start() < b for a, b in covered):
                continue  # e.g. the if-sentence's "add a new port" is part of the if
            covered.append(match.span())
            found.append((match.start(), build(match)))
    found.sort(key=lambda item: item[0])
    unparsed = []
    if not found:
        unparsed.append(text.strip()[:200])
    return [step for _, step in found], unparsed


# The helpers the expert ships: written from the prompt's definitions (not a copy of ops.py).
_HELPERS = '''
CONTAINS, PORT, SWITCH, CAP = "RK_CONTAINS", "EK_PORT", "EK_PACKET_SWITCH", "physical_capacity_bps"


def is_kind(g, n, kind):
    kinds = g.nodes[n].get("type") or ()
    return kinds == kind if isinstance(kinds, str) else kind in kinds


def kids(g, n):
    return [c for c, e in g.succ[n].items() if c != n and e.get("type") == CONTAINS]


def below(g, n):
    seen, stack = {n}, [n]
    while stack:
        for c in kids(g, stack.pop()):
            if c not in seen:
                seen.add(c)
                stack.append(c)
    seen.discard(n)
    return seen


def capacity(g, n):
    return sum(g.nodes[x].get(CAP, 0) for x in below(g, n) | {n} if is_kind(g, x, PORT))


def apply(g, step):
    op = step["op"]
    if op == "add_port":
        g.add_node(step["port"], name=step["port"], type=[PORT], **{CAP: step["capacity"]})
        g.add_edge(step["switch"], step["port"], type=CONTAINS)
    elif op == "add_switch":
        g.add_node(step["switch"], name=step["switch"], type=[SWITCH])
        g.add_edge(step["parent"], step["switch"], type=CONTAINS)
        for port, cap in step["ports"]:
            apply(g, {"op": "add_port", "switch": step["switch"], "port": port, "capacity": cap})
    elif op == "remove":
        name = step["name"]
        doomed = [name] + ([c for c in kids(g, name) if is_kind(g, c, PORT)] if is_kind(g, name, SWITCH) else [])
        g.remove_nodes_from(doomed)
    elif op == "for_update":
        for sw in kids(g, step["parent"]):
            port = sw + "." + step["suffix"]
            if is_kind(g, sw, SWITCH) and port in g:
                g.nodes[port][CAP] = step["capacity"]
    elif op == "if":
        for inner in step["then" if capacity(g, step["switch"]) > step["above"] else "else"]:
            apply(g, inner)
    elif op == "list":
        return "list", sorted(kids(g, step["parent"]))
    elif op == "rank":
        pairs = [[c, capacity(g, c)] for c in kids(g, step["parent"])]
        return "list", sorted(pairs, key=lambda p: (-p[1], p[0]))
    elif op == "count":
        return "text", sum(1 for x in below(g, step["parent"]) if is_kind(g, x, step["kind"]))
    return None


def process_graph(graph_data):
    answer, changed = None, False
    for step in STEPS:
        result = apply(graph_data, step)
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
    """process_graph code answering a question, and the phrases it could not parse."""
    steps, unparsed = parse_question(question)
    program = f"import json\n\nSTEPS = json.loads({json.dumps(steps)!r})\n"
    return program + _HELPERS, unparsed


class ExpertAgent:
    """Answers the observation's question with code it writes from the question text alone."""

    def reset(self, task: Task) -> None:
        self.task = task  # the system prompt carries no per-query facts; the question does

    def act(self, observation: str) -> Reply:
        match = re.search(r"Question:\s*(.*?)(?:\n\n|$)", observation, re.S)
        question = match[1] if match else observation
        code, unparsed = expert_code(question)
        note = "".join(f"I could not parse: {u!r}; best attempt below.\n\n" for u in unparsed)
        return Reply(f"{note}```python\n{code}```\n")

    def close(self) -> None:
        pass
