"""Plays one query with one agent spec on an environment: agent construction, task, limits, episode."""

from __future__ import annotations

from ..agents.prompting import build_system_prompt
from ..agents.spec import AgentSpec, make_agent
from .budget import Budget
from ..core.app import App, Environment, RunOptions
from ..core.episode import EpisodeConfig, run_episode
from ..core.session import offered_tools
from ..core.tools import Tool
from ..core.types import EpisodeResult, Query, Task, new_episode_id


def tools_for(agent: object, spec: AgentSpec, options: RunOptions, env: Environment) -> tuple[Tool, ...]:
    """The tools an episode offers this agent; empty: the text protocol. Never under --compat netarena (NetArena's
    protocol is text) or --tool-calls never; a driving agent always gets them; a model agent when its provider takes
    them (its `uses_tools`); a python: agent when it asks (`uses_tools = True`) or under --tool-calls always."""
    if options.netarena_compat or options.tool_calls == "never":
        return ()
    wants = callable(getattr(agent, "drive", None)) or bool(getattr(agent, "uses_tools", False))
    if options.tool_calls == "always" and spec.kind == "python":
        wants = True
    return offered_tools(env) if wants else ()


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
    """Run one episode; raises BackendUnavailable or UsageError only if the agent cannot be built."""
    agent = make_agent(spec, app, query, env)
    max_steps = options.max_steps or env.default_max_steps
    tools = tools_for(agent, spec, options, env)
    if spec.kind == "cli" and not tools:
        from ..core.errors import UsageError

        agent.close()
        raise UsageError(f"--agent {spec.raw}: a CLI agent acts only through the episode's tools, which are not "
                         "offered under --compat netarena or --tool-calls never")
    task = Task(
        app=app.name,
        episode_id=new_episode_id(),  # never the query id: that names the fault
        # NetArena never tells the model its budget nor which step it is on
        system_prompt=build_system_prompt(app.prompt_for(options), options.prompt_style,
                                          None if options.netarena_compat else max_steps, tools=bool(tools)),
        prompt_style=options.prompt_style,
        max_steps=max_steps,
        tools=tools,
    )
    budget = budget or Budget()
    config = EpisodeConfig(max_steps=max_steps, agent_timeout_s=agent_timeout_s,
                           prompt_style=options.prompt_style,
                           max_tokens=budget.max_tokens, max_cost_usd=budget.max_cost_usd,
                           announce_steps=not options.netarena_compat, netarena_rules=options.netarena_compat)
    try:
        return run_episode(env, agent, query, task, config, spec.raw, trial)
    finally:
        agent.close()
