"""`netarena report merge SHARD_DIR...`: the run folders of `--shard K/N` jobs joined into one run folder.

Shards of one run share seed, agents and options, so they generated the same queries and each
ran a disjoint slice of them; the merged folder holds every episode once, one summary.json,
report.html and junit.xml, as if one machine had run them all. Folders of different runs are
refused, and so are missing or repeated shards (unless `allow_missing`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..core import safe_read
from ..run.budget import Budget, RunLedger
from ..core.types import Usage
from ..run.gates import Gate, check_gates
from . import artifacts, completion
from .summary import possible
from .rebuild import ReportError, latest_attempts, load_episodes, read_run, read_summary, records_from_episodes

#: run.json entries that must be equal in every shard of one run
SAME_IN_EVERY_SHARD = ("seed", "agents", "options", "sandboxed", "rules")


def _shard_of(run_dir: Path, run: dict[str, Any]) -> tuple[int, int]:
    label = run.get("shard")
    index, _, count = str(label).partition("/")
    if not label or not index.isdigit() or not count.isdigit():
        raise ReportError(f"{run_dir}: not a shard (its run.json has no 'shard'; was it run with --shard K/N?)")
    return int(index), int(count)


def check_shards(run_dirs: list[Path], allow_missing: bool = False) -> list[dict[str, Any]]:
    """The shards' run.json, after checking they are the slices of one run; ReportError says what is wrong."""
    if not run_dirs:
        raise ReportError("name the shards' run folders to merge")
    runs = []
    for run_dir in run_dirs:
        if not (run_dir / "run.json").is_file():
            raise ReportError(f"{run_dir}: no run.json in this folder (is it a run folder under reports/?)")
        runs.append(read_run(run_dir))
    first = runs[0]
    for run_dir, run in zip(run_dirs[1:], runs[1:]):
        for key in SAME_IN_EVERY_SHARD:
            if run.get(key) != first.get(key):
                raise ReportError(f"{run_dir}: {key} {json.dumps(run.get(key), sort_keys=True)} differs from "
                                  f"{json.dumps(first.get(key), sort_keys=True)} in {run_dirs[0]}: "
                                  "only the shards of one run (same seed, agents and options) can be merged")
        if (run.get("private") or {}).get("secret") != (first.get("private") or {}).get("secret"):
            raise ReportError(f"{run_dir}: its run secret differs from {run_dirs[0]}'s (run.json's private part): "
                              "the shards drew other hidden parameters, so they are not slices of one run")
    shards = [_shard_of(run_dir, run) for run_dir, run in zip(run_dirs, runs)]
    counts = {count for _, count in shards}
    if len(counts) != 1:
        raise ReportError(f"the folders split the run differently ({', '.join(f'{k}/{n}' for k, n in shards)})")
    count = counts.pop()
    seen: dict[int, Path] = {}
    for run_dir, (index, _) in zip(run_dirs, shards):
        if index in seen:
            raise ReportError(f"{run_dir} and {seen[index]} are both shard {index}/{count}")
        seen[index] = run_dir
    missing = sorted(set(range(1, count + 1)) - set(seen))
    if missing and not allow_missing:
        raise ReportError(f"shard(s) {', '.join(f'{k}/{count}' for k in missing)} missing "
                          "(pass --allow-missing to merge the others anyway)")
    totals = {run.get("collection", {}).get("total") for run in runs} - {None}
    if len(totals) > 1:
        raise ReportError(f"the shards collected different numbers of tests ({sorted(totals)}): "
                          "they did not run the same code or options")
    return runs


def merge_runs(run_dirs: list[Path], out: Path | None = None, *, allow_missing: bool = False, plots: bool = True,
               gates: list[Gate] | None = None) -> tuple[Path, list[dict[str, Any]]]:
    """Write the merged run folder; returns its path and the gate verdicts (empty without gates)."""
    from .junit import write_junit
    from .rebuild import build_report

    run_dirs = [Path(d) for d in run_dirs]
    runs = check_shards(run_dirs, allow_missing)
    run_id = artifacts.new_run_id(int(runs[0].get("seed") or 0)) + "-merged"
    out = Path(out) if out is not None else run_dirs[0].parent / run_id
    if out.exists() and any(out.iterdir()):
        raise ReportError(f"{out}: the merged folder must be new or empty")
    episodes = _disjoint_episodes(run_dirs)
    artifacts.make_private_dir(out)
    artifacts.write_json(out / "run.json", _merged_run_info(out, run_dirs, runs))
    _join_lines(out / "episodes.jsonl", [json.dumps(episode, sort_keys=True, default=str) for episode in episodes])
    _join_lines(out / "found.jsonl", [line for run_dir in run_dirs if (run_dir / "found.jsonl").exists()
                                      for _, line in safe_read.json_lines(run_dir / "found.jsonl", inside=run_dir)])
    _add_up_usage(out, run_dirs)
    records = list(records_from_episodes(episodes))
    verdicts = check_gates(gates or [], possible(records))  # impossible episodes are scored only as cheats
    carried = _carried_summary(run_dirs)
    if verdicts:
        carried["gates"] = verdicts
    if carried:
        artifacts.write_summary(out, carried)  # build_report keeps these keys
    build_report(out, plots=plots)
    write_junit(out / "junit.xml", records, episodes, name=f"netarena {out.name}")
    return out, verdicts


def _disjoint_episodes(run_dirs: list[Path]) -> list[dict[str, Any]]:
    """Every shard's kept episodes (its latest attempt of each); an episode in two shards is a ReportError."""
    episodes: list[dict[str, Any]] = []
    owner: dict[Any, Path] = {}
    for run_dir in run_dirs:
        kept, _ = latest_attempts(load_episodes(run_dir)) if (run_dir / "episodes.jsonl").exists() else ([], 0)
        for episode in kept:
            key = (episode["query"]["id"], episode["agent"], int(episode["trial"]))
            if key in owner:
                raise ReportError(f"{key[0]} ({key[1]}, trial {key[2]}) is in {owner[key]} and {run_dir}: "
                                  "the folders are not disjoint shards")
            owner[key] = run_dir
            episodes.append(episode)
    return episodes


def _merged_run_info(out: Path, run_dirs: list[Path], runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The first shard's run.json as the whole run's: where it came from, and every shard's selection added up."""
    first = runs[0]
    return {
        **{key: value for key, value in first.items() if key not in ("run_id", "args", "shard", "collection")},
        "run_id": out.name,
        "merged_from": [{"run_id": run.get("run_id"), "shard": run.get("shard"), "path": str(run_dir)}
                        for run_dir, run in zip(run_dirs, runs)],
        "collection": {"total": first.get("collection", {}).get("total"),
                       "selected": sum(run.get("collection", {}).get("selected", 0) for run in runs)},
    }


def _join_lines(path: Path, lines: list[str]) -> None:
    if lines:
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def _add_up_usage(out: Path, run_dirs: list[Path]) -> None:
    """The shards' spending as one usage.json (when any shard kept one)."""
    if not any((run_dir / "usage.json").exists() for run_dir in run_dirs):
        return
    spent = Usage()
    for run_dir in run_dirs:
        spent = spent + RunLedger(run_dir, Budget()).spent()
    RunLedger(out, Budget()).add(spent)


def _carried_summary(run_dirs: list[Path]) -> dict[str, Any]:
    """The shards' budget notes and skipped episodes, added up (each shard had its own cap), and whether every shard
    finished."""
    budgets: list[dict[str, Any]] = []
    carried: dict[str, Any] = {}
    summaries = [(run_dir, read_summary(run_dir)) for run_dir in run_dirs]
    for _, summary in summaries:
        if summary is not None and "budget" in summary:
            budgets.append(summary["budget"])
    unfinished = [run_dir for run_dir, summary in summaries if summary is not None and summary.get("complete") is False]
    if unfinished:
        carried["complete"] = False
        carried["incomplete"] = {"why": f"shard {unfinished[0].name} did not finish", "episodes_done": 0,
                                 "episodes_expected": None, "resume": completion.resume_command(unfinished[0])}
    elif all(summary is not None and summary.get("complete") is True for _, summary in summaries):
        carried["complete"] = True
    skipped = completion.merged_skipped([summary.get("skipped") or {} for _, summary in summaries if summary])
    if skipped["episodes"]:
        carried["skipped"] = skipped
    if budgets:
        carried["budget"] = {
            "per_shard": True,
            "max_tokens": budgets[0].get("max_tokens"), "max_cost_usd": budgets[0].get("max_cost_usd"),
            "tokens": sum(b.get("tokens", 0) for b in budgets),
            "cost_usd": sum(b.get("cost_usd", 0.0) for b in budgets),
            "stopped": any(b.get("stopped") for b in budgets),
            "episodes_not_run": sum(b.get("episodes_not_run", 0) for b in budgets),
        }
    return carried
