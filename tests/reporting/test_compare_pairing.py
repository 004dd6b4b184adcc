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


def _as_model(results, agent: str, interface: str):
    """The toy episodes as one model's, through one interface (what a run of that agent records)."""
    import dataclasses

    return [dataclasses.replace(r, agent=agent, interface=interface) for r in results if r.query.app == "toy"]


def _write(run_dir: Path, results, seed: int = 7) -> None:
    from pytest_netarena.reporting import artifacts

    artifacts.write_run_info(run_dir, {"run_id": run_dir.name, "seed": seed, "agents": sorted({r.agent for r in results}),
                                       "options": {"queries": 4, "levels": [1, 2], "max_steps": 3, "trials": 1}})
    for result in results:
        artifacts.append_episode(run_dir, result)


def test_pair_by_interface_pairs_one_model_across_interfaces_query_by_query(make_run, tmp_path: Path) -> None:
    oracle = make_run(tmp_path / "made-a", agents=("oracle",), trials=1, queries=4)
    half = make_run(tmp_path / "made-b", agents=("half",), trials=1, queries=4)
    first, second = tmp_path / "run-a", tmp_path / "run-b"
    _write(first, _as_model(oracle, "openai:toy-model", "tools"))
    _write(second, _as_model(half, "cli:codex:toy-model", "cli"))
    done = netarena("report", "compare", str(first), str(second), "--pair-by", "interface")
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("toy ")]
    resolved = next(row for row in rows if " resolved " in row)
    assert "toy-model: tools -> cli" in resolved and " 8 " in resolved  # four queries per level, two levels
    assert "100.0%" in resolved and "50.0%" in resolved and "-50.0%" in resolved  # what the interface alone moved
    assert "acted through" not in done.stderr  # the interface is what is compared, not a warning


def test_pair_by_interface_within_one_run_and_why_nothing_pairs(make_run, tmp_path: Path) -> None:
    oracle = make_run(tmp_path / "made", agents=("oracle", "half"), trials=1, queries=2)
    both = tmp_path / "both"
    _write(both, _as_model([r for r in oracle if r.agent == "oracle"], "openai:toy-model", "tools")
           + _as_model([r for r in oracle if r.agent == "half"], "cli:claude-code:toy-model", "cli"))
    done = netarena("report", "compare", str(both), str(both), "--pair-by", "interface")
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("toy ")]
    assert rows and all("toy-model: cli -> tools" in row for row in rows)  # each pair of interfaces once
    plain = tmp_path / "plain"
    _write(plain, _as_model([r for r in oracle if r.agent == "oracle"], "openai:toy-model", "text"))
    done = netarena("report", "compare", str(plain), str(plain), "--pair-by", "interface")
    assert done.returncode == 1
    assert "no model acted through another interface in B than in A (A: toy-model via text" in done.stderr


def test_the_model_of_an_agent_is_the_same_whatever_its_interface() -> None:
    from pytest_netarena.reporting.runs_compare import model_of

    assert model_of("openai:gpt-4o") == model_of("cli:codex:gpt-4o") == "gpt-4o"
    assert model_of("openai:gpt-4o [live]") == "gpt-4o [live]"
    assert model_of("cli:codex") == "cli:codex" and model_of("builtin:oracle") == "builtin:oracle"
