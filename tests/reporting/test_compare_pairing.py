"""`netarena report compare` in a real subprocess: it says exactly why nothing paired, and pairs by query on request."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def netarena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_netarena.cli", *args], capture_output=True, text=True,
                          timeout=120, check=False)


def test_runs_of_differently_named_agents_say_why_nothing_paired(make_run, tmp_path: Path) -> None:
    first, second = tmp_path / "run-a", tmp_path / "run-b"
    make_run(first, agents=("oracle",), trials=1, queries=2)
    make_run(second, agents=("half",), trials=1, queries=2)
    done = netarena("report", "compare", str(first), str(second))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "nothing paired: the runs share no agent (A: oracle; B: half)" in done.stderr
    assert "--pair-by query" in done.stderr


def test_runs_of_different_seeds_say_that_no_query_is_shared(make_run, tmp_path: Path) -> None:
    first, second = tmp_path / "run-a", tmp_path / "run-b"
    make_run(first, agents=("oracle",), trials=1, queries=2, seed=7)
    make_run(second, agents=("oracle",), trials=1, queries=2, seed=8)
    done = netarena("report", "compare", str(first), str(second))
    assert done.returncode == 1
    assert "nothing paired: agent oracle ran no query in both runs (seeds 7 and 8)" in done.stderr


def test_pair_by_query_compares_differently_named_agents(make_run, tmp_path: Path) -> None:
    first, second = tmp_path / "run-a", tmp_path / "run-b"
    make_run(first, agents=("oracle",), trials=1, queries=2)
    make_run(second, agents=("half",), trials=1, queries=2)
    done = netarena("report", "compare", str(first), str(second), "--pair-by", "query")
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("toy ")]
    assert rows and all("oracle -> half" in row for row in rows)
    resolved = next(row for row in rows if " resolved " in row)
    assert " 4 " in resolved  # two queries per level, two levels: four pairs


def test_pair_by_query_needs_one_agent_per_run(make_run, tmp_path: Path) -> None:
    first, second = tmp_path / "run-a", tmp_path / "run-b"
    make_run(first, agents=("oracle", "half"), trials=1, queries=1)
    make_run(second, agents=("half",), trials=1, queries=1)
    done = netarena("report", "compare", str(first), str(second), "--pair-by", "query")
    assert done.returncode == 2 and "--pair-by query pairs one agent per run" in done.stderr


def test_runs_of_different_prompt_styles_are_compared_with_a_warning(make_run, tmp_path: Path) -> None:
    import json

    first, second = tmp_path / "run-a", tmp_path / "run-b"
    make_run(first, agents=("oracle",), trials=1, queries=2)
    make_run(second, agents=("oracle",), trials=1, queries=2)
    same = netarena("report", "compare", str(first), str(second))
    assert same.returncode == 0 and "prompt styles" not in same.stdout + same.stderr
    for run_dir, style, key in ((first, "zeroshot_base", "prompt_style"), (second, "fewshot_cot", "strategy")):
        info = json.loads((run_dir / "run.json").read_text())  # B is a folder written before the rename
        info["options"][key] = style
        (run_dir / "run.json").write_text(json.dumps(info))
    done = netarena("report", "compare", str(first), str(second))
    assert done.returncode == 0, done.stderr
    assert "the runs used different prompt styles: zeroshot_base vs fewshot_cot" in done.stdout + done.stderr
