"""LLM-bound runs against concurrency: wall time against the ideal, and the harness's own CPU per step.

    python benchmarks/scale.py [--delay 1.0] [--steps 3] [--runs 40:8,40:16,40:32,400:32] [--workers 0,2]
                               [--baseline]

Each run is `pytest suites/k8s` (embedded API server, real kubectl in a sealed box per step) with
the model agent `openai:gpt-4o` talking to the project's OpenAI stub server, which answers every
request with a read-only kubectl command after `--delay` seconds; episodes last `--steps` steps.
EPISODES:C runs EPISODES episodes at concurrency C, once per --workers entry: as
`-n WORKERS --in-flight C/WORKERS`, or for 0 as one pytest process with `--in-flight C` (and, with
--baseline, as plain `-n C`, one episode per worker, for comparison).

Printed per run: wall time; the ideal, EPISODES x steps x delay / C (the issue's figure), and the
schedulable ideal, ceil(EPISODES / C) x steps x delay (an episode's steps follow each other, so
no schedule beats it); their ratios; the CPU the harness used per agent step (the machine's busy
time minus this process, so boxed kubectl processes count: measure on an otherwise idle
machine); `tree s`, the CPU of the processes the run waited for (pytest and its workers: the
figure to compare on a shared machine, where other work does not raise it), start-up (until the first model request) and tail (after the last reply).
Target (issue 14): within 1.5x of the ideal at concurrency 8, 16 and 32 on a 2-core machine.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def write_corpus(path: Path, episodes: int) -> None:
    from pytest_netarena.apps import get_app
    from pytest_netarena.core.app import RunOptions
    from pytest_netarena.run.corpus import save_corpus

    app = get_app("k8s")
    per_category = -(-episodes // len(app.categories(RunOptions())))
    save_corpus(path, app.generate(RunOptions(seed=1, queries=per_category))[:episodes])


def machine_busy() -> float:
    """CPU seconds the whole machine has spent busy (every process, boxed ones included)."""
    with open("/proc/stat") as handle:
        fields = [int(value) for value in handle.readline().split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")  # minus idle and iowait


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def harness_cpu() -> float:
    """Busy CPU of the machine minus this process (the stub server): boxed kubectl processes are not
    our waited-for children (bubblewrap's init reaps them), so RUSAGE_CHILDREN would miss them."""
    return machine_busy() - own_cpu()


def tree_cpu() -> float:
    """CPU seconds of the processes this one waited for (pytest, its xdist workers, the boxes they waited for):
    unlike harness_cpu, not raised by other work on a shared machine."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(server_url: str, corpus: Path, steps: int, parallel: list[str], reports: Path) -> tuple[float, float, float, float, str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "OPENAI_API_KEY": "stub", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    argv = [sys.executable, "-m", "pytest", "suites/k8s", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
            "--agent=openai:gpt-4o", f"--llm-api-base={server_url}/v1", f"--corpus={corpus}", f"--max-steps={steps}",
            f"--reports-dir={reports}", "--no-plots", *parallel]
    cpu, tree, started = harness_cpu(), tree_cpu(), time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    wall, cpu, tree = time.perf_counter() - started, harness_cpu() - cpu, tree_cpu() - tree
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-300:]
    return started, wall, cpu, tree, last


def kubectl_cpu_ms(calls: int = 20) -> float:
    """CPU of one agent command (a real kubectl process against the embedded server), for comparison."""
    from pytest_netarena.apps import get_app
    from pytest_netarena.core.app import RunOptions

    from pytest_netarena.apps.k8s.actions import KUBECTL_ENV

    go = {name: value for name, value in KUBECTL_ENV.items() if name.startswith("GO")}  # as in the boxes
    app = get_app("k8s")
    options = RunOptions(seed=1, queries=1)
    env = app.make_environment(options)
    try:
        env.reset(app.generate(options)[0])
        def children() -> float:
            usage = resource.getrusage(resource.RUSAGE_CHILDREN)
            return usage.ru_utime + usage.ru_stime

        before = children()
        for _ in range(calls):
            subprocess.run([env.backend.kubectl, "get", "networkpolicy"], env={**env.backend.kubectl_env(), **go},
                           capture_output=True, check=False)
        return 1000 * (children() - before) / calls
    finally:
        env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--delay", type=float, default=1.0, help="seconds the stub model takes per reply")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--runs", default="40:8,40:16,40:32,400:32", help="EPISODES:CONCURRENCY,...")
    parser.add_argument("--workers", default="0,2",
                        help="ways to spread the concurrency: xdist workers, each with concurrency/workers episodes "
                        "in flight; 0 is one pytest process without xdist (default: 0,2, both)")
    parser.add_argument("--baseline", action="store_true", help="also run each as -n C (one episode per worker)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from pytest_netarena.testing.openai_server import OpenAIStubServer, StubReply

    print(f"{os.cpu_count()} cores; stub model answers after {args.delay:g} s; {args.steps} steps per episode")
    print(f"{'episodes':>8} {'conc':>4} {'how':<22} {'wall s':>7} {'ideal':>6} {'x':>5} {'sched':>6} {'x':>5}"
          f" {'cpu s':>6} {'cpu/step ms':>11} {'tree s':>6} {'first s':>7} {'tail s':>6}  pytest")
    measured: dict[tuple[int, str], list[tuple[int, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp, \
            OpenAIStubServer(lambda request: StubReply("kubectl get networkpolicy", delay_s=args.delay)) as server:
        for spec in args.runs.split(","):
            episodes, concurrency = (int(part) for part in spec.split(":"))
            corpus = Path(tmp) / f"corpus-{episodes}.jsonl"
            if not corpus.exists():
                write_corpus(corpus, episodes)
            ways: list[tuple[str, list[str]]] = []
            for workers in (min(int(text), concurrency) for text in args.workers.split(",")):
                if workers:
                    ways.append((f"-n {workers} --in-flight {concurrency // workers}",
                                 ["-n", str(workers), f"--in-flight={concurrency // workers}"]))
                else:  # one pytest process, no xdist
                    ways.append((f"--in-flight {concurrency}", [f"--in-flight={concurrency}"]))
            if args.baseline:
                ways.append((f"-n {concurrency}", ["-n", str(concurrency)]))
            for label, parallel in ways:
                requests = len(server.requests)
                started, wall, cpu, tree, last = run(server.url, corpus, args.steps, parallel, Path(tmp) / "reports")
                served = server.requests[requests:]
                steps = len(served)
                # when the first model request came (start-up: interpreters, plugin, first environments)
                # and how long the run went on after the last reply (the last steps, reports, shutting down)
                origin = time.time() - time.perf_counter() + started
                first = min(r.received_at for r in served) - origin if served else float("nan")
                tail = wall - (max(r.received_at for r in served) - origin + args.delay) if served else float("nan")
                ideal = episodes * args.steps * args.delay / concurrency
                schedulable = math.ceil(episodes / concurrency) * args.steps * args.delay
                print(f"{episodes:>8} {concurrency:>4} {label:<22} {wall:>7.1f} {ideal:>6.1f} {wall / ideal:>5.2f}"
                      f" {schedulable:>6.1f} {wall / schedulable:>5.2f} {cpu:>6.1f} {1000 * cpu / max(1, steps):>11.1f} {tree:>6.1f}"
                      f" {first:>7.1f} {tail:>6.1f}"
                      f"  {last}", flush=True)
                measured.setdefault((concurrency, label), []).append((steps, cpu))
    # CPU per step without the start-up: two runs at the same concurrency and of different sizes
    for (concurrency, label), runs in measured.items():
        if len(runs) > 1:
            (small_steps, small_cpu), (big_steps, big_cpu) = min(runs), max(runs)
            if big_steps > small_steps:
                print(f"harness CPU per extra step at concurrency {concurrency} ({label}): "
                      f"{1000 * (big_cpu - small_cpu) / (big_steps - small_steps):.1f} ms")
    print(f"one agent command alone (a kubectl process, part of every step): {kubectl_cpu_ms():.1f} ms of CPU")


if __name__ == "__main__":
    main()
