"""Properties of the ground-truth operations, the query catalogue, the comparison and the safety check."""

from __future__ import annotations

import json

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_netarena.apps.malt import answers, canon, ops, queries, safety
from pytest_netarena.apps.malt import schema as s
from pytest_netarena.core.catalogue import HypothesisChooser

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def index(small_graph):
    return queries.TopologyIndex(small_graph)


def violations(graph):
    return safety.check(canon.from_networkx(graph))


@SETTINGS
@given(data=st.data())
def test_add_port_then_count_grows_by_one(index, data):
    graph = index.graph.copy()
    switch = data.draw(st.sampled_from(index.by_kind[s.PACKET_SWITCH]))
    agg = next(p for p in graph.pred[switch] if ops.has_kind(graph, p, s.AGG_BLOCK) or ops.has_kind(graph, p, s.SPINEBLOCK))
    before = ops.count(graph, switch, s.PORT), ops.count(graph, agg, s.PORT)
    ops.add_port(graph, switch, switch + ".new", data.draw(st.integers(1, 10**12)))
    assert (ops.count(graph, switch, s.PORT), ops.count(graph, agg, s.PORT)) == (before[0] + 1, before[1] + 1)
    assert violations(graph) == []


@SETTINGS
@given(data=st.data(), ports=st.integers(1, 4))
def test_add_switch_then_count_grows_by_one(index, data, ports):
    graph = index.graph.copy()
    parent = data.draw(st.sampled_from(index.of_kinds(ops.SWITCH_PARENTS)))
    before = ops.count(graph, parent, s.PACKET_SWITCH), ops.count(graph, parent, s.PORT)
    ops.add_switch(graph, "sw", parent, [[f"sw.p{i}", 10**9] for i in range(ports)])
    assert ops.count(graph, parent, s.PACKET_SWITCH) == before[0] + 1
    assert ops.count(graph, parent, s.PORT) == before[1] + ports
    assert violations(graph) == []


@SETTINGS
@given(data=st.data())
def test_remove_leaves_no_orphans(index, data):
    graph = index.graph.copy()
    name = data.draw(st.sampled_from(index.removable_switches + index.removable_ports))
    ports = ops.ports_of(graph, name) if ops.has_kind(graph, name, s.PACKET_SWITCH) else []
    ops.remove(graph, name)
    assert name not in graph and not any(p in graph for p in ports)
    assert violations(graph) == []


def test_unsafe_operations_are_refused(small_graph):
    graph = small_graph.copy()
    agg = next(n for n in graph if ops.has_kind(graph, n, s.AGG_BLOCK))
    switch = next(n for n in graph if ops.has_kind(graph, n, s.PACKET_SWITCH))
    with pytest.raises(ValueError, match="at least one port"):
        ops.add_switch(graph, "bare", agg, [])
    with pytest.raises(ValueError, match="positive"):
        ops.add_port(graph, switch, "p0", 0)
    with pytest.raises(ValueError, match="cannot contain"):
        ops.add_switch(graph, "x", switch, [["x.p1", 1]])
    ports = ops.ports_of(graph, switch)
    for port in ports[:-1]:
        ops.remove(graph, port)
    with pytest.raises(ValueError, match="without a port"):
        ops.remove(graph, ports[-1])
    with pytest.raises(ValueError, match="only ports and packet switches"):
        ops.remove(graph, agg)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_ground_truth_answers_are_always_safe(index, data):
    category = data.draw(st.sampled_from(queries.CATEGORIES))
    params = queries.draw(category, HypothesisChooser(data.draw), index.graph, index)
    json.dumps(params)  # params are plain JSON values
    graph = index.graph.copy()
    kind, _, changed = ops.run_program(graph, params["program"])
    assert changed == params["mutates"]
    assert kind == ("graph" if category.name in ("add", "remove") else "text" if category.name.endswith("count") else "list")
    assert violations(graph) == []


@SETTINGS
@given(data=st.data())
def test_comparison_is_reflexive_and_detects_one_attribute_change(index, data):
    graph = index.graph
    expected = canon.from_networkx(graph)
    round_trip = canon.from_node_link(json.loads(json.dumps(nx.node_link_data(graph, edges="edges"))))
    assert canon.diff(expected, round_trip) == []
    changed = json.loads(json.dumps(nx.node_link_data(graph, edges="links")))  # the older key works too
    node = data.draw(st.sampled_from(changed["nodes"]))
    key = data.draw(st.sampled_from(sorted(k for k in node if k != "id")))
    node[key] = {"type": ["EK_RACK", "EK_PORT"], "name": node["id"] + "x"}.get(key, 7)
    name = node["id"]
    problems = canon.diff(expected, canon.from_node_link(changed))
    assert len(problems) == 1 and name in problems[0]


def test_comparison_normalises_types_and_numbers(small_graph):
    data = nx.node_link_data(small_graph, edges="edges")
    for node in data["nodes"]:
        node["type"] = list(reversed(node["type"])) if len(node["type"]) > 1 else node["type"][0]
        if s.CAPACITY in node:
            node[s.CAPACITY] = float(node[s.CAPACITY]) * (1 + 1e-12)
    assert canon.diff(canon.from_networkx(small_graph), canon.from_node_link(data)) == []


def test_ranking_order_matters_but_ties_do_not():
    expected = [["a", 5], ["b", 3], ["c", 3], ["d", 1]]
    assert answers.compare_ranking(expected, [["a", 5.0], ["c", 3], ["b", 3], ["d", 1]]) == ""
    assert "position" in answers.compare_ranking(expected, [["b", 3], ["a", 5], ["c", 3], ["d", 1]])
    assert answers.compare_ranking(expected, [["a", 5], ["b", 3], ["d", 3], ["c", 1]]) != ""
    assert answers.compare_ranking(expected, [("a", 5)]) != ""


def test_lists_are_sets_and_counts_are_exact():
    assert answers.compare_names(["x", "y"], ["y", "x"]) == ""
    assert answers.compare_names(["x", "y"], ["y", "x", "x"]) != ""
    assert answers.compare_names(["x", "y"], ["x"]) != ""
    assert answers.compare_count(16, 16) == answers.compare_count(16, 16.0) == answers.compare_count(16, "16") == ""
    assert answers.compare_count(16, 17) != "" and answers.compare_count(16, "16 ports") != ""


def test_safety_reports_each_broken_rule(small_graph):
    graph = small_graph.copy()
    switch = next(n for n in graph if ops.has_kind(graph, n, s.PACKET_SWITCH))
    port = ops.ports_of(graph, switch)[0]
    agg = next(n for n in graph if ops.has_kind(graph, n, s.AGG_BLOCK))
    graph.nodes[port][s.CAPACITY] = 0
    graph.add_node("bare", name="bare", type=[s.PACKET_SWITCH])
    graph.add_edge(agg, "bare", type=s.CONTAINS)
    graph.add_node("lonely", name="lonely", type=["EK_TOASTER"])
    graph.add_edge(agg, port, type=s.CONTAINS)
    graph.add_edge(port, agg, type="RK_LIKES")
    found = "\n".join(violations(graph))
    for phrase in ("<= 0", "without a port", "unknown type", "isolated", "hierarchy forbids", "edges with an unknown type"):
        assert phrase in found


def test_safety_lists_each_broken_rule_once_in_the_order_found_and_cuts_long_lists():
    nodes = {f"p{i}": {"name": f"p{i}", "type": [s.PORT], s.CAPACITY: 10**9} for i in range(7)}
    nodes["sw"] = {"name": "other", "type": s.PACKET_SWITCH}
    nodes["p6"][s.CAPACITY] = "10G"
    edges = {("sw", "p0"): {"type": [s.CONTAINS]}, ("sw", "p1"): {"type": s.CONTROLS}}
    assert safety.check(canon.Canon(nodes, edges)) == [
        f"1 ports without a numeric {s.CAPACITY}: p6",
        "1 nodes whose name attribute differs from their id: sw",
        "1 RK_CONTROLS edges not from a control point to a packet switch: sw->p1",
        "6 ports not contained in a packet switch: p1, p2, p3, p4, p5 and 1 more",  # p1 has an edge: found first
        "5 isolated nodes: p2, p3, p4, p5, p6",
    ]
