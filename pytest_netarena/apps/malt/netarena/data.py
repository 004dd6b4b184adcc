"""Readers of a NetArena checkout's MALT data: its real topology and its static question files.

`--netarena-data DIR` names a NetArena checkout (or its app-malt folder, or that folder's data/).
Its topology loads with our textproto parser into NetArena's conventions (a node's `type` lists its
kinds in file order, numbers are floats, as its prototxt parser gives them). A question file such as
data/sampled_500_benchmark_malt.jsonl (lines {"messages": [{"question"}, {"answer"}, {"task_label"}]})
is read into our queries: each question's text becomes a program of rules.py steps; the lines
that cannot be read are listed with the reason. Nothing of NetArena's is copied into this project.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Container, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ....core import safe_read
from ....core.types import Query
from ....core.errors import UsageError
from . import rules as compat
from .. import schema as s

if TYPE_CHECKING:
    import networkx as nx

TOPOLOGY_FILE = "malt-graph.textproto.txt"
QUESTIONS_FILE = "sampled_500_benchmark_malt.jsonl"


def data_dir(root: str | Path) -> Path:
    """The folder holding NetArena's MALT data under a checkout, its app-malt folder, or itself."""
    base = Path(root)
    for candidate in (base / "app-malt" / "data", base / "data", base):
        if (candidate / TOPOLOGY_FILE).is_file():
            return candidate
    raise UsageError(f"--netarena-data {root}: no {TOPOLOGY_FILE} in app-malt/data/, data/ or the folder itself "
                     "(give a NetArena checkout)")


def topology_path(root: str | Path) -> Path:
    return data_dir(root) / TOPOLOGY_FILE


# --- the real topology in NetArena's conventions ------------------------------------------------


def _as_float(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _as_float(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_as_float(item) for item in value]
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def netarena_graph(entities: Iterable[Any], relationships: Iterable[Any]) -> nx.DiGraph:
    """A DiGraph as NetArena's loader builds it: kinds appended in file order, numbers as floats,
    the last relationship between two names wins, a name met only in a relationship becomes a node."""
    import networkx as nx

    graph = nx.DiGraph()
    for entity in entities:
        if entity.name in graph:
            graph.nodes[entity.name]["type"].append(entity.kind)
        else:
            graph.add_node(entity.name, type=[entity.kind], name=entity.name)
        graph.nodes[entity.name].update(_as_float(entity.attrs))
    for rel in relationships:
        graph.add_edge(rel.a, rel.z, type=rel.kind)
    return graph


def in_netarena_conventions(graph: nx.DiGraph) -> nx.DiGraph:
    """A copy of one of our graphs as NetArena's loader would give it: numbers as floats, a merged
    switch's kinds in MALT's file order (packet switch, chassis, control point)."""
    converted = graph.copy()
    for _, attrs in converted.nodes(data=True):
        kinds = attrs.get("type")
        if isinstance(kinds, list) and s.PACKET_SWITCH in kinds:
            attrs["type"] = [s.PACKET_SWITCH] + [kind for kind in kinds if kind != s.PACKET_SWITCH]
        for key, value in attrs.items():
            if key not in ("name", "type"):
                attrs[key] = _as_float(value)
    return converted


@lru_cache(maxsize=2)
def load_graph(root: str) -> nx.DiGraph:
    """NetArena's real MALT topology from a checkout (shared: copy before changing it)."""
    from ..topology import records_from_textproto

    path = topology_path(root)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror or error}") from error
    return netarena_graph(*records_from_textproto(text))


# --- questions ----------------------------------------------------------------------------------

_NAME = r"[^\s']+"
_KIND = r"EK_[A-Z_]+"
_SINGLE = {
    "add": re.compile(rf"Add new node with name (?P<name>{_NAME}) type (?P<kind>{_KIND}), to (?P<parent>{_NAME})\. "
                      r"Return a graph\."),
    "remove": re.compile(rf"Remove (?P<name>{_NAME}) from the graph\. Return a graph\."),
    "list": re.compile(rf"List all the child nodes of (?P<parent>{_NAME})\. Return a list of child node names\."),
    "rank": re.compile(rf"Rank all child nodes of (?P<parent_kind>{_KIND}) type (?P<parent>{_NAME}) based on "
                       r"physical_capacity_bps attribute\. Return a list of tuple, each tuple has child node name "
                       r"and its total physical capacity\."),
}
_FIRST = {
    "remove": re.compile(rf"Remove (?P<name>{_NAME}) from the graph\. "),
    "add": re.compile(rf"Add (?:node with name '(?P<quoted>[^']+)'|(?P<name>{_NAME})) to (?P<parent>{_NAME})\. "),
}
_THEN = {
    "list": re.compile(rf"List direct child nodes of (?P<target>{_NAME}) in the updated graph\. "
                       r"Return a list of child nodes name\."),
    "rank": re.compile(rf"Rank direct child nodes of (?P<target>{_NAME}) in the updated graph based on "
                       r"physical_capacity_bps attribute\. Return a list of tuple, each tuple has node name and "
                       r"its total physical capacity\."),
    "count": re.compile(rf"Count the (?P<kind>{_KIND}) in (?P<target>{_NAME}) in the updated graph\. "
                        r"Return the count number as text\."),
}
_NEW_NAME = re.compile(rf"new_(?P<kind>{_KIND})_\d+")
_DISABLED = (("Count the ", "count (disabled in NetArena's generator)"),
             ("Update the physical capacity", "update (disabled in NetArena's generator)"),
             ("For each ", "for-loop (commented out in NetArena's generator)"))


class Unreadable(ValueError):
    """A question this reader cannot turn into a query (the message says why)."""


def parse_question(question: str, answer: str = "") -> tuple[str, list[dict[str, Any]]]:
    """(our category name, program of compat steps) of one NetArena question; Unreadable if unknown.

    `answer` (NetArena's ground-truth code) is read as data, never run: only its `new_node = {...}`
    literal, for the type of a new node the question does not state.
    """
    text = " ".join(str(question).split())
    for op, pattern in _SINGLE.items():
        match = pattern.fullmatch(text)
        if match:
            return op, [_single_step(op, match)]
    for op, pattern in _FIRST.items():
        first = pattern.match(text)
        if not first:
            continue
        rest = text[first.end():]
        for read, tail in _THEN.items():
            then = tail.fullmatch(rest)
            if then:
                return f"{op}+{read}", _pair(op, first, read, then, answer)
        raise Unreadable(f"the part after {op!r} is not a list, rank or count NetArena asks: {rest[:80]!r}")
    for start, what in _DISABLED:
        if text.startswith(start):
            raise Unreadable(f"a {what} question")
    raise Unreadable(f"not one of NetArena's MALT question forms: {text[:80]!r}")


def _single_step(op: str, match: re.Match[str]) -> dict[str, Any]:
    if op == "add":
        return {"op": "add", "name": match["name"], "kind": _checked_kind(match["kind"]), "parent": match["parent"]}
    if op == "remove":
        return {"op": "remove", "name": match["name"]}
    return {"op": op, "parent": match["parent"]}


def _pair(op: str, first: re.Match[str], read: str, then: re.Match[str], answer: str) -> list[dict[str, Any]]:
    name = first["quoted"] or first["name"] if op == "add" else first["name"]
    steps: list[dict[str, Any]] = []
    if op == "add":
        steps.append({"op": "add", "name": name, "kind": _new_kind(name, answer), "parent": first["parent"]})
    else:
        steps.append({"op": "remove", "name": name})
    if read == "count":
        steps.append({"op": "count", "parent": then["target"], "kind": _checked_kind(then["kind"])})
    else:
        steps.append({"op": read, "parent": then["target"]})
    return steps


def _checked_kind(kind: str) -> str:
    if kind not in s.ENTITY_KINDS:
        raise Unreadable(f"{kind} is not a MALT entity kind")
    return kind


def _new_kind(name: str, answer: str) -> str:
    """The type of a new node: from its name new_<KIND>_<n>, else from the answer's new_node literal."""
    match = _NEW_NAME.fullmatch(name)
    if match:
        return _checked_kind(match["kind"])
    literal = re.search(r"new_node\s*=\s*(\{[^{}\n]*\})", answer or "")
    if literal:
        try:
            value = ast.literal_eval(literal.group(1))
        except (ValueError, SyntaxError):
            value = None
        if isinstance(value, dict) and value.get("name") == name and isinstance(value.get("type"), str):
            return _checked_kind(value["type"])
    raise Unreadable(f"the type of the new node {name!r} is stated neither by its name nor by the answer")


def _named_nodes(program: list[dict[str, Any]]) -> list[str]:
    """Names a program expects to find in the topology before it runs."""
    added = {step["name"] for step in program if step["op"] == "add"}
    wanted = [step.get("name") if step["op"] == "remove" else step.get("parent") for step in program]
    return [name for name in wanted if name and name not in added]


@dataclass(frozen=True)
class Skipped:
    line: int
    question: str
    reason: str


@dataclass(frozen=True)
class Reading:
    """The queries read from a NetArena question file, and the lines that could not be read."""

    queries: list[Query] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    def summary(self, path: str | Path) -> str:
        head = f"{path}: {len(self.queries)} of {len(self.queries) + len(self.skipped)} NetArena MALT questions read"
        lines = [head] + [f"  line {item.line}: {item.reason}" for item in self.skipped[:20]]
        if len(self.skipped) > 20:
            lines.append(f"  and {len(self.skipped) - 20} more")
        return "\n".join(lines)


#: the question files this process read for --corpus netarena-malt:FILE, for the run header
READINGS: list[tuple[str, Reading]] = []


def _messages(line: str) -> tuple[str, str, str]:
    data = safe_read.parse(line, "the line")
    parts: dict[str, str] = {}
    for message in data["messages"]:
        parts.update({key: value for key, value in message.items() if isinstance(value, str)})
    if "question" not in parts:
        raise KeyError("question")
    return parts["question"], parts.get("answer", ""), parts.get("task_label", "")


def read_questions(path: str | Path, names: Container[str] | None = None,
                   levels: Container[int] | None = None) -> Reading:
    """Read a NetArena question file into MALT queries (file order; ids malt-L<n>-<category>-<i>).

    names: the topology's node names; a question naming a node it lacks is skipped.
    levels: keep only these levels (others are neither read nor listed).
    """
    lines = safe_read.read_text(Path(path), safe_read.MAX_JSONL_BYTES).splitlines()
    source = Path(path).name
    queries: list[Query] = []
    skipped: list[Skipped] = []
    counts: dict[str, int] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        question = ""
        try:
            try:
                question, answer, task_label = _messages(line)
            except (ValueError, KeyError, TypeError, AttributeError) as error:
                raise Unreadable(f"not a NetArena question line ({type(error).__name__}: {error})") from None
            category = compat.category_of_label(task_label)
            if category is None:
                raise Unreadable(f"label {task_label!r} is not one of NetArena's ten active MALT labels")
            if levels is not None and category.level not in levels:
                continue
            name, program = parse_question(question, answer)
            if name != category.name:
                raise Unreadable(f"the label says {category.name.replace('+', '-')!r} but the question asks "
                                 f"{name.replace('+', '-')!r}")
            missing = [n for n in _named_nodes(program) if names is not None and n not in names]
            if missing:
                raise Unreadable(f"names {missing[0]!r}, which is not in the topology")
        except Unreadable as error:
            skipped.append(Skipped(number, question, str(error)))
            continue
        params = compat.params(program, " ".join(question.split()), category)
        params["source"] = f"{source}:{number}"
        index = counts.get(category.name, 0)
        counts[category.name] = index + 1
        queries.append(Query("malt", category.level, category.name, index, number, params))
    return Reading(queries, skipped)
