"""Reading a NetArena checkout's MALT data: its real topology in NetArena's conventions, its 5,000-question
file into our queries (with the unreadable ones listed), and NetArena-style golden answers passing our
compat grader on real questions. NetArena's files are read from a checkout or the git mirror at test time."""

from __future__ import annotations

import json
from collections import Counter

import networkx as nx
import pytest

from pytest_netarena.apps.malt.netarena import rules as compat, grade as compat_grade, ops as compat_ops, data as netarena_data
from pytest_netarena.apps.malt import schema as s
from pytest_netarena.core.errors import UsageError
from pytest_netarena.testing.malt_answers import run_answer


@pytest.fixture(scope="module")
def real(checkout):
    return netarena_data.load_graph(str(checkout))


@pytest.fixture(scope="module")
def reading(checkout, real):
    return netarena_data.read_questions(netarena_data.data_dir(checkout) / netarena_data.QUESTIONS_FILE, set(real))


def test_real_topology_in_netarena_conventions(real):
    assert (real.number_of_nodes(), real.number_of_edges()) == (5493, 6424)
    switch = real.nodes["ju1.a1.m1.s2c1"]
    assert switch["type"] == [s.PACKET_SWITCH, s.CHASSIS, s.CONTROL_POINT]  # file order, not sorted
    assert switch["switch_loc"] == {"stage": 2.0}
    capacity = real.nodes["ju1.a1.m1.s2c1.p2"][s.CAPACITY]
    assert capacity == 2e9 and isinstance(capacity, float)
    assert Counter(kind for *_, kind in real.edges(data="type")) == {s.CONTAINS: 6104, s.CONTROLS: 320}
    assert compat_grade.safety(real) == (True, "")


def test_our_topology_in_netarena_conventions_equals_its_loader(real, real_topology_path):
    from pytest_netarena.apps.malt.topology import load_textproto

    converted = netarena_data.in_netarena_conventions(load_textproto(real_topology_path))
    assert dict(converted.nodes(data=True)) == dict(real.nodes(data=True))
    assert list(converted.nodes) == list(real.nodes)
    assert {(u, v): d for u, v, d in converted.edges(data=True)} == {(u, v): d for u, v, d in real.edges(data=True)}


def test_data_dir_accepts_the_checkout_app_folder_or_data_folder(checkout, tmp_path):
    data = checkout / "app-malt" / "data"
    for given in (checkout, checkout / "app-malt", data):
        assert netarena_data.data_dir(given) == data
    with pytest.raises(UsageError, match="give a NetArena checkout"):
        netarena_data.data_dir(tmp_path)


def test_all_5000_questions_are_read(reading, capsys):
    total = len(reading.queries) + len(reading.skipped)
    with capsys.disabled():
        print(f"\n{reading.summary(netarena_data.QUESTIONS_FILE)}")
    assert total == 5000
    assert len(reading.queries) == 5000, reading.summary("file")
    per_label = Counter(q.params["label"] for q in reading.queries)
    assert set(per_label.values()) == {500} and len(per_label) == 10
    first = reading.queries[0]
    assert first.id == "malt-L1-add-0000" and first.params["source"] == f"{netarena_data.QUESTIONS_FILE}:1"
    assert first.params["program"] == [{"op": "add", "name": "new_EK_PACKET_SWITCH_9", "kind": s.PACKET_SWITCH,
                                        "parent": "ju1.s4.dom"}]
    assert first.params["question"].startswith("Add new node with name new_EK_PACKET_SWITCH_9")


def test_question_params_match_netarena_answer_literals(reading, checkout):
    """The names our reader takes from each question are the ones NetArena's answer code uses."""
    path = netarena_data.data_dir(checkout) / netarena_data.QUESTIONS_FILE
    answers = [json.loads(line)["messages"][1]["answer"] for line in path.read_text().splitlines()]
    assert reading.queries
    for query in reading.queries:
        answer = answers[query.seed - 1]
        for step in query.params["program"]:
            for key in ("name", "parent"):
                if key in step:
                    assert f"'{step[key]}'" in answer or f'"{step[key]}"' in answer, (query.id, step)


def test_unreadable_lines_are_listed_with_reasons(tmp_path):
    lines = [
        {"messages": [{"question": "Remove ju1.a1.m1.s2c1 from the graph. Return a graph."}, {"answer": ""},
                      {"task_label": "capacity planning, level-1, remove"}]},
        {"messages": [{"question": "Count the EK_PORT in ju1.a1.m1. Return the count number as text."},
                      {"answer": ""}, {"task_label": "capacity planning, level-1, count"}]},
        {"messages": [{"question": "Remove ju1.a1.m1.s2c1 from the graph. Return a graph."}, {"answer": ""},
                      {"task_label": "capacity planning, level-1, list"}]},
        {"messages": [{"question": "Remove ju9.nowhere from the graph. Return a graph."}, {"answer": ""},
                      {"task_label": "capacity planning, level-1, remove"}]},
        {"messages": [{"question": "Add spare to ju1.a1.m1. List direct child nodes of ju1.a1.m1 in the updated "
                                   "graph. Return a list of child nodes name."}, {"answer": ""},
                      {"task_label": "capacity planning, level-3, add-list"}]},
        {"messages": [{"question": "Add spare to ju1.a1.m1. List direct child nodes of ju1.a1.m1 in the updated "
                                   "graph. Return a list of child nodes name."},
                      {"answer": "new_node = {'name': 'spare', 'type': 'EK_PORT'}"},
                      {"task_label": "capacity planning, level-3, add-list"}]},
        {"messages": [{"question": "Please fix the datacenter."}, {"answer": ""},
                      {"task_label": "capacity planning, level-1, add"}]},
    ]
    path = tmp_path / "questions.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n{not json\n")
    names = {"ju1.a1.m1.s2c1", "ju1.a1.m1"}
    reading = netarena_data.read_questions(path, names)
    assert [q.id for q in reading.queries] == ["malt-L1-remove-0000", "malt-L3-add+list-0000"]
    assert reading.queries[1].params["program"][0] == {"op": "add", "name": "spare", "kind": s.PORT,
                                                       "parent": "ju1.a1.m1"}
    reasons = {item.line: item.reason for item in reading.skipped}
    assert "not one of NetArena's ten active MALT labels" in reasons[2]
    assert "the label says 'list' but the question asks 'remove'" in reasons[3]
    assert "'ju9.nowhere', which is not in the topology" in reasons[4]
    assert "type of the new node 'spare'" in reasons[5]
    assert "not one of NetArena's MALT question forms" in reasons[7]
    assert "not a NetArena question line" in reasons[8]
    assert "8 NetArena MALT questions read" in reading.summary(path) and "line 4:" in reading.summary(path)
    assert len(netarena_data.read_questions(path, names, levels=(3,)).queries) == 1


def test_parse_question_forms():
    parse = netarena_data.parse_question
    assert parse("Rank all child nodes of EK_AGG_BLOCK type ju1.a2.m3 based on physical_capacity_bps attribute. "
                 "Return a list of tuple, each tuple has child node name and its total physical capacity.") == (
        "rank", [{"op": "rank", "parent": "ju1.a2.m3"}])
    assert parse("Add node with name 'new_EK_PORT_4' to ju1.a1.dom. Rank direct child nodes of ju1.a1.dom in the "
                 "updated graph based on physical_capacity_bps attribute. Return a list of tuple, each tuple has "
                 "node name and its total physical capacity.") == (
        "add+rank", [{"op": "add", "name": "new_EK_PORT_4", "kind": s.PORT, "parent": "ju1.a1.dom"},
                     {"op": "rank", "parent": "ju1.a1.dom"}])
    assert parse("Remove ju1.a1.m1.s2c1.p3 from the graph. Count the EK_PORT in ju1.a1.m1.s2c1 in the updated "
                 "graph. Return the count number as text.")[1][1] == {"op": "count", "parent": "ju1.a1.m1.s2c1",
                                                                     "kind": s.PORT}
    with pytest.raises(netarena_data.Unreadable, match="update"):
        parse("Update the physical capacity value of ju1.a1.m1.s2c1.p1 to 5. Return a graph.")
    with pytest.raises(netarena_data.Unreadable, match="not a list, rank or count"):
        parse("Remove ju1.a1.m1.s2c1 from the graph. Draw it.")


# --- NetArena-style golden answers on real questions --------------------------------------------


def golden_answer(program: list[dict]) -> str:
    """Answer code as NetArena documents it (process_graph returning type, data and updated_graph),
    written here for each question form from the question's parameters."""
    lines = ["def process_graph(graph_data):", "    g = copy.deepcopy(graph_data)", "    answer = None"]
    for step in program:
        op = step["op"]
        if op == "remove":
            lines.append(f"    g.remove_node({step['name']!r})")
        elif op == "add":
            attrs = {"name": step["name"], "type": step["kind"]}
            if step["kind"] == s.PORT:
                attrs[s.CAPACITY] = 1000
            lines.append(f"    g.add_node({step['name']!r}, **{attrs!r})")
            if step["kind"] == s.PACKET_SWITCH:
                port = str({"name": step["name"], "type": step["kind"]}) + ".p1"
                lines.append(f"    g.add_node({port!r}, name={port!r}, type='EK_PORT', physical_capacity_bps=1000)")
                lines.append(f"    g.add_edge({step['name']!r}, {port!r}, type='RK_CONTAINS')")
            lines.append(f"    g.add_edge({step['parent']!r}, {step['name']!r}, type='RK_CONTAINS')")
        elif op == "list":
            lines.append(f"    answer = ('list', [v for _, v, d in g.out_edges({step['parent']!r}, data=True) "
                         "if d['type'] == 'RK_CONTAINS'])")
        elif op == "rank":
            lines += [
                "    def capacity(n):",
                "        own = g.nodes[n].get('physical_capacity_bps', 0) if 'EK_PORT' in g.nodes[n]['type'] else 0",
                "        return own + sum(g.nodes[p].get('physical_capacity_bps', 0) for _, p, d in g.out_edges(n, data=True)",
                "                         if d['type'] == 'RK_CONTAINS' and 'EK_PORT' in g.nodes[p]['type'])",
                f"    children = [v for _, v, d in g.out_edges({step['parent']!r}, data=True) if d['type'] == 'RK_CONTAINS']",
                "    answer = ('list', sorted(((c, capacity(c)) for c in children), key=lambda x: -x[1]))",
            ]
        elif op == "count":
            lines.append(f"    below = nx.dfs_preorder_nodes(nx.subgraph_view(g, filter_edge=lambda a, b: "
                         f"g.edges[a, b]['type'] == 'RK_CONTAINS'), {step['parent']!r})")
            lines.append(f"    answer = ('text', sum(1 for n in below if {step['kind']!r} in g.nodes[n]['type']) "
                         f"- ({step['kind']!r} in g.nodes[{step['parent']!r}]['type']))")
    lines.append("    kind, data = answer or ('graph', g)")
    lines.append("    return {'type': kind, 'data': data, 'updated_graph': nx.readwrite.json_graph.node_link_data(g)}")
    return "\n".join(lines) + "\n"


def _first_per_category(reading, per_category):
    seen: Counter[str] = Counter()
    for query in reading.queries:
        if seen[query.category] < per_category:
            seen[query.category] += 1
            yield query


def test_golden_answers_pass_the_compat_grader_on_real_questions(reading, real):
    """Every category, 2 real questions each: NetArena-style answers are correct, and unsafe exactly
    where NetArena's own ground truth is (a removed switch's ports; a port put into a block)."""
    unsafe = Counter()
    for query in _first_per_category(reading, 2):
        program = query.params["program"]
        gt_graph = real.copy()
        kind, data, _ = compat_ops.run_program(gt_graph, program)
        value, failure = run_answer(golden_answer(program), real)
        verdict = compat_grade.grade(kind, data, value, failure)
        assert verdict.correct, (query.id, query.params["question"], verdict)
        assert verdict.safe == compat_grade.safety(gt_graph)[0], (query.id, verdict)
        unsafe[query.category] += not verdict.safe
    assert sum(unsafe.values()) > 0  # NetArena's rules make some ground truths unsafe


def test_compat_oracle_source_is_self_contained():
    """compat_ops runs with networkx alone (the oracle ships its source as an answer)."""
    import inspect

    namespace: dict = {}
    exec(inspect.getsource(compat_ops), namespace)
    graph = nx.DiGraph()
    graph.add_node("sw", name="sw", type=[s.PACKET_SWITCH])
    assert namespace["run_program"](graph, [{"op": "add", "name": "p", "kind": s.PORT, "parent": "sw"},
                                            {"op": "count", "parent": "sw", "kind": s.PORT}])[:2] == ("text", 1)
    assert compat.NEW_PORT_CAPACITY == 1000
