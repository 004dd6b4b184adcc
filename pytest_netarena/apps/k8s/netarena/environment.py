"""The K8s environment under NetArena's rules (--compat netarena): blind start, 92 probes, rising-count safety."""

from __future__ import annotations

import time

from ....core.tools import Tool
from ....core.types import Judgement, Query, StepOutcome
from ....core.errors import InfraError
from . import grade, rules as compat
from ..environment import K8sEnvironment, describe_result
from ....core import replies
from ..replies import MAX_ACTION_BYTES


class NetArenaK8sEnvironment(K8sEnvironment):
    """The same cluster and sealed box; NetArena's observations, reading of replies and verdicts.

    The box stays the security layer: NetArena's deny-list is reproduced because it changes verdicts
    (a refused step is not checked), not because it protects anything."""

    default_max_steps = compat.MAX_STEPS

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("command_timeout_s", compat.COMMAND_TIMEOUT_S)
        super().__init__(*args, **kwargs)
        self.flows = compat.probed_flows(self.intent)
        self._previous: int | None = None  # the mismatch count of the last check, None before the first
        self._checked = False

    def tools(self) -> tuple[Tool, ...]:
        return ()  # NetArena's text protocol: no tools are offered

    def reset(self, query: Query) -> str:
        state = self._start(query)
        # NetArena runs a fault that breaks nothing too: the first check then finds no mismatch
        self._baseline = self._state = state
        self._previous, self._checked = None, False
        return compat.FIRST_OBSERVATION

    def step(self, reply: str) -> StepOutcome:
        if self._state is None:
            raise InfraError("step() before reset()")
        command = compat.extract_command(reply)
        word = compat.disallowed(command)
        if word is not None:
            entry = compat.log_entry(command, compat.DISALLOWED_OUTPUT, compat.DISALLOWED_SUMMARY)
            return StepOutcome(command, compat.DISALLOWED_OUTPUT, entry, refused=True)
        if len(command.encode("utf-8", "surrogatepass")) > MAX_ACTION_BYTES or replies.unprintable(command):
            # bash -c cannot take it (one argument is capped at 128 KiB; no NUL): checked like a failed command
            output = (f"[not run: a command of at most {MAX_ACTION_BYTES} bytes of printable text (no NUL, "
                      "no control characters) is accepted]")
        elif command:
            try:
                result = self.runner.run(command, self.backend.agent_kubeconfig(), self.command_timeout_s,
                                         self.output_limit + 1)
            except OSError as error:
                raise InfraError(f"cannot start the box for the command: {error}") from error
            output = compat.TIMED_OUT if result.timed_out else describe_result(
                result, self.command_timeout_s, self.output_limit)
        else:
            output = ""  # no fenced block: NetArena runs the empty command, then checks as usual
        started = time.perf_counter()
        self._state = self.backend.observe()
        summary = compat.mismatch_summary(self.intent, self._state.matrix, self.flows)
        count = compat.mismatch_count(summary)
        violations = ((f"the mismatch count rose from {self._previous} to {count}",)
                      if grade.rose(self._previous, count) else ())
        self._previous, self._checked = count, True
        entry = compat.log_entry(command, output, summary)
        return StepOutcome(command, output, entry, violations, done=count == 0,
                           check_s=time.perf_counter() - started)

    def judge(self) -> Judgement:
        if self._baseline is None:
            raise InfraError("judge() before reset()")
        if not self._checked:
            return Judgement(False, "no command was checked (NetArena's success is its last check's)")
        state = self.backend.observe()
        lines = compat.mismatch_lines(self.intent, state.matrix, self.flows)
        text = f"{len(lines)} of {len(self.flows)} probed flows mismatch: " + "; ".join(lines[:5]) if lines \
            else f"all {len(self.flows)} probed flows match"
        return Judgement(not lines, text)
