"""Native MALT questions as operators ask them: thousands drawn, each with exactly one reading and one answer, each
category in many sentence shapes; references resolved on the graph, and read the same after the change they follow."""

from __future__ import annotations

import re
from collections import defaultdict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_netarena.apps.malt import APP, queries
from pytest_netarena.apps.malt.app import topology_index
from pytest_netarena.apps.malt.questions.facts import After
from pytest_netarena.apps.malt.questions.grammar import Grammar, Template, Terminal
from pytest_netarena.apps.malt.questions.meaning import Ambiguous, focus, program_of
from pytest_netarena.apps.malt.questions.refs import resolve
from pytest_netarena.apps.malt.questions.wording import GRAMMAR, capacity_forms, read_question
from pytest_netarena.core.app import RunOptions
from pytest_netarena.core.catalogue import HypothesisChooser, RandomChooser

OPTIONS = RunOptions(seed=0, extra={"malt_topology": "synthetic:300"})
PER_CATEGORY = 200  #: 12 categories: 2,400 questions
#: what a question's shape leaves out: node names, numbers and capacities (any token with a digit)
NAMES_AND_NUMBERS = re.compile(r"[^\s(]*\d[^\s)]*")


def references(value, key=""):
    """Every reference in a request (clauses' node slots and the references inside them), outermost first."""
    if isinstance(value, dict):
        if "form" in value and key not in ("port", "new"):  # a new port's naming is no reference
            yield value
        for inner_key, inner in value.items():
            yield from references(inner, inner_key)


def shape(question: str) -> str:
    return NAMES_AND_NUMBERS.sub("#", question)


def test_thousands_of_drawn_questions_each_have_one_reading_and_one_answer():
    facts = topology_index(OPTIONS).facts
    shapes: dict[str, set[str]] = defaultdict(set)
    drawn = 0
    for category in APP.categories(OPTIONS):
        for seed in range(PER_CATEGORY):
            params = APP.draw_params(category, RandomChooser(seed), OPTIONS)
            # one reading of the words, and it is the hidden request
            assert read_question(params["question"]) == [params["request"]], params["question"]
            request = params["request"]
            it = focus(request["first"], facts) if "first" in request else None
            # every reference, nested ones included, points at one node of the graph as given
            for ref in references(request):
                assert len(resolve(ref, facts, it)) == 1, (ref, params["question"])
            # and the request, read on the graph, is the program the ground truth runs
            assert program_of(request, facts) == params["program"]
            shapes[category.name].add(shape(params["question"]))
            drawn += 1
    assert drawn == PER_CATEGORY * len(APP.categories(OPTIONS))
    few = {name: len(found) for name, found in shapes.items() if len(found) < 20}
    assert few == {}, f"categories with fewer than 20 sentence shapes: {few}"


def test_a_read_after_a_change_points_at_the_same_node_before_and_after_it():
    """A fresh reference in the read that follows a change means the same node on the changed graph (else the
    question says "that switch" instead), so either way of reading it gives the one answer."""
    facts = topology_index(OPTIONS).facts
    checked = 0
    for category in APP.categories(OPTIONS):
        if "+" not in category.name:
            continue
        for seed in range(40):
            params = APP.draw_params(category, RandomChooser(seed), OPTIONS)
            target = params["request"]["read"]["parent"]
            if "it" in str(target):
                continue
            after = After(facts, params["program"][:1])
            assert resolve(target, after) == resolve(target, facts) == [params["program"][1]["parent"]]
            checked += 1
    assert checked > 50


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_adversarial_draws_are_verified_questions_too(data):
    """Hypothesis drives the same draw (--adversarial): every question it makes reads back as its request."""
    index = topology_index(OPTIONS)
    category = data.draw(st.sampled_from(queries.CATEGORIES))
    params = queries.draw(category, HypothesisChooser(data.draw), index.graph, index)
    assert read_question(params["question"]) == [params["request"]]
    assert program_of(params["request"], index.facts) == params["program"]


def test_levels_grow_in_how_deep_references_nest():
    def depth(ref) -> int:
        inner = [ref.get(k) for k in ("of", "with", "in") if isinstance(ref.get(k), dict)]
        return 0 if ref["form"] in ("name", "it") else 1 + max((depth(r) for r in inner), default=0)

    deepest: dict[int, int] = defaultdict(int)
    named: dict[int, list[bool]] = defaultdict(list)  # per level: does the question name every node outright?
    for category in APP.categories(OPTIONS):
        for seed in range(60):
            request = APP.draw_params(category, RandomChooser(seed), OPTIONS)["request"]
            for ref in references(request):
                deepest[category.level] = max(deepest[category.level], depth(ref))
            named[category.level].append(all(depth(ref) == 0 for ref in references(request)))
    assert deepest == {1: 1, 2: 2, 3: 3}
    # level 1 names nodes outright about as often as not; from level 2 on, what the change acts on is pointed at
    # through the graph wherever the graph offers a way (a port whose switch's ports all tie may have none)
    assert 0.25 < sum(named[1]) / len(named[1]) < 0.75
    assert sum(named[2]) / len(named[2]) < 0.5 and not any(named[3])


def test_an_ambiguous_reference_is_refused():
    facts = topology_index(OPTIONS).facts
    block = facts.of_kind("EK_AGG_BLOCK")[0]
    # "the port of <block>'s switches with the least capacity": hundreds of 1G ports tie
    tie = {"form": "extreme", "kind": "EK_PORT", "metric": "capacity", "most": False,
           "in": {"form": "name", "name": block}}
    assert len(resolve(tie, facts)) > 1
    with pytest.raises(Ambiguous):
        program_of({"first": {"op": "remove", "target": tie}}, facts)


def test_capacities_read_back_in_every_unit_people_write():
    for bps in (1_000_000_000, 10_000_000_000, 40_000_000_000, 100_000_000_000, 1_500_000_000, 7):
        forms = capacity_forms(bps)
        assert forms and all(GRAMMAR.read("CAP", form) == [bps] for form in forms), forms
    assert {"0.1 Tbps", "100G", "100,000 Mbps", "100 Gb/s"} <= set(capacity_forms(100_000_000_000))
    assert GRAMMAR.read("CAP", "1.5 Mbps") == [1_500_000] and GRAMMAR.read("CAP", "0.5 bps") == []


def test_the_grammar_reads_every_way_a_text_can_be_read():
    """An ambiguous grammar is caught: both readings come back (the property test then fails on the question)."""
    name = Terminal(re.compile(r"\w+"), lambda m: m[0], lambda value, chooser: value)
    grammar = Grammar({"S": [Template("{a:S} and {b:S}", {"op": "and"}), Template("{x:W}", {"op": "word"})],
                       "W": [Template("{*:NAME}")]}, {"NAME": name}, nested=frozenset({"S"}))
    readings = grammar.read("S", "x and y and z", depth=3)
    assert len(readings) == 2  # (x and y) and z, x and (y and z)
    value = {"op": "and", "a": {"op": "word", "x": "p"}, "b": {"op": "word", "x": "q"}}
    assert grammar.write("S", value, RandomChooser(0)) == "p and q"
