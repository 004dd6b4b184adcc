"""Reading a MALT reply the way a person would: the Python program it holds, however it was written.

Built on core.replies (fences with any tag, ~~~, CRLF, unclosed fences). The rules, in order:

- Code blocks are fences tagged python (py, python3, ipython, Python, {python}, ...), and fences
  with no tag or another tag whose text parses as Python and defines or imports something. Fences
  tagged as output or data (json, text, output, bash, yaml, ...) are never code.
- All code blocks of a reply run as one program, in reply order: a helper in one block and
  process_graph in the next work together.
- One answer per reply (docs/replies.md): a reply that defines process_graph in two different
  ways holds two answers and is refused, naming the fix, except in chain-of-thought runs, whose
  prompt says the action comes last: there the last definition is the answer, and earlier drafts
  are left out (helpers defined beside them are kept). The same definition repeated is one answer.
- Usage examples are left out: top-level statements that call process_graph (`print(process_graph(G))`)
  anywhere, and top-level calls and loops in blocks other than the one with the last process_graph.
- `>>> ` / `... ` prompts are removed (the lines without them are the session's output), and a
  block indented as a whole is dedented.
- With no code block: the reply's text from the code around `def process_graph` (imports and
  helpers just above it) to where Python stops parsing; else a JSON object {"code": "..."}.

Parsing is for understanding only: the program runs in the MALT box whatever it holds.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass

from ...core import replies

PYTHON_TAGS = frozenset({"python", "py", "python3", "py3", "ipython", "ipython3", "pycon", "python-repl", "sage"})
DATA_TAGS = frozenset({"json", "jsonc", "text", "txt", "output", "console", "bash", "sh", "shell", "zsh", "yaml",
                       "yml", "plaintext", "plain", "markdown", "md", "log", "diff", "csv", "ini", "toml", "xml",
                       "html", "sql", "result", "stdout"})
_DEFINING = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_KEPT_ELSEWHERE = (*_DEFINING, ast.Assign, ast.AnnAssign, ast.If, ast.Try)
_DEF_LINE = re.compile(r"^[ \t]*def[ \t]+process_graph[ \t]*\(", re.MULTILINE)
_CODE_LINE = re.compile(r"^(?:[ \t]+\S|import\s|from\s+\S+\s+import\s|def\s|class\s|@|#|[A-Za-z_][\w, ]*=[^=]|\s*$)")

TWO_ANSWERS = ("the reply defines process_graph {count} different ways, so it holds {count} answers and none was "
               "run: give one definition (helpers may go in blocks of their own)")
NO_CODE = ("no Python code: reply with one ```python block defining process_graph(graph_data), e.g.\n"
           "```python\ndef process_graph(graph_data):\n    ...\n    return {\"type\": \"text\", \"data\": 16}\n```")


@dataclass(frozen=True)
class Program:
    """The program a reply holds (None when it holds none: `problem` says what is wrong)."""

    code: str | None
    problem: str = ""
    blocks: int = 0  #: how many pieces of the reply it was joined from


@dataclass(frozen=True)
class _Piece:
    text: str
    tree: ast.Module | None
    tagged: bool

    @property
    def defines_process_graph(self) -> bool:
        if self.tree is None:
            return bool(_DEF_LINE.search(self.text))
        return any(_is_process_graph(node) for node in self.tree.body)


def _language(tag: str) -> str:
    return tag.strip("{}.").split("=")[0].split(":")[0].lower()


def _clean(text: str) -> str:
    lines = text.split("\n")
    prompted = [line for line in lines if line.strip()]
    if prompted and prompted[0].lstrip().startswith(">>>"):
        kept = []
        for line in lines:
            stripped = line.lstrip()
            if stripped.startswith((">>> ", "... ")) or stripped in (">>>", "..."):
                kept.append(stripped[4:])
        lines = kept
    return textwrap.dedent("\n".join(lines)).strip("\n")


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def _calls_process_graph(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "process_graph"
               for n in ast.walk(node))


def _is_main_guard(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and "__name__" in ast.unparse(node.test)


def _trim(piece: _Piece, final: bool) -> str:
    """The piece without its usage examples (see the module docstring)."""
    if piece.tree is None:
        return piece.text
    drop: list[tuple[int, int]] = []
    for node in piece.tree.body:
        example = _calls_process_graph(node) or _is_main_guard(node)
        if not final and not isinstance(node, _KEPT_ELSEWHERE) and not _is_docstring(node):
            example = True
        if not final and _is_process_graph(node):
            example = True  # an earlier draft: the action comes last
        if example:
            drop.append((node.lineno, node.end_lineno or node.lineno))
    if not drop:
        return piece.text
    lines = piece.text.split("\n")
    kept = [line for number, line in enumerate(lines, 1) if not any(a <= number <= b for a, b in drop)]
    return "\n".join(kept).strip("\n")


def _is_process_graph(node: ast.stmt) -> bool:
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "process_graph"


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)


def _pieces(reply: str) -> list[_Piece]:
    found = []
    for block in replies.fenced_blocks(reply):
        language = _language(block.language)
        if language in DATA_TAGS:
            continue
        text = _clean(block.text)
        if not text.strip():
            continue
        tree = _parse(text)
        if language in PYTHON_TAGS or language.startswith("python"):
            found.append(_Piece(text, tree, True))
        elif tree is not None and any(isinstance(node, _DEFINING) for node in tree.body):
            found.append(_Piece(text, tree, False))
        elif tree is None and _DEF_LINE.search(text):
            found.append(_Piece(text, None, False))  # broken code: run it, so that the error is reported
    return found


def _unfenced(reply: str) -> str | None:
    """The code around `def process_graph` in a reply without code blocks."""
    text = replies.normalise(reply)
    match = _DEF_LINE.search(text)
    if match is None:
        return None
    lines = text.split("\n")
    first = text.count("\n", 0, match.start())
    start = first
    while start > 0 and _CODE_LINE.match(lines[start - 1]):
        start -= 1
    end = len(lines)
    for _ in range(200):
        candidate = _clean("\n".join(lines[start:end]))
        try:
            ast.parse(candidate)
            return candidate
        except SyntaxError as error:
            bad = start + (error.lineno or 1) - 1
            if bad <= first or bad >= end:
                return _clean("\n".join(lines[first:end]))
            end = bad
        except (ValueError, MemoryError, RecursionError):
            return candidate
    return None


def _from_object(reply: str) -> str | None:
    for _, value in replies.objects(reply, python_style=False):
        for key in ("code", "python", "program", "action", "answer"):
            code = value.get(key)
            if isinstance(code, str) and _DEF_LINE.search(code):
                return code.strip("\n")
    return None


def read_program(reply: str, last_wins: bool = False) -> Program:
    """The program of a reply; `last_wins` for chain-of-thought runs (the last process_graph answers)."""
    program = _read_program(reply, last_wins)
    problem = replies.unprintable(program.code) if program.code else None
    if problem:
        return Program(None, f"the code cannot run: {problem}", blocks=program.blocks)
    return program


def _read_program(reply: str, last_wins: bool) -> Program:
    pieces = _pieces(reply)
    definitions = {ast.dump(node) for piece in pieces if piece.tree is not None for node in piece.tree.body
                   if _is_process_graph(node)}
    if len(definitions) > 1 and not last_wins:
        return Program(None, TWO_ANSWERS.format(count=len(definitions)), blocks=len(pieces))
    if pieces:
        defining = [index for index, piece in enumerate(pieces) if piece.defines_process_graph]
        final = defining[-1] if defining else len(pieces) - 1
        # a piece that does not parse runs only when it is the action (so that its error is reported)
        parts = [_trim(piece, index == final) for index, piece in enumerate(pieces)
                 if index == final or piece.tree is not None]
        code = "\n\n".join(part for part in parts if part.strip())
        if code.strip():
            return Program(code, blocks=len(pieces))
    code = _unfenced(reply) or _from_object(reply)
    if code:
        return Program(code, blocks=1)
    for _, value in replies.objects(reply, python_style=True):
        if value.get("type") in ("text", "list", "graph"):
            return Program(None, "the reply gives an answer object, not code: write process_graph(graph_data) "
                                 "that computes and returns it.\n" + NO_CODE.split(": ", 1)[1])
    return Program(None, NO_CODE)
