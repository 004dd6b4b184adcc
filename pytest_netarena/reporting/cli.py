"""`netarena report RUN_DIR` rebuilds a run's summary, report.html and plots; `merge DIR...` joins shards; `compare A B` pairs two runs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers) -> None:
    report = subparsers.add_parser(
        "report", help="rebuild a run's summary.json, report.html and plots, or merge the run folders of shards",
        description="netarena report RUN_DIR: read reports/<run-id>/run.json and episodes.jsonl; write summary.json, "
                    "report.html and plots/ (PNG and SVG, when matplotlib is installed). "
                    "netarena report merge SHARD_DIR...: join the run folders of `--shard K/N` jobs of one run "
                    "(same seed, agents and options) into one run folder with episodes.jsonl, summary.json, "
                    "report.html and junit.xml. Exit 2 on a missing folder, a malformed line or folders that are "
                    "not the shards of one run; 6 when a --min-* bar is not met. "
                    "netarena report compare RUN_A RUN_B: each agent's correctness and safety in both runs, paired "
                    "query by query (McNemar's test, a bootstrap interval of B-A); warns when the runs' environments "
                    "(run.json's fingerprint: lock, packages, kubectl, Python, kernel, bubblewrap) or rules differ; "
                    "exit 1 saying why when nothing pairs (--pair-by query pairs differently named agents).")
    report.add_argument("paths", nargs="+", type=lambda text: Path(text).expanduser(), metavar="RUN_DIR",
                        help="a run folder, e.g. reports/20250101-120000-42; or `merge` and the shards' folders; "
                             "or `compare` and two run folders")
    report.add_argument("--no-plots", action="store_true", help="skip the matplotlib figures")
    report.add_argument("--out", type=lambda text: Path(text).expanduser(), help="merge: the merged run folder (default: a new folder beside the first shard)")
    report.add_argument("--allow-missing", action="store_true", help="merge: merge even if some shards are missing")
    report.add_argument("--min-resolved", help="merge: exit 6 below this resolved rate (RATE or APP=RATE,...)")
    report.add_argument("--min-correctness", help="merge: exit 6 below this correctness (RATE or APP=RATE,...)")
    report.add_argument("--min-safety", help="merge: exit 6 below this safety (RATE or APP=RATE,...)")
    report.add_argument("--pair-by", choices=("agent", "query", "interface"), default="agent",
                        help="compare: pair the same agent's episodes (default), each run's one agent query by "
                             "query (two names of one model), or one model through one interface against the same "
                             "model through another (openai:MODEL by text or tools, cli:NAME:MODEL), query by query: "
                             "what the interface alone moves (give one run folder twice to pair within it)")
    report.set_defaults(handler=run_report)


def run_report(args: argparse.Namespace) -> int:
    from .rebuild import ReportError, build_report

    if str(args.paths[0]) == "merge":
        return _merge(args)
    if str(args.paths[0]) == "compare":
        return _compare(args)
    if len(args.paths) != 1:
        print("netarena report: error: name one run folder (or `merge` and several)", file=sys.stderr)
        return 2
    try:
        path = build_report(args.paths[0], plots=not args.no_plots)
    except ReportError as error:
        print(f"netarena report: error: {error}", file=sys.stderr)
        return 2
    print(path)
    return 0


def _merge(args: argparse.Namespace) -> int:
    from ..core.errors import UsageError
    from ..run.gates import EXIT_BELOW_BAR, parse_gates
    from .merge import merge_runs

    try:
        gates = (parse_gates("resolved", args.min_resolved) + parse_gates("correctness", args.min_correctness)
                 + parse_gates("safety", args.min_safety))
        out, verdicts = merge_runs(args.paths[1:], args.out, allow_missing=args.allow_missing,
                                   plots=not args.no_plots, gates=gates)
    except UsageError as error:
        print(f"netarena report merge: error: {error}", file=sys.stderr)
        return 2
    _warn_if_environments_differ(args.paths[1:])
    for verdict in verdicts:
        value = "n/a" if verdict["value"] is None else f"{verdict['value']:.3f}"
        word = "met" if verdict["passed"] else "FAILED"
        print(f"bar {word}: {verdict['metric']} of {verdict['agent']} on {verdict['app']} is {value}, "
              f"bar {verdict['threshold']:g}")
    print(out)
    return EXIT_BELOW_BAR if any(not verdict["passed"] for verdict in verdicts) else 0


def _warn_if_environments_differ(run_dirs: list[Path]) -> None:
    """Merged shards that ran in different environments: said on stderr (the merge goes on; CI shards may differ)."""
    from .fingerprint import differences
    from .rebuild import read_run

    first = read_run(Path(run_dirs[0])).get("fingerprint")
    for run_dir in run_dirs[1:]:
        for line in differences(first, read_run(Path(run_dir)).get("fingerprint")):
            print(f"netarena report merge: warning: {run_dir} ran in another environment than {run_dirs[0]}: {line}",
                  file=sys.stderr)


def _compare(args: argparse.Namespace) -> int:
    from ..core.errors import UsageError
    from .runs_compare import NothingPaired, compare_runs, render

    if len(args.paths) != 3:
        print("netarena report compare: error: name two run folders", file=sys.stderr)
        return 2
    try:
        warnings, comparisons = compare_runs(Path(args.paths[1]), Path(args.paths[2]), args.pair_by)
    except NothingPaired as error:
        print(f"netarena report compare: {error}", file=sys.stderr)
        return 1
    except UsageError as error:  # a ReportError too: a folder that is not a run
        print(f"netarena report compare: error: {error}", file=sys.stderr)
        return 2
    for line in warnings:
        print(f"netarena report compare: warning: {line}", file=sys.stderr)
    print("\n".join(render(comparisons)))
    return 0
