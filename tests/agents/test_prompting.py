"""System prompts built from an app's PromptSpec in each prompt style."""

from __future__ import annotations

import pytest

from pytest_netarena.agents.prompting import PROMPT_STYLES, build_system_prompt
from pytest_netarena.core.app import PromptSpec

SPEC = PromptSpec(
    role="You operate a Kubernetes cluster.",
    rules="Never delete namespaces.",
    action_format="Reply with one kubectl command in a ```bash block.",
    examples=(("pods cannot reach db", "```bash\nkubectl get networkpolicy -A\n```"),
              ("policy deny-all blocks web", "```bash\nkubectl delete networkpolicy deny-all -n shop\n```")),
)


def test_every_prompt_style_gives_a_different_prompt_sharing_the_app_parts():
    prompts = {style: build_system_prompt(SPEC, style) for style in PROMPT_STYLES}
    assert len(set(prompts.values())) == len(PROMPT_STYLES)
    for prompt in prompts.values():
        assert prompt.startswith(SPEC.role)
        assert SPEC.rules in prompt and SPEC.action_format in prompt
    assert "step by step" in prompts["cot"]
    assert "Thought:" in prompts["react"] and "Action:" in prompts["react"]


def test_few_shot_includes_every_example_and_others_none():
    few_shot = build_system_prompt(SPEC, "few-shot")
    for number, (observation, reply) in enumerate(SPEC.examples, 1):
        assert f"Example {number}" in few_shot and observation in few_shot and reply in few_shot
    for style in ("zero-shot", "cot", "react"):
        assert SPEC.examples[0][1] not in build_system_prompt(SPEC, style)


def test_unknown_prompt_style_names_the_choices():
    with pytest.raises(ValueError, match="zero-shot, cot, few-shot, react"):
        build_system_prompt(SPEC, "tree-of-thought")


def test_an_agent_written_before_the_rename_still_reads_the_prompt_style_as_task_strategy():
    from pytest_netarena.core.types import Task

    task = Task(app="k8s", episode_id="e", system_prompt="", prompt_style="cot", max_steps=3)
    assert task.strategy == "cot" == task.prompt_style
