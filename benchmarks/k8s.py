"""K8s suite speed: episode set-up, per-step check, oracle episodes per minute (Online Boutique and synthetic:200),
and the cost of the sealed box per agent step (with and without it).

    python benchmarks/k8s.py [--apps online-boutique synthetic:200] [--episodes 30] [--workers 2]
    python benchmarks/k8s.py --box-only [--steps 60]
    python benchmarks/k8s.py --writes-only [--apps ...] [--steps 60]
    python benchmarks/k8s.py --write-cost [--apps ...] [--writes 400]

Per-write safety (issue 22): the cost per k8s step of judging every write, not only the step's end
(`--writes-only`, or the first part of a full run): whole steps of a fixing command with the
per-write checks on and off, and the check time the step reports.

Judging each write on the state it left (issue 29, `--write-cost`): the time one NetworkPolicy write
takes with the per-write check watching and without, and (where the backend lists the written state
inside the store lock) how long that listing holds the lock. The script runs unchanged on older
code, so "before" is the same command on the older checkout.

Target (issue 10): the box adds under 20 ms median per k8s step on this machine.

Targets (issue 4): set-up < 100 ms; per-step check < 10 ms on Online Boutique (NetArena: 92 kubectl
exec probes plus a 4 s sleep per step). Episodes per minute use one embedded server per worker
process, as `pytest -n WORKERS` does.
"""

from __future__ import annotations

import argparse
import statistics
import time
from concurrent.futures import ProcessPoolExecutor


def _median_ms(samples: list[float]) -> str:
    return f"median {statistics.median(samples) * 1000:.2f} ms, p90 {sorted(samples)[int(len(samples) * 0.9)] * 1000:.2f} ms"


def _queries(spec: str, episodes: int, seed: int):
    from pytest_netarena.apps.k8s import APP
    from pytest_netarena.core.app import RunOptions

    per_category = max(1, -(-episodes // 15))
    options = RunOptions(seed=seed, queries=per_category, extra={"k8s_app": spec})
    return options, APP.generate(options)[:episodes]


def measure_steps(spec: str, episodes: int) -> None:
    from pytest_netarena.apps.k8s import APP

    started = time.perf_counter()
    options, queries = _queries(spec, episodes, seed=1)
    generate_s = time.perf_counter() - started
    started = time.perf_counter()
    env = APP.make_environment(options)
    prepare_s = time.perf_counter() - started
    try:
        setups, checks, noop_checks = [], [], []
        backend = env.backend
        for query in queries:
            started = time.perf_counter()
            env.reset(query)
            setups.append(time.perf_counter() - started)
            # A policy write as an agent's patch would make it, then the check the step runs.
            healthy = env.app.healthy_policies()
            name = query.params["faults"][0]["policy"]
            backend.server.apply_object({**healthy[name], "metadata": {**healthy[name]["metadata"],
                                                                       "namespace": backend.namespace}})
            started = time.perf_counter()
            backend.observe()
            checks.append(time.perf_counter() - started)
            started = time.perf_counter()
            backend.observe()  # nothing changed (a read-only command)
            noop_checks.append(time.perf_counter() - started)
    finally:
        env.close()
    flows = len(env.intent)
    print(f"[{spec}] {len(env.app.workloads)} workloads, {flows} flows in the matrix")
    print(f"  query generation: {generate_s / len(queries) * 1000:.1f} ms per query; worker start-up {prepare_s:.2f} s")
    print(f"  episode set-up (reset to snapshot + inject + verify): {_median_ms(setups)}")
    print(f"  per-step check after a policy change: {_median_ms(checks)}")
    print(f"  per-step check after a read-only command: {_median_ms(noop_checks)}")


def _run_oracles(args: tuple[str, list[int]]) -> tuple[int, int, float]:
    from pytest_netarena.agents.prompting import build_system_prompt
    from pytest_netarena.apps.k8s import APP
    from pytest_netarena.core.episode import EpisodeConfig, run_episode
    from pytest_netarena.core.types import Outcome, Task, new_episode_id

    spec, indices = args
    options, queries = _queries(spec, max(indices) + 1, seed=2)
    env = APP.make_environment(options)
    resolved = 0
    started = time.perf_counter()
    try:
        for index in indices:
            query = queries[index]
            task = Task("k8s", new_episode_id(), build_system_prompt(APP.prompt(), "zero-shot"), "zero-shot", 10)
            result = run_episode(env, APP.builtin_agent("oracle", query, env), query, task, EpisodeConfig(10), "oracle")
            resolved += result.outcome is Outcome.RESOLVED
    finally:
        env.close()
    return resolved, len(indices), time.perf_counter() - started


def measure_throughput(spec: str, episodes: int, workers: int) -> None:
    chunks = [(spec, list(range(worker, episodes, workers))) for worker in range(workers)]
    started = time.perf_counter()
    with ProcessPoolExecutor(workers) as pool:
        results = list(pool.map(_run_oracles, chunks))
    wall = time.perf_counter() - started
    resolved = sum(r[0] for r in results)
    total = sum(r[1] for r in results)
    episode_wall = sum(r[2] for r in results) / total
    print(f"  oracle: {resolved}/{total} resolved; {total / wall * 60:.0f} episodes/min on {workers} workers "
          f"(wall {wall:.1f} s incl. start-up; {episode_wall:.2f} s per episode: kubectl processes and API-server work)")


BOX_STEP = "```bash\nkubectl get networkpolicy adservice -o name\n```"


def _step_times(sandboxed: bool, steps: int, extra_env: dict[str, str] | None = None) -> list[float]:
    """Wall time of whole environment steps (read the reply, run the action, check) for one read-only command."""
    from pytest_netarena.apps.k8s import APP
    from pytest_netarena.apps.k8s import actions
    from pytest_netarena.core.app import RunOptions

    options, queries = _queries("online-boutique", 1, seed=3)
    env = APP.make_environment(RunOptions(seed=3, queries=1, sandboxed=sandboxed))
    saved = dict(actions.KUBECTL_ENV)
    if extra_env is not None:
        actions.KUBECTL_ENV.clear()
        actions.KUBECTL_ENV.update(extra_env)
    try:
        env.reset(queries[0])
        env.step(BOX_STEP)  # first use: the program view is made and cached
        samples = []
        for _ in range(steps):
            started = time.perf_counter()
            outcome = env.step(BOX_STEP)
            samples.append(time.perf_counter() - started)
            if outcome.output.strip() != "networkpolicy.networking.k8s.io/adservice":
                raise SystemExit(f"unexpected output {outcome.output!r} (sandboxed={sandboxed}, env={extra_env})")
        return samples
    finally:
        actions.KUBECTL_ENV.clear()
        actions.KUBECTL_ENV.update(saved)
        env.close()


def measure_box(steps: int) -> None:
    from pytest_netarena.apps.k8s import actions

    go_default = {name: value for name, value in actions.KUBECTL_ENV.items() if not name.startswith("GO")}
    boxed = _step_times(True, steps)
    unboxed = _step_times(False, steps)
    boxed_default = _step_times(True, steps, go_default)
    unboxed_default = _step_times(False, steps, go_default)
    median = statistics.median
    print(f"[box] per k8s step (`kubectl get networkpolicy adservice -o name`, whole env.step, {steps} steps each):")
    print(f"  sealed box:            {_median_ms(boxed)}")
    print(f"  no box (--unsandboxed): {_median_ms(unboxed)}")
    print(f"  box overhead (median): {(median(boxed) - median(unboxed)) * 1000:.1f} ms "
          f"(ratio {median(boxed) / median(unboxed):.2f}x; target < 20 ms)")
    print(f"  with Go's defaults (ours: GOMAXPROCS=1, GOGC=off, GOMEMLIMIT=64MiB): box {_median_ms(boxed_default)}; "
          f"no box {_median_ms(unboxed_default)}")


def _fix_steps(spec: str, steps: int, per_write: bool) -> tuple[list[float], list[float], int]:
    """Whole env.step times and reported check times of fixing steps: a JSON patch (one write) and
    `kubectl get ... && kubectl apply -f -` (a read and a write), alternately; and the writes seen."""
    import json

    from pytest_netarena.apps.k8s import APP

    options, queries = _queries(spec, steps, seed=4)
    env = APP.make_environment(options)
    env.per_write_checks = per_write
    walls, checks = [], []
    try:
        for index in range(steps):
            query = queries[index % len(queries)]
            env.reset(query)
            name = query.params["faults"][0]["policy"]
            policy = env.app.healthy_policies()[name]
            if index % 2:
                reply = (f"kubectl get networkpolicy {name} -o name && kubectl apply -f - <<'EOF'\n"
                         f"{json.dumps(policy)}\nEOF")
            else:
                body = json.dumps([{"op": "replace", "path": "/spec", "value": policy["spec"]}])
                reply = f"kubectl patch networkpolicy {name} --type=json -p '{body}'"
            started = time.perf_counter()
            outcome = env.step(f"```bash\n{reply}\n```")
            walls.append(time.perf_counter() - started)
            checks.append(outcome.check_s)
            if outcome.refused:
                raise SystemExit(f"refused: {outcome.output}")
    finally:
        env.close()
    return walls, checks, len(env.intent)


def measure_writes(spec: str, steps: int) -> None:
    median = statistics.median
    off_wall, off_check, flows = _fix_steps(spec, steps, per_write=False)
    on_wall, on_check, _ = _fix_steps(spec, steps, per_write=True)
    print(f"[writes {spec}] {flows} flows; per k8s step that writes one policy (whole env.step, {steps} steps each):")
    print(f"  per-write checks off (step ends only): step {_median_ms(off_wall)}; check {_median_ms(off_check)}")
    print(f"  per-write checks on:                   step {_median_ms(on_wall)}; check {_median_ms(on_check)}")
    print(f"  cost of per-write checks (median): check {(median(on_check) - median(off_check)) * 1000:+.2f} ms, "
          f"whole step {(median(on_wall) - median(off_wall)) * 1000:+.1f} ms")


def _write_times(spec: str, writes: int, watched: bool) -> tuple[list[float], int]:
    """Seconds per NetworkPolicy write through the server (the fault's policy, healthy and faulted in turn), with
    the per-write check watching or not; and the writes the check judged."""
    from contextlib import nullcontext

    from pytest_netarena.apps.k8s.writes import WriteCheck

    env, query = _one_episode(spec)
    try:
        backend, namespace = env.backend, env.backend.namespace
        name = query.params["faults"][0]["policy"]
        healthy = env.app.healthy_policies()[name]
        faulted = backend.server.get_object("NetworkPolicy", namespace, name)
        versions = [{**policy, "metadata": {"name": name, "namespace": namespace}} for policy in (healthy, faulted)]
        check = WriteCheck(env.intent, backend.observe().matrix)
        times = []
        with backend.watching_writes(check) if watched else nullcontext():
            for index in range(writes):
                started = time.perf_counter()
                backend.server.apply_object(versions[index % 2])
                times.append(time.perf_counter() - started)
        return times, check.writes
    finally:
        env.close()


def _one_episode(spec: str):
    """An environment reset to one episode of spec, and its query."""
    from pytest_netarena.apps.k8s import APP

    options, queries = _queries(spec, 1, seed=5)
    env = APP.make_environment(options)
    env.reset(queries[0])
    return env, queries[0]


def _listing_s(spec: str, repeat: int = 2000) -> float | None:
    """Seconds the state's listing holds the store lock per write (None: this code lists no state there)."""
    env, _ = _one_episode(spec)
    try:
        listing = getattr(env.backend, "_matrix_objects", None)
        if listing is None:
            return None
        with env.backend.server.reading():
            started = time.perf_counter()
            for _ in range(repeat):
                listing()
            return (time.perf_counter() - started) / repeat
    finally:
        env.close()


def measure_write_cost(spec: str, writes: int) -> None:
    median = statistics.median
    plain, _ = _write_times(spec, writes, watched=False)
    judged, seen = _write_times(spec, writes, watched=True)
    held = _listing_s(spec)
    print(f"[write cost {spec}] one NetworkPolicy write through the server, {writes} writes each:")
    print(f"  without the per-write check: {_median_ms(plain)}")
    print(f"  judged by the per-write check: {_median_ms(judged)} ({seen} writes judged)")
    print(f"  cost of judging a write (median): {(median(judged) - median(plain)) * 1000:+.2f} ms")
    if held is not None:
        print(f"  of which the store lock is held to list the written state: {held * 1e6:.1f} us")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", nargs="+", default=["online-boutique", "synthetic:200"])
    parser.add_argument("--episodes", type=int, default=30)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=60, help="steps per variant of the box measurement")
    parser.add_argument("--box-only", action="store_true", help="only the box's cost per step")
    parser.add_argument("--writes-only", action="store_true",
                        help="only the cost per step of per-write safety checks (on vs off)")
    parser.add_argument("--write-cost", action="store_true",
                        help="only the cost per write of judging it on the state it left")
    parser.add_argument("--writes", type=int, default=400, help="writes per variant of --write-cost")
    args = parser.parse_args()
    if args.write_cost:
        for spec in args.apps:
            measure_write_cost(spec, args.writes)
        return
    if not args.box_only:
        for spec in args.apps:
            measure_writes(spec, args.steps)
    if args.writes_only:
        return
    measure_box(args.steps)
    if args.box_only:
        return
    for spec in args.apps:
        measure_steps(spec, args.episodes)
        measure_throughput(spec, args.episodes, args.workers)


if __name__ == "__main__":
    main()
