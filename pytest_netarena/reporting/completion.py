"""Whether a run folder holds its whole run: summary.json's `complete`, what is missing and the command that finishes it.

A run marks itself incomplete when it starts (so a killed run says so), and complete when every
selected episode either ran or was skipped with a reason; `--resume` finishes an incomplete one in
its own folder, from any folder. A run in which no episode ran at all says why (`nothing_ran`), and a run that
skipped episodes says every reason once, with how many it skipped and of which apps (`skipped`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: summary.json keys about the run's completeness, kept by `netarena report` (it cannot tell from the episodes)
KEYS = ("complete", "incomplete", "nothing_ran")


def resume_command(run_dir: Path) -> str:
    """The command that finishes the run, from any folder."""
    return f"pytest --resume {shlex.quote(str(run_dir))}"


def started(run_dir: Path, expected: int | None) -> dict[str, Any]:
    """summary.json of a run that has begun: incomplete until it ends (a killed run never rewrites it)."""
    return {"complete": False,
            "incomplete": {"why": "the run did not finish (still running, interrupted, killed or crashed)",
                           "episodes_done": 0, "episodes_expected": expected, "resume": resume_command(run_dir)}}


def finished(run_dir: Path, done: int, expected: int | None, skipped: int, why: str) -> dict[str, Any]:
    """summary.json's completeness at the end of a session: `why` says what stopped it early ("" when nothing did);
    complete when nothing stopped it and every expected episode ran or was skipped with a reason."""
    missing = 0 if expected is None else expected - done - skipped
    if not why and missing <= 0:
        return {"complete": True}
    if not why:
        why = f"{missing} episodes ended without a result (a crashed worker, or an error outside the episode)"
    return {"complete": False, "incomplete": {"why": why, "episodes_done": done, "episodes_expected": expected,
                                              "resume": resume_command(run_dir)}}


def refreshed(previous: dict[str, Any] | None, done: int) -> dict[str, Any]:
    """The completeness a rebuilt summary keeps: the run's own verdict, with the episodes now in the folder."""
    if not previous or "complete" not in previous:
        return {}  # a run from before this was recorded, or a merge of shards: unknown
    kept = {key: previous[key] for key in KEYS if key in previous}
    if not previous["complete"] and isinstance(previous.get("incomplete"), dict):
        kept["incomplete"] = {**previous["incomplete"], "episodes_done": done}
    return kept


def incomplete_line(summary: dict[str, Any]) -> str:
    """One line for the terminal or a page about an incomplete run, or ""."""
    if summary.get("complete", True):
        return ""
    info = summary.get("incomplete") or {}
    expected = info.get("episodes_expected")
    counted = f"{info.get('episodes_done', 0)} of {expected} episodes" if expected else \
        f"{info.get('episodes_done', 0)} episodes"
    return f"INCOMPLETE run: {counted} ran ({info.get('why', 'interrupted')}); finish it with: {info.get('resume', '')}"


def skipped(skips: Mapping[str, str]) -> dict[str, Any]:
    """summary.json's "skipped" of the benchmark tests skipped (test id -> reason): every reason once, most first,
    with its count and the apps whose episodes it skipped."""
    reasons: dict[str, dict[str, Any]] = {}
    for test, reason in skips.items():
        entry = reasons.setdefault(reason, {"reason": reason, "episodes": 0, "apps": set()})
        entry["episodes"] += 1
        found = re.search(r"\[(\w+)-L\d", test)  # a benchmark test's id begins with its query's: APP-L<level>-...
        if found:
            entry["apps"].add(found.group(1))
    ordered = sorted(reasons.values(), key=lambda entry: (-entry["episodes"], entry["reason"]))
    return {"episodes": len(skips), "reasons": [{**entry, "apps": sorted(entry["apps"])} for entry in ordered]}


def skipped_lines(summary: Mapping[str, Any]) -> list[str]:
    """The terminal's account of the skipped episodes: how many, then each reason with its count and apps."""
    found = summary.get("skipped") or {}
    if not found.get("episodes"):
        return []
    count = found["episodes"]
    lines = [f"skipped: {count} episode{'' if count == 1 else 's'}, not run and not scored, because:"]
    for entry in found.get("reasons", []):
        apps = f" [{', '.join(entry['apps'])}]" if entry.get("apps") else ""
        lines.append(f"  {entry['episodes']}{apps}: {entry['reason']}")
    return lines


def merged_skipped(parts: list[Mapping[str, Any]]) -> dict[str, Any]:
    """Several runs' "skipped" (shards of one run) as one: counts added up per reason, apps joined."""
    reasons: dict[str, dict[str, Any]] = {}
    for part in parts:
        for entry in part.get("reasons", []):
            kept = reasons.setdefault(entry["reason"], {"reason": entry["reason"], "episodes": 0, "apps": set()})
            kept["episodes"] += int(entry.get("episodes", 0))
            kept["apps"].update(entry.get("apps", []))
    ordered = sorted(reasons.values(), key=lambda entry: (-entry["episodes"], entry["reason"]))
    return {"episodes": sum(int(part.get("episodes", 0)) for part in parts),
            "reasons": [{**entry, "apps": sorted(entry["apps"])} for entry in ordered]}
