"""The Python a built-in that answers with a program ships: the ground truth's operations and the program to run."""

from __future__ import annotations

import ast
import json
from functools import cache
from pathlib import Path


@cache
def _ops_source(module: str = "ops.py") -> str:
    """The MALT app's ops.py (netarena/ops.py under NetArena's rules) without its docstrings (shorter transcripts;
    the code is the same)."""
    tree = ast.parse(Path(__file__).parent.parent.joinpath(module).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            node.body = body[1:] or [ast.Pass()]
    return ast.unparse(tree)


_ORACLE_MAIN = '''

PROGRAM = json.loads({program!r})


def process_graph(graph_data):
    kind, data, changed = run_program(graph_data, PROGRAM)
    answer = {{"type": kind, "data": data}}
    if changed:
        answer["updated_graph"] = graph_data
    return answer
'''

# NetArena's answer object: updated_graph always (without it NetArena counts the answer unsafe)
_NETARENA_ORACLE_MAIN = '''

PROGRAM = json.loads({program!r})


def process_graph(graph_data):
    kind, data, changed = run_program(graph_data, PROGRAM)
    return {{"type": kind, "data": data, "updated_graph": graph_data}}
'''


def program_code(program: list) -> str:
    """process_graph code that runs a program of ops.py steps with ops.py itself."""
    return _ops_source() + _ORACLE_MAIN.format(program=json.dumps(program))


def netarena_program_code(program: list) -> str:
    """process_graph code that runs a program of NetArena's steps with netarena/ops.py, answered in its format."""
    return _ops_source("netarena/ops.py") + _NETARENA_ORACLE_MAIN.format(program=json.dumps(program))
