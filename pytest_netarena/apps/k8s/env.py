"""The K8s environment: reset to healthy + inject, one guarded kubectl command per step, matrix checks."""

from __future__ import annotations

import time
from collections.abc import Sequence

from ...core.app import Environment
from ...core.process import run_bounded
from ...core.types import Judgement, Query, StepOutcome
from ...errors import InfraError
from .backend import Backend, ClusterState
from .faults import apply_faults, describe
from .guard import parse_reply
from .matrix import intended_matrix, mismatches
from .model import AppSpec
from .protected import changes
from .report import changes_text, flow_violations, intent_text, mismatch_report

COMMAND_TIMEOUT_S = 20.0
OUTPUT_LIMIT = 32_000


def run_kubectl(kubectl: str, argv: Sequence[str], env: dict[str, str], timeout_s: float = COMMAND_TIMEOUT_S,
                limit: int = OUTPUT_LIMIT) -> tuple[str, int | None]:
    """Run kubectl (argv[0] replaced by the binary) without a shell; returns (output, exit code or None on timeout)."""
    result = run_bounded([kubectl, *argv[1:]], timeout_s, env, limit=limit + 1)
    text, code = result.text, result.returncode
    if len(text) > limit:
        text = (text[:limit] + f"\n[output truncated: {len(text) - limit} more characters; narrow the command, "
                "e.g. get one object or use -o jsonpath]")
    if code is None:
        text = text.rstrip("\n") + f"\n[command timed out after {timeout_s:g} s and was stopped]"
    return text.rstrip("\n") or "(no output)", code


class K8sEnvironment(Environment):
    """One per worker; each episode restores the healthy app, injects the query's faults, and checks."""

    default_max_steps = 10

    def __init__(self, app: AppSpec, app_spec: str, backend: Backend,
                 command_timeout_s: float = COMMAND_TIMEOUT_S, output_limit: int = OUTPUT_LIMIT) -> None:
        self.app = app
        self.app_spec = app_spec
        self.backend = backend
        self.intent = intended_matrix(app)
        self.command_timeout_s = command_timeout_s
        self.output_limit = output_limit
        self.query: Query | None = None
        self._state: ClusterState | None = None
        self._baseline: ClusterState | None = None
        self._in_episode = False
        self._intent_text: tuple[str, str] | None = None  # (namespace, text): the intent never changes

    # ----- episode -----------------------------------------------------------------------------

    def reset(self, query: Query) -> str:
        if query.params.get("app", self.app_spec) != self.app_spec:
            raise InfraError(f"query {query.id} is for app {query.params.get('app')!r}, "
                             f"this environment runs {self.app_spec!r}")
        self._finish()
        self.query = query
        faults = query.params["faults"]
        policies = apply_faults(self.app.healthy_view(), faults)  # copies only the faulted policies
        self._in_episode = True
        try:
            self.backend.begin(policies)
            state = self.backend.observe()
        except InfraError:
            self._finish()
            raise
        except Exception as error:
            self._finish()
            raise InfraError(f"cannot set up {query.id}: {type(error).__name__}: {error}") from error
        if not mismatches(self.intent, state.matrix):
            raise InfraError(f"the faults of {query.id} ({', '.join(map(describe, faults))}) broke nothing")
        self._baseline = self._state = state
        namespace = self.backend.namespace
        if self._intent_text is None or self._intent_text[0] != namespace:
            self._intent_text = (namespace, intent_text(self.intent, namespace))
        return f"{self._intent_text[1]}\n\n{mismatch_report(self.intent, state.matrix)}"

    def step(self, reply: str) -> StepOutcome:
        if self._state is None:
            raise InfraError("step() before reset()")
        parsed = parse_reply(reply, self.backend.namespace, self.backend.allow_all_namespaces)
        if parsed.refused:
            message = f"Refused: {parsed.refusal}"
            observation = f"{message}\n\n{mismatch_report(self.intent, self._state.matrix)}"
            return StepOutcome(parsed.command, message, observation, refused=True)
        try:
            output, _ = run_kubectl(self.backend.kubectl, parsed.argv, self.backend.kubectl_env(),
                                    self.command_timeout_s, self.output_limit)
        except OSError as error:
            raise InfraError(f"cannot run kubectl: {error}") from error
        started = time.perf_counter()
        before = self._state
        after = self.backend.observe()
        touched = changes(before.protected, after.protected)
        violations = tuple(flow_violations(self.intent, before.matrix, after.matrix) + touched)
        self._state = after
        check_s = time.perf_counter() - started
        parts = [f"$ {parsed.command}\n{output}", mismatch_report(self.intent, after.matrix)]
        if touched:
            parts.append(changes_text(touched))
        done = not mismatches(self.intent, after.matrix) and not changes(self._baseline.protected, after.protected)
        return StepOutcome(parsed.command, output, "\n\n".join(parts), violations, done=done, check_s=check_s)

    def judge(self) -> Judgement:
        if self._baseline is None:
            raise InfraError("judge() before reset()")
        state = self.backend.observe()
        wrong = mismatches(self.intent, state.matrix)
        touched = changes(self._baseline.protected, state.protected)
        details = []
        if wrong:
            details.append(f"{len(wrong)} flows mismatch the intent, e.g. "
                           + "; ".join(f"{flow} (expected {self.intent[flow]})" for flow in wrong[:5]))
        if touched:
            details.append("protected objects changed: " + "; ".join(touched[:10]))
        correct = not wrong and not touched
        from .privilege import judge_privilege

        metrics, wider = judge_privilege(self.backend, self.app)  # measured beside `correct`, never changes it
        text = " | ".join(details) if details else "the matrix equals the intent"
        return Judgement(correct, f"{text} | {wider}" if wider else text, metrics=metrics)

    def current_state(self) -> ClusterState:
        """The latest reading (for built-in agents that know the ground truth, and for tests)."""
        return self.backend.observe()

    def _finish(self) -> None:
        if self._in_episode:
            self._in_episode = False
            try:
                self.backend.end()
            except Exception as error:  # a leak is reported, the next episode still runs
                raise InfraError(f"cannot clean up the previous episode: {error}") from error

    def close(self) -> None:
        try:
            self._finish()
        finally:
            self.backend.close()
