"""Agent specs ("openai:gpt-4o", "builtin:oracle", "python:pkg.mod:attr") parsed and turned into agents."""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.errors import BackendUnavailable, UsageError
from .base import Agent, NoopAgent

if TYPE_CHECKING:
    from ..core.app import App, Environment
    from ..core.types import Query

GENERIC_BUILTINS = ("noop",)
ACCEPTED_FORMS = (
    "builtin:NAME (offline reference agents: oracle, expert, chatty, reckless, noop)",
    "PROVIDER:MODEL (any litellm model, e.g. openai:gpt-4o, anthropic:claude-sonnet-4-5, ollama:qwen2.5)",
    "python:MODULE:ATTR (your own agent: ATTR is a class or factory returning an Agent)",
    "a2a:URL (an agent speaking A2A, e.g. an AgentBeats purple agent: a2a:http://127.0.0.1:9019)",
    "cli:NAME[:MODEL] (a CLI agent in a box through the episode's MCP server: cli:codex, cli:claude-code:MODEL)",
)
_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


@dataclass(frozen=True)
class AgentSpec:
    """A parsed --agent value."""

    raw: str
    kind: str  #: "builtin", "python", "a2a", "cli" or "litellm"
    target: str  #: builtin name, "module:attr", URL, "cli[:model]" or litellm model "provider/model"
    settings: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def slug(self) -> str:
        """A test-id-safe form of the spec."""
        return re.sub(r"[^A-Za-z0-9_.-]+", "-", self.raw).strip("-")


def usage_message(problem: str) -> str:
    forms = "\n  ".join(ACCEPTED_FORMS)
    return f"{problem}\nAccepted agent specs:\n  {forms}"


def parse_agent_spec(raw: str, builtin_names: tuple[str, ...] = ()) -> AgentSpec:
    """Parse one spec; raises UsageError naming what is accepted."""
    text = raw.strip()
    kind, sep, rest = text.partition(":")
    if not sep or not kind or not rest:
        raise UsageError(usage_message(f"malformed agent spec {raw!r}: expected KIND:VALUE"))
    if kind == "builtin":
        known = tuple(dict.fromkeys((*builtin_names, *GENERIC_BUILTINS)))
        if rest not in known:
            raise UsageError(usage_message(f"unknown built-in agent {rest!r}; built-ins: {', '.join(known)}"))
        return AgentSpec(text, "builtin", rest)
    if kind == "python":
        module, sep, attr = rest.rpartition(":")
        if not sep or not module or not attr:
            raise UsageError(usage_message(f"malformed python agent {raw!r}: expected python:MODULE:ATTR"))
        return AgentSpec(text, "python", rest)
    if kind == "a2a":
        if not re.match(r"^https?://[^/\s]+", rest):
            raise UsageError(usage_message(f"malformed A2A agent {raw!r}: expected a2a:http://HOST:PORT"))
        return AgentSpec(text, "a2a", rest)
    if kind == "cli":
        from ..mcp.clis import PROFILES  # lazy: the CLI agents live with the MCP server they play through

        name, sep, model = rest.partition(":")
        if name not in PROFILES or (sep and not model.strip()):
            raise UsageError(usage_message(f"unknown CLI agent {raw!r}; CLI agents: "
                                           f"{', '.join(f'cli:{known}' for known in PROFILES)} (optionally :MODEL)"))
        return AgentSpec(text, "cli", rest)
    if not _NAME.match(kind) or not rest.strip():
        raise UsageError(usage_message(f"malformed model spec {raw!r}"))
    return AgentSpec(text, "litellm", f"{kind}/{rest}")


def import_from_current_folder() -> None:
    """Put the current folder first on sys.path, as `python -m pytest` does and the `pytest` script does not,
    so `python:my_agent:Agent` finds ./my_agent.py however pytest was started."""
    here = os.getcwd()
    if not any(os.path.abspath(entry or os.curdir) == here for entry in sys.path):
        sys.path.insert(0, here)


def check_python_agent(target: str) -> None:
    """A python:MODULE:ATTR whose module cannot be found is a usage error before any episode (nothing is run)."""
    import_from_current_folder()
    module_name = target.rpartition(":")[0]
    try:
        found = importlib.util.find_spec(module_name)
    except (ImportError, ValueError) as error:  # a parent package that cannot be imported
        raise UsageError(f"cannot load agent python:{target}: {error}") from None
    if found is None:
        raise UsageError(f"cannot load agent python:{target}: no module named {module_name!r} "
                         f"in the current folder ({os.getcwd()}) or on sys.path")


def load_python_agent(target: str) -> Agent:
    """Import MODULE and call ATTR to build the user's agent."""
    module_name, _, attr = target.rpartition(":")
    import_from_current_folder()
    try:
        factory = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as error:
        raise UsageError(f"cannot load agent python:{target}: {error}") from error
    agent = factory() if callable(factory) else factory
    driving = all(callable(getattr(agent, name, None)) for name in ("reset", "drive", "close"))
    if not isinstance(agent, Agent) and not driving:
        raise UsageError(f"python:{target} did not give an agent with reset(), act() (or drive()) and close()")
    return agent


def make_agent(spec: AgentSpec, app: App, query: Query, env: Environment) -> Agent:
    """Build the agent for one episode; BackendUnavailable when a built-in does not exist for the app."""
    if spec.kind == "builtin":
        if spec.target == "noop":
            return NoopAgent()
        agent = app.builtin_agent(spec.target, query, env)
        if agent is None:
            raise BackendUnavailable(f"builtin:{spec.target} is not available for the {app.name} app")
        return agent
    if spec.kind == "python":
        return load_python_agent(spec.target)
    if spec.kind == "a2a":
        from .a2a_agent import A2AAgent  # lazy: a2a-sdk is an optional dependency

        return A2AAgent(spec.target, **spec.settings)
    if spec.kind == "cli":
        from ..mcp.cli_agent import make_cli_agent  # lazy: the MCP SDK and the box are needed only here

        return make_cli_agent(spec.target, spec.settings)
    from .litellm_agent import LiteLLMAgent  # lazy: litellm takes seconds to import

    return LiteLLMAgent(spec.target, **spec.settings)
