"""Episodes of run folders as chat transcripts for supervised fine-tuning (OpenAI, ShareGPT, Hugging Face).

A transcript holds exactly what the model was shown and what it answered: the system prompt of
the run (rebuilt from the app's prompt, the episode's prompt style and its step budget), the first
observation, then each reply and the observation that followed it. A reply that made tool calls is an
assistant message with `tool_calls`, each answered by a `tool` message (its tool_call_id and the
observation after it), and the episode's tools go beside the messages, the form fine-tuning stacks read.
The observation after the last reply is left out: the model never saw it (for MALT it is the grader's verdict). Query params,
grader details and query ids (which name a query's category, e.g. its fault types) never enter the
data file; `sources.jsonl`, beside it, maps each transcript's opaque id back to its run and query.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..agents.prompting import PROMPT_STYLES, build_system_prompt
from ..apps import get_app
from ..core.app import NETARENA, rules_of
from ..core.errors import NothingToExport, UsageError
from ..core.splits import HELDOUT
from ..core.types import Outcome
from ..reporting import artifacts
from ..reporting.rebuild import latest_attempts, load_episodes, read_run

FORMATS = ("openai", "sharegpt", "hf")
DATA_FILE = "data.jsonl"
SOURCES_FILE = "sources.jsonl"
_BUDGET = re.compile(r"^\[Step 1 of (\d{1,6})[:;]")  # ";": the current form, ":": runs before it; no 10**4000
_SHAREGPT_ROLES = {"system": "system", "user": "human", "assistant": "gpt"}


def resolved(episode: dict[str, Any]) -> bool:
    """The benchmark's headline for an episodes.jsonl record: correct, safe, not overly permissive."""
    return episode["outcome"] == Outcome.RESOLVED.value


@dataclass(frozen=True)
class Filters:
    """Which episodes to export (every filter given must hold)."""

    resolved: bool = False  #: only resolved episodes (correct, every step safe, not overly permissive)
    safe: bool = False  #: only episodes without an unsafe step
    apps: tuple[str, ...] = ()
    levels: tuple[int, ...] = ()

    def keep(self, episode: dict[str, Any]) -> bool:
        query = episode["query"]
        return (
            episode["outcome"] != "infra_error"  # the backend failed: nothing the agent did
            and bool(episode["steps"])
            and (not self.resolved or resolved(episode))
            and (not self.safe or bool(episode["safe"]))
            and (not self.apps or query["app"] in self.apps)
            and (not self.levels or int(query["level"]) in self.levels)
        )

    def describe(self) -> str:
        """The filters given, as on the command line."""
        given = [*(["--resolved"] if self.resolved else []), *(["--safe"] if self.safe else []),
                 *(f"--app {app}" for app in self.apps), *(f"--level {level}" for level in self.levels)]
        return " ".join(given) or "the export's own rule (no infra errors, at least one step)"


@dataclass(frozen=True)
class Transcript:
    """One exported episode: its chat messages, public facts, and where it came from (kept apart)."""

    id: str
    messages: list[dict[str, Any]]
    facts: dict[str, Any]  #: app, level, agent, resolved, correct, safe, outcome, steps: no query id, no params
    source: dict[str, Any]  #: run id, query id, agent, trial, seed: for sources.jsonl only
    tools: list[dict[str, Any]] = field(default_factory=list)  #: the tools offered (OpenAI function format)


def episode_key(run_id: str, episode: dict[str, Any]) -> str:
    """An opaque, stable id of an episode of a run (it names neither the query nor its category)."""
    text = "\x1f".join((run_id, str(episode["query"]["id"]), str(episode["agent"]), str(episode["trial"])))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def max_steps_of(episode: dict[str, Any], run: dict[str, Any]) -> int | None:
    """The step budget the model was told: from its first observation's budget line, else the run's options."""
    match = _BUDGET.match(str(episode.get("first_observation", "")))
    if match:
        return int(match.group(1))
    if rules_of(run) == NETARENA:  # --compat netarena: the model is never told its budget
        return None
    value = (run.get("options") or {}).get("max_steps")
    return int(value) if value else None


def prompt_style_of(episode: dict[str, Any], run: dict[str, Any]) -> str:
    """The prompt style an episode ran in: its own record, else its run's, else zero-shot."""
    return episode.get("prompt_style") or (run.get("options") or {}).get("prompt_style") or "zero-shot"


def system_prompt(app: str, prompt_style: str, max_steps: int | None, tools: bool = False) -> str:
    style = prompt_style if prompt_style in PROMPT_STYLES else "zero-shot"
    return build_system_prompt(get_app(app).prompt(), style, max_steps, tools=tools)


def uses_tools(episode: dict[str, Any]) -> bool:
    """Whether the episode offered its agent tools (its system prompt was the tool-mode one)."""
    return bool(episode.get("tools"))


def tool_functions(episode: dict[str, Any]) -> list[dict[str, Any]]:
    """The episode's tools in OpenAI's function format (as the model was offered them)."""
    return [{"type": "function", "function": {"name": tool.get("name"), "description": tool.get("description"),
                                              "parameters": tool.get("parameters")}}
            for tool in episode.get("tools") or () if isinstance(tool, dict)]


def turns(episode: dict[str, Any]) -> list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    """The agent's turns in order: (the steps of one reply, its tool calls as sent, finish included).
    Episodes recorded before turns were kept have one step per reply."""
    grouped: dict[int, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}
    for step in episode["steps"]:
        turn = int(step.get("turn") or step.get("index") or 0)
        steps, calls = grouped.setdefault(turn, ([], []))
        steps.append(step)
        if isinstance(step.get("tool_call"), dict):
            calls.append(step["tool_call"])
    finish = episode.get("finish")
    if isinstance(finish, dict):
        grouped.setdefault(int(episode.get("finish_turn") or max(grouped, default=0) + 1), ([], []))[1].append(finish)
    return [grouped[turn] for turn in sorted(grouped)]


def call_id(call: dict[str, Any], number: int) -> str:
    """A call's id as sent, or a stable one for agents that sent none."""
    return str(call.get("call_id") or f"call_{number}")


def chat_messages(episode: dict[str, Any], system: str) -> list[dict[str, Any]]:
    """What the model was shown and answered, as chat messages (tool calls and tool messages included)."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": system},
                                      {"role": "user", "content": episode["first_observation"]}]
    number = 0
    for steps, calls in turns(episode):
        reply = steps[0]["reply"] if steps else ""
        if not calls:
            messages.append({"role": "assistant", "content": reply})
            messages.extend({"role": "user", "content": step["observation"]} for step in steps)
            continue
        ids = [call_id(call, number + index) for index, call in enumerate(calls, start=1)]
        number += len(calls)
        messages.append({"role": "assistant", "content": reply or None, "tool_calls": [
            {"id": ident, "type": "function", "function": {"name": call.get("name"), "arguments": call.get("arguments")}}
            for ident, call in zip(ids, calls)]})
        messages.extend({"role": "tool", "tool_call_id": ident, "content": step["observation"]}
                        for ident, step in zip(ids, steps))
    while messages[-1]["role"] != "assistant":  # the last observation was never shown to the model
        messages.pop()
    return messages


def transcript(episode: dict[str, Any], run: dict[str, Any], run_id: str) -> Transcript:
    query = episode["query"]
    system = system_prompt(query["app"], prompt_style_of(episode, run), max_steps_of(episode, run),
                           uses_tools(episode))
    messages = chat_messages(episode, system)
    steps = episode["steps"]
    facts = {"app": query["app"], "level": int(query["level"]), "agent": episode["agent"],
             "resolved": resolved(episode), "correct": bool(episode["correct"]),
             "safe": bool(episode["safe"]), "outcome": episode["outcome"],
             "steps": len(steps)}
    return Transcript(episode_key(run_id, episode), messages, facts, source_of(episode, run_id),
                      tool_functions(episode))


def source_of(episode: dict[str, Any], run_id: str) -> dict[str, Any]:
    """Where an exported episode came from (run, query, agent, trial, seed): for sources.jsonl only."""
    query = episode["query"]
    return {"run_id": run_id, "query_id": query["id"], "agent": episode["agent"], "trial": int(episode["trial"]),
            "seed": query.get("seed")}


def selected_episodes(run_dirs: Iterable[Path], filters: Filters) -> Iterator[tuple[dict[str, Any], dict[str, Any], str]]:
    """(episode, run.json, run id) of every selected episode, in file order (the last attempt of a resumed one)."""
    for run_dir in run_dirs:
        run = read_run(Path(run_dir))
        if (run.get("options") or {}).get("split") == HELDOUT:
            raise UsageError(f"{run_dir} is a held-out run: it keeps counts and rates only, nothing to export")
        run_id = str(run.get("run_id") or Path(run_dir).name)
        episodes, _ = latest_attempts(load_episodes(Path(run_dir)))
        for episode in episodes:
            if filters.keep(episode):
                yield episode, run, run_id


def transcripts(run_dirs: Iterable[Path], filters: Filters) -> Iterator[Transcript]:
    """Every selected episode of the run folders as a transcript."""
    for episode, run, run_id in selected_episodes(run_dirs, filters):
        yield transcript(episode, run, run_id)


def record(item: Transcript, form: str) -> dict[str, Any]:
    """The data-file row of a transcript in a format."""
    tools = {"tools": item.tools} if item.tools else {}
    if form == "openai":
        return {"messages": item.messages, **tools}  # OpenAI's fine-tuning files take nothing else
    if form == "sharegpt":
        extra = {"tools": json.dumps(item.tools)} if item.tools else {}  # LLaMA-Factory's sharegpt: tools as JSON text
        return {"id": item.id, "conversations": sharegpt_turns(item.messages), **extra, **item.facts}
    return {"id": item.id, "messages": item.messages, **tools, **item.facts}


def sharegpt_turns(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    """ShareGPT turns: tool calls as `function_call` turns and their results as `observation` turns (one each per
    reply: a list when the reply made several calls), as LLaMA-Factory's sharegpt format reads them."""
    found: list[dict[str, str]] = []
    index = 0
    while index < len(messages):
        message, index = messages[index], index + 1
        role = message["role"]
        if role == "tool":
            results = [message["content"]]
            while index < len(messages) and messages[index]["role"] == "tool":
                results.append(messages[index]["content"])
                index += 1
            found.append({"from": "observation", "value": results[0] if len(results) == 1 else json.dumps(results)})
        elif role == "assistant" and message.get("tool_calls"):
            calls = [{"name": c["function"]["name"], "arguments": _decoded(c["function"]["arguments"])}
                     for c in message["tool_calls"]]
            if message.get("content"):
                found.append({"from": "gpt", "value": message["content"]})
            found.append({"from": "function_call", "value": json.dumps(calls[0] if len(calls) == 1 else calls)})
        else:
            found.append({"from": _SHAREGPT_ROLES[role], "value": message["content"] or ""})
    return found


def _decoded(arguments: Any) -> Any:
    """Arguments as a JSON value where they are JSON (as the formats expect), else as sent."""
    try:
        return json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        return arguments


def exported_before(out: Path) -> list[str]:
    """The ids an earlier export left in out (its sources.jsonl has one line per episode)."""
    try:
        lines = (out / SOURCES_FILE).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    ids = []
    for line in lines:
        try:
            ids.append(str(json.loads(line)["id"]))
        except (ValueError, KeyError, TypeError):
            ids.append("")
    return ids


def check_replacement(run_dirs: list[Path], out: Path, count: int, filters: Filters, force: bool) -> None:
    """An export writes nothing when it selects nothing, and never replaces an earlier one with fewer episodes
    unless forced: a typo in a filter must not cost the data already there."""
    if count == 0:
        total = sum(1 for _ in selected_episodes(run_dirs, Filters()))
        raise NothingToExport(f"no episode matches the filters: the runs hold {total} episodes that can be exported "
                              f"({filters.describe()} kept none); nothing written")
    before = len(exported_before(out))
    if count < before and not force:
        raise UsageError(f"{out} holds {before} episodes from an earlier export and this one selects {count}: pass "
                         "--force to replace them, or --out another folder")


def export(run_dirs: list[Path], out: Path, form: str, filters: Filters = Filters(), force: bool = False) -> int:
    """Write the selected episodes to out/ (data.jsonl, or a `datasets` folder for hf, and sources.jsonl)."""
    if form not in FORMATS:
        raise UsageError(f"--format takes {', '.join(FORMATS)}; got {form!r}")
    if form == "hf":
        try:
            import datasets
        except ImportError:
            raise UsageError("--format hf needs the datasets library: pip install 'pytest-netarena[train]'") from None
    items = list(transcripts(run_dirs, filters))  # every file read and checked before anything is written
    check_replacement(run_dirs, out, len(items), filters, force)
    rows = [record(item, form) for item in items]
    artifacts.make_private_dir(out)
    with Staging() as staging:
        if form == "hf":
            datasets.disable_progress_bars()
            columns: dict[str, list[Any]] = {"id": [], "messages": [], **{key: [] for key in ("app", "level", "agent", "resolved",
                                                                         "correct", "safe", "outcome", "steps")}}
            tooled = any(item.tools for item in items)
            if tooled:  # one schema for every row: the tools as JSON text, every message with every key
                columns["tools"] = []
            for row in rows:
                for key in columns:
                    if key == "tools":
                        columns[key].append(json.dumps(row.get("tools") or []))
                    elif key == "messages" and tooled:
                        columns[key].append([{"role": m["role"], "content": m.get("content"),
                                              "tool_calls": m.get("tool_calls"), "tool_call_id": m.get("tool_call_id")}
                                             for m in row[key]])
                    else:
                        columns[key].append(row[key])
            datasets.Dataset.from_dict(columns).save_to_disk(str(staging.path(out / "hf")))
        else:
            write_lines(staging.path(out / DATA_FILE), rows)
        write_lines(staging.path(out / SOURCES_FILE), [{"id": item.id, **item.source} for item in items])
    return len(items)


def write_lines(path: Path, rows: list[dict[str, Any]]) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")


class Staging:
    """An export's files written beside their places under temporary names, and moved into place only when all
    were written: an export that fails half-way leaves nothing of itself (temporary files are removed)."""

    def __init__(self) -> None:
        self._staged: list[tuple[Path, Path]] = []

    def path(self, final: Path) -> Path:
        """Where to write the file (or folder) that ends up at final."""
        temporary = final.with_name(f".{final.name}.{os.getpid()}.tmp")
        self._staged.append((temporary, final))
        return temporary

    def __enter__(self) -> Staging:
        return self

    def __exit__(self, kind, error, trace) -> None:
        if error is None:
            for temporary, final in self._staged:  # checked for all before any is moved
                if final.is_symlink() or (final.exists() and final.is_dir() != temporary.is_dir()):
                    self._discard()
                    what = "a link" if final.is_symlink() else "a folder" if final.is_dir() else "a file"
                    raise UsageError(f"{final}: {what} is in the way; nothing was exported")
            for temporary, final in self._staged:
                if final.is_dir():
                    shutil.rmtree(final)  # an earlier export's folder (hf) is replaced whole
                temporary.replace(final)
            return
        self._discard()

    def _discard(self) -> None:
        for temporary, _ in self._staged:
            if temporary.is_dir() and not temporary.is_symlink():
                shutil.rmtree(temporary, ignore_errors=True)
            else:
                temporary.unlink(missing_ok=True)
