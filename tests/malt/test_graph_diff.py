"""A graph returned as its changes to the topology is judged exactly as the whole graph was: same graph, same
order, same bounds, same verdicts; a forged diff is refused cleanly."""

from __future__ import annotations

import dataclasses
import json
import random

import networkx as nx
import pytest

from pytest_netarena.apps.malt import APP, canon, safety
from pytest_netarena.apps.malt.agents.builtin import oracle_code, reckless_code
from pytest_netarena.apps.malt.environment import MaltEnvironment
from pytest_netarena.core.app import RunOptions
from pytest_netarena.sandbox import graph_diff, zygote
from pytest_netarena.sandbox.forkserver import ChildLimits, node_link_json
from pytest_netarena.sandbox.plain_json import Undecodable

from .conftest import SMALL

LIMITS = ChildLimits(cpu_s=5, wall_s=20)
ROOMY = {"output_bytes": 10**9, "output_items": 10**9}


@pytest.fixture(scope="module")
def envs(small_graph):
    """(diff, whole): the same topology judged with graphs sent as changes, and sent whole."""
    diff, whole = MaltEnvironment(small_graph, LIMITS), MaltEnvironment(small_graph, LIMITS)
    whole.graph_diffs = False
    yield diff, whole
    diff.close()
    whole.close()


@pytest.fixture(scope="module")
def queries():
    return APP.generate(RunOptions(seed=5, queries=2, extra={"malt_topology": SMALL}))


def fenced(code: str) -> str:
    return f"```python\n{code}\n```"


def judged(env: MaltEnvironment, query, code: str) -> tuple:
    env.reset(query)
    outcome = env.step(fenced(code))
    return dataclasses.replace(outcome, check_s=0.0), env.judge()


def body(lines: str, returned: str = '{"type": "graph", "data": None, "updated_graph": g}') -> str:
    indented = "\n".join("    " + line for line in lines.strip().splitlines())
    return f"import networkx as nx\nimport numpy as np\n\ndef process_graph(g):\n{indented}\n    return {returned}\n"


FIRST_PORT = "p = next(n for n, k in g.nodes(data='type') if 'EK_PORT' in k)"
FIRST_SWITCH = "s = next(n for n, k in g.nodes(data='type') if 'EK_PACKET_SWITCH' in k)"
#: answers whose graph takes every turn of the diff: types JSON keeps apart though == does not, moved and
#: renamed nodes, a rebuilt order, graphs in odd places, and values the bounds or JSON refuse
PROGRAMS = {
    "unchanged": body("pass"),
    "capacity as bool": body(FIRST_PORT + "\ng.nodes[p]['physical_capacity_bps'] = True"),
    "capacity as float": body(FIRST_PORT + "\ng.nodes[p]['physical_capacity_bps'] = float(g.nodes[p]['physical_capacity_bps'])"),
    "capacity as numpy": body(FIRST_PORT + "\ng.nodes[p]['physical_capacity_bps'] = np.int64(g.nodes[p]['physical_capacity_bps'])"),
    "type as tuple": body(FIRST_PORT + "\ng.nodes[p]['type'] = tuple(g.nodes[p]['type'])"),
    "type list changed in place": body(FIRST_PORT + "\ng.nodes[p]['type'].append('EK_RACK')"),
    "int attribute key": body(FIRST_PORT + "\ng.nodes[p][7] = 'seven'"),
    "switch removed alone": body(FIRST_SWITCH + "\ng.remove_node(s)"),
    "node moved to the end": body(FIRST_SWITCH + "\nattrs, out = dict(g.nodes[s]), list(g.out_edges(s, data=True))\n"
                                  "inn = list(g.in_edges(s, data=True))\ng.remove_node(s)\ng.add_node(s, **attrs)\n"
                                  "g.add_edges_from(out + inn)"),
    "order rebuilt": body("h = nx.DiGraph()\nh.add_nodes_from(sorted(g.nodes(data=True), key=lambda item: item[0][::-1]))\n"
                          "h.add_edges_from(reversed(list(g.edges(data=True))))\ng = h"),
    "edge to a new node": body(FIRST_SWITCH + "\ng.add_edge(s, 'brand-new', type='RK_CONTAINS')"),
    "edge attribute changed": body("u, v = next(iter(g.edges))\ng.edges[u, v]['type'] = 'RK_CONTROLS'"),
    "tuple node id": body(FIRST_SWITCH + "\ng.add_edge(s, (1, 2), type='RK_CONTAINS')"),
    "int node id": body(FIRST_SWITCH + "\ng.add_node(5, name=5, type=['EK_PORT'], physical_capacity_bps=1)\n"
                        "g.add_edge(s, 5, type='RK_CONTAINS')"),
    "graph attribute": body("g.graph['note'] = [1, 2, 3]"),
    "graph given as data": body("pass", '{"type": "graph", "data": g}'),
    "graph as data and updated_graph": body(FIRST_PORT + "\ng.nodes[p]['x'] = 1", '{"type": "graph", "data": g, "updated_graph": g}'),
    "graph in a list answer": body("pass", '{"type": "list", "data": [g], "updated_graph": g}'),
    "bare graph": body("pass", "g"),
    "two copies": body("h = g.copy()\nh.remove_node(next(iter(h)))", '{"type": "graph", "data": h, "updated_graph": g}'),
    "node-link given": body(FIRST_PORT + "\ng.nodes[p]['x'] = 2", '{"type": "graph", "updated_graph": nx.node_link_data(g, edges="edges")}'),
    "multigraph": body("g = nx.MultiDiGraph(g)"),
    "undirected": body("g = g.to_undirected()"),
    "NaN attribute": body(FIRST_PORT + "\ng.nodes[p]['physical_capacity_bps'] = float('nan')"),
    "NaN graph attribute": body("g.graph['x'] = float('nan')"),
    "object attribute": body(FIRST_PORT + "\ng.nodes[p]['x'] = object()"),
    "deeply nested attribute": body(FIRST_PORT + "\nx = 1\nfor _ in range(45):\n    x = [x]\ng.nodes[p]['x'] = x"),
    "nested at the limit": body(FIRST_PORT + "\nx = 1\nfor _ in range(36):\n    x = [x]\ng.nodes[p]['x'] = x"),
    "very deeply nested attribute": body(FIRST_PORT + "\nx = 1\nfor _ in range(5000):\n    x = [x]\ng.nodes[p]['x'] = x"),
    "huge diff": body("for i in range(60_000):\n    g.add_node(f'n{i}', name=f'n{i}', type=['EK_PORT'], pad='x' * 40)"),
    "many items": body(FIRST_PORT + "\ng.nodes[p]['x'] = [0] * 1_500_000"),
    "everything removed": body("g.remove_nodes_from(list(g))"),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_graph_sent_as_changes_gets_the_verdict_of_the_whole_graph(envs, queries, name):
    diff, whole = envs
    for query in (queries[0], next(q for q in queries if q.params["mutates"])):
        assert judged(diff, query, PROGRAMS[name]) == judged(whole, query, PROGRAMS[name]), (name, query.category)


def test_oracle_and_reckless_answers_get_the_same_verdicts(envs, queries):
    diff, whole = envs
    assert len(queries) >= 12
    for query in queries:
        for code in (oracle_code(query), reckless_code(query)):
            assert judged(diff, query, code) == judged(whole, query, code), query.category
    graph_code = "def process_graph(graph_data):\n    return {'type': 'graph', 'updated_graph': graph_data}"
    assert isinstance(diff.sandbox.run(graph_code).value["updated_graph"], graph_diff.GraphDiff)
    assert isinstance(whole.sandbox.run(graph_code).value["updated_graph"], dict)


def forged(payload: dict, notes: list) -> str:
    """An answer that writes its own result bytes to every descriptor it holds and ends as if it returned."""
    packet = b"R" + json.dumps(payload).encode() + b"\n" + json.dumps(notes).encode()
    return (f"import os\n\ndef process_graph(graph_data):\n    for fd in range(3, 64):\n        try:\n"
            f"            os.write(fd, {packet!r})\n        except OSError:\n            pass\n    os._exit(0)\n")


def marker(**changes) -> dict:
    return {"graph_diff": 1, "graph": {}, "removed": [], "out": [], "nodes": [], "edges": [], **changes}


@pytest.mark.parametrize("changes, why", [
    ({"removed": ["no-such-node"]}, "removed names a node the input graph does not have"),
    ({"out": ["no-such-node"]}, "out names a node the input graph does not have"),
    ({"removed": [[1]]}, "removed names a node the input graph does not have"),
    ({"nodes": [{"id": "new"}], "edges": [{"source": "new", "target": "no-such-node"}]}, "an edge names a node"),
    ({"edges": [{"source": "nobody", "target": "nobody"}]}, "an edge names a node"),
    ({"nodes": [7]}, "a node entry is not an object with an id"),
    ({"surprise": 1}, "unexpected keys"),
])
def test_a_forged_diff_is_refused_cleanly(envs, queries, changes, why):
    diff, _ = envs
    query = next(q for q in queries if q.params["mutates"])
    payload = {"type": "graph", "data": None, "updated_graph": marker(**changes)}
    outcome, verdict = judged(diff, query, forged(payload, [[["updated_graph"], "networkx.DiGraph"]]))
    assert outcome.output.startswith("the code failed: the returned graph's changes are malformed: " + why), outcome.output
    assert not verdict.correct and outcome.violations == ()
    assert judged(diff, query, oracle_code(query))[1].correct  # the next answer is read normally


def test_a_node_keeping_an_edge_to_a_removed_node_is_refused(envs, queries, small_graph):
    diff, _ = envs
    u, v = next(iter(small_graph.edges))
    query = next(q for q in queries if q.params["mutates"])
    payload = {"type": "graph", "updated_graph": marker(removed=[v])}
    outcome, _ = judged(diff, query, forged(payload, [[["updated_graph"], "networkx.DiGraph"]]))
    assert "an input node keeps an edge to a removed node" in outcome.output


def test_a_forged_huge_diff_is_refused_at_the_cap(envs, queries):
    diff, _ = envs
    query = next(q for q in queries if q.params["mutates"])
    cap = diff.sandbox.output_cap
    code = ("import os\n\ndef process_graph(graph_data):\n    data = b'R{\"type\": \"graph\", \"updated_graph\": {\"graph_diff\": 1, \"pad\": \"'"
            f" + b'x' * {cap} + b'\"}}}}\\n[]'\n    for fd in range(3, 64):\n        try:\n            os.write(fd, data)\n"
            "        except OSError:\n            pass\n    os._exit(0)\n")
    outcome, _ = judged(diff, query, code)
    assert outcome.output == f"the code failed: output larger than the limit of {diff.sandbox.output_cap} bytes"


def test_a_marker_where_no_graph_was_noted_is_a_plain_value(envs, queries):
    """Only where the box's notes put a DiGraph is a value read as changes: a look-alike dict is node-link JSON."""
    diff, whole = envs
    query = next(q for q in queries if q.params["mutates"])
    code = body("pass", '{"type": "graph", "updated_graph": {"graph_diff": 1, "graph": {}, "removed": [], "out": [], '
                        '"nodes": [], "edges": []}}')
    assert judged(diff, query, code) == judged(whole, query, code)


# -- the diff itself, in-process: the graph it rebuilds, its order and its size are the whole graph's ------------

def mutated(graph: nx.DiGraph, seed: int) -> nx.DiGraph:
    rng = random.Random(seed)
    g = graph.copy()
    names = list(g)
    for _ in range(rng.randint(1, 12)):
        op = rng.randrange(11)
        node = rng.choice(names)
        if op == 0 and node in g:
            g.nodes[node]["x"] = rng.choice([1, 1.0, True, "1", [1], {"a": [None]}, -0.0])
        elif op == 1 and node in g:
            g.remove_node(node)
        elif op == 2:
            g.add_node(f"new{rng.randrange(5)}", type=["EK_PORT"], name="n")
        elif op == 3 and node in g:
            attrs = dict(g.nodes[node])
            edges = list(g.out_edges(node, data=True)) + list(g.in_edges(node, data=True))
            g.remove_node(node)
            g.add_node(node, **attrs)
            g.add_edges_from(edges)
        elif op == 4 and node in g:
            g.add_edge(node, rng.choice(names), type="RK_CONTAINS")
        elif op == 5 and g.number_of_edges():
            g.remove_edge(*rng.choice(list(g.edges)))
        elif op == 6 and g.number_of_edges():
            u, v = rng.choice(list(g.edges))
            g.edges[u, v]["w"] = rng.random()
        elif op == 7 and node in g:
            g.nodes[node].clear()
        elif op == 9 and node in g:
            g.nodes[node]["type"] = rng.choice([["EK_PORT"], ["EK_PACKET_SWITCH"], "EK_RACK", [], ["BOGUS"], None])
        elif op == 10 and node in g:
            g.add_edge(node, rng.choice(names), type=rng.choice(["RK_CONTROLS", "RK_CONTAINS", ["RK_CONTAINS"], "odd"]))
        elif op == 8 and rng.random() < 0.3:
            shuffled = list(g.nodes(data=True))
            rng.shuffle(shuffled)
            h = nx.DiGraph()
            h.add_nodes_from(shuffled)
            h.add_edges_from(g.edges(data=True))
            g = h
    return g


@pytest.mark.parametrize("seed", range(60))
def test_the_rebuilt_graph_and_its_size_are_the_whole_graphs(small_graph, seed):
    graph_json = node_link_json(small_graph)
    box_graph = nx.node_link_graph(json.loads(graph_json), directed=True, multigraph=False, edges="edges")
    base, inner = graph_diff.GraphBase(graph_json), zygote.Base(box_graph, graph_json)
    after = mutated(box_graph, seed)
    whole_text = json.dumps(nx.node_link_data(after, edges="edges"))
    whole = canon.from_node_link(json.loads(whole_text))
    value = json.loads(zygote.result_payload({"g": after}, inner, ROOMY)[1:].partition(b"\n")[0])["g"]
    changes = graph_diff.read(value, base)
    rebuilt = canon.from_diff(changes)
    assert list(rebuilt.nodes.items()) == list(whole.nodes.items())
    assert list(rebuilt.edges.items()) == list(whole.edges.items())
    assert canon.from_node_link(changes.node_link()) == whole
    assert (changes.size, changes.items) == (len(whole_text), graph_diff.items(whole_text))
    assert max(graph_diff.depth(value), 2 + changes.kept_depth) == graph_diff.depth(json.loads(whole_text))
    assert safety._clean(base)  # so the check below looks only near the changes
    assert safety.check(rebuilt) == safety.check(whole)
    assert rebuilt.touched_nodes >= {n for n in whole.nodes.keys() ^ base.nodes.keys()}
    assert all(rebuilt.nodes[n] == base.nodes[n] for n in rebuilt.nodes.keys() - rebuilt.touched_nodes)
    assert all(rebuilt.edges[e] == base.edges[e] for e in rebuilt.edges.keys() - rebuilt.touched_edges)


def test_an_unchanged_graph_is_sent_as_no_changes_and_whole_near_the_bounds(small_graph):
    graph_json = node_link_json(small_graph)
    box_graph = nx.node_link_graph(json.loads(graph_json), directed=True, multigraph=False, edges="edges")
    inner = zygote.Base(box_graph, graph_json)
    value = json.loads(zygote.result_payload(box_graph, inner, ROOMY)[1:].partition(b"\n")[0])
    assert value == {"graph_diff": 1, "graph": {}, "removed": [], "out": [], "nodes": [], "edges": []}
    # where the whole graph's JSON might pass a bound the changes pass, the whole graph goes
    tight = {"output_bytes": len(graph_json) + 100, "output_items": 10**9}
    assert zygote.result_payload(box_graph, inner, tight)[1:].partition(b"\n")[0] == graph_json
    with pytest.raises(Undecodable, match="names a node twice"):
        graph_diff.read({**value, "removed": [next(iter(box_graph))] * 2}, graph_diff.GraphBase(graph_json))


def test_a_graph_whose_internals_were_replaced_goes_whole(small_graph):
    """Where the diff cannot read the graph (its node dict swapped for another mapping), the whole graph goes,
    as node_link_data reads it."""
    graph_json = node_link_json(small_graph)
    box_graph = nx.node_link_graph(json.loads(graph_json), directed=True, multigraph=False, edges="edges")
    inner = zygote.Base(box_graph, graph_json)
    odd = box_graph.copy()

    class Nodes(dict):
        def values(self):
            raise RuntimeError("no values here")

    odd._node = Nodes(odd._node)
    sent = zygote.result_payload({"g": odd}, inner, ROOMY)[1:].partition(b"\n")[0]
    assert sent == json.dumps({"g": nx.node_link_data(odd, edges="edges")}).encode()
