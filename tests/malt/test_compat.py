"""NetArena's MALT rules (compat, compat_ops, compat_grade): a hand-checked table of NetArena's verdicts,
NetArena-style golden answers, its six safety checks, the isomorphism shortcut, and its query catalogue."""

from __future__ import annotations

from collections import Counter

import networkx as nx
import pytest

from pytest_netarena.apps.malt.netarena import rules as compat, grade as compat_grade, ops as compat_ops
from pytest_netarena.apps.malt import schema as s
from pytest_netarena.apps.malt import topology as t
from pytest_netarena.apps.malt.netarena.data import netarena_graph
from pytest_netarena.core.catalogue import Category, RandomChooser
from pytest_netarena.testing.malt_answers import run_answer

# a 20-node topology in NetArena's conventions: superblock ju1.a1 with block ju1.a1.m1 (switches
# s2c1 and s3c1), spine block ju1.s1 (s1c1, s2c1), 2 ports of 1e9 bps per switch, racks, domains
SW = "ju1.a1.m1.s2c1"
AGG = "ju1.a1.m1"
DOM = "ju1.a1.dom"


@pytest.fixture(scope="module")
def tiny():
    graph = netarena_graph(*t.synthetic_records(t.Shape(1, 1, 2, 1, 2, 2), seed=0))
    assert graph.number_of_nodes() == 20
    assert all(graph.nodes[n].get(s.CAPACITY) in (None, 1e9) for n in graph)
    return graph


def verdict(graph: nx.DiGraph, program: list[dict], code: str) -> compat_grade.Verdict:
    kind, data, _ = compat_ops.run_program(graph.copy(), program)
    value, failure = run_answer(code, graph)
    return compat_grade.grade(kind, data, value, failure)


def graph_answer(edit: str) -> str:
    """NetArena's documented answer format for a graph question: edit a copy, return it both ways."""
    return (
        "def process_graph(graph_data):\n"
        "    g = copy.deepcopy(graph_data)\n"
        + "".join(f"    {line}\n" for line in edit.strip().splitlines())
        + "    return {'type': 'graph', 'data': g, 'updated_graph': nx.readwrite.json_graph.node_link_data(g)}\n"
    )


def read_answer(kind: str, data: str, edit: str = "", updated: bool = True) -> str:
    """NetArena's documented answer format for a text or list question (updated_graph always)."""
    extra = ", 'updated_graph': nx.readwrite.json_graph.node_link_data(g)" if updated else ""
    return (
        "def process_graph(graph_data):\n"
        "    g = copy.deepcopy(graph_data)\n"
        + "".join(f"    {line}\n" for line in edit.strip().splitlines())
        + f"    return {{'type': '{kind}', 'data': {data}{extra}}}\n"
    )


REMOVE_SWITCH = [{"op": "remove", "name": SW}]
REMOVE_PORT = [{"op": "remove", "name": SW + ".p1"}]
ADD_PORT = [{"op": "add", "name": "new_EK_PORT_7", "kind": s.PORT, "parent": SW}]
ADD_SWITCH = [{"op": "add", "name": "new_EK_PACKET_SWITCH_3", "kind": s.PACKET_SWITCH, "parent": AGG}]
RANK = [{"op": "rank", "parent": AGG}]
LIST_RACK = [{"op": "list", "parent": "ju1.a1.m1rack"}]
REMOVE_PORT_COUNT = [*REMOVE_PORT, {"op": "count", "parent": SW, "kind": s.PORT}]
REMOVE_SWITCH_COUNT = [*REMOVE_SWITCH, {"op": "count", "parent": AGG, "kind": s.PACKET_SWITCH}]
REMOVE_SWITCH_LIST = [*REMOVE_SWITCH, {"op": "list", "parent": AGG}]
ADD_PORT_TO_BLOCK_LIST = [{"op": "add", "name": "new_EK_PORT_5", "kind": s.PORT, "parent": AGG},
                          {"op": "list", "parent": AGG}]
SWITCH_PORT = "{'name': 'new_EK_PACKET_SWITCH_3', 'type': 'EK_PACKET_SWITCH'}.p1"
NEW_PORT = "g.add_node('new_EK_PORT_7', name='new_EK_PORT_7', type={type}, physical_capacity_bps={capacity})"
RANKED = "[('ju1.a1.m1.s3c1', 2000000000.0), ('ju1.a1.m1.s2c1', 2000000000.0)]"

# (case, program, answer code, NetArena's Result-Correctness, its Result-Safety), checked by hand
# against NetArena's code (malt_env.ground_truth_check, solid_step_helper, error_check.SafetyChecker),
# then against its own evaluator run outside this project: 31 of 32 agree, and on the last (an empty
# updated_graph) NetArena's checker returns None and its evaluation raises TypeError
TABLE = [
    ("remove a switch, leave its ports (NetArena's ground truth): isolated ports",
     REMOVE_SWITCH, graph_answer(f"g.remove_node('{SW}')"), True, False),
    ("remove a switch with its ports (our default rule): not NetArena's graph",
     REMOVE_SWITCH, graph_answer(f"g.remove_nodes_from(['{SW}', '{SW}.p1', '{SW}.p2'])"), False, True),
    ("remove a port", REMOVE_PORT, graph_answer(f"g.remove_node('{SW}.p1')"), True, True),
    ("add a port: type a string, capacity 1000 (never stated in the question)", ADD_PORT,
     graph_answer(NEW_PORT.format(type="'EK_PORT'", capacity=1000) + f"\ng.add_edge('{SW}', 'new_EK_PORT_7', type='RK_CONTAINS')"),
     True, True),
    ("add a port with type ['EK_PORT'], as NetArena's prompt asks", ADD_PORT,
     graph_answer(NEW_PORT.format(type="['EK_PORT']", capacity=1000) + f"\ng.add_edge('{SW}', 'new_EK_PORT_7', type='RK_CONTAINS')"),
     False, True),
    ("add a port with a real port's capacity", ADD_PORT,
     graph_answer(NEW_PORT.format(type="'EK_PORT'", capacity="1e9") + f"\ng.add_edge('{SW}', 'new_EK_PORT_7', type='RK_CONTAINS')"),
     False, True),
    ("add a port but no edge: an isolated node", ADD_PORT,
     graph_answer(NEW_PORT.format(type="'EK_PORT'", capacity=1000)), False, False),
    ("add a port with its edge reversed: edges are compared undirected, the hierarchy is not", ADD_PORT,
     graph_answer(NEW_PORT.format(type="'EK_PORT'", capacity=1000) + f"\ng.add_edge('new_EK_PORT_7', '{SW}', type='RK_CONTAINS')"),
     True, False),
    ("add a switch with the port named after the new-node dict", ADD_SWITCH,
     graph_answer("g.add_node('new_EK_PACKET_SWITCH_3', name='new_EK_PACKET_SWITCH_3', type='EK_PACKET_SWITCH')\n"
                  f"g.add_node(\"{SWITCH_PORT}\", name=\"{SWITCH_PORT}\", type='EK_PORT', physical_capacity_bps=1000)\n"
                  f"g.add_edge('new_EK_PACKET_SWITCH_3', \"{SWITCH_PORT}\", type='RK_CONTAINS')\n"
                  f"g.add_edge('{AGG}', 'new_EK_PACKET_SWITCH_3', type='RK_CONTAINS')"), True, True),
    ("add a switch without a port", ADD_SWITCH,
     graph_answer("g.add_node('new_EK_PACKET_SWITCH_3', name='new_EK_PACKET_SWITCH_3', type='EK_PACKET_SWITCH')\n"
                  f"g.add_edge('{AGG}', 'new_EK_PACKET_SWITCH_3', type='RK_CONTAINS')"), False, False),
    ("add a switch with a sensibly named port", ADD_SWITCH,
     graph_answer("g.add_node('new_EK_PACKET_SWITCH_3', name='new_EK_PACKET_SWITCH_3', type='EK_PACKET_SWITCH')\n"
                  "g.add_node('new_EK_PACKET_SWITCH_3.p1', name='new_EK_PACKET_SWITCH_3.p1', type='EK_PORT', physical_capacity_bps=1000)\n"
                  "g.add_edge('new_EK_PACKET_SWITCH_3', 'new_EK_PACKET_SWITCH_3.p1', type='RK_CONTAINS')\n"
                  f"g.add_edge('{AGG}', 'new_EK_PACKET_SWITCH_3', type='RK_CONTAINS')"), False, True),
    ("a graph with every node key renamed: keys do not matter", REMOVE_PORT,
     graph_answer(f"g.remove_node('{SW}.p1')\ng = nx.convert_node_labels_to_integers(g)"), True, True),
    ("a graph whose edges are all typed RK_CONTROLS: edge types are not compared, nor checked for hierarchy",
     REMOVE_PORT, graph_answer(f"g.remove_node('{SW}.p1')\nnx.set_edge_attributes(g, 'RK_CONTROLS', 'type')"), True, True),
    ("rank in the wrong order: ranks are compared as multisets", RANK, read_answer("list", RANKED), True, True),
    ("rank with capacities as ints", RANK, read_answer("list", RANKED.replace("2000000000.0", "2000000000")), True, True),
    ("rank without updated_graph: unsafe", RANK, read_answer("list", RANKED, updated=False), True, False),
    ("list in another order", LIST_RACK, read_answer("list", "['ju1.a1.m1.s3c1', 'ju1.a1.m1.s2c1']"), True, True),
    ("list with an undirected updated_graph: the switch check cannot ask for successors", LIST_RACK,
     read_answer("list", "['ju1.a1.m1.s2c1', 'ju1.a1.m1.s3c1']", "g = g.to_undirected()"), True, False),
    ("count as an int", REMOVE_PORT_COUNT, read_answer("text", "1", f"g.remove_node('{SW}.p1')"), True, True),
    ("count as a string", REMOVE_PORT_COUNT, read_answer("text", "'1'", f"g.remove_node('{SW}.p1')"), True, True),
    ("count as a float", REMOVE_PORT_COUNT, read_answer("text", "1.0", f"g.remove_node('{SW}.p1')"), False, True),
    ("count as the string '1.0'", REMOVE_PORT_COUNT, read_answer("text", "'1.0'", f"g.remove_node('{SW}.p1')"), False, True),
    ("count in words", REMOVE_PORT_COUNT, read_answer("text", "'1 port'", f"g.remove_node('{SW}.p1')"), False, True),
    ("remove a switch and its ports, count the switches: data only, so correct and safe",
     REMOVE_SWITCH_COUNT, read_answer("text", "1", f"g.remove_nodes_from(['{SW}', '{SW}.p1', '{SW}.p2'])"), True, True),
    ("remove a switch only, count the switches: correct, its ports are isolated",
     REMOVE_SWITCH_COUNT, read_answer("text", "1", f"g.remove_node('{SW}')"), True, False),
    ("level 2 compares data only: an unchanged updated_graph passes", REMOVE_SWITCH_LIST,
     read_answer("list", "['ju1.a1.m1.s3c1']"), True, True),
    ("level 3 puts a port straight into a block: correct, and unsafe by NetArena's hierarchy",
     ADD_PORT_TO_BLOCK_LIST,
     read_answer("list", "['ju1.a1.m1.s2c1', 'ju1.a1.m1.s3c1', 'new_EK_PORT_5']",
                 f"g.add_node('new_EK_PORT_5', name='new_EK_PORT_5', type='EK_PORT', physical_capacity_bps=1000)\n"
                 f"g.add_edge('{AGG}', 'new_EK_PORT_5', type='RK_CONTAINS')"), True, False),
    ("code that raises", RANK, "def process_graph(graph_data):\n    raise KeyError('x')\n", False, False),
    ("no process_graph at all", RANK, "x = 1\n", False, False),
    ("the answer object as a JSON string", RANK,
     "def process_graph(graph_data):\n"
     f"    return json.dumps({{'type': 'list', 'data': {RANKED}, "
     "'updated_graph': nx.readwrite.json_graph.node_link_data(graph_data)})\n", True, True),
    ("a bare list instead of the answer object: NetArena compares it as the data", LIST_RACK,
     "def process_graph(graph_data):\n    return ['ju1.a1.m1.s2c1', 'ju1.a1.m1.s3c1']\n", True, False),
    ("an empty updated_graph: NetArena's checker returns None and its run stops", REMOVE_PORT_COUNT,
     read_answer("text", "1", "g = nx.DiGraph()"), True, False),
]


@pytest.mark.parametrize(("case", "program", "code", "correct", "safe"), TABLE, ids=[row[0] for row in TABLE])
def test_netarena_verdicts_hand_checked(tiny, case, program, code, correct, safe):
    result = verdict(tiny, program, code)
    assert (result.correct, result.safe) == (correct, safe), result


def test_verdict_fields_use_netarena_names(tiny):
    result = verdict(tiny, REMOVE_SWITCH, graph_answer(f"g.remove_node('{SW}')"))
    fields = result.fields()
    assert fields["Result-Correctness"] == "Pass" and fields["Result-Safety"] == "Fail"
    assert fields["Verifier-Error"].startswith("Found 2 isolated nodes")
    failed = verdict(tiny, RANK, "def process_graph(graph_data):\n    raise KeyError('x')\n")
    assert failed.fields()["Verifier-Error"] == compat_grade.NOT_CHECKED
    assert "KeyError" in failed.error


# --- ground truth: NetArena's operations -------------------------------------------------------


def test_remove_leaves_the_ports_isolated(tiny):
    graph = tiny.copy()
    compat_ops.remove(graph, SW)
    assert SW not in graph and {SW + ".p1", SW + ".p2"} <= set(nx.isolates(graph))
    assert compat_grade.safety(graph)[0] is False


def test_add_switch_makes_one_port_named_after_the_dict(tiny):
    graph = tiny.copy()
    compat_ops.add(graph, "new_EK_PACKET_SWITCH_3", s.PACKET_SWITCH, AGG)
    assert graph.nodes["new_EK_PACKET_SWITCH_3"] == {"name": "new_EK_PACKET_SWITCH_3", "type": s.PACKET_SWITCH}
    assert graph.nodes[SWITCH_PORT] == {"name": SWITCH_PORT, "type": s.PORT, s.CAPACITY: 1000}
    assert compat.switch_port_name("new_EK_PACKET_SWITCH_3") == SWITCH_PORT
    assert list(graph.successors("new_EK_PACKET_SWITCH_3")) == [SWITCH_PORT]
    assert compat_grade.safety(graph) == (True, "")


def test_add_port_has_capacity_1000_and_a_string_type(tiny):
    graph = tiny.copy()
    compat_ops.add(graph, "new_EK_PORT_7", s.PORT, AGG)  # level 3: straight into a block
    assert graph.nodes["new_EK_PORT_7"] == {"name": "new_EK_PORT_7", "type": s.PORT, s.CAPACITY: compat.NEW_PORT_CAPACITY}
    ok, message = compat_grade.safety(graph)
    assert not ok and message.startswith("Invalid hierarchy")


def test_reads(tiny):
    graph = tiny.copy()
    assert compat_ops.count(graph, DOM, s.PORT) == 4
    assert compat_ops.count(graph, DOM, s.PACKET_SWITCH) == 2
    assert compat_ops.count(graph, "nowhere", s.PORT) == {"nowhere": "not found"}
    assert compat_ops.rank_children(graph, AGG) == [[SW, 2e9], ["ju1.a1.m1.s3c1", 2e9]]
    assert sorted(compat_ops.list_children(graph, "ju1")) == ["ju1.a1", "ju1.s1"]
    assert compat_ops.list_children(graph, "nowhere") == []
    compat_ops.add(graph, "new_EK_PACKET_SWITCH_1", s.PACKET_SWITCH, DOM)
    assert compat_ops.count(graph, DOM, s.PORT) == 5  # the dict-named port counts
    assert compat_ops.rank_children(graph, DOM)[-1] == ["new_EK_PACKET_SWITCH_1", 1000]


# --- comparison and safety ---------------------------------------------------------------------


@pytest.mark.parametrize(("expected", "actual", "same"), [
    (3, 3, True), (3, "3", True), ("3", 3, True), (3, 3.0, False), (3, "3.0", False), (3, " 3", False),
])
def test_text_is_compared_as_exact_strings(expected, actual, same):
    assert compat_grade.compare("text", expected, actual)[0] is same


@pytest.mark.parametrize(("expected", "actual", "same"), [
    ([["a", 1], ["b", 2]], [["b", 2], ["a", 1]], True),
    ([["a", 1], ["b", 2]], [("a", 1.0), ("b", 2)], True),
    ([["a", 1], ["a", 1]], [["a", 1]], False),  # a multiset, not a set
    (["a", "b"], ["b", "a"], True),
    (["a", "b"], "ab", False),
    (["a"], [["a"]], False),
    ([["a", 1]], [{"a": 1}], False),  # an unhashable item: NetArena's Counter raises, a Fail
])
def test_lists_are_compared_as_multisets(expected, actual, same):
    assert compat_grade.compare("list", expected, actual)[0] is same


def _pairs(graph):
    """(reference, candidate) pairs: shortcut cases, and nodes sharing attribute dicts (the search)."""
    moved = graph.copy()
    moved.remove_edge(AGG, SW)
    moved.add_edge(DOM, SW + ".p1", type=s.CONTAINS)
    changed = graph.copy()
    changed.nodes[SW + ".p1"][s.CAPACITY] = 2e9
    relabelled = nx.relabel_nodes(graph, {n: f"x{i}" for i, n in enumerate(graph)})
    extra_key = graph.copy()
    extra_key.nodes[SW]["note"] = None
    cycle, paths, path = nx.cycle_graph(4), nx.Graph([(0, 1), (2, 3)]), nx.path_graph(4)
    for g in (cycle, paths, path):
        nx.set_node_attributes(g, "same", "name")
    return [(graph, graph.copy()), (graph, relabelled), (graph, moved), (graph, changed), (graph, extra_key),
            (cycle, paths), (cycle, nx.cycle_graph(4)), (paths, path)]


def test_isomorphism_shortcut_agrees_with_networkx(tiny):
    for reference, candidate in _pairs(tiny):
        expected = nx.is_isomorphic(nx.Graph(reference), nx.Graph(candidate), node_match=lambda a, b: a == b)
        assert compat_grade.same_graph(reference, candidate) is expected
    assert [compat_grade.same_graph(a, b) for a, b in _pairs(tiny)] == [True, True, False, False, False,
                                                                          False, False, False]


def test_isomorphism_on_the_real_topology_is_fast_and_exact(real_topology_path):
    graph = netarena_graph(*t.records_from_textproto(real_topology_path.read_text()))
    answer = graph.copy()
    compat_ops.remove(answer, SW)
    expected = graph.copy()
    compat_ops.remove(expected, SW)
    assert compat_grade.same_graph(expected, nx.node_link_graph(nx.node_link_data(answer, edges="edges"), edges="edges"))
    assert not compat_grade.same_graph(graph, answer)


@pytest.mark.parametrize(("edit", "check"), [
    (lambda g: g.nodes[SW + ".p1"].update(type="EK_WIRE"), "node_types_valid"),
    (lambda g: g.nodes[SW + ".p1"].pop("type"), "node_types_valid"),
    (lambda g: g.edges[AGG, SW].update(type="RK_LINKS"), "edge_types_valid"),
    (lambda g: g.add_edge(SW + ".p1", SW + ".p2", type="RK_CONTAINS"), "hierarchy_valid"),
    (lambda g: g.remove_edges_from([(SW, SW + ".p1")]), "no_isolated_nodes"),
    (lambda g: g.nodes[SW + ".p1"].update({s.CAPACITY: 0}), "port_bandwidth_valid"),
    (lambda g: g.nodes[SW + ".p1"].pop(s.CAPACITY), "port_bandwidth_valid"),
    (lambda g: g.remove_edges_from([(SW, SW + ".p1"), (SW, SW + ".p2")]) or g.add_edges_from(
        [(AGG, SW + ".p1"), (AGG, SW + ".p2")], type="RK_CONTROLS"), "switches_have_ports"),
])
def test_each_of_the_six_safety_checks_fails_on_its_own(tiny, edit, check):
    graph = tiny.copy()
    assert compat_grade.safety(graph) == (True, "")
    edit(graph)
    failing = [c.__name__ for c in compat_grade.CHECKS if not _passes(c, graph)]
    assert failing[0] == check
    assert compat_grade.safety(graph)[0] is False


def _passes(check, graph):
    try:
        return check(graph)[0]
    except Exception:
        return False


def test_safety_accepts_what_netarena_accepts(tiny):
    graph = tiny.copy()
    graph.nodes[SW + ".p1"][s.CAPACITY] = -5  # only 0 is refused
    graph.nodes[SW + ".p2"]["type"] = "EK_PORT"  # a string type is fine
    assert compat_grade.safety(graph) == (True, "")


# --- the query catalogue ---------------------------------------------------------------------------


def test_labels_round_trip():
    assert compat.label(Category(1, "add")) == "capacity planning, level-1, add"
    assert compat.label(Category(2, "remove+list")) == "capacity planning, level-2, remove-list"
    for category in compat.CATEGORIES:
        assert compat.category_of_label(compat.label(category)) == category
    assert compat.category_of_label("capacity planning, level-1, count") is None  # disabled in NetArena
    assert compat.DEFAULT_LEVELS == (1, 2)


def test_draw_covers_netarena_space(tiny):
    from pytest_netarena.apps.malt.topology import names_by_kind

    by_kind = names_by_kind(tiny)
    seen = Counter()
    for category in compat.CATEGORIES:
        for seed in range(40):
            params = compat.draw(category, RandomChooser(seed), by_kind)
            assert params["label"] == compat.label(category) and params["rules"] == "netarena"
            kind, data, changed = compat_ops.run_program(tiny.copy(), params["program"])
            assert changed == params["mutates"]
            first = params["program"][0]
            if first["op"] == "add":
                parent_kinds = tiny.nodes[first["parent"]]["type"]
                seen[(category.name, first["kind"], parent_kinds[0])] += 1
    # a port goes into a switch at level 1 and in add-count, straight into a block in add-list/add-rank
    assert seen[("add", s.PORT, s.PACKET_SWITCH)] and not seen[("add", s.PORT, s.AGG_BLOCK)]
    assert seen[("add+list", s.PORT, s.AGG_BLOCK)] and seen[("add+rank", s.PORT, s.CONTROL_DOMAIN)]
    assert seen[("add+count", s.PORT, s.PACKET_SWITCH)] and not seen[("add+count", s.PORT, s.AGG_BLOCK)]


def test_drawn_questions_read_back(tiny):
    from pytest_netarena.apps.malt.netarena.data import parse_question
    from pytest_netarena.apps.malt.topology import names_by_kind

    by_kind = names_by_kind(tiny)
    for category in compat.CATEGORIES:
        for seed in range(10):
            params = compat.draw(category, RandomChooser(seed), by_kind)
            assert parse_question(params["question"]) == (category.name, params["program"])


def test_the_box_notes_put_python_types_back_before_netarena_compares(tiny):
    """compat_grade.restored: the JSON value with the box's notes is the value the code returned."""
    names = ["ju1.a1.m1.s2c1", "ju1.a1.m1.s3c1"]
    graph = nx.node_link_data(tiny, edges="edges")
    value = {"type": "list", "data": list(names), "updated_graph": graph}
    assert compat_grade.grade("list", names, value, kinds=()).correct
    for kind in ("tuple", "set", "numpy.ndarray"):
        restored = compat_grade.grade("list", names, dict(value, data=list(names)), kinds=[(("data",), kind)])
        assert not restored.correct and restored.safe, kind
    ranked = [["ju1.a1.m1.s3c1", 2e9], ["ju1.a1.m1.s2c1", 2e9]]
    as_tuples = [(("data", 0), "tuple"), (("data", 1), "tuple"), (("data", 1, 1), "numpy.float64")]
    assert compat_grade.grade("list", ranked, dict(value, data=[list(i) for i in ranked]), kinds=as_tuples).correct
    restored = compat_grade.restored({"data": [[1, 2]], "g": graph},
                                     [(("data", 0), "tuple"), (("data",), "set"), (("g",), "networkx.DiGraph")])
    assert restored["data"] == {(1, 2)} and isinstance(restored["g"], nx.DiGraph) and len(restored["g"]) == 20
    # notes that do not fit the value (or name no type we know) change nothing
    odd = [(("data", 7), "tuple"), (("nowhere", "x"), "set"), (("data",), "numpy.memmap"), (("g",), "networkx.Graph")]
    assert compat_grade.restored({"data": [1], "g": {"nodes": 3}}, odd) == {"data": [1], "g": {"nodes": 3}}


@pytest.mark.parametrize("data", [b'{"a": 1}', b'[["data", "tuple"]]', b'[[["data"], "pickle"]]', b'[[["data", 1.5], "tuple"]]',
                                  b'[[["data"], "tuple", 1]]', b"not json"])
def test_malformed_notes_from_the_box_are_refused(data):
    from pytest_netarena.sandbox.plain_json import Undecodable, notes

    with pytest.raises(Undecodable):
        notes(data, 1 << 20, 10_000)
    assert notes(b'[[["data", 0], "numpy.int64"], [[], "set"]]', 1 << 20, 10_000) == ((("data", 0), "numpy.int64"), ((), "set"))
