"""Plans one episode for every front door: from the app, the agent's traits and the options, its task and limits.

pytest (run/runner.py), MCP (mcp/episode.py), AgentBeats (agentbeats/agent.py), the audit (audit/battery.py),
Gymnasium (training/env.py) and the CLI agents all ask `plan_episode` what an episode tells its agent and how it
is played: the system prompt in the interface's words, the tools offered, the step budget, the limits, and the
rules (`Ruleset`) it is played and scored by. It is the only place that builds a `Task` or an `EpisodeConfig`
for a real episode (tests/house/test_layout.py), so an episode is the same on every interface.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..agents.prompting import build_system_prompt
from ..core.episode import EpisodeConfig
from ..core.errors import UsageError
from ..core.session import offered_tools
from ..core.types import INTERFACES, Task, new_episode_id

if TYPE_CHECKING:
    from ..agents.spec import AgentSpec
    from ..core.app import App, Environment, RunOptions
    from ..core.rules import Ruleset
    from .budget import Budget


@dataclass(frozen=True)
class Traits:
    """What an agent can take, as far as planning its episode goes."""

    #: how it acts when tools are offered: "tools" (native calls), "mcp" (an MCP client), "cli" (a CLI agent)
    interface: str = "tools"
    wants_tools: bool = False  #: it takes tools whenever they are offered (--tool-calls auto)
    on_request: bool = False  #: it takes tools when the run asks for them (--tool-calls always): python: agents
    needs_tools: bool = False  #: it acts only through tools (an agent that drives its session: MCP, CLI)

    def __post_init__(self) -> None:
        if self.interface not in INTERFACES[1:]:
            raise ValueError(f"an agent acts through tools as one of {', '.join(INTERFACES[1:])}; "
                             f"got {self.interface!r}")


#: an agent that acts by text only (a2a:, builtin:, the audit's cheats, a Gymnasium policy)
TEXT = Traits()
#: an MCP client (netarena mcp): tools only
MCP_CLIENT = Traits(interface="mcp", needs_tools=True)


def traits_of(agent: object, spec: AgentSpec | None = None) -> Traits:
    """The traits of a built agent: a driver (drive(session): MCP and CLI agents) needs tools; one whose
    `uses_tools` holds (a model whose provider takes tool calls, a python: agent asking) wants them; a python:
    agent takes them on request. `interface` names how it acts through them (default "tools"; "text": never)."""
    interface = getattr(agent, "interface", None) or "tools"
    if interface == "text":
        return TEXT
    if callable(getattr(agent, "drive", None)):
        return Traits(interface=interface, needs_tools=True)
    return Traits(interface=interface, wants_tools=bool(getattr(agent, "uses_tools", False)),
                  on_request=spec is not None and spec.agent_kind.tools_on_request)


@dataclass(frozen=True)
class EpisodePlan:
    """One episode as planned: what its agent is told (task) and how it is played and scored (config)."""

    task: Task
    config: EpisodeConfig
    interface: str  #: what the result records: "text" when no tool is offered, else the agent's interface

    @property
    def ruleset(self) -> Ruleset:
        return self.config.ruleset


def offers_tools(ruleset: Ruleset, tool_calls: str, traits: Traits) -> bool:
    """Whether the episode offers tools: never under rules whose protocol is text (NetArena's) or --tool-calls
    never, except to an agent that acts only through them (a usage error there); to a driver always; to an agent
    that wants them; under --tool-calls always to one that takes them on request."""
    if traits.needs_tools:
        if not ruleset.offers_tools or tool_calls == "never":
            raise UsageError("this agent acts only through the episode's tools, which are not offered under "
                             "--compat netarena or --tool-calls never")
        return True
    if not ruleset.offers_tools or tool_calls == "never":
        return False
    return traits.wants_tools or (tool_calls == "always" and traits.on_request)


def plan_episode(app: App, env: Environment, options: RunOptions, traits: Traits = TEXT, *,
                 agent_timeout_s: float = 300.0, budget: Budget | None = None,
                 drive_timeout_s: float | None = None) -> EpisodePlan:
    """The episode of `app` on `env` under `options`, for an agent of these traits: its task (system prompt in
    the interface's words, tools, budget, a fresh opaque episode id) and its configuration (limits and rules).
    UsageError when the agent cannot act in it (an agent that needs tools where none are offered)."""
    ruleset = options.ruleset
    max_steps = options.max_steps or env.default_max_steps
    tools = offered_tools(env) if offers_tools(ruleset, options.tool_calls, traits) else ()
    interface = traits.interface if tools else "text"
    system_prompt = build_system_prompt(app.prompt_for(options), options.prompt_style,
                                        max_steps if ruleset.states_budget else None, tools=bool(tools))
    task = Task(app=app.name, episode_id=new_episode_id(),  # never the query id: that names the fault
                system_prompt=system_prompt, prompt_style=options.prompt_style, max_steps=max_steps, tools=tools)
    config = EpisodeConfig(max_steps=max_steps, agent_timeout_s=agent_timeout_s, prompt_style=options.prompt_style,
                           max_tokens=budget.max_tokens if budget else None,
                           max_cost_usd=budget.max_cost_usd if budget else None,
                           ruleset=ruleset, drive_timeout_s=drive_timeout_s)
    return EpisodePlan(task, config, interface)


def check_tool_calls(options: RunOptions, specs: Iterable[AgentSpec]) -> None:
    """Once, before a run: --tool-calls always refuses to start where no tool can be offered, under rules whose
    protocol is text (NetArena's) or to a model whose provider takes no tool calls."""
    if options.tool_calls != "always":
        return
    if not options.ruleset.offers_tools:
        raise UsageError("--tool-calls always: --compat netarena keeps NetArena's text protocol, which offers no "
                         "tools; drop one of the two")
    from ..agents.model_agent import takes_tools

    for spec in specs:
        if spec.kind == "model" and not takes_tools(spec.target):
            raise UsageError(f"--tool-calls always: {spec.raw} does not take tool calls (litellm's model map says "
                             "so); use --tool-calls auto to read its replies as text")


def turn_task(system_prompt: str) -> Task:
    """The task of one stateless turn, not an episode of ours: a purple agent answering one message of a green
    agent (agentbeats/purple_cli.py), which plans and plays the episode itself and sends its whole prompt."""
    return Task(app="a2a", episode_id="", system_prompt=system_prompt, prompt_style="zero-shot", max_steps=1)
