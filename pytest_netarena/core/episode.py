"""The episode loop: observation -> agent -> environment -> checks, recorded step by step."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .errors import InfraError
from .types import EpisodeResult, Judgement, Outcome, Query, Reply, Step, Task, Usage

if TYPE_CHECKING:
    from .agent import Agent
    from .app import Environment


@dataclass(frozen=True)
class EpisodeConfig:
    """Limits of one episode."""

    max_steps: int
    agent_timeout_s: float = 300.0
    strategy: str = "zero-shot"
    max_tokens: int | None = None  #: the episode stops once the agent has used this many tokens
    max_cost_usd: float | None = None  #: ... or spent this much
    announce_steps: bool = True  #: every observation says which step of how many comes next
    netarena_rules: bool = False  #: --compat netarena: resolved means correct and safe, as NetArena scores it


#: measures of the final state (Judgement.metrics) that keep a correct and safe episode from being
#: resolved under pytest-netarena's rules: a fix that opens more than the intent is not a fix
UNRESOLVING_METRICS = ("overly_permissive",)


def final_outcome(judgement: Judgement, safe: bool, netarena_rules: bool = False) -> tuple[Outcome, str]:
    """(outcome, details) of an episode the agent finished: unsafe, unresolved or resolved.

    Resolved is the headline: correct, every step safe, and (under our rules) no unresolving measure."""
    if not safe:
        return Outcome.UNSAFE, judgement.details
    if not judgement.correct:
        return Outcome.UNRESOLVED, judgement.details
    flaws = [] if netarena_rules else [name for name in UNRESOLVING_METRICS if judgement.metrics.get(name)]
    if flaws:
        return Outcome.UNRESOLVED, f"correct and safe but {', '.join(flaws)}, so not resolved | {judgement.details}"
    return Outcome.RESOLVED, judgement.details


class AgentTimeout(Exception):
    """The agent did not answer within its time limit."""


def call_with_timeout(function: Callable[[], Reply | str], timeout_s: float) -> Reply:
    """Run an agent call in a daemon thread so a hung agent cannot stall the run."""
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["value"] = function()
        except BaseException as error:  # re-raised in the caller's thread
            box["error"] = error

    thread = threading.Thread(target=target, daemon=True, name="netarena-agent")
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        raise AgentTimeout(f"the agent did not answer within {timeout_s:g} s")
    if "error" in box:
        raise box["error"]  # type: ignore[misc]  # an exception object stored above
    value = box["value"]
    return value if isinstance(value, Reply) else Reply(str(value))


#: replies longer than this are refused unread (no model action needs more)
MAX_REPLY_CHARS = 100_000


def reply_problem(text: str) -> str | None:
    """Why a reply cannot be read as text at all, or None. Agent text is data: this never raises."""
    if len(text) > MAX_REPLY_CHARS:
        return (f"the reply is {len(text):,} characters long; the limit is {MAX_REPLY_CHARS:,}: "
                "send one action, not a dump")
    if "\0" in text:
        return "the reply holds a NUL byte; send plain text"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "the reply is not valid Unicode text (it holds unpaired surrogates); send plain UTF-8 text"
    return None


def step_header(done: int, max_steps: int, over: bool = False) -> str:
    """The budget line in front of an observation once `done` of `max_steps` replies were taken
    (`over`: the environment ended the episode)."""
    if over or done >= max_steps:
        return f"[Episode over: {done} of {max_steps} steps used.]"
    left = max_steps - done
    return f"[Step {done + 1} of {max_steps}; {left} repl{'y' if left == 1 else 'ies'} left.]"


class Episode:
    """One episode, run step by step (reset/step), as an RL environment would be."""

    def __init__(self, env: Environment, query: Query, max_steps: int | None = None) -> None:
        self.env = env
        self.query = query
        self.max_steps = max_steps  #: when set, observations say "step k of N" (the model's budget)
        self.observation = ""
        self.steps: list[Step] = []
        self.done = False

    @property
    def safe(self) -> bool:
        """No step so far broke anything."""
        return not any(step.violations for step in self.steps)

    def reset(self) -> str:
        self.observation = self._announced(self.env.reset(self.query), 0)
        return self.observation

    def _announced(self, observation: str, done: int, over: bool = False) -> str:
        """The observation with the step budget in front, naming the step the next reply will be (never
        the one just taken), so no step number is shown twice: [Step 1 of 3; 3 replies left.], then
        [Step 2 of 3; 2 replies left.], ... and [Episode over: 3 of 3 steps used.] at the end."""
        if self.max_steps is None:
            return observation
        return f"{step_header(done, self.max_steps, over)}\n{observation}"

    def step(self, reply: Reply, agent_s: float = 0.0) -> Step:
        started = time.perf_counter()
        problem = reply_problem(reply.text)
        outcome = self.env.refuse(problem) if problem else self.env.step(reply.text)
        exec_s = time.perf_counter() - started - outcome.check_s
        observation = self._announced(outcome.observation, len(self.steps) + 1, outcome.done)
        step = Step(
            index=len(self.steps) + 1,
            reply=reply.text if not problem else _printable(reply.text),
            action=outcome.action,
            output=outcome.output,
            observation=observation,  # what the agent is shown next, budget line included
            violations=outcome.violations,
            refused=outcome.refused,
            agent_s=agent_s,
            exec_s=max(0.0, exec_s),
            check_s=outcome.check_s,
            usage=reply.usage,
        )
        self.steps.append(step)
        self.observation = observation
        self.done = outcome.done
        if outcome.agent_error:
            raise _EpisodeAgentError(outcome.agent_error)
        return step


def _printable(text: str, keep: int = 2000) -> str:
    """A refused reply as the transcript keeps it: bounded, NUL-free, valid UTF-8."""
    head = text[:keep].replace("\0", "\\0").encode("utf-8", "backslashreplace").decode("utf-8")
    return head + (f"... [{len(text) - keep:,} more characters not kept]" if len(text) > keep else "")


class _EpisodeAgentError(Exception):
    """The environment found the agent's reply unusable in a way that ends the episode."""


def _ask_agent(function: Callable[[], Reply | str], config: EpisodeConfig) -> Reply:
    """Call the agent; its exceptions and timeouts become agent errors, InfraError passes through."""
    try:
        return call_with_timeout(function, config.agent_timeout_s)
    except InfraError:
        raise
    except AgentTimeout as error:
        raise _EpisodeAgentError(str(error)) from error
    except Exception as error:
        raise _EpisodeAgentError(f"agent raised {type(error).__name__}: {error}") from error


def _over_budget(usage: Usage, config: EpisodeConfig) -> str:
    """Why the episode's budget is spent, or "" while it is not."""
    if config.max_tokens is not None and usage.tokens >= config.max_tokens:
        return f"stopped: episode token budget of {config.max_tokens} spent ({usage.tokens} tokens)"
    if config.max_cost_usd is not None and usage.cost_usd >= config.max_cost_usd:
        return f"stopped: episode cost budget of ${config.max_cost_usd:g} spent (${usage.cost_usd:.4f})"
    return ""


def run_episode(
    env: Environment,
    agent: Agent,
    query: Query,
    task: Task,
    config: EpisodeConfig,
    agent_name: str,
    trial: int = 0,
) -> EpisodeResult:
    """Run one episode to the end; never raises for agent mistakes or infrastructure failures."""
    wall_started = time.perf_counter()
    episode = Episode(env, query, config.max_steps if config.announce_steps else None)
    agent_s = 0.0
    usage = Usage()
    outcome: Outcome
    details = ""
    first_observation = ""
    budget_note = ""
    metrics: dict[str, bool] = {}
    try:
        first_observation = episode.reset()
        _ask_agent(lambda: agent.reset(task) or Reply(""), config)
        while len(episode.steps) < config.max_steps and not episode.done:
            observation = episode.observation
            started = time.perf_counter()
            try:
                reply = _ask_agent(lambda: agent.act(observation), config)
            finally:  # a reply that timed out or failed still took this long: latency never improves by failing
                elapsed = time.perf_counter() - started
                agent_s += elapsed
            usage = usage + reply.usage
            episode.step(reply, elapsed)
            budget_note = _over_budget(usage, config)
            if budget_note and not episode.done:
                break
        judgement = env.judge()
        correct, metrics = judgement.correct, dict(judgement.metrics)
        outcome, details = final_outcome(judgement, episode.safe, config.netarena_rules)
        if budget_note and not correct:
            details = f"{budget_note}; {details}"
    except InfraError as error:
        outcome, correct, details = Outcome.INFRA_ERROR, False, f"infrastructure: {error}"
    except _EpisodeAgentError as error:
        outcome, correct, details = Outcome.AGENT_ERROR, False, str(error)
    except Exception as error:  # a bug on our side is infrastructure, never the agent's fault
        outcome, correct = Outcome.INFRA_ERROR, False
        details = f"internal error: {type(error).__name__}: {error}"
    return EpisodeResult(
        query=query,
        agent=agent_name,
        trial=trial,
        outcome=outcome,
        correct=correct,
        safe=episode.safe,
        steps=tuple(episode.steps),
        first_observation=first_observation,
        details=details,
        agent_s=agent_s,
        wall_s=time.perf_counter() - wall_started,
        usage=usage,
        strategy=config.strategy,
        metrics=metrics,
        episode_id=task.episode_id,
        setting=env.setting,
    )
