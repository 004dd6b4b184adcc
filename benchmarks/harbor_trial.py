"""A Harbor trial on our provider against our own runner, for the same exported k8s task: Harbor's oracle through
`harbor run -e pytest_netarena.harbor.provider:NetarenaEnvironment` (no Docker) and `netarena generate --agent
builtin:oracle` of the same query, each from its command's start to its verdict, interleaved; Harbor's own phases
from its trial result (the rest of its time is the `harbor` command's own start-up and job).

    python benchmarks/harbor_trial.py [--runs 3] [--seed 3]
    python benchmarks/harbor_trial.py --small        # one run of each

Harbor runs from its Python 3.12 venv (tests/harbor/harbor_venv.py makes it, cached outside the checkout).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "harbor"))
PROVIDER = "pytest_netarena.harbor.provider:NetarenaEnvironment"
PHASES = ("environment_setup", "agent_execution", "verifier")


def netarena(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest_netarena.cli", *args], capture_output=True, text=True,
                          timeout=900, cwd=str(ROOT))


def ours(seed: int, out: Path) -> tuple[float, str]:
    started = time.perf_counter()
    done = netarena("generate", "--app", "k8s", "--episodes", "1", "--levels", "1", "--seed", str(seed),
                    "--agent", "builtin:oracle", "--out", str(out))
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"netarena generate failed: {done.stderr[-2000:]}")
    (episodes,) = out.glob("*/episodes.jsonl")
    return seconds, json.loads(episodes.read_text().splitlines()[0])["outcome"]


def trial(harbor: Path, task: Path, jobs: Path) -> tuple[float, float | None, dict[str, float]]:
    from harbor_venv import harbor_env

    started = time.perf_counter()
    done = subprocess.run([str(harbor), "run", "-p", str(task), "-a", "oracle", "-e", PROVIDER, "-o", str(jobs),
                           "-n", "1", "-q", "-y"], capture_output=True, text=True, timeout=900, env=harbor_env(),
                          cwd=str(jobs))
    seconds = time.perf_counter() - started
    results = [json.loads(path.read_text()) for path in jobs.rglob("result.json")]
    trials = [result for result in results if "verifier_result" in result]
    if len(trials) != 1:
        raise SystemExit(f"harbor run left no trial result: {done.stdout[-2000:]} {done.stderr[-2000:]}")
    result = trials[0]
    reward = ((result.get("verifier_result") or {}).get("rewards") or {}).get("reward")
    phases = {name: _span(result.get(name) or {}) for name in PHASES}
    phases["whole trial"] = _span(result)  # Harbor's own start and end of the trial, without its command's start-up
    return seconds, reward, phases


def _span(phase: dict) -> float:
    if not phase.get("started_at") or not phase.get("finished_at"):
        return float("nan")
    parse = lambda text: datetime.fromisoformat(text.replace("Z", "+00:00"))  # noqa: E731
    return (parse(phase["finished_at"]) - parse(phase["started_at"])).total_seconds()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--small", action="store_true", help="one run of each")
    args = parser.parse_args()
    runs = 1 if args.small else args.runs

    from harbor_venv import harbor_venv

    from pytest_netarena.harbor.export import Selection, export_harbor

    harbor = harbor_venv() / "bin" / "harbor"
    with tempfile.TemporaryDirectory(prefix="harbor-trial-") as scratch:
        tmp = Path(scratch)
        done = netarena("generate", "--app", "k8s", "--episodes", "1", "--levels", "1", "--seed", str(args.seed),
                        "--out", str(tmp / "runs"))
        if done.returncode != 0:
            raise SystemExit(f"netarena generate failed: {done.stderr[-2000:]}")
        (name,) = export_harbor(sorted((tmp / "runs").iterdir()), tmp / "dataset", Selection(apps=("k8s",)))
        task = tmp / "dataset" / name
        own, harbors, rewards, outcomes = [], [], [], []
        phases: dict[str, list[float]] = {phase: [] for phase in (*PHASES, "whole trial")}
        for run in range(runs):  # interleaved, so a busy spell of the machine falls on both
            seconds, outcome = ours(args.seed, tmp / f"ours-{run}")
            own.append(seconds)
            outcomes.append(outcome)
            jobs = tmp / f"jobs-{run}"
            jobs.mkdir()
            seconds, reward, spans = trial(harbor, task, jobs)
            harbors.append(seconds)
            rewards.append(reward)
            for phase, span in spans.items():
                phases[phase].append(span)
    mine, theirs = statistics.median(own), statistics.median(harbors)
    print(f"task {name} (k8s, level 1, seed {args.seed}), {runs} run(s) each, start to verdict:")
    print(f"our runner (netarena generate --agent builtin:oracle): median {mine:.2f} s; outcomes {sorted(set(outcomes))}")
    print(f"Harbor trial on our provider (harbor run -a oracle): median {theirs:.2f} s; rewards {sorted(set(rewards), key=str)}")
    print("  Harbor's phases: " + ", ".join(f"{phase} {statistics.median(spans):.2f} s" for phase, spans in phases.items()))
    print(f"Harbor trial / our runner = {theirs / mine:.2f}x")


if __name__ == "__main__":
    main()
