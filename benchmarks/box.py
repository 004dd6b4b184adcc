"""The cost per action of a box's kernel filter and control group: the same command in boxes with and without each part.

    python benchmarks/box.py [--runs 200]

Each round runs every variant once, in an order shuffled per round (so load on the machine, and the kernel's
clean-up of the previous box's namespaces, falls on all alike): no box (`--unsandboxed`),
a box without the filter and without a group, with the filter only, with the group only, and the box as agents
get it (both). Two commands: `true` (what starting a box costs) and a shell starting 20 processes (each a clone
the filter reads, and an exec). Prints the median and p90 of each, and the parts' costs as differences of medians;
on a busy machine those differences are within the noise of the boxes' own times, so the group's own work (making
it and writing its limits, removing it after the box) is timed apart too.

The script runs on checkouts without the filter and the group too (only "no box" and "box" are timed there), so
"before" is the same command on the older checkout. Needs boxes (as root: the group needs root).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

COMMANDS = {"true": ["true"], "20 processes": ["bash", "-c", "for i in $(seq 20); do /usr/bin/true; done"]}


def _spec():
    from pytest_netarena import sandbox
    from pytest_netarena.sandbox import views

    return sandbox.BoxSpec(programs=views.programs(views.SHELL_TOOLS), limits=sandbox.Limits(wall_s=60))


def _variants() -> dict:
    """{name: run(argv) -> None}."""
    from pytest_netarena import sandbox
    from pytest_netarena.core.process import run_bounded
    from pytest_netarena.sandbox import views

    spec = _spec()

    def check(done) -> None:
        if done.returncode != 0:
            raise SystemExit(f"a box failed: {done}")

    variants = {"no box": lambda argv: check(sandbox.run_unboxed(spec, argv)),
                "box": lambda argv: check(sandbox.run(spec, argv))}
    if not hasattr(sandbox, "prepare"):
        return variants

    def part(cgroup: bool, kernel_filter: bool):
        def run(argv) -> None:
            launch = sandbox.prepare(spec, argv, cgroup=cgroup, kernel_filter=kernel_filter)
            try:
                check(run_bounded(launch.argv, 60, env={"PATH": views.HOST_PATH}, limit=1 << 16, pass_fds=launch.fds))
            finally:
                launch.ended()
        return run

    return {"no box": variants["no box"], "box, neither": part(False, False), "filter only": part(False, True),
            "group only": part(True, False), "box (filter and group)": variants["box"]}


def _group_work(runs: int) -> None:
    """The control group's own work per box, timed without a box: make it (folders and limits), remove it."""
    from pytest_netarena.sandbox import cgroups

    if cgroups.available():
        return
    made, removed = [], []
    for _ in range(runs):
        started = time.perf_counter()
        group = cgroups.make(512 << 20, 64, 1.0)
        made.append(time.perf_counter() - started)
        started = time.perf_counter()
        group.remove()
        removed.append(time.perf_counter() - started)
    print(f"[group's own work] make: {_ms(made)}; remove: {_ms(removed)}")


def _ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    return f"median {statistics.median(ordered) * 1000:.2f} ms, p90 {ordered[int(len(ordered) * 0.9)] * 1000:.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="rounds (each runs every variant once per command)")
    options = parser.parse_args()
    from pytest_netarena.sandbox import support

    found = support()
    if not found.ok:
        raise SystemExit(f"no boxes here: {found.reason}")
    variants = _variants()
    print(f"boxes made {'as root' if found.root else 'without root'}; {options.runs} rounds")
    try:
        from pytest_netarena.sandbox import cgroups

        print(f"control groups: {cgroups.available() or 'one per box'}")
    except ImportError:
        print("control groups: none (this checkout makes none)")
    for label, argv in COMMANDS.items():
        for run in variants.values():
            run(argv)  # the first box of a kind makes its views
        times: dict[str, list[float]] = {name: [] for name in variants}
        order = list(variants)
        shuffle = random.Random(options.runs).shuffle
        for _ in range(options.runs):
            shuffle(order)
            for name in order:
                started = time.perf_counter()
                variants[name](argv)
                times[name].append(time.perf_counter() - started)
        print(f"[{label}]")
        for name, samples in times.items():
            print(f"  {name}: {_ms(samples)}")
        median = {name: statistics.median(samples) * 1000 for name, samples in times.items()}
        whole = median.get("box (filter and group)", median.get("box", 0.0))
        print(f"  box overhead: {whole - median['no box']:.2f} ms ({whole / median['no box']:.2f}x no box)")
        if "filter only" in median:
            print(f"  filter: {median['filter only'] - median['box, neither']:.2f} ms; "
                  f"group: {median['group only'] - median['box, neither']:.2f} ms; "
                  f"both: {median['box (filter and group)'] - median['box, neither']:.2f} ms "
                  f"({median['box (filter and group)'] / median['box, neither']:.2f}x the box without them)")
    if "filter only" in variants:
        _group_work(options.runs)


if __name__ == "__main__":
    main()
