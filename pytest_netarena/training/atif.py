"""Episodes of run folders as ATIF trajectories (Agent Trajectory Interchange Format v1.8, Harbor's RFC 0001).

One JSON document per episode: a system step (the run's system prompt), a user step (the first
observation), then one agent step per reply, holding the reply as its message, the parsed action as
a tool call of the app's single tool `act` (or, when the episode offered tools, the agent's own tool
calls, with the episode's tools as the definitions), the observation that followed each action as its
call's result (the raw output beside it in the result's `extra`), and the reply's usage as its metrics.
Our verdicts (resolved, safe, outcome, the judge's yes/no measures) go in the trajectory's `extra`.
The leak rules are those of `export sft`: the observation after the last reply is left out (the
model never saw it; for MALT it is the grader's verdict); query params, query ids, seeds and grader
details never enter a trajectory. `sources.jsonl`, beside the trajectories, maps each opaque id back
to its run and query. Each document is validated with the `atif` package's models before it is written.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..apps import get_app
from ..core.errors import UsageError
from ..reporting import artifacts
from .export import (SOURCES_FILE, Filters, Staging, call_id, check_replacement, episode_key, exported_before,
                     max_steps_of, prompt_style_of, resolved, selected_episodes, source_of, system_prompt,
                     tool_functions, turns, uses_tools, write_lines)

SCHEMA_VERSION = "ATIF-v1.8"
TOOL = "act"
NOTES = ("The observation after the last reply is left out: the agent never saw it. A text episode's tool call `act` "
         "carries the action parsed from the reply (a refused or unparseable reply has none); an episode that "
         "offered tools holds the agent's own tool calls and their results. Verdicts are in extra.")
_NOT_MODELS = ("builtin", "python", "a2a")  # agent spec kinds that are not a litellm model


def tool_definition(app: str) -> dict[str, Any]:
    """The app's one tool, OpenAI style: an action in the app's action format."""
    return {"type": "function", "function": {
        "name": TOOL, "description": get_app(app).prompt().action_format.strip(),
        "parameters": {"type": "object", "properties": {"action": {"type": "string"}}, "required": ["action"]}}}


def agent_block(episode: dict[str, Any], run: dict[str, Any], prompt_style: str,
                max_steps: int | None) -> dict[str, Any]:
    spec = str(episode["agent"])
    kind, _, rest = spec.partition(":")
    block = {"name": spec, "version": str((run.get("versions") or {}).get("pytest-netarena", "unknown")),
             "tool_definitions": tool_functions(episode) or [tool_definition(episode["query"]["app"])],
             "extra": {"prompt_style": prompt_style, "max_steps": max_steps}}
    if kind not in _NOT_MODELS and rest:
        block["model_name"] = f"{kind}/{rest}"
    return block


def agent_step(number: int, step: dict[str, Any], shown: bool, kind: str) -> dict[str, Any]:
    """The ATIF step of one reply; its observation only when the agent was shown it (shown)."""
    call_id = f"call-{number}"
    action = str(step.get("action") or "")
    item: dict[str, Any] = {"source": "agent", "message": step["reply"],
                            "extra": {"refused": bool(step.get("refused")), "unsafe": bool(step.get("violations"))}}
    if action:
        item["tool_calls"] = [{"tool_call_id": call_id, "function_name": TOOL, "arguments": {"action": action}}]
    if shown:
        item["observation"] = {"results": [{"source_call_id": call_id if action else None,
                                            "content": step["observation"], "extra": {"output": step["output"]}}]}
    usage = step.get("usage") or {}
    if kind == "builtin":
        item["llm_call_count"] = 0  # a built-in agent asks no model (and ATIF then forbids metrics)
    else:  # a model agent (one call per reply), or a python/a2a agent reporting what its model used
        item["metrics"] = {"prompt_tokens": int(usage.get("tokens_in", 0)),
                           "completion_tokens": int(usage.get("tokens_out", 0)),
                           "cost_usd": float(usage.get("cost_usd", 0.0))}
        if kind not in _NOT_MODELS:
            item["llm_call_count"] = 1
    return item


def tool_turn_step(steps: list[dict[str, Any]], calls: list[dict[str, Any]], first_number: int, shown: bool,
                   kind: str) -> dict[str, Any]:
    """The ATIF step of one reply that made native tool calls: the calls as sent, each run call's observation as
    its result (when the agent was shown them), the reply's usage as its metrics."""
    ids = [call_id(call, first_number + index) for index, call in enumerate(calls)]
    item = agent_step(first_number, {**(steps[0] if steps else {"reply": ""}), "action": ""}, shown=False, kind=kind)
    item["message"] = steps[0]["reply"] if steps else ""
    item["extra"] = {"refused": [bool(step.get("refused")) for step in steps],
                     "unsafe": [bool(step.get("violations")) for step in steps]}
    item["tool_calls"] = [{"tool_call_id": ident, "function_name": str(call.get("name")),
                           "arguments": _arguments(call.get("arguments"))} for ident, call in zip(ids, calls)]
    if shown and steps:
        item["observation"] = {"results": [{"source_call_id": ident, "content": step["observation"],
                                            "extra": {"output": step["output"], "refused": bool(step.get("refused"))}}
                                           for ident, step in zip(ids, steps)]}
    return item


def _arguments(text: Any) -> dict[str, Any]:
    """A call's arguments as the JSON object ATIF holds; arguments that are not one are kept as sent."""
    try:
        value = json.loads(text) if isinstance(text, str) and text.strip() else {}
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {"_raw": str(text)}


def trajectory(episode: dict[str, Any], run: dict[str, Any], run_id: str) -> dict[str, Any]:
    """The ATIF document of one episode, as plain JSON data."""
    query = episode["query"]
    prompt_style = prompt_style_of(episode, run)
    budget = max_steps_of(episode, run)
    kind = str(episode["agent"]).partition(":")[0]
    tooled = uses_tools(episode)
    steps: list[dict[str, Any]] = [
        {"source": "system", "message": system_prompt(query["app"], prompt_style, budget, tooled)},
        {"source": "user", "message": episode["first_observation"]}]
    replies = episode["steps"]
    if tooled:
        groups, number = turns(episode), 1
        for position, (turn_steps, calls) in enumerate(groups, start=1):
            last = position == len(groups)
            if calls:
                steps.append(tool_turn_step(turn_steps, calls, number, shown=not last, kind=kind))
                number += len(calls)
            else:  # a reply read as text
                steps.append(agent_step(number, turn_steps[0], shown=not last, kind=kind))
                number += 1
    for number, step in enumerate(() if tooled else replies, start=1):
        steps.append(agent_step(number, step, shown=number < len(replies), kind=kind))
    for step_id, step in enumerate(steps, start=1):
        step["step_id"] = step_id
    usages = [step.get("usage") or {} for step in replies]
    final = {"total_prompt_tokens": sum(int(u.get("tokens_in", 0)) for u in usages),
             "total_completion_tokens": sum(int(u.get("tokens_out", 0)) for u in usages),
             "total_cost_usd": round(sum(float(u.get("cost_usd", 0.0)) for u in usages), 8),
             "total_steps": len(steps),
             "extra": {"agent_turns": len(replies), "agent_s": round(float(episode.get("agent_s", 0.0)), 4),
                       "wall_s": round(float(episode.get("wall_s", 0.0)), 4)}}
    verdicts = {"app": query["app"], "level": int(query["level"]), "resolved": resolved(episode),
                "correct": bool(episode["correct"]),
                "safe": bool(episode["safe"]), "outcome": episode["outcome"],
                "metrics": {name: None if value is None else bool(value)
                            for name, value in sorted((episode.get("metrics") or {}).items())}}
    return {"schema_version": SCHEMA_VERSION, "session_id": hashlib.sha256(run_id.encode()).hexdigest()[:16],
            "trajectory_id": episode_key(run_id, episode), "agent": agent_block(episode, run, prompt_style, budget),
            "steps": steps, "notes": NOTES, "final_metrics": final, "extra": verdicts}


def export_atif(run_dirs: Iterable[Path], out: Path, filters: Filters = Filters(), force: bool = False) -> int:
    """Write OUT/<id>.json (one validated ATIF trajectory per selected episode) and OUT/sources.jsonl; the
    trajectories of an earlier export there are replaced (only with --force when this one holds fewer)."""
    try:
        from atif import Trajectory
    except ImportError:
        raise UsageError("export atif needs the atif library: pip install 'pytest-netarena[export]'") from None
    from pydantic import ValidationError

    run_dirs = list(run_dirs)
    documents, sources = [], []
    for episode, run, run_id in selected_episodes(run_dirs, filters):  # all read and checked before any write
        try:
            document = Trajectory.model_validate(trajectory(episode, run, run_id)).to_json_dict()
        except ValidationError as error:
            first = error.errors()[0]
            raise UsageError(f"{run_id}: episode {episode['query']['id']} ({episode['agent']}, trial "
                             f"{episode['trial']}) is no valid ATIF trajectory: {'.'.join(map(str, first['loc']))}: "
                             f"{first['msg']}") from None
        documents.append(document)
        sources.append({"id": document["trajectory_id"], **source_of(episode, run_id)})
    check_replacement(run_dirs, out, len(documents), filters, force)
    earlier = exported_before(out)
    artifacts.make_private_dir(out)
    with Staging() as staging:
        for document in documents:
            path = staging.path(out / f"{document['trajectory_id']}.json")
            path.write_text(json.dumps(document, ensure_ascii=False, indent=1, sort_keys=True) + "\n",
                            encoding="utf-8")
        write_lines(staging.path(out / SOURCES_FILE), sources)
    kept = {document["trajectory_id"] for document in documents}
    for old in earlier:  # an earlier export's trajectories this one does not hold, once this one is in place
        if old and old not in kept and (out / f"{old}.json").is_file():
            (out / f"{old}.json").unlink()
    return len(documents)
