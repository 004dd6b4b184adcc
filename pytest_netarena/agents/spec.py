"""Agent specs ("openai:gpt-4o", "builtin:oracle", "python:pkg.mod:attr") parsed and turned into agents."""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import re
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.errors import BackendUnavailable, UsageError
from .kinds import ACCEPTED_FORMS, KINDS, AgentKind
from .noop import Agent, NoopAgent

if TYPE_CHECKING:
    from ..core.app import App, Environment
    from ..core.types import Query

GENERIC_BUILTINS = ("noop",)
_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


@dataclass(frozen=True)
class AgentSpec:
    """A parsed --agent value."""

    raw: str
    kind: str  #: one of agents.kinds.KINDS: "builtin", "python", "a2a", "cli" or "model"
    target: str  #: builtin name, "module:attr", URL, "cli[:model]" or the model as litellm names it, "provider/model"
    settings: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def agent_kind(self) -> AgentKind:
        """What the kind is: its builder, and what scheduling and planning read (agents/kinds.py)."""
        return KINDS[self.kind]

    @property
    def slug(self) -> str:
        """A test-id-safe form of the spec."""
        return re.sub(r"[^A-Za-z0-9_.-]+", "-", self.raw).strip("-")


def usage_message(problem: str) -> str:
    forms = "\n  ".join(ACCEPTED_FORMS)
    return f"{problem}\nAccepted agent specs:\n  {forms}"


def parse_agent_spec(raw: str, builtin_names: tuple[str, ...] = ()) -> AgentSpec:
    """Parse one spec, once: its kind (agents/kinds.py) and target; raises UsageError naming what is accepted."""
    text = raw.strip()
    kind, sep, rest = text.partition(":")
    if not sep or not kind or not rest:
        raise UsageError(usage_message(f"malformed agent spec {raw!r}: expected KIND:VALUE"))
    if kind == "builtin":
        known = tuple(dict.fromkeys((*builtin_names, *GENERIC_BUILTINS)))
        if rest not in known:
            raise UsageError(usage_message(f"unknown built-in agent {rest!r}; built-ins: {', '.join(known)}"))
        return AgentSpec(text, kind, rest)
    if kind == "python":
        module, sep, attr = rest.rpartition(":")
        if not sep or not module or not attr:
            raise UsageError(usage_message(f"malformed python agent {raw!r}: expected python:MODULE:ATTR"))
        return AgentSpec(text, kind, rest)
    if kind == "a2a":
        if not re.match(r"^https?://[^/\s]+", rest):
            raise UsageError(usage_message(f"malformed A2A agent {raw!r}: expected a2a:http://HOST:PORT"))
        return AgentSpec(text, kind, rest)
    if kind in KINDS and KINDS[kind].reader:  # a kind read where it lives (cli: mcp/cli_agent.py)
        try:
            return AgentSpec(text, kind, KINDS[kind].read(rest, text))
        except UsageError as error:
            raise UsageError(usage_message(str(error))) from None
    if not _NAME.match(kind) or not rest.strip():
        raise UsageError(usage_message(f"malformed model spec {raw!r}"))
    return AgentSpec(text, "model", f"{kind}/{rest}")


def import_from_current_folder() -> None:
    """Put the current folder first on sys.path, as `python -m pytest` does and the `pytest` script does not,
    so `python:my_agent:Agent` finds ./my_agent.py however pytest was started."""
    here = os.getcwd()
    if not any(os.path.abspath(entry or os.curdir) == here for entry in sys.path):
        sys.path.insert(0, here)


AGENT_METHODS = ("reset", "act", "close")
_NEEDS = "an agent needs reset(task), act(observation) and close()"


def check_python_agent(target: str) -> None:
    """A python:MODULE:ATTR that cannot give an agent is one usage error before any episode: a module that is not
    found or does not import, a missing ATTR, or an ATTR (class, factory or object) without the agent's methods."""
    import_from_current_folder()
    module_name, _, attr = target.rpartition(":")
    try:
        found = importlib.util.find_spec(module_name)
    except (ImportError, ValueError) as error:  # a parent package that cannot be imported
        raise UsageError(f"cannot load agent python:{target}: {error}") from None
    if found is None:
        raise UsageError(f"cannot load agent python:{target}: no module named {module_name!r} "
                         f"in the current folder ({os.getcwd()}) or on sys.path")
    try:
        module = importlib.import_module(module_name)
    except Exception as error:  # the user's module: any exception is theirs to fix, said in one line
        raise UsageError(f"cannot load agent python:{target}: importing {module_name} raised "
                         f"{type(error).__name__}: {' '.join(str(error).split())}") from None
    if not hasattr(module, attr):
        raise UsageError(f"cannot load agent python:{target}: module {module_name} has no attribute {attr!r}")
    factory = getattr(module, attr)
    if isinstance(factory, type):  # a class: its instances have what the class has
        _check_methods(target, factory)
        return
    agent = _built(target, factory)
    _check_methods(target, agent)
    with contextlib.suppress(Exception):
        agent.close()


def _built(target: str, factory: Any) -> Any:
    """What a factory (or an object given as it is) makes, as load_python_agent makes it."""
    if not callable(factory) or isinstance(factory, Agent):
        return factory
    try:
        return factory()
    except Exception as error:
        raise UsageError(f"python:{target}() raised {type(error).__name__}: {' '.join(str(error).split())}") from None


def _check_methods(target: str, agent: Any) -> None:
    missing = [name for name in AGENT_METHODS if not callable(getattr(agent, name, None))]
    if len(missing) == len(AGENT_METHODS) and not isinstance(agent, type):
        raise UsageError(f"python:{target} gives {type(agent).__name__}, not an agent: {_NEEDS}")
    if missing:
        raise UsageError(f"python:{target} gives an object without {', '.join(f'{name}()' for name in missing)}: "
                         f"{_NEEDS}")


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
    """Build the agent for one episode with its kind's builder; BackendUnavailable when a built-in does not exist
    for the app (or a CLI is not installed)."""
    return spec.agent_kind.build(spec, app, query, env)


def build_builtin(spec: AgentSpec, app: App, query: Query, env: Environment) -> Agent:
    """builtin:NAME: noop for any app, the others from the app (App.builtin_agent: the only channel to the hidden
    query)."""
    if spec.target == "noop":
        return NoopAgent()
    agent = app.builtin_agent(spec.target, query, env)
    if agent is None:
        raise BackendUnavailable(f"builtin:{spec.target} is not available for the {app.name} app")
    return agent


def build_python(spec: AgentSpec, app: App, query: Query, env: Environment) -> Agent:
    return load_python_agent(spec.target)


def check_python_spec(spec: AgentSpec) -> None:
    check_python_agent(spec.target)
