"""Prompt styles (zero-shot, chain of thought, few-shot, ReAct) composed from an app's PromptSpec."""

from __future__ import annotations

from ..core.app import PromptSpec
from ..core.canary import CANARY_LINE

PROMPT_STYLES = ("zero-shot", "cot", "few-shot", "react")

_COT = (
    "Think step by step: first explain briefly what the observation tells you and what you will "
    "do, then give exactly one action in the format above as the last part of your reply."
)
_REACT = (
    "Work in the ReAct style. Each reply has two parts:\n"
    "Thought: your reasoning about the latest observation.\n"
    "Action: exactly one action in the format above.\n"
    "After each action you receive the next observation. Never write more than one action."
)


#: how to act in tool mode (it replaces the app's text action format)
TOOL_FORMAT = (
    "Act through the tools you are given: each tool call is one action, run as the tool describes, and its "
    "result (the output and the new state) comes back to you as the tool's result. Several calls in one reply "
    "run in order, each as its own step. Call finish when you are done. Do not write actions as text."
)
_TOOL_EXAMPLES = ("These examples show good actions written as text replies; send the same actions as tool "
                  "calls instead.")


_COT_TOOLS = ("Think step by step: first explain briefly what the observation tells you and what you will do, "
              "then make the tool call.")
_REACT_TOOLS = ("Work in the ReAct style: in each reply, write your reasoning about the latest result as "
                "Thought: ..., then act with one tool call. The call's result is your next observation.")


def step_budget(max_steps: int, tools: bool = False) -> str:
    """What a model is told about its budget (every observation repeats where it stands)."""
    if tools:
        if max_steps == 1:
            return "You have exactly one step: your first tool call is judged as it is."
        return (f"You have at most {max_steps} steps: each tool call is one step (finish is not), and a refused "
                f"call or a reply without a tool call counts as a step too. Every result starts with the step "
                f"your next call will be and the steps left, e.g. [Step 2 of {max_steps}; {max_steps - 1} "
                f"step{'' if max_steps == 2 else 's'} left.]")
    if max_steps == 1:
        return "You have exactly one reply: it is judged as it is."
    return (f"You have at most {max_steps} steps: each reply is one step, and a refused or unreadable reply "
            f"counts as a step too. Every observation starts with the step your next reply will be and the "
            f"replies left, counting that one, e.g. [Step 2 of {max_steps}; {max_steps - 1} "
            f"repl{'y' if max_steps == 2 else 'ies'} left.]")


def build_system_prompt(prompt: PromptSpec, prompt_style: str, max_steps: int | None = None,
                        tools: bool = False) -> str:
    """The system prompt an agent receives for an app in a prompt style (and its step budget, when given); with
    `tools`, it acts through tool calls: the app's text action format is left out, its answer format kept."""
    if prompt_style not in PROMPT_STYLES:
        raise ValueError(f"unknown prompt style {prompt_style!r}; choose one of {', '.join(PROMPT_STYLES)}")
    parts = [prompt.role.strip(), prompt.rules.strip(), TOOL_FORMAT if tools else prompt.action_format.strip(),
             prompt.answer_format.strip()]
    if max_steps is not None:
        parts.append(step_budget(max_steps, tools))
    if prompt_style == "cot":
        parts.append(_COT_TOOLS if tools else _COT)
    elif prompt_style == "react":
        parts.append(_REACT_TOOLS if tools else _REACT)
    elif prompt_style == "few-shot" and prompt.examples:
        shots = [
            f"Example {number}\nObservation:\n{observation.strip()}\nReply:\n{reply.strip()}"
            for number, (observation, reply) in enumerate(prompt.examples, 1)
        ]
        parts.append((_TOOL_EXAMPLES + "\n" if tools else "")
                     + "Here are examples of observations and good replies:\n\n" + "\n\n".join(shots))
    parts.append(CANARY_LINE)  # so that transcripts that leak into corpora can be found, and models checked
    return "\n\n".join(part for part in parts if part)
