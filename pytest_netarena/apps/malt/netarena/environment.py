"""The MALT environment under --compat netarena: NetArena's ground truth, verdicts and safety checks."""

from __future__ import annotations

import time
from typing import Any

from ....core.app import NETARENA
from ....core.tools import Tool
from ....core.types import Judgement, Query, StepOutcome
from . import grade, ops
from ..environment import MaltEnvironment

#: Judgement metric: the graph NetArena's ground truth leaves passes NetArena's safety checks (its
#: GT-Result-Safety for graph questions; NetArena reports Pass for the others without checking)
TRUTH_SAFE = "netarena_truth_safe"

#: NetArena's answer object, stated with every question (its prompt asks for updated_graph always)
ANSWER_CONTRACT = (
    "Answer with one ```python code block that defines process_graph(graph_data) and returns a dict with "
    "'type' ('text', 'list', 'table' or 'graph'), 'data', and always 'updated_graph': "
    "nx.readwrite.json_graph.node_link_data(<your copy of the graph>), even when nothing changed."
)


class NetArenaMaltEnvironment(MaltEnvironment):
    """Same box and reply reading as ours; the answer is judged as NetArena judges it (grade.py).

    Code that fails, a reply with no code, or one refused unread is an answer NetArena scores:
    incorrect and unsafe (its safety checker is not applied), not an agent error.
    """

    rules = NETARENA
    default_max_steps = 1  #: NetArena's single answer
    graph_diffs = False  #: NetArena judges the Python values returned: graphs come back whole

    def tools(self) -> tuple[Tool, ...]:
        return ()  # NetArena's text protocol: no tools are offered

    def reset(self, query: Query) -> str:
        self.verdict: grade.Verdict | None = None
        graph, _ = self._begin(query, ops.run_program)
        self.truth_safe, self.truth_safety_error = grade.safety(graph)
        return f"Question: {query.params['question']}\n\n{ANSWER_CONTRACT}"

    def _judged(self, action: str, verdict: grade.Verdict, check_s: float = 0.0) -> StepOutcome:
        self.verdict = verdict
        self.correct = verdict.correct
        self.details = "correct" if verdict.correct else verdict.error
        message = f"answer {'correct' if verdict.correct else 'incorrect'}"
        violations = () if verdict.safe else (verdict.safety_error,)
        return self._finish(action, message, violations=violations, check_s=check_s)

    def refuse(self, message: str) -> StepOutcome:
        return self._judged("", self._grade(failure=f"refused: {message}"))

    def step(self, reply: str) -> StepOutcome:
        program = self._program(reply)
        if program.code is None:
            return self._judged("", self._grade(failure=program.problem))
        result = self.sandbox.run(program.code)
        started = time.perf_counter()
        if result.ok:  # with the box's notes: tuples, sets, numpy values and graphs are judged as returned
            verdict = self._grade(value=result.value, kinds=result.kinds)
        else:
            verdict = self._grade(failure=result.error)
        return self._judged(program.code, verdict, time.perf_counter() - started)

    def _grade(self, value: Any = None, failure: str | None = None, kinds: Any = None) -> grade.Verdict:
        """NetArena's verdict; should grading raise, the answer is incorrect and unsafe with the reason (never an
        infrastructure error it provoked), unless grading the expected answer raises too (the grader is broken)."""
        kind, data = self.expected["type"], self.expected["data"]
        try:
            return grade.grade(kind, data, value, failure, kinds)
        except Exception as error:  # noqa: BLE001 - any exception on an answer's values is the answer's
            try:
                grade.grade(kind, data, {"type": kind, "data": data})
            except Exception:
                raise error from None
            reason = f"the answer could not be graded ({type(error).__name__}: {str(error)[:200]})"
            return grade.Verdict(False, False, reason, reason)

    def judge(self) -> Judgement:
        return Judgement(self.correct, self.details, metrics={TRUTH_SAFE: self.truth_safe})
