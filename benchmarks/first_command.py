"""README's first command, timed: `pytest suites --agent=builtin:oracle -n auto`, and the same with every episode
one at a time per worker (`--in-flight 1`: route's episodes as they ran before they went side by side).

    python benchmarks/first_command.py [--runs 3] [--pause 20] [--suites suites] [-- EXTRA PYTEST ARGS]

Each run starts from a quiet moment (--pause seconds after the previous one: the kernel frees a run's network
namespaces after it ends). Prints each run's wall, user and system seconds, the medians and their ratio.

Target (issue 31): the default under 30 s on this 2-core machine (126 episodes, 45 of them route).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(args: list[str]) -> tuple[float, float, float, str]:
    """(wall, user, sys) seconds of one pytest run with its children, and its last line."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0:
        sys.exit(f"pytest {' '.join(args)} exited {done.returncode}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return wall, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime, lines[-1] if lines else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pause", type=float, default=20.0, help="seconds of quiet before each run")
    parser.add_argument("--suites", default="suites")
    parser.add_argument("extra", nargs="*", help="more pytest arguments (after --)")
    options = parser.parse_args()
    command = [options.suites, "--agent=builtin:oracle", "-n", "auto", *options.extra]
    print(f"cores: {os.cpu_count()}; command: pytest {' '.join(command)}")
    medians = {}
    for label, more in (("default", []), ("--in-flight 1", ["--in-flight", "1"])):
        walls = []
        for run in range(options.runs):
            time.sleep(options.pause)
            wall, user, system, last = timed(command + more)
            walls.append(wall)
            print(f"{label}: run {run + 1}: {wall:.1f} s wall, {user:.1f} s user, {system:.1f} s sys ({last})")
        medians[label] = statistics.median(walls)
        print(f"{label}: median {medians[label]:.1f} s over {options.runs} runs")
    print(f"--in-flight 1 / default = {medians['--in-flight 1'] / medians['default']:.2f}x")


if __name__ == "__main__":
    main()
