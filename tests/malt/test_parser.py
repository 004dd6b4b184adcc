"""builtin:parser, a template compiler of fixed wordings with no model: it solves the old native wording and NetArena's,
and at most 20% of today's native questions, whose oracle still resolves every one at every level."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from pytest_netarena.agents.prompting import build_system_prompt
from pytest_netarena.apps.malt import APP
from pytest_netarena.apps.malt.agents.parser import ParserAgent, parse_native
from pytest_netarena.core.app import RunOptions
from pytest_netarena.core.episode import EpisodeConfig, run_episode
from pytest_netarena.core.types import Outcome, Task

from .old_wording import old_question

SMALL = "synthetic:600"
#: seeds 11 and 12, every level, three queries per category: 72 native queries
NATIVE = [RunOptions(seed=seed, queries=3, levels=(1, 2, 3), extra={"malt_topology": SMALL}) for seed in (11, 12)]


def play(env, query, name, options):
    """One episode of a built-in made from the query without its params (only the observation can guide it),
    except the oracle, whose channel to the hidden program is the params."""
    given = query if name == "oracle" else dataclasses.replace(query, params={})
    agent = APP.builtin_agent(name, given, env)
    task = Task("malt", "e1", build_system_prompt(APP.prompt_for(options), "zero-shot"), "zero-shot", 1)
    return run_episode(env, agent, query, task, EpisodeConfig(max_steps=1), f"builtin:{name}")


@pytest.fixture(scope="module")
def env():
    environment = APP.make_environment(NATIVE[0])
    yield environment
    environment.close()


@pytest.fixture(scope="module")
def native():
    return [query for options in NATIVE for query in APP.generate(options)]


def test_the_parser_is_offered_and_reads_only_the_question():
    assert "parser" in APP.builtin_agent_names
    assert isinstance(APP.builtin_agent("parser", dataclasses.replace(APP.generate(NATIVE[0])[0], params={}), None),
                      ParserAgent)


def test_the_parser_resolves_at_most_a_fifth_of_native_questions_and_the_oracle_all(env, native):
    assert {(q.level, q.category) for q in native} == {(c.level, c.name) for c in APP.categories(NATIVE[0])}
    oracle = [play(env, query, "oracle", NATIVE[0]) for query in native]
    assert [r.query.id for r in oracle if r.outcome is not Outcome.RESOLVED] == []
    parser = [play(env, query, "parser", NATIVE[0]) for query in native]
    resolved = sum(r.outcome is Outcome.RESOLVED for r in parser)
    assert resolved <= 0.2 * len(native), f"builtin:parser resolved {resolved} of {len(native)}"


def test_the_parser_is_a_real_compiler_of_the_old_native_wording(env, native):
    """The same programs, worded as before issue 45: it reads every one and resolves it."""
    failures = []
    for query in native:
        old = dataclasses.replace(query, params={**query.params, "question": old_question(query.params["program"],
                                                                                          env.graph)})
        assert parse_native(old.params["question"]) == query.params["program"], old.params["question"]
        result = play(env, old, "parser", NATIVE[0])
        if result.outcome is not Outcome.RESOLVED:
            failures.append((query.id, result.details))
    assert failures == []


def test_the_parser_answers_every_compat_question_correctly():
    options = RunOptions(seed=11, queries=3, levels=(1, 2, 3), rules="netarena", extra={"malt_topology": SMALL})
    queries = APP.generate(options)
    environment = APP.make_environment(options)
    try:
        results = [(play(environment, q, "parser", options), play(environment, q, "oracle", options)) for q in queries]
    finally:
        environment.close()
    assert queries and {q.category for q in queries} == {c.name for c in APP.categories(options)}
    assert [(p.query.id, p.details) for p, _ in results if not p.correct] == []
    assert [p.outcome for p, _ in results] == [o.outcome for _, o in results]  # NetArena's verdicts, the oracle's


def _netarena_questions() -> Path | None:
    root = os.environ.get("NETARENA_CHECKOUT")
    path = Path(root) / "app-malt" / "data" / "sampled_500_benchmark_malt.jsonl" if root else None
    return path if path and path.is_file() else None


@pytest.mark.skipif(_netarena_questions() is None, reason="NetArena's MALT question file (NETARENA_CHECKOUT) is absent")
def test_the_parser_answers_netarenas_own_questions_correctly():
    """NetArena's published question file (500 questions of each of its ten categories), its first question of each
    category, on its real topology: each answered correctly (the compiler that topped its leaderboard did the same)."""
    from pytest_netarena.apps.malt.netarena.app import netarena_corpus

    root = str(_netarena_questions().parents[2])
    options = RunOptions(seed=1, rules="netarena", extra={"netarena_data": root})
    queries = netarena_corpus(str(_netarena_questions()), options)[::500]
    environment = APP.make_environment(options)
    try:
        results = [play(environment, query, "parser", options) for query in queries]
    finally:
        environment.close()
    assert len({q.category for q in queries}) == 10
    assert [(r.query.id, r.details) for r in results if not r.correct] == []
