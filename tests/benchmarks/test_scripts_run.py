"""Every script in benchmarks/ still runs: each at its smallest sizes, exit 0, its figures printed (their values are
not judged here: speed targets are read off the scripts' output, never asserted by a test)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
NUMBER = r"[-+]?\d[\d,]*(?:\.\d+)?"


@dataclass(frozen=True)
class Run:
    """One script at its smallest sizes: its arguments, what it needs, and lines its figures must print."""

    script: str
    args: tuple[str, ...]
    figures: tuple[str, ...]  #: regular expressions, each found in stdout
    needs: str = ""  #: "root" (Mininet networks), "pods" (the embedded cluster's pods run here), "boxes", "harbor"


RUNS = (
    Run("box.py", ("--runs", "2"),
        (rf"\[true\]\n  no box: median {NUMBER} ms", rf"box overhead: {NUMBER} ms", rf"filter: {NUMBER} ms; group: {NUMBER} ms"),
        needs="boxes"),
    Run("first_command.py", ("--runs", "1", "--pause", "0", "--", "--queries", "1", "--levels", "1", "-k", "route"),
        (rf"default: median {NUMBER} s over 1 runs", rf"--in-flight 1 / default = {NUMBER}x"), needs="root"),
    Run("harbor.py", ("--limit", "1", "--ready-runs", "1", "--skip-broken"),
        (rf"cluster ready .*: median {NUMBER} ms", rf"solved task .*: median {NUMBER} s over 1 tasks", r"passed: 1/1"),
        needs="pods"),
    Run("harbor_phases.py", ("--runs", "1", "--tasks", "release-bot-scale"),
        (rf"release-bot-scale: time to verdict median {NUMBER} s over 1 runs \(bootstrap {NUMBER} s, agent {NUMBER} s, "
         rf"verifier {NUMBER} s\); rewards \[1\.0\]", rf"an agent phase of `true`: median {NUMBER} ms over 1 runs")),
    Run("harbor_trial.py", ("--small",),
        (rf"our runner \(netarena generate --agent builtin:oracle\): median {NUMBER} s; outcomes \['resolved'\]",
         rf"Harbor trial on our provider \(harbor run -a oracle\): median {NUMBER} s; rewards \[1\.0\]",
         rf"Harbor trial / our runner = {NUMBER}x"), needs="harbor"),
    Run("interfaces.py", ("--steps", "1", "--runs", "1", "--clis"),
        (rf"text path \(reply read and run\): median {NUMBER} ms", rf"tools / text cost per step: {NUMBER}x",
         rf"MCP / text cost per step: {NUMBER}x")),
    Run("k8s.py", ("--apps", "synthetic:5", "--episodes", "1", "--workers", "1", "--steps", "1"),
        (rf"cost of per-write checks \(median\): check {NUMBER} ms", rf"box overhead \(median\): {NUMBER} ms",
         rf"episode set-up .*: median {NUMBER} ms", r"oracle: 1/1 resolved")),
    Run("k8s.py", ("--write-cost", "--apps", "synthetic:5", "--writes", "2"),
        (rf"cost of judging a write \(median\): {NUMBER} ms",)),
    Run("kube.py", ("--workloads", "3"),
        (rf"start \(construct \+ bind \+ ready\): {NUMBER} ms",
         rf"NetworkPolicy write among 3 workloads: median {NUMBER}",
         rf"kubectl apply -f - of 35 objects \(creates\): {NUMBER} ms", rf"stop: {NUMBER} ms")),
    Run("listener.py", ("--small",),
        (rf"kept-alive connection\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}x", rf"streamed relay grew by {NUMBER} MiB",
         rf"whole / streamed = {NUMBER}x")),
    Run("malt.py", ("--topology", "synthetic:200", "--iso-nodes", "30", "--repeat", "1", "--queries", "1"),
        (r"nodes 200, edges \d+", rf"graph answer comparison \(one attribute off\) .* {NUMBER} \({NUMBER}\) ms",
         rf"boxed \(added: {NUMBER} ms", r"(\d+)/\1 resolved")),
    Run("malt_questions.py", ("--topology", "synthetic:300", "--questions", "2"),
        (rf"level 3: \d+ questions, draw and verify: median {NUMBER} ms", rf"all levels: \d+ questions, median {NUMBER} ms")),
    Run("malt_compat.py", ("--topology", "synthetic:200", "--iso-nodes", "30", "--repeat", "1"),
        (rf"one attribute off\s+nx.is_isomorphic\s+{NUMBER} ms\s+same_graph\s+{NUMBER} ms.*same verdict: True",
         r"one attribute off\s+same_graph\s+\S+ ms\s+verdict False")),
    Run("netpol.py", ("--pods", "30", "--policies", "30"),
        (rf"from scratch \(compile policies \+ index \+ matrix\): {NUMBER} ms",
         rf"from scratch / incremental = {NUMBER}x",
         r"least privilege, online boutique, one policy opened to all: .* wider: True")),
    Run("plugin_overhead.py", ("--runs", "1"), (rf"overhead: {NUMBER} ms", r"netarena lines printed: 0")),
    Run("pods.py", ("--runs", "1", "--probes", "1", "--steps", "1", "--log-chunks", "5"),
        (rf"all 12 pods Running and Ready .*: median {NUMBER} ms", rf"kubectl exec probe .*: median {NUMBER} ms",
         rf"a container's output kept, lines of 2 bytes: {NUMBER} us per 64 KiB read"),
        needs="pods"),
    Run("route.py", ("--small", "--repeats", "1", "--queries", "1", "--workers", "1", "--box-steps", "1"),
        (rf"box overhead {NUMBER} ms", rf"2x1 \(3 nodes\): accounting {NUMBER} ms", r"quiet afterwards: True",
         r"oracle: (\d+) episodes .* resolved \1/\1"), needs="root"),
    Run("route.py", ("--episodes-only", "--small", "--repeats", "1", "--queries", "1", "--workers", "1"),
        (rf"2x1 \(3 nodes\): set-up {NUMBER} ms \({NUMBER} ms CPU\), teardown {NUMBER} ms",
         rf"oracle: (\d+) episodes .* {NUMBER} CPU s per episode, resolved \1/\1"), needs="root"),
    Run("route_guard.py", ("--small", "--steps", "1", "--flood", "10"),
        (rf"2x1: step {NUMBER} ms", r"a flood of 10 veth pairs in one command: .* teardown"), needs="root"),
    Run("route_verdicts.py", ("--small", "--repeats", "1", "--steps", "1"),
        (rf"2x1 \(6 pairs\) ICMP\+TCP\+UDP: healthy {NUMBER} ms \({NUMBER} ms CPU\)",
         rf"2x1: pure read {NUMBER} ms \({NUMBER} ms CPU, 0 probes\); one change {NUMBER} ms .*[1-9]\d* probes\)"),
        needs="root"),
    Run("scale.py", ("--delay", "0.05", "--steps", "1", "--runs", "2:2", "--workers", "0"),
        (rf"--in-flight 2\s+{NUMBER}\s+{NUMBER}.*2 failed",  # the stub model only reads: both episodes fail, as run
         rf"one agent command alone .*: {NUMBER} ms of CPU")),
    Run("test_loop.py", ("--top", "2", "--", "tests/core/test_errors.py", "-n", "0", "-p", "no:randomly"),
        (rf"run 1: {NUMBER} s wall .* passed", rf"median {NUMBER} s over 1 runs; test time summed over workers {NUMBER} s",
         rf"{NUMBER} s  tests/core/test_errors\.py")),
    Run("training.py", ("--episodes", "1", "--jobs", "1", "--app", "malt", "--malt-topology", "synthetic:200",
                        "--random-steps", "2"),
        (rf"malt\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+1/1\s+{NUMBER}",)),
)


def _missing(needs: str) -> str:
    """Why this host cannot run a script that needs this, or ""."""
    if needs == "root" and (os.geteuid() != 0 or shutil.which("mn") is None):
        return "it builds Mininet networks: it needs root and Mininet"
    if needs == "boxes":
        from pytest_netarena.sandbox import support

        return "" if support().ok else f"no sealed boxes here: {support().reason}"
    if needs == "harbor":
        sys.path.insert(0, str(ROOT / "tests" / "harbor"))
        from harbor_venv import python312

        from pytest_netarena.sandbox import support

        if python312() is None:
            return "it runs Harbor, which needs Python 3.12 (pyenv install 3.12)"
        return "" if support().ok else f"Harbor's trials run in sealed boxes, which cannot be made here: {support().reason}"
    if needs == "pods":
        from pytest_netarena.cluster import live_support

        support = live_support()
        return "" if support.ok else f"the embedded cluster's pods cannot run here: {support.reason}"
    return ""


def test_every_benchmark_script_is_run_here() -> None:
    assert sorted({run.script for run in RUNS}) == sorted(path.name for path in BENCHMARKS.glob("*.py"))


MODES = ("--write-cost", "--episodes-only")  #: a script's second run is named by its mode


@pytest.mark.parametrize("run", RUNS, ids=[f"{run.script}{' ' + run.args[0] if run.args[0] in MODES else ''}" for run in RUNS])
def test_a_benchmark_runs_at_its_smallest_size_and_prints_its_figures(run: Run, tmp_path: Path) -> None:
    why = _missing(run.needs)
    if why:
        pytest.skip(f"benchmarks/{run.script}: {why}")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "LITELLM_LOCAL_MODEL_COST_MAP": "True", "TMPDIR": str(tmp_path), "PYTHONWARNINGS": "ignore::SyntaxWarning"}
    done = subprocess.run([sys.executable, str(BENCHMARKS / run.script), *run.args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    shown = f"exit {done.returncode}\n--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
    assert done.returncode == 0, shown
    assert "Traceback" not in done.stdout + done.stderr, shown
    missing = [figure for figure in run.figures if not re.search(figure, done.stdout)]
    assert missing == [], shown
