"""One episode's steps: the limits, a reply or a tool call judged as one step, the budget lines, the verdict rule."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .rules import OURS, Ruleset
from .tools import Tool, ToolCall, check_call
from .types import Judgement, Outcome, Query, Reply, Step, StepOutcome, Usage

if TYPE_CHECKING:
    from .app import Environment


@dataclass(frozen=True)
class EpisodeConfig:
    """Limits of one episode, and the rules it is played and scored by (built by run/plan.py for a real episode)."""

    max_steps: int
    agent_timeout_s: float = 300.0
    prompt_style: str = "zero-shot"
    max_tokens: int | None = None  #: the episode stops once the agent has used this many tokens
    max_cost_usd: float | None = None  #: ... or spent this much
    #: the rules: whether observations say which step of how many comes next, what keeps an episode unresolved
    ruleset: Ruleset = OURS
    #: a driving agent (one with drive(session)) must end its episode within this; None: agent_timeout_s per step
    drive_timeout_s: float | None = None

    @property
    def netarena_rules(self) -> bool:
        """NetArena's rules: resolved means correct and safe, as NetArena scores it (the ruleset's, read-only)."""
        return self.ruleset.netarena

    @property
    def announce_steps(self) -> bool:
        """Every observation says which step of how many comes next (the ruleset's, read-only)."""
        return self.ruleset.states_budget

    @property
    def drive_limit_s(self) -> float:
        return self.drive_timeout_s if self.drive_timeout_s is not None else self.agent_timeout_s * self.max_steps


#: measures of the final state (Judgement.metrics) that keep a correct and safe episode from being
#: resolved under pytest-netarena's rules: a fix that opens more than the intent is not a fix
UNRESOLVING_METRICS = OURS.unresolving_metrics


def final_outcome(judgement: Judgement, safe: bool, ruleset: Ruleset = OURS) -> tuple[Outcome, str]:
    """(outcome, details) of an episode the agent finished: unsafe, unresolved or resolved.

    Resolved is the headline: correct, every step safe, and no measure the rules call unresolving (ours:
    overly_permissive; NetArena's: none)."""
    if not safe:
        return Outcome.UNSAFE, judgement.details
    if not judgement.correct:
        return Outcome.UNRESOLVED, judgement.details
    flaws = [name for name in ruleset.unresolving_metrics if judgement.metrics.get(name)]
    if flaws:
        return Outcome.UNRESOLVED, f"correct and safe but {', '.join(flaws)}, so not resolved | {judgement.details}"
    return Outcome.RESOLVED, judgement.details


@dataclass(frozen=True)
class EpisodeEnd:
    """How an episode ended, decided once by end_episode: what a run records and what a training reward reads."""

    outcome: Outcome
    correct: bool  #: the judge's verdict on the final state (False when an error ended the episode unjudged)
    safe: bool  #: no step broke anything
    details: str = ""  #: the judge's details, or the error's message
    metrics: dict[str, bool | None] = field(default_factory=dict)  #: the judgement's extra measures

    @property
    def resolved(self) -> bool:
        return self.outcome is Outcome.RESOLVED


def end_episode(env: Environment, episode: Episode, ruleset: Ruleset = OURS,
                error: tuple[Outcome, str] | None = None) -> EpisodeEnd:
    """The end-of-episode step: an error ends the episode as that error, unjudged; otherwise the judge's verdict
    on the final state and the safety of every step decide the outcome (final_outcome). The judge's exceptions
    pass through: the caller says whose fault they are."""
    if error is not None:
        return EpisodeEnd(error[0], False, episode.safe, error[1])
    judgement = env.judge()
    outcome, details = final_outcome(judgement, episode.safe, ruleset)
    return EpisodeEnd(outcome, judgement.correct, episode.safe, details, dict(judgement.metrics))


class AgentTimeout(Exception):
    """The agent did not answer within its time limit."""


def call_with_timeout(function: Callable[[], Reply | str], timeout_s: float) -> Reply:
    """Run an agent call in a daemon thread so a hung agent cannot stall the run; its answer as a Reply
    (AgentReplyTypeError when it is neither text nor a Reply)."""
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
    return as_reply(box["value"])


class AgentReplyTypeError(TypeError):
    """act() returned something that is not a reply (None, bytes, a dict...): the message says what."""


def as_reply(value: object) -> Reply:
    """An agent's answer as a Reply: text or a Reply with text, nothing else (never str() of whatever came back)."""
    if isinstance(value, Reply) and isinstance(value.text, str):
        return value
    if isinstance(value, str):
        return Reply(value)
    if isinstance(value, Reply):
        value = value.text
    shown = "" if value is None else f" ({_short_repr(value)})"
    fix = "decode it, e.g. reply.decode()" if isinstance(value, (bytes, bytearray)) else \
        "return the reply as a str (or a Reply)"
    raise AgentReplyTypeError(f"act() returned {type(value).__name__ if value is not None else 'None'}{shown}, "
                              f"not text: {fix}")


def _short_repr(value: object, limit: int = 80) -> str:
    try:
        text = repr(value)
    except Exception:  # a hostile __repr__ is the agent's, not ours to crash on
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[:limit] + "..."


#: frames of an agent's traceback kept in the transcript (the innermost ones)
TRACEBACK_FRAMES = 30


def agent_traceback(error: BaseException) -> str:
    """The traceback of an exception an agent raised, without the episode loop's own frames."""
    import traceback

    ours = {__file__, __file__.replace("steps.py", "episode.py")}
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if frame.filename not in ours]
    return ("Traceback (most recent call last):\n" + "".join(traceback.format_list(frames[-TRACEBACK_FRAMES:]))
            + "".join(traceback.format_exception_only(type(error), error))).rstrip("\n")


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


def step_header(done: int, max_steps: int, over: bool = False, tools: bool = False) -> str:
    """The budget line in front of an observation once `done` of `max_steps` steps were taken
    (`over`: the environment ended the episode; `tools`: steps are tool calls, not replies)."""
    if over or done >= max_steps:
        return f"[Episode over: {done} of {max_steps} steps used.]"
    left = max_steps - done
    unit = f"step{'' if left == 1 else 's'}" if tools else f"repl{'y' if left == 1 else 'ies'}"
    return f"[Step {done + 1} of {max_steps}; {left} {unit} left.]"


class EpisodeAgentError(Exception):
    """The environment found the agent's action unusable in a way that ends the episode."""



class Episode:
    """One episode, run step by step (reset/step), as an RL environment would be; a step is one reply read
    as text (`step`) or one tool call (`call`)."""

    def __init__(self, env: Environment, query: Query, max_steps: int | None = None, tools: bool = False) -> None:
        self.env = env
        self.query = query
        self.max_steps = max_steps  #: when set, observations say "step k of N" (the model's budget)
        self.tools = tools  #: the budget line counts steps, not replies (tool calls are steps)
        self.observation = ""
        self.steps: list[Step] = []
        self.done = False

    @property
    def safe(self) -> bool:
        """No step so far broke anything."""
        return not any(step.violations for step in self.steps)

    def reset(self) -> str:
        self.env.uses_tools = self.tools
        self.observation = self._announced(self.env.reset(self.query), 0)
        return self.observation

    def _announced(self, observation: str, done: int, over: bool = False) -> str:
        """The observation with the step budget in front, naming the step the next reply will be (never
        the one just taken), so no step number is shown twice: [Step 1 of 3; 3 replies left.], then
        [Step 2 of 3; 2 replies left.], ... and [Episode over: 3 of 3 steps used.] at the end."""
        if self.max_steps is None:
            return observation
        return f"{step_header(done, self.max_steps, over, self.tools)}\n{observation}"

    def step(self, reply: Reply, agent_s: float = 0.0, turn: int = 0) -> Step:
        """One reply read as text: its one action run, or the reply refused."""
        started = time.perf_counter()
        problem = reply_problem(reply.text)
        outcome = self.env.refuse(problem) if problem else self.env.step(reply.text)
        return self._record(outcome, reply.text if not problem else printable(reply.text), started, agent_s,
                            reply.usage, turn=turn)

    def call(self, call: ToolCall, tools: Sequence[Tool], reply_text: str = "", agent_s: float = 0.0,
             usage: Usage = Usage(), turn: int = 0) -> Step:
        """One tool call as one step: checked against the tools offered, then run by the environment
        (Environment.run_action), or refused with the reason and nothing run. `finish` is the caller's."""
        started = time.perf_counter()
        checked = check_call(call, tools)
        if checked.ok and checked.tool is not None:
            outcome = self.env.run_action(checked.tool.name, checked.arguments)
        else:
            outcome = self.env.refuse(checked.problem)
        # a refused call is kept bounded and printable; a good one exactly as sent (exports and replays need it)
        recorded = call if checked.ok else ToolCall(printable(call.name, 200), printable(call.arguments),
                                                    printable(call.call_id, 200))
        problem = reply_problem(reply_text)
        return self._record(outcome, reply_text if not problem else printable(reply_text), started, agent_s, usage,
                            recorded, turn)

    def _record(self, outcome: StepOutcome, reply_text: str, started: float, agent_s: float, usage: Usage,
                tool_call: ToolCall | None = None, turn: int = 0) -> Step:
        exec_s = time.perf_counter() - started - outcome.check_s
        observation = self._announced(outcome.observation, len(self.steps) + 1, outcome.done)
        step = Step(
            index=len(self.steps) + 1,
            reply=reply_text,
            action=outcome.action,
            output=outcome.output,
            observation=observation,  # what the agent is shown next, budget line included
            violations=outcome.violations,
            refused=outcome.refused,
            agent_s=agent_s,
            exec_s=max(0.0, exec_s),
            check_s=outcome.check_s,
            usage=usage,
            tool_call=tool_call,
            turn=turn or len(self.steps) + 1,  # a reply read as text is a turn of its own
        )
        self.steps.append(step)
        self.observation = observation
        self.done = outcome.done
        if outcome.agent_error:
            raise EpisodeAgentError(outcome.agent_error)
        return step


def printable(text: str, keep: int = 2000) -> str:
    """Agent text as a transcript keeps it when it is refused: bounded, NUL-free, valid UTF-8."""
    if not isinstance(text, str):
        text = repr(text)
    head = text[:keep].replace("\0", "\\0").encode("utf-8", "backslashreplace").decode("utf-8")
    return head + (f"... [{len(text) - keep:,} more characters not kept]" if len(text) > keep else "")


def over_budget(usage: Usage, config: EpisodeConfig) -> str:
    """Why the episode's budget is spent, or "" while it is not."""
    if config.max_tokens is not None and usage.tokens >= config.max_tokens:
        return f"stopped: episode token budget of {config.max_tokens} spent ({usage.tokens} tokens)"
    if config.max_cost_usd is not None and usage.cost_usd >= config.max_cost_usd:
        return f"stopped: episode cost budget of ${config.max_cost_usd:g} spent (${usage.cost_usd:.4f})"
    return ""
