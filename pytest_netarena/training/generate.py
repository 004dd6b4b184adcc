"""Expert trajectories at scale: episodes of a built-in (or any offline) agent written as a run folder.

Queries come from App.generate with the run seed (ids and seeds as in a benchmark run with that
seed, restricted to a split if asked), taken round-robin over the categories so that a small N
still covers them all. Each job process builds one environment per app, plays its share and closes
it; the parent alone writes reports/<run-id>/ (run.json, episodes.jsonl, summary.json, report.html),
so `netarena report` and `netarena export sft` read it like any run.
"""

from __future__ import annotations

import math
import multiprocessing
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..apps import get_app
from ..core.app import RunOptions
from ..core.seeding import PUBLIC
from ..core.types import Outcome, Query
from ..core.errors import BackendUnavailable
from ..reporting import artifacts


@dataclass(frozen=True)
class GenerateConfig:
    """What to generate."""

    agent: str = "builtin:expert"
    episodes: int = 10  #: per app
    apps: tuple[str, ...] = ("k8s", "malt", "route")
    seed: int = 0
    secret: str = PUBLIC  #: keys the hidden parameters with the seed (kept in run.json's private part)
    levels: tuple[int, ...] = (1, 2, 3)
    split: str | None = None
    max_steps: int | None = None
    prompt_style: str = "zero-shot"
    jobs: int = 1
    agent_timeout_s: float = 300.0
    extra: dict[str, Any] = field(default_factory=dict)  #: app options by dest name, e.g. malt_topology

    def run_options(self) -> RunOptions:
        return RunOptions(seed=self.seed, levels=self.levels, max_steps=self.max_steps, prompt_style=self.prompt_style,
                          extra=dict(self.extra), split=self.split, secret=self.secret)


def select_queries(app_name: str, config: GenerateConfig) -> list[Query]:
    """config.episodes queries of the app: the run's queries, one category after another, index by index."""
    app = get_app(app_name)
    options = config.run_options()
    categories = [c for c in app.categories(options) if c.level in config.levels]
    options.queries = max(1, math.ceil(config.episodes / max(1, len(categories))))
    by_category: dict[str, list[Query]] = {}
    for query in app.generate(options):
        by_category.setdefault(query.category, []).append(query)
    rounds = max((len(queries) for queries in by_category.values()), default=0)
    ordered = [queries[i] for i in range(rounds) for queries in by_category.values() if i < len(queries)]
    return ordered[: config.episodes]


def _play_share(app_name: str, queries: list[dict[str, Any]], config: GenerateConfig) -> tuple[list[str], list[str], str]:
    """Play queries on one environment of the app (in a job process): (episodes.jsonl lines, the details of
    infra errors among them, why the app cannot run here or "")."""
    from ..agents.spec import parse_agent_spec
    from ..run.runner import play

    app = get_app(app_name)
    spec = parse_agent_spec(config.agent, app.builtin_agent_names)
    try:
        env = app.make_environment(config.run_options())
    except BackendUnavailable as error:
        return [], [], str(error)
    try:
        results = [play(app, env, spec, Query.from_dict(query), config.run_options(), config.agent_timeout_s)
                   for query in queries]
    finally:
        env.close()
    infra = [result.details for result in results if result.outcome is Outcome.INFRA_ERROR]
    return [artifacts.episode_line(result) for result in results], infra, ""


def generate(config: GenerateConfig, out: Path, progress: Callable[[str], None] = print) -> tuple[Path, list[str]]:
    """Play config.episodes episodes per app with config.agent: (the run folder written under out, its problems:
    one line per app that could not run here or met infra errors; none when every episode was played)."""
    run_id = artifacts.new_run_id(config.seed)
    run_dir = Path(out) / run_id
    info = {"run_id": run_id, "seed": config.seed, "sandboxed": True, "agents": [config.agent],
            "generator": "netarena generate", "secret_in_use": config.secret != PUBLIC,
            "private": {"secret": config.secret},
            "options": {"queries": None, "levels": list(config.levels), "max_steps": config.max_steps,
                        "prompt_style": config.prompt_style, "trials": 1, "episodes_per_app": config.episodes,
                        **({"split": config.split} if config.split else {}),
                        **{key: value for key, value in config.extra.items() if value is not None}}}
    artifacts.write_run_info(run_dir, info)
    jobs = max(1, config.jobs)
    problems: list[str] = []
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        for app_name in config.apps:
            started = time.perf_counter()
            queries = [q.to_dict() for q in select_queries(app_name, config)]
            shares = [queries[j::jobs] for j in range(jobs) if queries[j::jobs]]
            written, infra, skipped = 0, [], ""
            for lines, errors, reason in pool.map(_play_share, [app_name] * len(shares), shares,
                                                  [config] * len(shares)):
                skipped = skipped or reason
                infra.extend(errors)
                for line in lines:
                    artifacts.append_line(run_dir / "episodes.jsonl", line)
                written += len(lines)
            elapsed = time.perf_counter() - started
            if skipped:
                problems.append(f"{app_name}: not played: {skipped}")
                progress(problems[-1])
            elif infra:  # never the agent's episodes: they say nothing about it
                problems.append(f"{app_name}: {written - len(infra)} episodes, {len(infra)} infra errors in "
                                f"{elapsed:.1f} s; first: {infra[0]}")
                progress(problems[-1])
            else:
                progress(f"{app_name}: {written} episodes in {elapsed:.1f} s")
    if (run_dir / "episodes.jsonl").exists():
        from ..reporting.rebuild import build_report

        build_report(run_dir, plots=False)
    return run_dir, problems
