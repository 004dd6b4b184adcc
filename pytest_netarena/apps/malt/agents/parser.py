"""builtin:parser: a template compiler of fixed MALT wordings, the best a program with no model did before issue 45.

It reads only the question text, with one regular expression per sentence template: the native
wording before issue 45 (queries.py then wrote one fixed sentence per operation) and NetArena's
(netarena/data.py's reader of its question files). The steps it reads run with the ground truth's
own operations (ops.py, or netarena/ops.py for NetArena's wording), as the oracle's do: what it
measures is reading. It answers every question in those wordings and, by design, almost none of
today's native questions; the validity card shows its rate as the MALT app's non-AI ceiling.
"""

from __future__ import annotations

import re
from typing import Any

from ....core.types import Reply, Task
from .code import netarena_program_code, program_code

_NAME = r"([^\s,()]*[^\s,().])"
_KIND = (r"(?:datacenter \(jupiter\)|superblock|spine block|aggregation block|chassis|control domain|"
         r"control point|packet switch|port|rack)")
_BPS = r"(\d+) bps"

#: the native sentences before issue 45: (pattern, builder of a step from the match), tried in this order
_PATTERNS: tuple[tuple[re.Pattern[str], Any], ...] = (
    (re.compile(rf"If the total physical_capacity_bps of the ports of the packet switch {_NAME} is "
                rf"greater than (\d+) bps, remove its port {_NAME}; otherwise add a new port named "
                rf"{_NAME} with physical_capacity_bps {_BPS}"),
     lambda m: {"op": "if", "switch": m[1], "above": int(m[2]),
                "then": [{"op": "remove", "name": m[3]}],
                "else": [{"op": "add_port", "switch": m[1], "port": m[4], "capacity": int(m[5])}]}),
    (re.compile(rf"For each packet switch directly contained in the {_KIND} {_NAME}, set the "
                rf"physical_capacity_bps of its port named <switch name>\.(\w+) to {_BPS}"),
     lambda m: {"op": "for_update", "parent": m[1], "suffix": m[2], "capacity": int(m[3])}),
    (re.compile(rf"Add a new port named {_NAME} with physical_capacity_bps {_BPS}.*? to the packet switch {_NAME}"),
     lambda m: {"op": "add_port", "switch": m[3], "port": m[1], "capacity": int(m[2])}),
    (re.compile(rf"Add a new packet switch named {_NAME} to the {_KIND} {_NAME}, with \d+ ports? "
                rf"\(([^)]*)\), each with physical_capacity_bps {_BPS}"),
     lambda m: {"op": "add_switch", "switch": m[1], "parent": m[2],
                "ports": [[p.strip(), int(m[4])] for p in m[3].split(",") if p.strip()]}),
    (re.compile(rf"Remove the (?:port|packet switch) {_NAME} from the graph"),
     lambda m: {"op": "remove", "name": m[1]}),
    (re.compile(rf"List the names of all direct children of the {_KIND} {_NAME}"),
     lambda m: {"op": "list", "parent": m[1]}),
    (re.compile(rf"Rank the direct children of the {_KIND} {_NAME} by total physical_capacity_bps"),
     lambda m: {"op": "rank", "parent": m[1]}),
    (re.compile(rf"Count the (EK_\w+) nodes contained in the {_KIND} {_NAME}"),
     lambda m: {"op": "count", "parent": m[2], "kind": m[1]}),
)


def parse_native(text: str) -> list[dict[str, Any]]:
    """The steps a question in the native wording before issue 45 asks for, in the order it asks them."""
    found: list[tuple[int, dict[str, Any]]] = []
    covered: list[tuple[int, int]] = []
    for pattern, build in _PATTERNS:
        for match in pattern.finditer(text):
            if any(a <= match.start() < b for a, b in covered):
                continue  # e.g. the if-sentence's "add a new port" is part of the if
            covered.append(match.span())
            found.append((match.start(), build(match)))
    return [step for _, step in sorted(found, key=lambda item: item[0])]


def parse_netarena(text: str) -> list[dict[str, Any]] | None:
    """The steps of a question in NetArena's wording (its own rules' program), or None if it is not one."""
    from ..netarena.data import Unreadable, parse_question

    try:
        return parse_question(text)[1]
    except Unreadable:
        return None


def parser_code(question: str) -> tuple[str, str]:
    """process_graph code for a question, and which wording it was read as ("netarena", "native", "none")."""
    steps = parse_netarena(question)
    if steps is not None:
        return netarena_program_code(steps), "netarena"
    steps = parse_native(question)
    return program_code(steps), "native" if steps else "none"


class ParserAgent:
    """Answers the observation's question with the program its templates read (no model, no hidden state)."""

    def reset(self, task: Task) -> None:
        self.task = task

    def act(self, observation: str) -> Reply:
        match = re.search(r"Question:\s*(.*?)(?:\n\n|$)", observation, re.S)
        question = " ".join((match[1] if match else observation).split())
        code, wording = parser_code(question)
        note = "No template matches this question; answering with no steps.\n\n" if wording == "none" else ""
        return Reply(f"{note}```python\n{code}\n```\n")

    def close(self) -> None:
        pass

