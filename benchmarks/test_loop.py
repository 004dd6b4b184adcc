"""The project's own tests, timed: README's test command, `python -m pytest tests -n 4`, with its CPU and its slowest files.

    python benchmarks/test_loop.py [--runs 1] [--top 15] [-- PYTEST ARGS (default: tests -n 4)]

Prints each run's wall, user and system seconds (pytest and every process it waited for), the last line of
pytest's output, and the files whose tests took longest, summed over the workers (from a JUnit file of the run).
Target (issue 48): under 8 minutes on this 2-core machine with every test kept. Measured on a quiet machine.
"""

from __future__ import annotations

import argparse
import collections
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(args: list[str], junit: Path) -> tuple[float, float, float, str]:
    """(wall, user, sys) seconds of one run with its children, and the last line it printed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", f"--junitxml={junit}", *args], cwd=ROOT,
                          capture_output=True, text=True, check=False, env={**os.environ, "NO_COLOR": "1"})
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    lines = done.stdout.strip().splitlines()
    if done.returncode not in (0, 1):
        sys.exit(f"pytest {' '.join(args)} exited {done.returncode}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return wall, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime, lines[-1] if lines else ""


def by_file(junit: Path) -> list[tuple[float, str]]:
    """(seconds its tests took, summed over the workers; file), longest first."""
    totals: collections.Counter[str] = collections.Counter()
    for case in ElementTree.parse(junit).iter("testcase"):
        totals[(case.get("classname") or "").replace(".", "/") + ".py"] += float(case.get("time") or 0)
    return sorted(((seconds, name) for name, seconds in totals.items()), reverse=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--top", type=int, default=15, help="how many of the slowest files to print")
    parser.add_argument("pytest_args", nargs="*", help="pytest's arguments (after --; default: tests -n 4)")
    options = parser.parse_args()
    command = options.pytest_args or ["tests", "-n", "4"]
    print(f"cores: {os.cpu_count()}; command: python -m pytest {' '.join(command)}")
    walls = []
    with tempfile.TemporaryDirectory() as scratch:
        junit = Path(scratch) / "junit.xml"
        for run in range(options.runs):
            wall, user, system, last = timed(command, junit)
            walls.append(wall)
            print(f"run {run + 1}: {wall:.1f} s wall ({wall / 60:.1f} min), {user:.1f} s user, {system:.1f} s sys, "
                  f"CPU busy {(user + system) / wall / (os.cpu_count() or 1):.0%} ({last})")
        files = by_file(junit)
    print(f"median {statistics.median(walls):.1f} s over {options.runs} runs; test time summed over workers "
          f"{sum(seconds for seconds, _ in files):.0f} s")
    for seconds, name in files[:options.top]:
        print(f"  {seconds:7.1f} s  {name}")


if __name__ == "__main__":
    main()
