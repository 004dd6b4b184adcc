"""One episode on every interface: a scripted agent's actions replayed through text, native tool calls and MCP, compared.

For each query the scripted agent (builtin:oracle, and builtin:reckless on the first query, for unsafe verdicts)
plays through text; the same agent plays again with each of its replies sent as the app's tool call
(`Environment.tool_call_of`), then again through the episode's MCP server, spoken to by the official MCP client
in memory. Each episode is planned as its front door plans it (run/plan.py). They must agree on the task (the
system prompt holds the app's role, rules and answer format on each interface), the first observation (up to
the interface's own words: the budget line, the answer reminder) and the verdicts (outcome, correctness, safety,
and per step the action, whether it was refused and whether it broke something). A CLI agent plays through the
same MCP server, planned the same way: its task is checked, its verdicts are the MCP server's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..agents.spec import AgentSpec, make_agent, parse_agent_spec
from ..core.app import App, Environment, RunOptions
from ..core.episode import run_episode
from ..core.session import EpisodeSession
from ..core.types import EpisodeResult, Query, Reply, Task
from ..run.plan import MCP_CLIENT, TEXT, Traits, plan_episode

#: the scripted agents replayed: the oracle on every query, the reckless one (unsafe steps) on the first
REPLAYED = ("oracle", "reckless")
#: the interfaces an episode is replayed through here (a CLI agent's calls reach the same MCP server)
REPLAYED_INTERFACES = ("text", "tools", "mcp")
AGENT_TIMEOUT_S = 60.0
#: lines that are the interface's own words: the budget line, MALT's answer reminder
_INTERFACE_LINE = re.compile(r"^(\[Step \d+ of \d+;.*\]|\[Episode over: .*\]|Answer with one .*)$")
CLAIM = ("one episode on every interface: text, native tool calls, MCP (and CLI agents, through MCP) get the same "
         "task, the same first observation and, for the same actions, the same verdicts")


@dataclass
class InterfaceMeasure:
    """The replays of one app and what differed between interfaces."""

    compared: int = 0  #: episodes replayed on every interface and compared
    interfaces: tuple[str, ...] = ()
    differences: list[str] = field(default_factory=list)
    skipped: str = ""  #: why nothing (or some interface) was measured


class ToolReplay:
    """The inner text agent, each reply sent as the app's tool call instead (a reply with no action stays text)."""

    uses_tools = True

    def __init__(self, inner: Any, env: Environment) -> None:
        self.inner, self.env = inner, env

    def reset(self, task: Task) -> None:
        self.inner.reset(task)

    def act(self, observation: str) -> Reply:
        reply = _text(self.inner.act(observation))
        call = self.env.tool_call_of(reply)
        return Reply("", tool_calls=(call,)) if call is not None else Reply(reply)

    def close(self) -> None:
        self.inner.close()


class McpReplay:
    """The inner text agent played through the episode's MCP server by the official MCP client, in memory."""

    interface = "mcp"

    def __init__(self, inner: Any, env: Environment) -> None:
        self.inner, self.env = inner, env

    def reset(self, task: Task) -> None:
        self.inner.reset(task)

    def drive(self, session: EpisodeSession) -> None:
        import anyio

        anyio.run(self._play, session)

    async def _play(self, session: EpisodeSession) -> None:
        import anyio
        from mcp import Client

        from ..mcp.server import build_server

        observation = session.first_observation
        async with Client(build_server(session)) as client:
            while not session.over:
                reply = _text(await anyio.to_thread.run_sync(self.inner.act, observation))
                call = self.env.tool_call_of(reply)
                if call is None:  # no action: the client is done
                    await client.call_tool("finish", {})
                    return
                result = await client.call_tool(call.name, _arguments(call))
                observation = "".join(getattr(part, "text", "") for part in result.content)

    def close(self) -> None:
        self.inner.close()


def _text(reply: Any) -> str:
    return reply.text if isinstance(reply, Reply) else str(reply)


def _arguments(call: Any) -> dict[str, Any]:
    import json

    return json.loads(call.arguments or "{}")


def _instance_free(text: str, env: Environment) -> str:
    """Text without the names of the environment's instance (route networks carry a per-build prefix)."""
    prefix = getattr(getattr(env, "topology", None), "prefix", "") if getattr(env, "network", True) else ""
    return text.replace(prefix, "{net}") if prefix else text


def comparable_observation(text: str, env: Environment) -> str:
    """An observation without its interface's own words and instance names."""
    lines = _instance_free(text, env).splitlines()
    return "\n".join(line for line in lines if not _INTERFACE_LINE.match(line.strip()))


def verdict(result: EpisodeResult, env: Environment) -> tuple[Any, ...]:
    """What must be equal on every interface: outcome, correctness, safety, and each action's step: the action,
    whether it was refused, whether it broke something. A reply that held no action has no counterpart on MCP (a
    client with nothing to call finishes), so such steps are left out."""
    steps = tuple((_instance_free(step.action, env), step.refused, bool(step.violations)) for step in result.steps
                  if step.action)
    return result.outcome.value, result.correct, result.safe, steps


def _task_problems(app: App, env: Environment, options: RunOptions) -> list[str]:
    """The app's role, rules and answer format in the system prompt of every interface, the CLI's included."""
    parts = app.prompt_for(options)
    wanted = [part.strip() for part in (parts.role, parts.rules, parts.answer_format) if part.strip()]
    problems = []
    for name, traits in (("text", TEXT), ("tools", Traits(wants_tools=True)), ("mcp", MCP_CLIENT),
                         ("cli", Traits(interface="cli", needs_tools=True))):
        prompt = plan_episode(app, env, options, traits).task.system_prompt
        missing = [part.split("\n", 1)[0][:60] for part in wanted if part not in prompt]
        if missing:
            problems.append(f"the {name} task leaves out {', '.join(repr(m) for m in missing)}")
    return problems


def _replay(app: App, env: Environment, options: RunOptions, spec: AgentSpec, query: Query,
            interface: str) -> tuple[EpisodeResult, tuple[Any, ...], str]:
    """One episode of the scripted agent through one interface: (result, its verdict, its comparable first
    observation), both read before the environment is reset again."""
    inner = make_agent(spec, app, query, env)
    agent: Any = inner
    traits = TEXT
    if interface == "tools":
        agent, traits = ToolReplay(inner, env), Traits(wants_tools=True)
    elif interface == "mcp":
        agent, traits = McpReplay(inner, env), MCP_CLIENT
    try:
        plan = plan_episode(app, env, options, traits, agent_timeout_s=AGENT_TIMEOUT_S)
        result = run_episode(env, agent, query, plan.task, plan.config, f"{spec.raw} via {interface}",
                             interface=plan.interface)
    finally:
        agent.close()
    return result, verdict(result, env), comparable_observation(result.first_observation, env)


def measure_interfaces(app: App, env: Environment, options: RunOptions, queries: list[Query],
                       builtin_names: tuple[str, ...], progress: Callable[[str], None] = print) -> InterfaceMeasure:
    """Replay the scripted agents through every interface the rules offer and compare (InterfaceMeasure)."""
    measure = InterfaceMeasure()
    if not options.ruleset.offers_tools:
        measure.skipped = f"the {options.rules} rules offer only the text interface"
        return measure
    if "oracle" not in builtin_names:
        measure.skipped = "the app offers no builtin:oracle to replay"
        return measure
    if type(env).tool_call_of is Environment.tool_call_of:
        measure.skipped = "the app reads no reply into its tool call (Environment.tool_call_of)"
        return measure
    interfaces = list(REPLAYED_INTERFACES)
    try:
        import mcp  # noqa: F401  (the MCP SDK: the mcp extra)
    except ImportError:
        interfaces.remove("mcp")
        measure.skipped = "MCP not replayed: the MCP SDK is not installed (pip install 'pytest-netarena[mcp]')"
    measure.interfaces = tuple(interfaces)
    measure.differences += _task_problems(app, env, options)
    plays = [(agent, query) for number, query in enumerate(queries) for agent in REPLAYED
             if agent in builtin_names and (agent == "oracle" or number == 0)]
    for agent, query in plays:
        spec = parse_agent_spec(f"builtin:{agent}", builtin_names)
        seen = {interface: _replay(app, env, options, spec, query, interface) for interface in interfaces}
        if seen["text"][0].outcome.value == "infra_error":
            continue  # an episode the environment could not play says nothing about the interfaces
        measure.compared += 1
        _, text_verdict, text_first = seen["text"]
        for interface in interfaces[1:]:
            _, other_verdict, other_first = seen[interface]
            if other_first != text_first:
                measure.differences.append(f"{query.id}: the first observation through {interface} differs from "
                                           f"text's: {_first_difference(text_first, other_first)}")
            if other_verdict != text_verdict:
                measure.differences.append(f"{query.id} builtin:{agent}: through {interface} "
                                           f"{_describe(other_verdict)}, through text {_describe(text_verdict)}")
        progress(f"{app.name}: builtin:{agent} on {query.id}: {text_verdict[0]} through "
                 f"{', '.join(interfaces)}" + ("" if not measure.differences else
                                               f" ({len(measure.differences)} differences so far)"))
    return measure


def _describe(found: tuple[Any, ...]) -> str:
    outcome, correct, safe, steps = found
    return (f"{outcome} (correct={correct}, safe={safe}) in {len(steps)} steps: "
            + "; ".join(f"{action[:80]!r}{' refused' if refused else ''}{' unsafe' if broke else ''}"
                        for action, refused, broke in steps))


def _first_difference(first: str, second: str) -> str:
    for a, b in zip(first.splitlines() + [""], second.splitlines() + [""]):
        if a != b:
            return f"{a[:120]!r} vs {b[:120]!r}"
    return ""
