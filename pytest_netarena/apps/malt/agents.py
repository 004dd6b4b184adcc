"""Built-in MALT agents: `oracle` (correct code from the query's program) and `reckless` (unsafe code).

Both answer with real Python code that runs through the same sandbox as any model's: the oracle
ships the ground-truth operations module (ops.py) verbatim plus the query's program, so it proves
the whole path (sandbox, serialisation, comparison, safety) rather than the grader's shortcut.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from ...core.types import Query, Reply, Task


@cache
def _ops_source() -> str:
    return Path(__file__).with_name("ops.py").read_text(encoding="utf-8")


_ORACLE_MAIN = '''

PROGRAM = json.loads({program!r})


def process_graph(graph_data):
    kind, data, changed = run_program(graph_data, PROGRAM)
    answer = {{"type": kind, "data": data}}
    if changed:
        answer["updated_graph"] = graph_data
    return answer
'''

# plausible shortcuts that break the datacenter's constraints
_RECKLESS_OVERRIDES = '''

def remove(graph, name):
    graph.remove_node(name)  # the switch's ports stay behind, orphaned


def add_switch(graph, switch, parent, ports):
    graph.add_node(switch, name=switch, type=[SWITCH])  # ports "later"
    graph.add_edge(parent, switch, type=CONTAINS)


def process_graph(graph_data):
    kind, data, changed = run_program(graph_data, PROGRAM)
    # "tidy up": decommission the first switch found, without its ports
    victim = next(n for n in graph_data if has_kind(graph_data, n, SWITCH))
    graph_data.remove_node(victim)
    return {"type": kind, "data": data, "updated_graph": graph_data}
'''


def oracle_code(query: Query) -> str:
    return _ops_source() + _ORACLE_MAIN.format(program=json.dumps(query.params["program"]))


def reckless_code(query: Query) -> str:
    return oracle_code(query) + _RECKLESS_OVERRIDES


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


BUILTIN_AGENTS = ("oracle", "reckless")


def make_builtin(name: str, query: Query) -> CodeAgent | None:
    if name == "oracle":
        return CodeAgent(oracle_code(query), "Here is the code:\n\n")
    if name == "reckless":
        return CodeAgent(reckless_code(query))
    return None
