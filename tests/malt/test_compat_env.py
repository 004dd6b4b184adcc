"""The MALT app under --compat netarena: its categories, default levels and query catalogue, and replies in
NetArena's documented answer format judged through the real box by NetArena's rules."""

from __future__ import annotations

import pytest

from pytest_netarena.apps.malt import APP
from pytest_netarena.apps.malt.netarena import rules as compat
from pytest_netarena.apps.malt.app import check_netarena_data
from pytest_netarena.apps.malt.netarena.environment import TRUTH_SAFE, NetArenaMaltEnvironment
from pytest_netarena.core.app import RunOptions
from pytest_netarena.core.types import Query
from pytest_netarena.core.errors import UsageError

SMALL = "synthetic:600"
COMPAT = RunOptions(seed=5, queries=1, extra={"malt_topology": SMALL}, rules="netarena", levels_given=False)


@pytest.fixture(scope="module")
def env():
    environment = APP.make_environment(COMPAT)
    assert isinstance(environment, NetArenaMaltEnvironment)
    yield environment
    environment.close()


def query(program: list[dict], question: str = "a question") -> Query:
    category = compat.CATEGORIES[0]
    params = compat.params(program, question, category)
    return Query("malt", category.level, category.name, 0, 0, params)


def answer(env, program: list[dict], reply: str):
    env.reset(query(program))
    outcome = env.step(reply)
    return outcome, env.judge()


def test_first_observation_states_netarena_answer_contract(env):
    observation = env.reset(query(REMOVE, "Remove ju1.a1.m1.s2c1 from the graph. Return a graph."))
    assert observation.startswith("Question: Remove ju1.a1.m1.s2c1 from the graph. Return a graph.")
    assert "always 'updated_graph'" in observation


def test_netarena_query_space_and_default_levels():
    assert list(APP.categories(COMPAT)) == list(compat.CATEGORIES)
    queries = APP.generate(COMPAT)
    assert {q.level for q in queries} == {1, 2} and len(queries) == 7  # NetArena's default run
    assert all(q.params["rules"] == "netarena" for q in queries)
    explicit = APP.generate(RunOptions(seed=5, queries=1, levels=(3,), extra={"malt_topology": SMALL}, rules="netarena"))
    assert {q.category for q in explicit} == {"add+list", "add+rank", "add+count"}
    ours = APP.generate(RunOptions(seed=5, queries=1, extra={"malt_topology": SMALL}))
    assert {q.level for q in ours} == {1, 2, 3} and "rules" not in ours[0].params
    named = APP.generate(RunOptions(seed=5, queries=1, extra={"malt_topology": SMALL}, rules="netarena"))
    assert {q.level for q in named} == {1, 2, 3}  # --levels 1,2,3 named explicitly is honoured under compat too


def test_queries_of_the_other_rules_are_refused(env):
    from pytest_netarena.core.errors import InfraError

    ours = APP.generate(RunOptions(seed=5, queries=1, levels=(1,), extra={"malt_topology": SMALL}))[0]
    with pytest.raises(InfraError, match="without --compat"):
        env.reset(ours)
    default_env = APP.make_environment(RunOptions(extra={"malt_topology": SMALL}))
    try:
        with pytest.raises(InfraError, match="with --compat netarena"):
            default_env.reset(query(REMOVE))
    finally:
        default_env.close()


def test_netarena_data_option_names_a_checkout(tmp_path):
    with pytest.raises(UsageError, match="NetArena checkout"):
        check_netarena_data(str(tmp_path))


REMOVE = [{"op": "remove", "name": "ju1.a1.m1.s2c1"}]
NETARENA_STYLE = """Answer:
```python
def process_graph(graph_data):
    graph_copy = copy.deepcopy(graph_data)
    graph_copy.remove_node('ju1.a1.m1.s2c1')
    return_object = {'type': 'graph', 'data': graph_copy,
                     'updated_graph': nx.readwrite.json_graph.node_link_data(graph_copy)}
    return return_object
```"""


def test_netarena_style_answer_is_correct_and_unsafe_like_its_ground_truth(env):
    outcome, judgement = answer(env, REMOVE, NETARENA_STYLE)  # no imports: nx and copy are given, as in NetArena
    assert judgement.correct, judgement.details
    ports = sum(1 for p in env.graph.successors("ju1.a1.m1.s2c1") if p != "ju1.a1.m1.s2c1")
    assert ports >= 2 and outcome.violations[0].startswith(f"Found {ports} isolated nodes")
    assert judgement.metrics == {TRUTH_SAFE: False}


def test_our_rule_answer_is_incorrect_but_safe(env):
    reply = """```python
def process_graph(graph_data):
    sw = 'ju1.a1.m1.s2c1'
    graph_data.remove_nodes_from([sw] + [p for p in graph_data.successors(sw) if p != sw])
    return {'type': 'graph', 'data': None, 'updated_graph': graph_data}
```"""
    outcome, judgement = answer(env, REMOVE, reply)
    assert not judgement.correct and judgement.details == "Two graphs are not identical."
    assert outcome.violations == ()


@pytest.mark.parametrize("reply", [
    "```python\ndef process_graph(graph_data):\n    return 1 / 0\n```",
    "I would remove the switch.",
    "```python\ndef process_graph(graph_data):\n    return {'type': 'list', 'data': []}\n```",
])
def test_failures_are_scored_fail_fail_not_agent_errors(env, reply):
    outcome, judgement = answer(env, [{"op": "list", "parent": "ju1.a1.m1"}], reply)
    assert not judgement.correct
    assert outcome.violations and outcome.agent_error is None and outcome.done


def test_refused_reply_is_scored_fail_fail(env):
    env.reset(query([{"op": "list", "parent": "ju1.a1.m1"}]))
    outcome = env.refuse("hostile bytes")
    assert outcome.violations and outcome.agent_error is None and not env.judge().correct


def test_count_must_be_an_exact_string(env):
    program = [{"op": "remove", "name": "ju1.a1.m1.s2c1.p1"}, {"op": "count", "parent": "ju1.a1.m1.s2c1", "kind": "EK_PORT"}]
    template = ("```python\ndef process_graph(graph_data):\n    graph_data.remove_node('ju1.a1.m1.s2c1.p1')\n"
                "    return {{'type': 'text', 'data': {data}, 'updated_graph': graph_data}}\n```")
    left = sum(1 for p in env.graph.successors("ju1.a1.m1.s2c1") if p != "ju1.a1.m1.s2c1") - 1
    forms = (str(left), f"'{left}'", f"{left}.0", f"'{left}.0'", str(left + 1))
    results = [answer(env, program, template.format(data=data))[1].correct for data in forms]
    assert results == [True, True, False, False, False]


LIST_AGG = [{"op": "list", "parent": "ju1.a1.m1"}]
RANK_AGG = [{"op": "rank", "parent": "ju1.a1.m1"}]


def shaped(env, program: list[dict], shape: str) -> bool:
    """Whether NetArena's rules accept the ground truth's data returned as `shape` (a Python expression of
    `truth`, importing numpy when it uses np), computed in the box, with updated_graph a networkx graph."""
    env.reset(query(program))
    truth = env.expected["data"]
    imports = "import numpy as np\n\n" if "np." in shape else ""
    reply = (f"```python\n{imports}def process_graph(graph_data):\n"
             f"    truth = {truth!r}\n"
             f"    return {{'type': 'list', 'data': {shape}, 'updated_graph': graph_data}}\n```")
    outcome = env.step(reply)
    assert outcome.agent_error is None and outcome.violations == (), outcome
    return env.judge().correct


def test_a_tuple_or_set_where_netarena_requires_a_list_fails_as_there(env):
    """NetArena compares the Python value: check_list_equal wants a list; our box sends JSON and notes the types."""
    assert shaped(env, LIST_AGG, "truth")
    assert shaped(env, LIST_AGG, "list(reversed(truth))")  # a multiset: order ignored
    assert not shaped(env, LIST_AGG, "tuple(truth)")
    assert not shaped(env, LIST_AGG, "set(truth)")
    assert not shaped(env, LIST_AGG, "np.array(truth)")  # an array is no list either
    assert shaped(env, LIST_AGG, "[np.str_(name) for name in truth]")  # numpy strings are str


def test_a_ranking_of_tuples_or_numpy_numbers_passes_as_there(env):
    """Rank items may be tuples or lists (NetArena turns inner lists into tuples) and numpy numbers hash
    and compare equal to Python's; a tuple of them as the whole data is not a list."""
    assert shaped(env, RANK_AGG, "[tuple(item) for item in truth]")
    assert shaped(env, RANK_AGG, "[(name, np.float64(capacity)) for name, capacity in truth]")
    assert not shaped(env, RANK_AGG, "tuple(tuple(item) for item in truth)")
    # a first item that is a tuple leaves later lists as they are: unhashable, the comparison fails
    assert len(env.expected["data"]) > 1
    assert not shaped(env, RANK_AGG, "[tuple(truth[0])] + [list(item) for item in truth[1:]]")


def test_a_numpy_count_is_judged_as_netarena_judges_it(env):
    """A count compares as text after int -> str; a numpy integer is no int, so NetArena fails it."""
    program = [{"op": "remove", "name": "ju1.a1.m1.s2c1.p1"}, {"op": "count", "parent": "ju1.a1.m1.s2c1", "kind": "EK_PORT"}]
    template = ("```python\nimport numpy as np\n\ndef process_graph(graph_data):\n"
                "    graph_data.remove_node('ju1.a1.m1.s2c1.p1')\n"
                "    return {{'type': 'text', 'data': {data}, 'updated_graph': graph_data}}\n```")
    left = sum(1 for p in env.graph.successors("ju1.a1.m1.s2c1") if p != "ju1.a1.m1.s2c1") - 1
    forms = (f"int(np.int64({left}))", f"np.int64({left})", f"str(np.int64({left}))")
    assert [answer(env, program, template.format(data=data))[1].correct for data in forms] == [True, False, True]


def test_the_compat_profile_keeps_netarenas_single_answer(env):
    """Ours allows corrections (three steps by default); NetArena scores one answer, whatever it is."""
    from pytest_netarena.apps.malt.environment import MaltEnvironment

    assert env.default_max_steps == 1 and MaltEnvironment.default_max_steps == 3
    outcome, _ = answer(env, [{"op": "list", "parent": "ju1.a1.m1"}],
                        "```python\ndef process_graph(graph_data):\n    return 1 / 0\n```")
    assert outcome.done
