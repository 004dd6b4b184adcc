"""builtin:chatty writes the expert's answers in the corpus styles and resolves the default suite with no refused step."""

from __future__ import annotations

import zlib

import pytest

from pytest_netarena.agents.prompting import build_system_prompt
from pytest_netarena.apps.malt import APP
from pytest_netarena.apps.malt.agents.chatty import COT_STYLES, STYLES
from pytest_netarena.core.app import RunOptions
from pytest_netarena.core.episode import EpisodeConfig, run_episode
from pytest_netarena.core.types import Outcome, Task


@pytest.mark.parametrize("seed, prompt_style", [(11, "zero-shot"), (12, "cot")])
def test_chatty_resolves_the_default_suite_with_no_refused_step(seed, prompt_style):
    options = RunOptions(seed=seed, prompt_style=prompt_style)
    styles_used = COT_STYLES if prompt_style == "cot" else STYLES
    queries = APP.generate(options)
    env = APP.make_environment(options)
    styles = set()
    try:
        results = []
        for query in queries:
            task = Task("malt", "e1",
                        build_system_prompt(APP.prompt(), prompt_style), prompt_style, 1)
            agent = APP.builtin_agent("chatty", query, env)
            results.append(run_episode(env, agent, query, task, EpisodeConfig(max_steps=1), "builtin:chatty"))
            styles.add(zlib.crc32(query.params["question"].encode()) % len(styles_used))  # the form it chose
    finally:
        env.close()
    assert len(results) == 36
    assert [(r.query.id, r.details) for r in results if r.outcome is not Outcome.RESOLVED] == []
    assert not any(step.refused for r in results for step in r.steps)
    assert styles == set(range(len(styles_used)))  # every reply form was exercised
