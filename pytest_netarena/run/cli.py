"""`netarena run [APP ...] [PYTEST ARGS]`: pytest on the benchmark suites of the installed package, from anywhere."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..core import resources

USAGE = "netarena run [APP ...] [PYTEST ARGS]   (e.g. netarena run k8s malt --agent=builtin:oracle -n 2)"


def register(subparsers) -> None:
    # prefix_chars="+": every argument, --help included, is pytest's (argparse would take "--agent" as its own)
    run = subparsers.add_parser(
        "run", prefix_chars="+", add_help=False, usage=USAGE,
        help="run the benchmark suites (all, or the apps named first) with pytest; the rest is pytest's command line")
    run.add_argument("arguments", nargs=argparse.REMAINDER)
    run.set_defaults(handler=run_suites)


def pytest_command(arguments: list[str], cwd: Path) -> list[str]:
    """The pytest argv for `netarena run`: leading app names become their suite folders (default: every suite)."""
    suites = resources.suites()
    apps = sorted(path.name for path in suites.iterdir() if path.is_dir() and not path.name.startswith(("_", ".")))
    chosen: list[str] = []
    while arguments and arguments[0] in apps:
        chosen.append(arguments.pop(0))
    paths = [str(suites / app) for app in chosen] or [str(suites)]
    # root the run where the user is (reports/, .pytest_cache), never inside the installed package
    rooted = any(a == "--rootdir" or a.startswith("--rootdir=") for a in arguments)
    return [sys.executable, "-m", "pytest", *paths, *([] if rooted else [f"--rootdir={cwd}"]), *arguments]


def run_suites(args: argparse.Namespace) -> int:
    argv = pytest_command(list(args.arguments), Path.cwd())
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(argv[0], argv)  # pytest's exit status and signals reach the caller unchanged
    return 0  # not reached
