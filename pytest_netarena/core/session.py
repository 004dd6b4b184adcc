"""One episode served step by step to any driver (the act loop, an MCP server, a CLI agent): thread-safe, judged once.

The session owns the end of an episode: the step and token budgets, the finish tool, calls after the end,
agent and infrastructure errors, and the verdict, so every interface ends its episodes the same way.
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from .errors import InfraError
from .steps import EpisodeAgentError, Episode, EpisodeConfig, EpisodeEnd, end_episode, over_budget, printable
from .tools import FINISH, Tool, ToolCall, ToolResult, check_call
from .types import EpisodeResult, Observation, Outcome, Query, Reply, Task, Usage

if TYPE_CHECKING:
    from .app import Environment


def offered_tools(env: Environment) -> tuple[Tool, ...]:
    """The tools an episode of env offers: the app's actions, then `finish`."""
    return (*env.tools(), FINISH)


class EpisodeSession:
    """One episode of `query` on `env`: `open()` once, then `reply(...)` or `call(...)` per action, `finish()`,
    and `result()` (judged once). Every method is serialised by one lock and none raises for what an agent
    sends; after the end, calls are answered "not run". Tools are offered when `task.tools` is not empty.
    """

    def __init__(self, env: Environment, query: Query, task: Task, config: EpisodeConfig, agent_name: str = "",
                 trial: int = 0, interface: str | None = None) -> None:
        self.env = env
        self.query = query
        self.config = config
        self.agent_name = agent_name
        self.trial = trial
        self.uses_tools = bool(task.tools)
        self.interface = interface or ("tools" if self.uses_tools else "text")
        self.task = task  #: what the agent is told; after open() its tools are the episode's own
        self.episode = Episode(env, query, config.max_steps if config.ruleset.states_budget else None, self.uses_tools)
        self.tools: tuple[Tool, ...] = ()  #: the tools offered (set by open(); empty for the text protocol)
        self.first_observation = ""
        self.usage = Usage()
        self.agent_s = 0.0  #: the agent's time: what callers report, or the gaps between calls the session saw
        self.ended_by = ""  #: one of core.types.ENDINGS once the episode is over
        self.finish_call: ToolCall | None = None
        self.finish_turn = 0
        self.turns = 0  #: the agent's turns so far: replies, or a driver's calls (each call its own turn)
        self._lock = threading.RLock()
        self._error: tuple[Outcome, str] | None = None
        self._budget_note = ""
        self._end: EpisodeEnd | None = None
        self._result: EpisodeResult | None = None
        self._started = time.perf_counter()
        self._last_answer = self._started  #: when the session last answered the agent

    # ----- state --------------------------------------------------------------------------------------------------

    @property
    def over(self) -> bool:
        """The episode has ended: no further action runs."""
        return bool(self.ended_by)

    @property
    def observation(self) -> str:
        """The latest observation (budget line included)."""
        return self.episode.observation

    # ----- driving ------------------------------------------------------------------------------------------------

    def open(self) -> Observation:
        """Reset the environment and return the first observation. An environment that cannot start raises
        InfraError, and the session records it (result() is then an infrastructure error)."""
        with self._lock:
            if self.first_observation or self.over:
                raise RuntimeError("open() was already called")
            try:
                self.first_observation = self.episode.reset()
                if self.uses_tools:
                    self.tools = offered_tools(self.env)
                    self.task = replace(self.task, tools=self.tools)
            except Exception as error:
                self._end_with_error(error)
                assert self._error is not None
                raise InfraError(self._error[1]) from error
            self._last_answer = time.perf_counter()
            return Observation(self.first_observation)

    def reply(self, reply: Reply, agent_s: float = 0.0) -> Observation:
        """One reply of an act() loop: its tool calls in order, each one step (when tools are offered), else its
        text read as one action. Returns what the agent is shown next (with one result per call)."""
        with self._lock:
            self.usage = self.usage + reply.usage
            self.agent_s += agent_s
            self.turns += 1
            results: list[ToolResult] = []
            if self.over:
                results = [self._not_run(call) for call in reply.tool_calls]
            elif reply.tool_calls and self.uses_tools:
                for index, call in enumerate(reply.tool_calls):  # the reply's text, cost and time go with its first step
                    first = index == 0
                    results.append(self._run(call, reply.text if first else "", agent_s if first else 0.0,
                                             reply.usage if first else Usage()))
            else:
                note = "not run: tools are not offered in this episode; the reply's text was read instead"
                results = [ToolResult(call.call_id, call.name, note, True) for call in reply.tool_calls]
                self._guarded(lambda: self.episode.step(reply, agent_s, self.turns))
                self._after_step()
            self._check_budget()
            self._last_answer = time.perf_counter()
            return Observation(self.observation, tuple(results))

    def call(self, call: ToolCall, agent_s: float | None = None) -> ToolResult:
        """One tool call as one step (the finish tool ends the episode). `agent_s`: the agent's time for it
        (None: measured as the time since the session last answered)."""
        with self._lock:
            thought = time.perf_counter() - self._last_answer if agent_s is None else agent_s
            self.agent_s += thought
            self.turns += 1
            try:
                return self._run(call, "", thought, Usage())
            finally:
                self._check_budget()
                self._last_answer = time.perf_counter()

    def finish(self, call: ToolCall | None = None) -> ToolResult:
        """The agent says it is done (a `finish` call, or a driver ending the episode on its behalf)."""
        with self._lock:
            call = call or ToolCall(FINISH.name, "{}")
            if self.over:
                return self._not_run(call)
            self.agent_s += time.perf_counter() - self._last_answer
            self.turns += 1
            return self._finish(call)

    def add_usage(self, usage: Usage) -> None:
        """Tokens and cost the agent reported outside reply() (e.g. a CLI agent's totals); the budget applies."""
        with self._lock:
            self.usage = self.usage + usage
            self._check_budget()

    def add_agent_time(self, seconds: float) -> None:
        """Agent time spent outside reply() and call() (e.g. an act() that failed)."""
        with self._lock:
            self.agent_s += max(0.0, seconds)

    def fail(self, message: str, infra: bool = False) -> None:
        """End the episode as an agent error (the agent crashed, timed out or broke its protocol), or with
        `infra` as an infrastructure error (e.g. the model endpoint is down), never counted against the agent."""
        with self._lock:
            if self._result is None and self._error is None:
                self._error = (Outcome.INFRA_ERROR if infra else Outcome.AGENT_ERROR, message)
                self.ended_by = "error"

    def end(self) -> EpisodeEnd:
        """How the episode ended, decided once: an episode still open ends here (the agent stopped), then
        core.steps.end_episode judges it, unless an error ended it. Never raises."""
        with self._lock:
            if self._end is None:
                if not self.over:  # the agent stopped without finish: it thought until now
                    self.agent_s += time.perf_counter() - self._last_answer
                    self.ended_by = "agent"
                self._end = self._decided()
            return self._end

    @property
    def judged(self) -> bool:
        """Whether result() has judged the episode (its result is made once, then kept)."""
        return self._result is not None

    def result(self) -> EpisodeResult:
        """The episode's result, judged once (end()); the agent's usage and time are as reported so far (a CLI agent
        reports its totals after an MCP client may have read the verdict)."""
        with self._lock:
            if self._result is not None and (self._result.usage, self._result.agent_s) != (self.usage, self.agent_s):
                self._result = replace(self._result, usage=self.usage, agent_s=self.agent_s)
            if self._result is None:
                end = self.end()
                self._result = EpisodeResult(
                    query=self.query, agent=self.agent_name, trial=self.trial, outcome=end.outcome,
                    correct=end.correct, safe=end.safe, steps=tuple(self.episode.steps),
                    first_observation=self.first_observation, details=end.details, agent_s=self.agent_s,
                    wall_s=time.perf_counter() - self._started, usage=self.usage, prompt_style=self.config.prompt_style,
                    metrics=dict(end.metrics), episode_id=self.task.episode_id, interface=self.interface,
                    ended_by=self.ended_by, finish=self.finish_call, finish_turn=self.finish_turn, tools=self.tools,
                    setting=getattr(self.env, "setting", ""),
                )
            return self._result

    # ----- internals ----------------------------------------------------------------------------------------------

    def _run(self, call: ToolCall, reply_text: str, agent_s: float, usage: Usage) -> ToolResult:
        if self.over:
            return self._not_run(call)
        if call.name == FINISH.name and check_call(call, self.tools).ok:
            return self._finish(call)
        if not self.uses_tools:
            return ToolResult(call.call_id, str(call.name)[:200], "not run: tools are not offered in this episode; "
                              "reply in text", True)
        before = len(self.episode.steps)
        self._guarded(lambda: self.episode.call(call, self.tools, reply_text, agent_s, usage, self.turns))
        self._after_step()
        if len(self.episode.steps) == before:  # the environment failed: no step was recorded
            return ToolResult(call.call_id, call.name, self._ended_note(), True)
        step = self.episode.steps[-1]
        failed = step.refused or (self._error is not None and self._error[0] is Outcome.AGENT_ERROR)
        return ToolResult(call.call_id, step.tool_call.name if step.tool_call else call.name, step.observation,
                          failed)

    def _finish(self, call: ToolCall) -> ToolResult:
        self.finish_call, self.finish_turn = call, self.turns
        self.ended_by = "agent"
        return ToolResult(call.call_id, FINISH.name, "The episode is over: you called finish. Its final state "
                          "is judged as it is.")

    def _guarded(self, action) -> None:
        """Run one step; an agent error or an infrastructure failure ends the episode (never raises)."""
        try:
            action()
        except EpisodeAgentError as error:
            self._error = (Outcome.AGENT_ERROR, str(error))
            self.ended_by = "error"
        except Exception as error:
            self._end_with_error(error)

    def _end_with_error(self, error: BaseException) -> None:
        if isinstance(error, InfraError):
            self._error = (Outcome.INFRA_ERROR, f"infrastructure: {error}")
        else:  # a bug on our side is infrastructure, never the agent's fault
            self._error = (Outcome.INFRA_ERROR, f"internal error: {type(error).__name__}: {error}")
        self.ended_by = "error"

    def _after_step(self) -> None:
        if self.over:
            return
        if self.episode.done:
            self.ended_by = "environment"
        elif len(self.episode.steps) >= self.config.max_steps:
            self.ended_by = "max_steps"

    def _check_budget(self) -> None:
        note = over_budget(self.usage, self.config)
        if note and not self.over:
            self._budget_note = note
            self.ended_by = "budget"

    def _not_run(self, call: ToolCall) -> ToolResult:
        if call.name == FINISH.name:  # finishing an episode that is over is what the tool asks for: never an error
            return ToolResult(call.call_id, FINISH.name, f"Done: {self._ended_note()}; its final state is judged as "
                              "it is.")
        return ToolResult(call.call_id, printable(str(call.name), 200), f"Not run: {self._ended_note()}.", True)

    def _ended_note(self) -> str:
        reasons = {
            "environment": "the episode is over: the environment ended it",
            "agent": "the episode is over: finish was called",
            "max_steps": f"the episode is over: all {self.config.max_steps} steps were used",
            "budget": f"the episode is over: {self._budget_note}",
            "error": "the episode is over: " + (self._error[1] if self._error else "it ended with an error"),
        }
        return reasons.get(self.ended_by, "the episode is over")

    def _decided(self) -> EpisodeEnd:
        error = self._error
        if error is None and not self.first_observation:
            error = (Outcome.INFRA_ERROR, "infrastructure: the episode was never opened")
        try:
            end = end_episode(self.env, self.episode, self.config.ruleset, error)
        except Exception as failure:  # the judge failed: never the agent's fault
            self._end_with_error(failure)
            return end_episode(self.env, self.episode, self.config.ruleset, self._error)
        if error is None and self._budget_note and not end.correct:
            end = replace(end, details=f"{self._budget_note}; {end.details}")
        return end
