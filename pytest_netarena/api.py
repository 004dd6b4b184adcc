"""The public front: everything a user imports, from one module (`from pytest_netarena.api import Task, Reply, ...`).

What is here is the API: docs/api.md lists it, tests/house/test_public_api.py holds it, and a name leaves only
with a release note. Everything else is the package's inside and may move.
"""

from __future__ import annotations

from .agents.spec import AgentSpec, make_agent, parse_agent_spec
from .apps import available_apps, get_app
from .core.agent import Agent
from .core.app import App, Environment, OptionSpec, PromptSpec, RunOptions
from .core.catalogue import Category, Chooser
from .core.episode import run_episode
from .core.errors import BackendUnavailable, InfraError, UsageError
from .core.rules import NETARENA_RULES, OURS, Ruleset
from .core.session import EpisodeSession
from .core.tools import Tool, ToolCall, ToolResult
from .core.types import EpisodeResult, Judgement, Observation, Outcome, Query, Reply, StepOutcome, Task, Usage
from .plugin.assertions import assert_episode
from .run.plan import EpisodePlan, Traits, plan_episode
from .run.runner import play
from .training.registration import ENV_IDS, register_envs
from .validity.conformance import AppCheck, AppCheckError, check_app

__all__ = [
    # writing an agent: what it is told, what it answers, its tools
    "Agent", "Task", "Reply", "Usage", "Observation", "Tool", "ToolCall", "ToolResult", "EpisodeSession",
    # writing an app
    "App", "Environment", "PromptSpec", "OptionSpec", "RunOptions", "Category", "Chooser", "Query", "StepOutcome",
    "Judgement", "check_app", "AppCheck", "AppCheckError",
    # running episodes
    "get_app", "available_apps", "parse_agent_spec", "AgentSpec", "make_agent", "plan_episode", "EpisodePlan",
    "Traits", "run_episode", "play", "EpisodeResult", "Outcome", "assert_episode", "Ruleset", "OURS",
    "NETARENA_RULES",
    # training
    "ENV_IDS", "register_envs",
    # errors
    "UsageError", "BackendUnavailable", "InfraError",
]
