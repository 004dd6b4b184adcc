"""Plays one query with one agent spec on an environment: the agent built, its episode planned (run/plan.py) and played."""

from __future__ import annotations

from ..agents.spec import AgentSpec, make_agent
from .budget import Budget
from ..core.app import App, Environment, RunOptions
from ..core.episode import run_episode
from ..core.errors import UsageError
from ..core.types import EpisodeResult, Query
from .plan import plan_episode, traits_of


def play(
    app: App,
    env: Environment,
    spec: AgentSpec,
    query: Query,
    options: RunOptions,
    agent_timeout_s: float,
    trial: int = 0,
    budget: Budget | None = None,
) -> EpisodeResult:
    """Run one episode; raises BackendUnavailable or UsageError only if the agent cannot be built or cannot act in
    the episode (a CLI agent where no tool is offered)."""
    agent = make_agent(spec, app, query, env)
    try:
        try:
            plan = plan_episode(app, env, options, traits_of(agent, spec), agent_timeout_s=agent_timeout_s,
                                budget=budget)
        except UsageError as error:
            raise UsageError(f"--agent {spec.raw}: {error}") from None
        return run_episode(env, agent, query, plan.task, plan.config, spec.raw, trial, plan.interface)
    finally:
        agent.close()
