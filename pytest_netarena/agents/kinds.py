"""The kinds of agent an --agent spec names, each described once: its form, its builder, what scheduling and planning read.

A kind's builder is named by module path and imported when an agent of that kind is built, as the apps
registry loads apps by name: so `agents/` imports nothing above it, and a CLI agent (which plays through the
episode's MCP server, `mcp/cli_agent.py`) is built where it lives. Everything else that depends on the kind
reads it here (`AgentKind`): nothing dispatches on the kind's name.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..core.agent import Agent
    from ..core.app import App, Environment
    from ..core.types import Query


@dataclass(frozen=True)
class AgentKind:
    """One kind of agent spec (`KIND:VALUE`)."""

    name: str  #: AgentSpec.kind: builtin, python, a2a, cli, model
    form: str  #: the accepted form, as usage messages list it
    #: "module:function(spec, app, query, env) -> Agent": builds the agent of one episode (imported when used)
    builder: str
    #: its steps mostly wait on a remote model (a provider, an A2A server), not on this machine's CPU: -n N may run
    #: more episodes than cores (scale/workers.py). python: agents are the user's code, CPU-bound or not
    model_bound: bool = False
    #: it takes tools when the run asks for them (--tool-calls always) even if it does not ask (run/plan.py)
    tools_on_request: bool = False
    #: it plays offline: no provider, server or key (what `netarena generate` plays)
    offline: bool = False
    #: "module:function(value, raw) -> target": reads the VALUE of KIND:VALUE where its kind lives (UsageError when
    #: malformed); "" for the kinds spec.py reads itself
    reader: str = ""
    #: "module:function(spec)": checked once before a run, on the controller (UsageError: e.g. a python: agent
    #: whose module does not import); "" when there is nothing to check before building one
    checker: str = ""
    #: "module:function(spec) -> str": one real request before a run (agents/preflight.py), returning a warning or
    #: ""; UsageError, with the fix, when the agent cannot run here; "" for the kinds preflight reaches itself
    reacher: str = ""

    def build(self, spec: Any, app: App | None, query: Query | None, env: Environment | None) -> Agent:
        """The agent of `spec` (an agents.spec.AgentSpec of this kind) for one episode."""
        agent: Agent = _named(self.builder)(spec, app, query, env)
        return agent

    def read(self, value: str, raw: str) -> str:
        target: str = _named(self.reader)(value, raw)
        return target

    def check(self, spec: Any) -> None:
        if self.checker:
            _named(self.checker)(spec)

    def reach(self, spec: Any) -> str:
        warning: str = _named(self.reacher)(spec) if self.reacher else ""
        return warning


def _named(target: str) -> Callable[..., Any]:
    module, _, function = target.partition(":")
    named: Callable[..., Any] = getattr(importlib.import_module(module), function)
    return named


KINDS: dict[str, AgentKind] = {kind.name: kind for kind in (
    AgentKind("builtin", "builtin:NAME (offline reference agents: oracle, expert, chatty, reckless, random, cheater, "
              "noop)", "pytest_netarena.agents.spec:build_builtin", offline=True),
    AgentKind("model", "PROVIDER:MODEL (any litellm model, e.g. openai:gpt-4o, anthropic:claude-sonnet-4-5, "
              "ollama:qwen2.5)", "pytest_netarena.agents.model_agent:build", model_bound=True),
    AgentKind("python", "python:MODULE:ATTR (your own agent: ATTR is a class or factory returning an Agent)",
              "pytest_netarena.agents.spec:build_python", tools_on_request=True, offline=True,
              checker="pytest_netarena.agents.spec:check_python_spec"),
    AgentKind("a2a", "a2a:URL (an agent speaking A2A, e.g. an AgentBeats purple agent: a2a:http://127.0.0.1:9019)",
              "pytest_netarena.agents.a2a_agent:build", model_bound=True),
    AgentKind("cli", "cli:NAME[:MODEL] (a CLI agent in a box through the episode's MCP server: cli:codex, "
              "cli:claude-code:MODEL)", "pytest_netarena.mcp.cli_agent:build",
              reader="pytest_netarena.mcp.cli_agent:read_target", reacher="pytest_netarena.mcp.cli_agent:check_reach"),
)}
#: the forms usage messages list, in this order
ACCEPTED_FORMS = tuple(KINDS[name].form for name in ("builtin", "model", "python", "a2a", "cli"))
