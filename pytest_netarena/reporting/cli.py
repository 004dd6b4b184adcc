"""`netarena report reports/<run-id>`: rebuild summary.json, report.html and plots from episodes.jsonl."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers) -> None:
    report = subparsers.add_parser(
        "report", help="rebuild a run's summary.json, report.html and plots from its episodes.jsonl",
        description="Read reports/<run-id>/run.json and episodes.jsonl; write summary.json, report.html and "
                    "plots/ (PNG and SVG, when matplotlib is installed). Exit 2 on a missing folder or a malformed line.")
    report.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a run folder, e.g. reports/20250101-120000-42")
    report.add_argument("--no-plots", action="store_true", help="skip the matplotlib figures")
    report.set_defaults(handler=run_report)


def run_report(args: argparse.Namespace) -> int:
    from .rebuild import ReportError, build_report

    try:
        path = build_report(args.run_dir, plots=not args.no_plots)
    except ReportError as error:
        print(f"netarena report: error: {error}", file=sys.stderr)
        return 2
    print(path)
    return 0
