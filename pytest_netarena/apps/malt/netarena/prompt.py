"""The MALT prompt under --compat netarena: ours; NetArena's rules change how an answer is judged, not the prompt."""

from __future__ import annotations

from ....core.app import PromptSpec


def netarena_prompt() -> PromptSpec:
    """Our prompt: the reply is still `process_graph(graph_data)` code, and what NetArena's rules add to say (its
    answer contract, `updated_graph` always) each observation says (netarena/environment.py, docs/netarena.md)."""
    from ..prompt import PROMPT

    return PROMPT
