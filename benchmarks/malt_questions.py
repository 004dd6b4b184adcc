"""How long drawing (and verifying) one native MALT question takes, per level, on the real topology.

    python benchmarks/malt_questions.py [--topology PATH|synthetic[:NODES]] [--questions N]

Uses the real topology (../shared/data/malt/malt-graph.textproto.txt beside the checkout, or
$NETARENA_MALT_TOPOLOGY) when present, otherwise the synthetic one of the same size (and says so).
A draw is what a run does per query: `APP.draw_params` with a seeded Chooser, the topology's index
already built (it is built once per process, and timed apart).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

REAL = Path(
    os.environ.get("NETARENA_MALT_TOPOLOGY")
    or Path(__file__).resolve().parents[2] / "shared" / "data" / "malt" / "malt-graph.textproto.txt"
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topology", default=str(REAL) if REAL.exists() else "synthetic")
    parser.add_argument("--questions", type=int, default=200, help="questions drawn per category (default 200)")
    args = parser.parse_args()

    from pytest_netarena.apps.malt import APP
    from pytest_netarena.apps.malt.app import topology_index
    from pytest_netarena.apps.malt.topology import load_topology
    from pytest_netarena.core.app import RunOptions
    from pytest_netarena.core.catalogue import RandomChooser

    synthetic = args.topology.startswith("synthetic")
    print(f"topology: {args.topology}" + ("  (synthetic)" if synthetic else ""))
    options = RunOptions(seed=1, extra={"malt_topology": args.topology})
    started = time.perf_counter()
    load_topology(args.topology)
    load_s = time.perf_counter() - started
    started = time.perf_counter()
    topology_index(options)
    index_s = time.perf_counter() - started
    print(f"topology load {load_s * 1000:.0f} ms; index of the topology (once per process) {index_s * 1000:.1f} ms")
    by_level: dict[int, list[float]] = {}
    questions = []
    for category in APP.categories(options):
        times = by_level.setdefault(category.level, [])
        for seed in range(args.questions):
            started = time.perf_counter()
            questions.append(APP.draw_params(category, RandomChooser(seed), options)["question"])
            times.append(time.perf_counter() - started)
    every = sorted(t for times in by_level.values() for t in times)
    for level, times in sorted(by_level.items()):
        times.sort()
        print(f"level {level}: {len(times)} questions, draw and verify: median {statistics.median(times) * 1000:.2f} ms, "
              f"p95 {times[int(len(times) * 0.95) - 1 if len(times) > 1 else 0] * 1000:.2f} ms, "
              f"max {times[-1] * 1000:.2f} ms")
    print(f"all levels: {len(every)} questions, median {statistics.median(every) * 1000:.2f} ms, "
          f"mean {statistics.fmean(every) * 1000:.2f} ms per question")
    try:
        from pytest_netarena.apps.malt.questions.wording import read_question
    except ImportError:  # the fixed sentences before issue 45 had no grammar to read them back with
        return 0
    reads = []
    for question in questions:
        started = time.perf_counter()
        read_question(question)
        reads.append(time.perf_counter() - started)
    print(f"reading each question back (the tests' check that it has one reading): median "
          f"{statistics.median(reads) * 1000:.2f} ms, mean {statistics.fmean(reads) * 1000:.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
