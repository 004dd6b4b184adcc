"""A Harbor task's time to verdict (`netarena kube task`): the whole run and each phase, with an agent that sends the
task's own solution as its command, and the agent phase of `true` (what a phase's box costs by itself) (issue 43:
the agent and the verifier each run in a sealed box).

    python benchmarks/harbor_phases.py [--runs 5] [--tasks release-bot-scale,checkout-service-port]

The same script on an older checkout (PYTHONPATH=that checkout) gives the figures before the boxes. Tasks that probe
with `kubectl exec` are skipped where pods cannot run.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

TASKS = Path(__file__).resolve().parents[1] / "fixtures" / "harbor"
LIVE = {"storefront-api-policy", "checkout-service-port", "payments-dns-egress"}


def _median(samples: list[float]) -> str:
    return f"{statistics.median(samples):.2f} s"


def measure(name: str, runs: int) -> None:
    from pytest_netarena.cluster import live_support
    from pytest_netarena.kube.cli import pods_starter
    from pytest_netarena.kube.harbor import run_task

    if name in LIVE and not live_support().ok:
        print(f"{name}: skipped (needs pods that run: {live_support().reason})")
        return
    agent = (TASKS / name / "solution" / "solve.sh").read_text()
    totals: list[float] = []
    phases: dict[str, list[float]] = {}
    rewards = []
    for _ in range(runs):
        started = time.perf_counter()
        result = run_task(TASKS / name, agent=agent, pods=pods_starter("auto"))
        totals.append(time.perf_counter() - started)
        rewards.append(result.reward)
        for phase in result.phases:
            phases.setdefault(phase.name, []).append(phase.seconds)
    parts = ", ".join(f"{phase} {_median(seconds)}" for phase, seconds in phases.items())
    print(f"{name}: time to verdict median {_median(totals)} over {runs} runs ({parts}); "
          f"rewards {sorted(set(rewards), key=str)}")


def empty_phase(runs: int) -> None:
    from pytest_netarena.kube.harbor import run_task

    seconds = [next(p.seconds for p in run_task(TASKS / "release-bot-scale", agent="true").phases if p.name == "agent")
               for _ in range(runs)]
    print(f"an agent phase of `true`: median {statistics.median(seconds) * 1000:.0f} ms over {runs} runs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tasks", default="release-bot-scale,checkout-service-port")
    args = parser.parse_args()
    empty_phase(args.runs)
    for name in args.tasks.split(","):
        measure(name.strip(), args.runs)


if __name__ == "__main__":
    main()
