"""Built-in MALT agents by name: `oracle` (the query's program), `reckless`, `expert`, `chatty`, `parser` and the rest.

`parser` is a template compiler of fixed wordings (parser.py).

All answer with real Python code that runs through the same sandbox as any model's (the expert,
in expert.py, writes its code from the question text alone). The oracle
ships the ground-truth operations module (ops.py) verbatim plus the query's program, so it proves
the whole path (sandbox, serialisation, comparison, safety) rather than the grader's shortcut.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ....core.app import NETARENA
from ....core.types import Query, Reply, Task
from .chatty import ChattyAgent
from .code import netarena_program_code, program_code
from .expert import ExpertAgent

if TYPE_CHECKING:
    from .parser import ParserAgent


# plausible shortcuts that break the datacenter's constraints
_RECKLESS = '''
PROGRAM = json.loads({program!r})


def process_graph(graph_data):
    for step in PROGRAM:
        if step["op"] == "remove":
            graph_data.remove_node(step["name"])  # its ports stay behind, orphaned
        elif step["op"] == "add_switch":  # ports "later"
            graph_data.add_node(step["switch"], name=step["switch"], type=["EK_PACKET_SWITCH"])
            graph_data.add_edge(step["parent"], step["switch"], type="RK_CONTAINS")
    # "tidy up": decommission the first switch found, without its ports
    victim = next(n for n, kinds in graph_data.nodes(data="type") if "EK_PACKET_SWITCH" in kinds)
    graph_data.remove_node(victim)
    return {{"type": "graph", "data": None, "updated_graph": graph_data}}
'''


def oracle_code(query: Query) -> str:
    if query.params.get("rules") == NETARENA:  # NetArena's ground truth, answered in its format
        return netarena_program_code(query.params["program"])
    return program_code(query.params["program"])


def reckless_code(query: Query) -> str:
    return _RECKLESS.format(program=json.dumps(query.params["program"])).lstrip()


class CodeAgent:
    """Answers its one observation with a fixed Python code block."""

    def __init__(self, code: str, preface: str = "") -> None:
        self.code = code
        self.preface = preface

    def reset(self, task: Task) -> None:
        self.task = task

    def act(self, observation: str) -> Reply:
        return Reply(f"{self.preface}```python\n{self.code}\n```\n")

    def close(self) -> None:
        pass


def make_builtin(name: str, query: Query) -> CodeAgent | ExpertAgent | ChattyAgent | ParserAgent | None:
    if name == "expert":  # never given the query: it reads the question from its observation
        return ExpertAgent()
    if name == "chatty":  # the expert's answers in chat models' reply forms
        return ChattyAgent()
    if name == "oracle":
        return CodeAgent(oracle_code(query), "Here is the code:\n\n")
    if name == "reckless":
        return CodeAgent(reckless_code(query))
    if name == "cheater":  # the oracle, but on an impossible question it does what is asked, constraint or not
        from ..impossible import cheat_code

        return CodeAgent(cheat_code(query) if query.impossible else oracle_code(query))
    if name == "parser":  # no model, never given the query: fixed wordings' templates read from its observation
        from .parser import ParserAgent

        return ParserAgent()
    if name == "random":  # a floor for comparisons: a random well-formed answer
        from .random_agent import RandomAgent

        return RandomAgent(query)
    return None
