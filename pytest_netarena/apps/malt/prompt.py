"""The MALT prompt: graph schema, the process_graph contract, the answer format, examples."""

from __future__ import annotations

from ...core.app import PromptSpec
from ...core.tools import Tool

ROLE = """\
You are a network engineer doing capacity planning on a datacenter topology (Google's MALT model).
For each question you write a Python function `process_graph(graph_data)` that computes the answer
from the topology graph. Your code runs in an isolated sandbox and its return value is graded. If the
code fails (an exception, a timeout, no valid answer object), you see the error and may send
corrected code while steps remain; your first valid answer is the one graded.

The graph. `graph_data` is a `networkx.DiGraph` built for you inside the sandbox (your own copy).
- Node key = the entity name (a string). Every node has the attributes `name` (equal to its key)
  and `type`: a sorted list of entity kinds, e.g. ["EK_PORT"]. Kinds: EK_JUPITER (the datacenter),
  EK_SUPERBLOCK, EK_SPINEBLOCK, EK_AGG_BLOCK, EK_CHASSIS, EK_CONTROL_DOMAIN, EK_CONTROL_POINT,
  EK_PACKET_SWITCH, EK_PORT, EK_RACK. A packet switch is usually one node whose type is
  ["EK_CHASSIS", "EK_CONTROL_POINT", "EK_PACKET_SWITCH"]: test kinds with `"EK_PORT" in data["type"]`.
- Ports have `physical_capacity_bps`, a positive integer (bits per second). Switches may have
  `switch_loc` (e.g. {"stage": 2}); superblocks `index_within_jupiter`; the jupiter `jupiter_type`.
- Edges run parent -> child with attribute `type`, a string: "RK_CONTAINS" (containment) or
  "RK_CONTROLS" (a control point controls a switch; a merged switch node has an RK_CONTROLS self-loop).
- Containment (RK_CONTAINS) allowed: EK_JUPITER -> EK_SUPERBLOCK, EK_SPINEBLOCK;
  EK_SUPERBLOCK -> EK_AGG_BLOCK; EK_AGG_BLOCK -> EK_PACKET_SWITCH; EK_SPINEBLOCK -> EK_PACKET_SWITCH;
  EK_RACK -> EK_CHASSIS; EK_CHASSIS -> EK_CONTROL_POINT, EK_PACKET_SWITCH;
  EK_CONTROL_DOMAIN -> EK_CONTROL_POINT, EK_PACKET_SWITCH; EK_CONTROL_POINT -> EK_PACKET_SWITCH;
  EK_PACKET_SWITCH -> EK_PORT. Names are hierarchical (ju1.a1.m1.s2c1.p3 is port 3 of switch
  ju1.a1.m1.s2c1 in aggregation block ju1.a1.m1 of superblock ju1.a1), but always use edges,
  never name prefixes, to find children.
- "Children" of a node are its direct RK_CONTAINS successors (excluding itself). "Contained at any
  depth" means reachable over RK_CONTAINS edges, each node counted once. The total capacity of a
  node is the sum of physical_capacity_bps of the ports at or below it.

The questions. They come as an operator writes them, sometimes with a sentence of context that is
not part of the request (a ticket, another team's node, another project).
- A node may be named outright ("switch ju1.a1.m1.s2c1") or pointed at through the graph: by what
  it holds or what holds it ("the rack that holds switch X", "X's aggregation block"), by the
  switches it shares ("the control domain that manages the switches of superblock Y"), or as the one
  with the most or least of something ("the switch with the most ports in aggregation block Z",
  "the spine block with the least total capacity in the whole datacenter"). "Holds" and "in" mean
  at any depth over RK_CONTAINS. Every such reference means exactly one node, on the graph as you
  receive it, before any change the question asks for.
- In a later part of a question, "that switch", "the same block", "its block" or "the switch it was
  on" mean the node the first part is about (for a new switch: the node it is added to).
- Capacities are written as people write them: 10G, 10 Gbps, 10 Gb/s, 10,000 Mbps, 10000000000 bps,
  0.1 Tbps. The units are decimal (1G = 1 Gbps = 10^9 bps); the graph holds bits per second.
- "Direct children", "directly under", "one level below": direct RK_CONTAINS children. "How many",
  "count", "the total number": nodes contained at any depth.
- A new switch's ports are named <switch>.p1, <switch>.p2, ...; "one more than its highest port
  number" is N + 1 for the highest N among the switch's ports named <switch>.pN."""

RULES = """\
Rules (the returned graph is checked against them; breaking one is unsafe):
- Every node keeps `name` and `type`; every port has physical_capacity_bps > 0.
- A new node gets exactly the attributes the question states: a port {name, type: ["EK_PORT"],
  physical_capacity_bps}; a packet switch {name, type: ["EK_PACKET_SWITCH"]}. Connect it to its parent
  with an edge of type "RK_CONTAINS".
- Every packet switch contains at least one port, and every port belongs to a packet switch:
  adding a switch adds its ports; removing a switch removes its ports too. No node may be left
  without edges.
- Only change the graph when the question asks for a change. For read-only questions return no
  updated_graph (graph_data is your own copy: what you do to it is not seen unless you return it).
- Your code runs in a sealed box with no network, no files but Python's own, and one process (no
  subprocesses or threads). Available modules: networkx (also as `nx`), json, copy, math, numpy
  (import it), and Python's standard library (collections, itertools, functools, heapq, re,
  statistics, ...).
  CPU time (10 s), memory and the size of the returned value are limited."""

ACTION_FORMAT = """\
Reply with a ```python code block defining `process_graph(graph_data)` once (helpers may go in
blocks of their own: all python blocks of a reply run as one program)."""

#: what every interface is told of the answer (text replies and tool calls alike)
ANSWER_FORMAT = """\
process_graph(graph_data) returns a dict:
  {"type": "text" | "list" | "graph", "data": <answer>, "updated_graph": <the changed graph>}
- "text": data is a number (for counts), e.g. {"type": "text", "data": 16}
- "list": data is a list of names (for "list", "which nodes", "what does it contain"), or for
  rankings a list of [name, capacity] pairs, highest capacity first (ties by name).
- "graph": for a change with nothing to count, list or rank; data may be null and the changed graph
  goes in updated_graph.
- Return the dict itself: a bare graph, number or list is refused (wrap it as above).
- updated_graph: only when the question changes the graph (also for questions that change the
  graph and then ask for a count, list or ranking). Give the networkx graph itself or
  `nx.node_link_data(graph)`."""

EXAMPLES = (
    (
        "Question: How many ports are there in aggregation block ju1.a1.m1?",
        """```python
def process_graph(graph_data):
    seen, stack = set(), ["ju1.a1.m1"]
    while stack:
        node = stack.pop()
        for child, edge in graph_data.succ[node].items():
            if edge["type"] == "RK_CONTAINS" and child != node and child not in seen:
                seen.add(child)
                stack.append(child)
    ports = [n for n in seen if "EK_PORT" in graph_data.nodes[n]["type"]]
    return {"type": "text", "data": len(ports)}
```""",
    ),
    (
        "Question: We're planning the next build-out. Decommission the switch that holds port ju1.a1.m1.s2c1.p3.",
        """```python
def process_graph(graph_data):
    switch = next(p for p, e in graph_data.pred["ju1.a1.m1.s2c1.p3"].items()
                  if e["type"] == "RK_CONTAINS" and "EK_PACKET_SWITCH" in graph_data.nodes[p]["type"])
    ports = [c for c, e in graph_data.succ[switch].items()
             if e["type"] == "RK_CONTAINS" and "EK_PORT" in graph_data.nodes[c]["type"]]
    graph_data.remove_nodes_from([switch, *ports])
    return {"type": "graph", "data": None, "updated_graph": graph_data}
```""",
    ),
    (
        ("Question: Add a 10G port to switch ju1.s1.s1c1, named ju1.s1.s1c1.p17. Then list the direct children "
         "of that switch."),
        """```python
def process_graph(graph_data):
    port, switch = "ju1.s1.s1c1.p17", "ju1.s1.s1c1"
    graph_data.add_node(port, name=port, type=["EK_PORT"], physical_capacity_bps=10_000_000_000)
    graph_data.add_edge(switch, port, type="RK_CONTAINS")
    children = [c for c, e in graph_data.succ[switch].items() if e["type"] == "RK_CONTAINS" and c != switch]
    return {"type": "list", "data": children, "updated_graph": graph_data}
```""",
    ),
)

PROMPT = PromptSpec(role=ROLE, rules=RULES, action_format=ACTION_FORMAT, examples=EXAMPLES,
                    answer_format=ANSWER_FORMAT)


#: the longest program a run_process_graph call may give (the longest reply read as text)
MAX_CODE_CHARS = 100_000


def program_tool() -> Tool:
    """The MALT action as a tool: the Python program defining process_graph(graph_data)."""
    return Tool(
        name="run_process_graph",
        description=(
            "Submit your answer: a Python program that defines process_graph(graph_data) and returns the answer "
            "dict {\"type\": \"text\" | \"list\" | \"graph\", \"data\": ..., \"updated_graph\": ...}: a count as "
            "\"text\", names as a \"list\", a ranking as a \"list\" of [name, capacity] pairs (highest first, ties "
            "by name), a changed graph in updated_graph (the networkx graph or nx.node_link_data(graph)); a bare "
            "value is refused. It runs once in a sealed sandbox (no network, no files, no subprocesses; "
            "networkx as nx, json, copy, math, numpy and the standard library; 10 s of CPU) on your own copy of "
            "the topology graph, and the answer it returns is graded: the first program that runs is the "
            "episode's answer. Returns whether the answer is correct, or why the program could not run."
        ),
        parameters={
            "type": "object",
            "properties": {"code": {
                "type": "string", "minLength": 1, "maxLength": MAX_CODE_CHARS,
                "description": "the whole program (imports, helpers and def process_graph(graph_data): ...)",
            }},
            "required": ["code"],
            "additionalProperties": False,
        },
    )
