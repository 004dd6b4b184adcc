"""The episode loop: an agent's replies (or a driving agent's own calls) played through one EpisodeSession."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from .errors import InfraError
from .session import EpisodeSession
from .steps import (  # re-exported: the loop's pieces are imported from here
    MAX_REPLY_CHARS,
    UNRESOLVING_METRICS,
    AgentReplyTypeError,
    AgentTimeout,
    Episode,
    EpisodeAgentError,
    EpisodeConfig,
    EpisodeEnd,
    agent_traceback,
    as_reply,
    call_with_timeout,
    end_episode,
    final_outcome,
    reply_problem,
    step_header,
)
from .types import EpisodeResult, Observation, Query, Reply, Task

if TYPE_CHECKING:
    from .agent import Agent
    from .app import Environment

__all__ = ["MAX_REPLY_CHARS", "UNRESOLVING_METRICS", "AgentReplyTypeError", "AgentTimeout", "Episode",
           "EpisodeAgentError", "EpisodeConfig", "EpisodeEnd", "agent_traceback", "as_reply",
           "agent_time", "call_with_timeout", "end_episode", "final_outcome", "reply_problem", "run_episode",
           "step_header"]


def _no_reply(call: Callable[[], object]) -> Callable[[], Reply]:
    """The call, answering an empty reply: what reset() and drive() return is ignored."""
    def called() -> Reply:
        call()
        return Reply("")

    return called


def _ask_agent(function: Callable[[], Reply | str], timeout_s: float) -> Reply:
    """Call the agent; its exceptions and timeouts become agent errors (with the agent's traceback, for whoever
    debugs it), InfraError passes through."""
    try:
        return call_with_timeout(function, timeout_s)
    except InfraError:
        raise
    except (AgentTimeout, AgentReplyTypeError) as error:
        raise EpisodeAgentError(str(error)) from error
    except Exception as error:
        raise EpisodeAgentError(f"agent raised {type(error).__name__}: {error}\n{agent_traceback(error)}") from error


def run_episode(
    env: Environment,
    agent: Agent,
    query: Query,
    task: Task,
    config: EpisodeConfig,
    agent_name: str,
    trial: int = 0,
    interface: str | None = None,
) -> EpisodeResult:
    """Run one episode to the end; never raises for agent mistakes or infrastructure failures.

    An agent with `act(observation)` is asked once per turn (its tool calls, when `task.tools` offers tools, are
    one step each); an agent with `drive(session)` plays the whole episode itself through the EpisodeSession,
    within `config.drive_limit_s`. `interface` (default: the agent's `interface` attribute, else "tools" when
    tools are offered, else "text") is recorded in the result."""
    session = EpisodeSession(env, query, task, config, agent_name, trial, interface or getattr(agent, "interface", None))
    try:
        session.open()
    except InfraError:
        return session.result()
    try:
        _ask_agent(_no_reply(partial(agent.reset, session.task)), config.agent_timeout_s)
        drive = getattr(agent, "drive", None)
        if callable(drive):
            _ask_agent(_no_reply(partial(drive, session)), config.drive_limit_s)
        else:
            _act_loop(agent, session, config)
    except EpisodeAgentError as error:
        session.fail(str(error))
    except InfraError as error:
        session.fail(f"infrastructure: {error}", infra=True)
    return session.result()


def _act_loop(agent: Agent, session: EpisodeSession, config: EpisodeConfig) -> None:
    observation = Observation(session.first_observation)
    while not session.over:
        shown = observation
        started = time.perf_counter()
        try:
            reply = _ask_agent(partial(agent.act, shown), config.agent_timeout_s)
        except BaseException:  # a reply that timed out or failed still took this long: latency never improves by failing
            session.add_agent_time(time.perf_counter() - started)
            raise
        observation = session.reply(reply, agent_time(reply, time.perf_counter() - started))


def agent_time(reply: Reply, elapsed_s: float) -> float:
    """The agent's time for a reply: what its client measured up to the first byte of the answer (so padding,
    chunking or a slow link after it move nothing), never more than act() took; else act()'s wall time."""
    if reply.answer_s is None:
        return elapsed_s
    return min(max(0.0, float(reply.answer_s)), elapsed_s)
