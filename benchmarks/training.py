"""Expert trajectories generated per minute per app on this machine, with one job and with several.

    python benchmarks/training.py [--episodes N] [--jobs J] [--app APP ...] [--malt-topology SPEC] [--random-steps N]

Each figure is `netarena generate --agent builtin:expert` end to end (query generation, environment
start, episodes, run folder and report), so it is what a user producing imitation data gets. Also
prints Gymnasium random-policy steps per second (refused replies: the environment's own overhead).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_netarena.training.generate import GenerateConfig, generate  # noqa: E402


def trajectories_per_minute(app: str, episodes: int, jobs: int, extra: dict) -> tuple[float, int, int]:
    """(per minute, episodes written, resolved) of one generate call."""
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        run_dir, _ = generate(GenerateConfig(episodes=episodes, apps=(app,), seed=1, jobs=jobs, extra=extra),
                           Path(folder), progress=lambda line: None)
        elapsed = time.perf_counter() - started
        path = run_dir / "episodes.jsonl"
        lines = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return (60.0 * len(lines) / elapsed if lines else 0.0), len(lines), sum(e["outcome"] == "resolved" for e in lines)


def random_steps_per_second(app: str, steps: int, extra: dict) -> float:
    import gymnasium

    import pytest_netarena.training  # noqa: F401

    env = gymnasium.make(f"netarena/{ {'k8s': 'K8s', 'malt': 'Malt', 'route': 'Route'}[app] }-v0",
                         app_options={k.replace("_", "-"): v for k, v in extra.items()})
    env.reset(seed=0)
    env.action_space.seed(0)
    started = time.perf_counter()
    for _ in range(steps):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    elapsed = time.perf_counter() - started
    env.close()
    return steps / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=30, help="episodes per app and setting (default 30)")
    parser.add_argument("--jobs", type=int, default=2, help="jobs of the parallel setting (default 2)")
    parser.add_argument("--app", action="append", default=[])
    parser.add_argument("--malt-topology", default=None, help="default: the real-size synthetic topology")
    parser.add_argument("--random-steps", type=int, default=200, help="steps of the random-policy figure (default 200)")
    args = parser.parse_args()
    extra = {"malt_topology": args.malt_topology} if args.malt_topology else {}
    print(f"expert trajectories per minute ({args.episodes} episodes per app and setting)")
    print(f"{'app':<7}{'1 job':>12}{f'{args.jobs} jobs':>12}{'ratio':>8}{'resolved':>10}{'random steps/s':>16}")
    for app in args.app or ["k8s", "malt", "route"]:
        one, written, resolved = trajectories_per_minute(app, args.episodes, 1, extra)
        if not written:
            print(f"{app:<7} skipped: the app cannot run here")
            continue
        many, _, _ = trajectories_per_minute(app, args.episodes, args.jobs, extra)
        try:
            steps = f"{random_steps_per_second(app, args.random_steps, extra):.0f}"
        except ImportError:
            steps = "n/a (no gymnasium)"
        print(f"{app:<7}{one:>12.0f}{many:>12.0f}{many / one:>8.2f}{f'{resolved}/{written}':>10}{steps:>16}")


if __name__ == "__main__":
    main()
