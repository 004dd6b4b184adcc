"""The card's non-AI ceiling: the best program with no model beside noop and random, and the bound MALT's native
questions must hold a template compiler to (a compiler that reads more than a fifth of them fails the card)."""

from __future__ import annotations

from pytest_netarena.validity.ceiling import Ceiling, Count, ceiling_agents, judged


def ceiling(*counts: Count, compat: Count | None = None, max_steps: int | None = None) -> Ceiling:
    return Ceiling(list(counts), max_steps=max_steps, compat=compat)


def test_malt_passes_while_the_template_compiler_reads_at_most_a_fifth():
    parser, expert = Count("parser", resolved=0, correct=0, scored=4), Count("expert", resolved=4, correct=4, scored=4)
    compat = Count("parser", resolved=4, correct=4, scored=4)
    passed, figure, n, interval = judged("malt", ceiling(parser, expert, compat=compat), (0, 4), (0, 4))
    assert passed and n == 4 and interval == (0.0, interval[1]) and interval[1] > 0.4
    assert "builtin:parser (a template compiler of the question text" in figure and "resolved 0 of 4" in figure
    assert "builtin:expert (a reader written with today's wording grammar at hand) resolved 4 of 4" in figure
    assert "beside builtin:noop 0 of 4, builtin:random 0 of 4" in figure
    assert "under --compat netarena builtin:parser answered 4 of 4 correctly" in figure
    assert "as NetArena's own benchmark is" in figure


def test_malt_fails_when_a_template_compiler_reads_its_native_questions():
    """The questions of before issue 45: a compiler of fixed sentences resolved them all."""
    passed, figure, _, _ = judged("malt", ceiling(Count("parser", resolved=2, correct=2, scored=4)), (0, 4), (0, 4))
    assert passed is False and "they DO NOT" in figure


def test_a_scripted_ceiling_is_reported_with_its_interval_and_the_step_budget():
    passed, figure, n, interval = judged("route", ceiling(Count("expert", resolved=2, scored=5), max_steps=4),
                                         (0, 5), (0, 5))
    assert passed and n == 5 and interval is not None and interval[0] < 0.4 < interval[1]
    assert "builtin:expert (a scripted agent that acts on what the agent reads) resolved 2 of 5 (40%" in figure
    assert "within the card's 4 steps" in figure
    all_solved = judged("k8s", ceiling(Count("expert", resolved=5, scored=5)), (0, 5), (0, 5))[1]
    assert "a program with no model solves these tasks" in all_solved


def test_an_app_without_a_program_with_no_model_is_shown_unmeasured():
    assert ceiling_agents("toy", ("oracle", "noop")) == ()
    assert ceiling_agents("malt", ("oracle", "parser", "expert")) == ("parser", "expert")
    passed, figure, n, _ = judged("toy", ceiling(), (0, 1), None)
    assert passed is None and n == 0 and "offers no built-in program" in figure
