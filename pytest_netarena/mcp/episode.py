"""One episode for `netarena mcp`: its query (drawn from the seed), environment and session, and its run folder.

The query comes from the app's query catalogue exactly as in a benchmark run with the same seed, options and
levels (one query per category; the seed picks the category), so a served episode can be replayed.
The client learns none of it. When the serving ends, the episode is judged by the session like any
other and written as a run folder: run.json, episodes.jsonl, summary.json and report.html.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..apps import get_app
from ..core.app import App, Environment, RunOptions
from ..core.errors import InfraError
from ..core.seeding import PUBLIC
from ..core.session import EpisodeSession
from ..core.types import EpisodeResult, Query
from ..reporting import artifacts
from ..run.plan import MCP_CLIENT, plan_episode


@dataclass(frozen=True)
class ServeConfig:
    """What `netarena mcp` serves."""

    app: str
    seed: int = 0
    secret: str = PUBLIC  #: keys the hidden parameters with the seed (kept in run.json's private part)
    levels: tuple[int, ...] = (1, 2, 3)
    extra: dict[str, Any] = field(default_factory=dict)
    max_steps: int | None = None
    prompt_style: str = "zero-shot"
    agent_timeout_s: float = 300.0

    def run_options(self) -> RunOptions:
        return RunOptions(seed=self.seed, secret=self.secret, queries=1, levels=self.levels, max_steps=self.max_steps,
                          prompt_style=self.prompt_style, extra=dict(self.extra))


def pick_query(app: App, options: RunOptions) -> Query:
    """The run's first query of the category the seed picks (the order of categories is the app's own)."""
    queries = app.generate(options)
    if not queries:
        from ..core.errors import UsageError

        raise UsageError(f"the {app.name} app has no query at levels {', '.join(map(str, options.levels))}")
    return queries[random.Random(options.seed).randrange(len(queries))]


@dataclass
class OpenEpisode:
    """An opened episode and where it will be written."""

    app: App
    env: Environment
    query: Query
    session: EpisodeSession
    run_dir: Path
    info: dict[str, Any]


def open_episode(config: ServeConfig, out: Path) -> OpenEpisode:
    """Build the environment, open the episode's session (reset: the faults are in) and name its run folder.

    Raises BackendUnavailable when the app cannot run here; an episode that cannot start is over at once (its
    result an infrastructure error)."""
    app = get_app(config.app)
    options = config.run_options()
    query = pick_query(app, options)
    env = app.make_environment(options)
    try:
        plan = plan_episode(app, env, options, MCP_CLIENT, agent_timeout_s=config.agent_timeout_s)
        session = EpisodeSession(env, query, plan.task, plan.config, "mcp:client", 0, plan.interface)
        try:
            session.open()
        except InfraError:
            pass  # the session keeps it: its result is an infrastructure error, recorded like any episode
    except BaseException:
        env.close()
        raise
    run_id = artifacts.new_run_id(config.seed)
    info = {"run_id": run_id, "seed": config.seed, "sandboxed": True, "generator": "netarena mcp",
            "secret_in_use": config.secret != PUBLIC, "private": {"secret": config.secret},
            "options": {"queries": 1, "levels": list(config.levels), "max_steps": config.max_steps,
                        "prompt_style": config.prompt_style, "trials": 1, "interface": "mcp",
                        **{key: value for key, value in config.extra.items() if value is not None}}}
    return OpenEpisode(app, env, query, session, Path(out) / run_id, info)


def judge(served: OpenEpisode, client: str) -> EpisodeResult:
    """The episode's result, judged once, under the client's name (the verdict the client and the run folder get)."""
    if not served.session.judged:  # the name goes into the result, which is made once
        served.session.agent_name = f"mcp:{client or 'client'}"
    return served.session.result()


def record(served: OpenEpisode, client: str) -> EpisodeResult:
    """Judge the episode (once) and write its run folder; the environment is closed after."""
    try:
        result = judge(served, client)
    finally:
        served.env.close()
    artifacts.write_run_info(served.run_dir, {**served.info, "agents": [result.agent]})
    artifacts.append_episode(served.run_dir, result)
    from ..reporting.rebuild import build_report

    build_report(served.run_dir, plots=False)
    return result


def verdict(result: EpisodeResult, run_dir: Path) -> str:
    """One line for the user: the outcome, steps, tokens and the run folder (no query id: it names the fault)."""
    flags = f"correct={'yes' if result.correct else 'no'}, safe={'yes' if result.safe else 'no'}"
    line = f"netarena mcp: {result.query.app} episode {result.episode_id}: {result.outcome.value} ({flags}) in " \
           f"{len(result.steps)} step{'' if len(result.steps) == 1 else 's'}"
    if result.outcome.value in ("agent_error", "infra_error"):
        line += f": {result.details.splitlines()[0][:300] if result.details else ''}"
    return f"{line}; run folder {run_dir}"
