"""Run folders for the reporting tests, made of real toy-app episodes played with run_episode."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pytest_netarena.core.app import RunOptions
from pytest_netarena.core.episode import EpisodeConfig, run_episode
from pytest_netarena.core.types import EpisodeResult, Task
from pytest_netarena.reporting import artifacts

TOY_DIR = Path(__file__).parents[1] / "plugin"


@pytest.fixture(scope="session")
def toy():
    import sys

    sys.path.insert(0, str(TOY_DIR))
    try:
        import toy_app
    finally:
        sys.path.remove(str(TOY_DIR))
    return toy_app


def play(toy, query, agent, name: str, trial: int = 0) -> EpisodeResult:
    env = toy.APP.make_environment(RunOptions())
    task = Task(query.app, "e1", "system", "zero-shot", 3)
    return run_episode(env, agent, query, task, EpisodeConfig(max_steps=3), name, trial)


def make_agent(toy, name: str, query):
    """oracle, reckless, or half: solves queries with an even index and on odd ones sets 0 (safe, wrong)."""
    target = query.params["target"]
    if name == "oracle":
        return toy.OracleAgent(target)
    if name == "reckless":
        return toy.RecklessAgent(target)
    return toy.OracleAgent(target if query.index % 2 == 0 else 0)


# a second, made-up app with several categories per level so the radars have real axes
DEMO_CATEGORIES = {1: ("remove", "add", "count", "update"), 2: ("remove+count", "add+update", "count+update")}


def write_run(toy, run_dir: Path, agents=("oracle", "half", "reckless"), trials: int = 2, queries: int = 4, seed: int = 7) -> list[EpisodeResult]:
    """A run folder of real episodes: the toy app, and the same episodes relabelled as app 'demo'."""
    artifacts.write_run_info(run_dir, {"run_id": run_dir.name, "seed": seed, "agents": [f"builtin:{a}" for a in agents],
                                       "options": {"queries": queries, "levels": [1, 2], "max_steps": 3, "trials": trials}})
    results = []
    for query in toy.APP.generate(RunOptions(seed=seed, queries=queries, levels=(1, 2))):
        for trial in range(trials):
            for name in agents:
                results.append(play(toy, query, make_agent(toy, name, query), name, trial))
    for level, names in DEMO_CATEGORIES.items():
        base = [r for r in results if r.query.level == level]
        for result in base:
            category = names[result.query.index % len(names)]
            query = dataclasses.replace(result.query, app="demo", category=category)
            results.append(dataclasses.replace(result, query=query))
    for result in results:
        artifacts.append_episode(run_dir, result)
    return results


@pytest.fixture(scope="session")
def run_dir(toy, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("reports") / "20250101-000000-7"
    write_run(toy, path)
    return path


@pytest.fixture(scope="session")
def built(run_dir: Path) -> Path:
    from pytest_netarena.reporting.rebuild import build_report

    return build_report(run_dir)


@pytest.fixture
def make_run(toy):
    """make_run(path, agents=..., trials=..., queries=...) writes a run folder and returns its results."""
    return lambda path, **options: write_run(toy, path, **options)


@pytest.fixture
def says(toy):
    """says(text, name) plays one real toy episode with an agent that always replies `text`."""
    query = toy.APP.generate(RunOptions(seed=1, queries=1, levels=(1,)))[0]
    return lambda text, name: play(toy, query, toy.SaysAgent(text), name)


@pytest.fixture
def play_toy(toy):
    """play_toy(query, agent, name, trial) plays one real toy episode with any agent."""
    return lambda query, agent, name, trial=0: play(toy, query, agent, name, trial)
