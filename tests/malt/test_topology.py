"""The textproto loader (real file and round trips) and the synthetic generator's invariants."""

from __future__ import annotations

from collections import Counter

import pytest

from pytest_netarena.apps.malt import canon, safety
from pytest_netarena.apps.malt import schema as s
from pytest_netarena.apps.malt import topology as t
from pytest_netarena.core.errors import UsageError


def kind_counts(graph):
    return Counter(tuple(data["type"]) for _, data in graph.nodes(data=True))


def test_real_topology_has_netarena_counts(real_topology_path):
    graph = t.load_textproto(real_topology_path)
    assert (graph.number_of_nodes(), graph.number_of_edges()) == (5493, 6424)
    counts = kind_counts(graph)
    assert counts[(s.PORT,)] == 5120
    assert counts[(s.CHASSIS, s.CONTROL_POINT, s.PACKET_SWITCH)] == 320
    assert counts[(s.RACK,)] == 20 and counts[(s.CONTROL_DOMAIN,)] == 8
    edge_kinds = Counter(kind for *_, kind in graph.edges(data="type"))
    assert edge_kinds == {s.CONTAINS: 6104, s.CONTROLS: 320}
    assert graph.nodes["ju1.a1.m1.s2c1.p2"][s.CAPACITY] == 2_000_000_000  # an int, not 2e9
    assert graph.nodes["ju1.a1.m1.s2c1"]["switch_loc"] == {"stage": 2}
    assert safety.check(canon.from_networkx(graph)) == []


def test_synthetic_default_matches_the_real_shape():
    graph = t.synthetic_topology()
    assert (graph.number_of_nodes(), graph.number_of_edges()) == (5493, 6424)
    assert kind_counts(graph)[(s.PORT,)] == 5120
    assert safety.check(canon.from_networkx(graph)) == []


def test_synthetic_is_deterministic_by_seed():
    a, b, c = (t.synthetic_topology(nodes=2000, seed=seed) for seed in (1, 1, 2))
    capacities = [dict(g.nodes(data=s.CAPACITY)) for g in (a, b, c)]
    assert capacities[0] == capacities[1]
    assert capacities[0] != capacities[2]


@pytest.mark.parametrize("nodes", [20, 300, 5493, 20000])
def test_synthetic_sizes_and_constraints(nodes):
    graph = t.load_topology(f"synthetic:{nodes}")
    assert abs(graph.number_of_nodes() - nodes) <= max(0.05 * nodes, 10)
    assert safety.check(canon.from_networkx(graph)) == []


def test_synthetic_reaches_100k_nodes():
    assert 99_000 <= t.shape_for_nodes(100_000).nodes <= 101_000


def test_textproto_round_trip():
    entities, relationships = t.synthetic_records(t.Shape(1, 2, 2, 1, 2, 3), seed=5)
    direct = t.build_graph(entities, relationships)
    parsed = t.build_graph(*t.records_from_textproto(t.to_textproto(entities, relationships)))
    assert canon.diff(canon.from_networkx(direct), canon.from_networkx(parsed)) == []
    assert set(direct.edges(data="type")) == set(parsed.edges(data="type"))


def test_parser_handles_comments_repeats_and_escapes():
    parsed = t.parse_textproto('# top\na { b: "x\\"y" c: 1.5 c: 2 d { e: true } } f: -3 g: EK_PORT\n')
    assert parsed == [("a", {"b": 'x"y', "c": [1.5, 2], "d": {"e": True}}), ("f", -3), ("g", "EK_PORT")]


@pytest.mark.parametrize("text", ["a { b: 1", "a { b: 1 } }", 'a { b: "unterminated }'])
def test_parser_rejects_malformed_text(text):
    with pytest.raises(t.TextprotoError):
        t.parse_textproto(text)


def test_bad_topology_option_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="cannot read"):
        t.load_topology(str(tmp_path / "missing.textproto"))
    with pytest.raises(UsageError):
        t.load_topology("synthetic:lots")
    bad = tmp_path / "bad.textproto"
    bad.write_text('relationship { kind: RK_CONTAINS a { name: "x" } z { name: "y" } }')
    with pytest.raises(UsageError, match="unknown entities"):
        t.load_topology(str(bad))


def test_copy_graph_is_what_networkx_copy_returns():
    graph = t.synthetic_topology(nodes=400, seed=3)
    graph.graph["name"] = "dc"
    first = next(iter(graph.nodes))
    graph.nodes[first]["tags"] = ["a"]  # copied one level deep, as networkx does
    ours, theirs = t.copy_graph(graph), graph.copy()
    assert type(ours) is type(theirs)
    assert ours.graph == theirs.graph and ours.graph is not graph.graph
    assert list(ours.nodes(data=True)) == list(theirs.nodes(data=True))
    assert list(ours.edges(data=True)) == list(theirs.edges(data=True))
    assert all(list(ours.pred[node].items()) == list(theirs.pred[node].items()) for node in graph)
    some_edge = next(iter(graph.edges))
    ours.edges[some_edge]["capacity"] = -1
    ours.nodes[first]["name"] = "changed"
    ours.remove_node(list(graph.nodes)[5])
    assert graph.edges[some_edge].get("capacity") != -1 and graph.nodes[first]["name"] == first
    assert len(graph) == 400 and ours.edges[some_edge] is ours.pred[some_edge[1]][some_edge[0]]
    assert ours.nodes[first]["tags"] is graph.nodes[first]["tags"]
