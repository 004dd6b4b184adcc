"""Numbers an answer may return that do not fit a float (10**400), and infinities (`1e400` in the result's JSON), are
wrong answers wherever the grader compares or checks them: graph diff, ranking, count, safety; in the environment,
in the Gymnasium env (ours and the NetArena profile), never an exception that erases the answer as an infra error.
A grading exception on a hostile answer is an incorrect answer with the reason; a grader that fails on the expected
answer too is our bug and stays an error."""

from __future__ import annotations

import pytest

from pytest_netarena.apps.malt import APP
from pytest_netarena.apps.malt.agents.builtin import oracle_code
from pytest_netarena.apps.malt.environment import MaltEnvironment
from pytest_netarena.core.app import RunOptions
from pytest_netarena.sandbox.forkserver import ChildLimits

from .conftest import needs_boxes

pytestmark = needs_boxes

SMALL = "synthetic:600"

#: what the answer puts where a number belongs: Python source of the value. "1e400" reaches the grader through the
#: result's JSON (the answer rewrites the json.dumps its process encodes with: decoded, it is an infinity)
HOSTILE = {"huge": "10 ** 400", "huge negative": "-(10 ** 400)", "infinity": '"FORGED"',
           "minus infinity": '"-FORGED"'}
FORGE = '''
import json
_dumps = json.dumps
json.dumps = lambda *a, **k: _dumps(*a, **k).replace('"-FORGED"', '-1e400').replace('"FORGED"', '1e400')
'''

#: the oracle's answer, then `tamper` (Python lines using `result`, `graph_data` and `number`)
TAMPERED = '''
{oracle}
{forge}

def process_graph(graph_data):
    number = {number}
    result = oracle_answer(graph_data)
    port = next(n for n, kinds in graph_data.nodes(data="type") if "EK_PORT" in kinds)
{tamper}
    return result
'''
#: one port of the graph the answer returns is given the number as its capacity
GRAPH = '''    graph_data.nodes[port]["physical_capacity_bps"] = number
    result["updated_graph"] = graph_data'''


def code(query, number: str, tamper: str) -> str:
    forge = FORGE if "FORGED" in number else ""
    oracle = oracle_code(query).replace("def process_graph(", "def oracle_answer(")
    return TAMPERED.format(oracle=oracle, forge=forge, number=number, tamper=tamper)


def fenced(text: str) -> str:
    return f"```python\n{text}\n```"


@pytest.fixture(scope="module")
def env():
    from pytest_netarena.apps.malt.topology import load_topology

    environment = MaltEnvironment(load_topology(SMALL), ChildLimits(wall_s=20))
    yield environment
    environment.close()


@pytest.fixture(scope="module")
def queries():
    return {q.category: q for q in APP.generate(RunOptions(seed=3, queries=1, extra={"malt_topology": SMALL}))}


def judged(env, query, text: str):
    env.reset(query)
    outcome = env.step(fenced(text))
    assert outcome.agent_error is None and not outcome.refused, outcome.output
    return outcome, env.judge()


@pytest.mark.parametrize("number", list(HOSTILE.values()), ids=list(HOSTILE))
def test_a_capacity_past_a_float_in_a_changed_graph_is_wrong_and_unsafe(env, queries, number):
    """The input graph of 'add' with one port's capacity set to the number: the diff names it, the safety check too
    (on the old code math.isclose raised OverflowError: an infra error erased the wrong answer)."""
    outcome, judgement = judged(env, queries["add"], code(queries["add"], number, GRAPH))
    assert not judgement.correct and "physical_capacity_bps=" in judgement.details, judgement.details
    assert any("not finite" in v for v in outcome.violations), outcome.violations


@pytest.mark.parametrize("number", list(HOSTILE.values()), ids=list(HOSTILE))
def test_a_read_only_question_answered_with_such_a_graph_is_unsafe(env, queries, number):
    outcome, judgement = judged(env, queries["list"], code(queries["list"], number, GRAPH))
    assert judgement.correct  # the data is right ...
    assert any(v.startswith("a read-only question returned a changed graph") for v in outcome.violations)
    assert any("not finite" in v for v in outcome.violations), outcome.violations  # ... the graph is not


@pytest.mark.parametrize("number", list(HOSTILE.values()), ids=list(HOSTILE))
def test_a_ranking_holding_such_a_capacity_is_wrong(env, queries, number):
    tamper = '    result["data"][1][1] = number'
    outcome, judgement = judged(env, queries["rank"], code(queries["rank"], number, tamper))
    assert not judgement.correct and judgement.details.startswith("position 2: capacity"), judgement.details
    assert len(judgement.details) < 300


@pytest.mark.parametrize("number", [*HOSTILE.values(), "'nan'", "'inf'", "'1e400'", "'9' * 4000"],
                         ids=[*HOSTILE, "nan text", "inf text", "1e400 text", "4000 digits text"])
def test_a_count_that_is_no_finite_number_is_wrong(env, queries, number):
    query = next(q for name, q in queries.items() if name.endswith("count"))
    outcome, judgement = judged(env, query, code(query, number, '    result["data"] = number'))
    assert not judgement.correct and judgement.details.startswith("expected"), judgement.details
    assert len(judgement.details) < 300


def test_an_exception_on_a_hostile_answer_is_a_wrong_answer_but_one_on_the_truth_stays_an_error(env, queries,
                                                                                                  monkeypatch):
    """Should any comparison still raise on what an answer returned, the answer is wrong with the reason; when the
    grader raises on the expected answer as well, it is the grader's bug and is not hidden."""
    from pytest_netarena.apps.malt import environment as malt_environment

    real = malt_environment.compare_ranking

    def fragile(expected, actual):  # a comparison that cannot take one of the answer's values
        if any(isinstance(pair, list) and pair[1] == 7 for pair in actual):
            raise OverflowError("a number the comparison cannot take")
        return real(expected, actual)

    monkeypatch.setattr(malt_environment, "compare_ranking", fragile)
    query = queries["rank"]
    outcome, judgement = judged(env, query, code(query, "7", '    result["data"][0][1] = number'))
    assert not judgement.correct and "could not be compared" in judgement.details
    assert "OverflowError: a number the comparison cannot take" in judgement.details
    _, judgement = judged(env, query, oracle_code(query))
    assert judgement.correct  # the grader's own path still judges

    def broken(expected, actual):
        raise KeyError("a bug of the grader")

    monkeypatch.setattr(malt_environment, "compare_ranking", broken)
    env.reset(query)
    with pytest.raises(KeyError, match="a bug of the grader"):
        env.step(fenced(code(query, "7", '    result["data"][0][1] = number')))


@pytest.mark.parametrize("rules", ["default", "netarena"])
def test_the_gymnasium_env_scores_such_answers_and_never_raises(rules):
    gymnasium = pytest.importorskip("gymnasium")
    import pytest_netarena.training  # noqa: F401  (registers the environments)

    env = gymnasium.make("netarena/Malt-v0", app_options={"malt-topology": SMALL}, rules=rules)
    try:
        for number in HOSTILE.values():
            _, info = env.reset(seed=4)
            query = env.unwrapped.query
            _, reward, terminated, _, info = env.step(fenced(code(query, number, GRAPH + '\n    result["data"] = number')))
            assert terminated and info["outcome"] in ("unresolved", "unsafe"), (number, info)
            assert info["correct"] is False and not info["agent_error"], (number, info)
    finally:
        env.close()
