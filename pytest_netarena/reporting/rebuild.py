"""Rebuild a run's summary.json, report.html and plots from its run.json and episodes.jsonl."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ..core import safe_read
from ..core.app import rules_of
from ..core.errors import UsageError
from ..core.types import IMPOSSIBLE, current_keys, row_label
from . import artifacts, completion, shapes
from .compare import compare
from .passk import pass_k_table
from .properties import metric_value
from .summary import possible, summarize

# keys the plugin adds to summary.json that cannot be recomputed from the episodes alone
KEPT_SUMMARY_KEYS = ("budget", "gates", "skipped")


class ReportError(UsageError):
    """The run folder cannot be read: missing, or a malformed episodes.jsonl line."""


def load_episodes(run_dir: Path) -> list[dict[str, Any]]:
    """Every episodes.jsonl line as a dict, keys renamed since under their current names; a ReportError names the
    first malformed line."""
    if not run_dir.is_dir():
        raise ReportError(f"{run_dir}: no such run folder")
    path = run_dir / "episodes.jsonl"
    if not path.is_file():
        raise ReportError(f"{run_dir}: no episodes.jsonl in this folder (is it a run folder under reports/?)")
    episodes = []
    try:
        for number, line in safe_read.json_lines(path, inside=run_dir):
            where = f"{path}: line {number}"
            episodes.append(current_keys(shapes.checked(safe_read.parse(line, where), shapes.EPISODE, where)))
    except ReportError:
        raise
    except UsageError as error:
        raise ReportError(str(error)) from None
    return episodes


def latest_attempts(episodes: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The last line of each (query, agent, trial), in file order, and how many earlier lines it replaced.

    --resume runs infra-error episodes again and appends the new attempt; the last one counts.
    """
    latest: dict[tuple[str, str, int], int] = {}
    for position, episode in enumerate(episodes):
        latest[(str(episode["query"]["id"]), str(episode["agent"]), int(episode["trial"]))] = position
    kept = sorted(latest.values())
    return [episodes[i] for i in kept], len(episodes) - len(kept)


def records_from_episodes(episodes: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The records reporting.properties.record_from_properties gives, from episodes.jsonl lines."""
    for episode in episodes:
        query = episode["query"]
        usage = episode.get("usage") or {}
        yield {
            "query": query["id"],
            "app": query["app"],
            "level": query["level"],
            "category": query["category"],
            "agent": row_label(str(episode["agent"]), str(episode.get("setting") or "")),
            "setting": str(episode.get("setting") or ""),
            "trial": episode["trial"],
            "seed": query.get("seed"),
            "outcome": episode["outcome"],
            "resolved": episode["outcome"] == "resolved",
            "correct": episode["correct"],
            "safe": episode["safe"],
            "steps": len(episode["steps"]),
            "latency_s": round(float(episode.get("agent_s", 0.0)), 4),
            "wall_s": round(float(episode.get("wall_s", 0.0)), 4),
            "tokens": int(episode.get("tokens", usage.get("tokens_in", 0) + usage.get("tokens_out", 0))),
            "cost_usd": round(float(usage.get("cost_usd", 0.0)), 6),
            "episode_id": episode.get("episode_id", ""),
            "interface": episode.get("interface", "text"),
            "refused": sum(bool(step.get("refused")) for step in episode["steps"]),
            **{f"metric.{name}": metric_value(value) for name, value in sorted((episode.get("metrics") or {}).items())},
            **({"impossible": True, "cheated": bool(episode["correct"])}
               if (query.get("params") or {}).get(IMPOSSIBLE) else {}),
        }


def read_run(run_dir: Path) -> dict[str, Any]:
    """run.json (its options' keys renamed since under their current names), or an empty dict when the run never
    wrote it (the report says so); a run.json that cannot be read (not UTF-8, not JSON, a link out of the folder)
    is a ReportError, never "no seed"."""
    path = run_dir / "run.json"
    if not path.exists() and not path.is_symlink():
        return {}
    try:
        run = shapes.checked(safe_read.read_json(path, inside=run_dir), shapes.RUN, str(path))
    except UsageError as error:
        raise ReportError(str(error)) from None
    return {**run, "options": current_keys(run["options"])} if isinstance(run.get("options"), dict) else run


def read_summary(run_dir: Path) -> dict[str, Any] | None:
    """The summary.json a run wrote, or None when there is none or it cannot be parsed (it is rebuilt); a
    parsed one whose fields are of the wrong shape is a ReportError naming the field."""
    path = run_dir / "summary.json"
    try:
        summary = safe_read.read_json(path, inside=run_dir)
    except UsageError:
        return None
    try:
        return shapes.checked(summary, shapes.SUMMARY, str(path))
    except UsageError as error:
        raise ReportError(str(error)) from None


def full_summary(records: list[dict[str, Any]], run: dict[str, Any], previous: dict[str, Any] | None = None) -> dict[str, Any]:
    """summarize() plus paired comparisons (two or more agents) and pass@k (more than one trial)."""
    summary = summarize(records)
    if "sandboxed" in run:
        summary["sandboxed"] = bool(run["sandboxed"])
    if "rules" in run or "profile" in run:
        summary["rules"] = rules_of(run)
    for key in KEPT_SUMMARY_KEYS:
        if previous and key in previous:
            summary[key] = previous[key]
    summary.update(completion.refreshed(previous, len(records)))
    records = possible(records)  # impossible episodes are scored only as cheats (summary["cheating"])
    if len({r["agent"] for r in records}) > 1:
        summary["comparisons"] = compare(records, seed=int(run.get("seed") or 0))
    pass_k = pass_k_table(records)
    if pass_k:
        summary["pass_k"] = pass_k
    return summary


def build_report(run_dir: Path, plots: bool = True) -> Path:
    """Write summary.json, report.html and (with matplotlib installed) plots/; return report.html's path."""
    from .html import render_report
    from .plots import write_plots

    run_dir = Path(run_dir)
    episodes, superseded = latest_attempts(load_episodes(run_dir))
    records = list(records_from_episodes(episodes))
    run = {**read_run(run_dir), **({"validity_card": True} if (run_dir / "validity.json").is_file() else {})}
    previous = read_summary(run_dir)
    summary = full_summary(records, run, previous)
    artifacts.write_summary(run_dir, summary)
    scored = possible(records)  # impossible episodes are in the summary's cheating rates only
    written, plot_note = write_plots(summary, scored, run_dir / "plots") if plots else ([], "plots not requested")
    html = render_report(run, summary, episodes, scored, [p.relative_to(run_dir) for p in written], plot_note, superseded)
    target = run_dir / "report.html"
    temporary = target.with_suffix(".html.tmp")
    temporary.write_text(html, encoding="utf-8")
    temporary.replace(target)
    return target
