"""Harbor-layout tasks on the embedded cluster (issue 46): how soon a task's cluster is ready, and how long a whole
task takes (bootstrap, the verifier on the broken state, the solution, the verifier again), per task and at the median.

    python benchmarks/harbor.py [--tasks DIR] [--limit N] [--ready-runs 10] [--skip-broken]

DIR holds task folders (default: fixtures/harbor, ours; a public suite written for k3s runs the same way).
"Cluster ready" is a task's cluster from nothing to answering with its system pods Running and Ready: the
API server over TLS with the nodes and k3s profile its docker-compose.yaml declares, the live cluster
(node namespace, DNS, the API's listener for pods), coredns and k3s's bundled pods. The broken state's
verifier waits on its own timeouts (a rollout that never completes is what it checks), so it is shown
apart; --skip-broken leaves it out.

Targets: a task's cluster ready in under 2 s at the median; a solved task in seconds.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "harbor"


def _tasks(folder: Path, limit: int | None) -> list[Path]:
    found = sorted(p for p in folder.iterdir() if (p / "task.toml").is_file())
    return found[:limit] if limit else found


def cluster_ready(tasks: list[Path], runs: int) -> None:
    from pytest_netarena.cluster import LiveCluster, live_support
    from pytest_netarena.kube import EmbeddedAPIServer
    from pytest_netarena.kube.k3s import from_compose

    if not live_support().ok:
        print(f"cluster ready: not measured, pods cannot run here: {live_support().reason}")
        return
    samples = []
    for index in range(runs):
        nodes, profile = from_compose(tasks[index % len(tasks)]) or (None, None)
        started = time.perf_counter()
        server = EmbeddedAPIServer(tls=True, nodes=nodes, profile=profile).start()
        server.wait_ready()
        live = LiveCluster(server).start()
        live.wait_ready(60)
        samples.append(time.perf_counter() - started)
        live.stop()
        server.stop()
    ordered = sorted(samples)
    print(f"cluster ready (API server, nodes, live cluster, system pods; target < 2 s): median "
          f"{statistics.median(ordered) * 1000:.0f} ms, p90 {ordered[int(len(ordered) * 0.9)] * 1000:.0f} ms "
          f"({len(ordered)} runs)")


def whole_tasks(tasks: list[Path], skip_broken: bool) -> None:
    from pytest_netarena.kube.cli import pods_starter
    from pytest_netarena.kube.harbor import run_task

    pods = pods_starter("auto")
    solved, broken, passed = [], [], 0
    print(f"{'task':36} {'broken (bootstrap+verifier)':>28} {'solved (bootstrap+solution+verifier)':>38}  result")
    for task in tasks:
        broken_s, broken_reward = None, None
        if not skip_broken:
            before = run_task(task, pods=pods)
            broken_s, broken_reward = sum(p.seconds for p in before.phases), before.reward
            broken.append(broken_s)
        after = run_task(task, solution=True, pods=pods)
        seconds = sum(p.seconds for p in after.phases)
        solved.append(seconds)
        phases = " + ".join(f"{p.seconds:.1f}" for p in after.phases)
        ok = after.reward == 1 and (skip_broken or broken_reward == 0)
        passed += ok
        shown = "-" if broken_s is None else f"{broken_s:.1f} s"
        print(f"{task.name:36} {shown:>28} {f'{phases} = {seconds:.1f} s':>38}  {'pass' if ok else 'FAIL'}")
    print(f"solved task (bootstrap, solution, verifier): median {statistics.median(solved):.1f} s over {len(solved)} "
          f"tasks")
    if broken:
        print(f"broken state (bootstrap, verifier): median {statistics.median(broken):.1f} s")
    print(f"passed: {passed}/{len(tasks)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, default=FIXTURES)
    parser.add_argument("--limit", type=int, default=None, help="the first N tasks only")
    parser.add_argument("--ready-runs", type=int, default=10)
    parser.add_argument("--skip-broken", action="store_true", help="time the solved runs only")
    args = parser.parse_args()
    tasks = _tasks(args.tasks, args.limit)
    cluster_ready(tasks, args.ready_runs)
    whole_tasks(tasks, args.skip_broken)


if __name__ == "__main__":
    main()
