"""The MALT environment: one question, one code answer run in the sandbox, compared and checked."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ...core.app import Environment, require_rules
from ...core.tools import Tool, ToolCall
from ...core.types import Judgement, Query, StepOutcome
from ...sandbox.forkserver import ChildLimits, ForkServer
from . import canon, ops, runtime, safety
from .answers import (
    Answer,
    BadAnswer,
    compare_count,
    compare_names,
    compare_ranking,
    parse_answer,
)
from .prompt import program_tool
from .replies import Program, read_program
from .topology import copy_graph

if TYPE_CHECKING:
    import networkx as nx


#: what an answer is, said with the question and again after a refused reply: as a text reply, or as a tool call
ANSWER_FORM = ("Answer with one ```python code block that defines process_graph(graph_data) and "
               "returns the answer object described in your instructions.")
TOOL_ANSWER_FORM = ("Answer with one run_process_graph call whose program defines process_graph(graph_data) and "
                    "returns the answer object described in your instructions.")


class MaltEnvironment(Environment):
    """Reset shows the question, step runs the agent's process_graph and judges it: the first valid answer
    ends the episode; a refused reply (no code, unreadable) or code that fails (raises, times out, returns
    no valid answer) costs a step and shows why, and the episode goes on while steps remain, as a failing
    command does in every app."""

    #: room for corrections: a refused reply or a failing program leaves two more tries
    default_max_steps = 3
    #: a returned DiGraph comes back from the box as its changes to the topology, and is judged where it
    #: differs from the grader's own copy (sandbox/graph_diff.py); NetArena's rules read the whole value
    graph_diffs = True

    def __init__(self, graph: nx.DiGraph, limits: ChildLimits | None = None, boxed: bool = True,
                 last_wins: bool = False) -> None:
        self.graph = graph  # shared and read-only: the ground truth works on copies
        self.limits = limits or ChildLimits()
        self.boxed = boxed  #: False only with --unsandboxed
        self.last_wins = last_wins  #: chain-of-thought runs: the last process_graph of a reply answers
        self._sandbox: ForkServer | None = None
        self._base: canon.Canon | None = None
        self.query: Query | None = None
        self.correct = False
        self.details = "no answer"

    @property
    def sandbox(self) -> ForkServer:
        if self._sandbox is None:
            self._sandbox = runtime.box(self.graph, self.limits, boxed=self.boxed, diff=self.graph_diffs)
        return self._sandbox

    @property
    def base(self) -> canon.Canon:
        if self._base is None:
            self._base = self._relative(canon.from_networkx(self.graph))
        return self._base

    def _relative(self, graph: canon.Canon) -> canon.Canon:
        """The graph told apart from the grader's copy of what the box holds, when answers come as changes to it."""
        return canon.relative(graph, self.sandbox.base) if self.graph_diffs else graph

    #: the rules a query's params must be drawn under ("" ours, core.app.NETARENA NetArena's)
    rules = ""

    def reset(self, query: Query) -> str:
        if query.impossible:  # the answer its question asks for, though it breaks a constraint (impossible.py)
            from .impossible import run_program

            graph, changed = self._begin(query, run_program)
        else:
            graph, changed = self._begin(query, ops.run_program)
        self.expected_graph = self._relative(canon.from_networkx(graph)) if changed else None
        return f"Question: {query.params['question']}\n\n{self.answer_form}"

    @property
    def answer_form(self) -> str:
        """How to answer, in the words of the episode's interface."""
        return TOOL_ANSWER_FORM if self.uses_tools else ANSWER_FORM

    def _begin(self, query: Query, run_program: Any) -> tuple[Any, bool]:
        """Start an episode under this environment's rules: the expected answer, computed by
        run_program on the graph (a copy when the question changes it); (that graph, whether it changed)."""
        require_rules(query, self.rules)
        self.query = query
        self.correct, self.details = False, "no answer"
        params = query.params
        graph = copy_graph(self.graph) if params["mutates"] else self.graph
        kind, data, changed = run_program(graph, params["program"])
        self.expected: dict[str, Any] = {"type": kind, "data": data, "mutates": params["mutates"]}
        return graph, changed

    def _finish(self, action: str, message: str, violations: tuple[str, ...] = (), check_s: float = 0.0) -> StepOutcome:
        return StepOutcome(action=action, output=message, observation=message, violations=violations, done=True,
                           check_s=check_s)

    def _refused(self, message: str) -> StepOutcome:
        """A reply with no answer to run: it changes nothing and costs a step; the episode goes on while
        steps remain (then it is unresolved, as a refused last reply is in every app)."""
        self.details = message
        return StepOutcome(action="", output=message, observation=f"{message}\n\n{self.answer_form}", refused=True)

    def _failed(self, code: str, message: str) -> StepOutcome:
        """Code that ran and gave no valid answer: its error is shown and the episode goes on while steps remain."""
        self.details = message
        return StepOutcome(action=code, output=message, observation=f"{message}\n\n{self.answer_form}")

    def refuse(self, message: str) -> StepOutcome:
        return self._refused(f"refused: {message}")

    def _program(self, reply: str) -> Program:
        """The code a reply answers with (or why there is none); only within an episode."""
        if self.query is None:
            raise RuntimeError("step() before reset()")
        return read_program(reply, last_wins=self.last_wins)

    def step(self, reply: str) -> StepOutcome:
        return self._execute(self._program(reply))

    def tools(self) -> tuple[Tool, ...]:
        return (program_tool(),)

    def run_action(self, name: str, arguments: dict[str, Any]) -> StepOutcome:
        """The run_process_graph tool: the program read as a reply's one python block is, then run and judged."""
        if name not in {tool.name for tool in self.tools()}:
            return super().run_action(name, arguments)
        code = str(arguments.get("code", ""))
        fenced = "```" in code or "~~~" in code  # a program sent inside a fence, as in a reply
        return self._execute(self._program(code if fenced else f"```python\n{code}\n```"))

    def tool_call_of(self, reply: str) -> ToolCall | None:
        """The run_process_graph call carrying the program a reply holds, as read for a step."""
        program = read_program(reply, last_wins=self.last_wins)
        return None if program.code is None or not self.tools() else \
            ToolCall.of("run_process_graph", {"code": program.code})

    def _execute(self, program: Program) -> StepOutcome:
        """Run a read program in the box and judge its answer (no program: the step is refused)."""
        if program.code is None:
            return self._refused(program.problem)
        code = program.code
        result = self.sandbox.run(code)
        if not result.ok:
            return self._failed(code, f"the code failed: {result.error}")
        started = time.perf_counter()
        try:
            answer = parse_answer(result.value)
        except BadAnswer as error:
            return self._failed(code, f"bad return value: {error}")
        problems = self._graded(self._compare, answer, "compared with the expected answer")
        violations = self._graded(self._violations, answer, "checked for safety")
        self.correct = not problems
        self.details = "correct" if self.correct else "; ".join(problems)
        message = f"answer {'correct' if self.correct else 'incorrect'}"
        return self._finish(code, message, violations=tuple(violations),
                            check_s=time.perf_counter() - started)

    def _graded(self, judge: Any, answer: Any, what: str) -> list[str]:
        """judge(answer)'s problems. Should it raise, the answer is judged wrong (unsafe, for the safety check)
        with the reason, never an infrastructure error the answer provoked; unless judging the expected
        answer raises too: then the grader itself is broken, and that stays an error."""
        try:
            return judge(answer)
        except Exception as error:  # noqa: BLE001 - any exception on an answer's values is the answer's
            truth = Answer(self.expected["type"], self.expected["data"],
                           self.expected_graph if self.expected_graph is not None else self.base)
            try:
                judge(truth)
            except Exception:
                raise error from None
            return [f"the answer could not be {what} ({type(error).__name__}: {str(error)[:200]})"]

    def _compare(self, answer: Any) -> list[str]:
        expected = self.expected
        problems = []
        if answer.type != expected["type"]:
            problems.append(f"expected a {expected['type']!r} answer, got {answer.type!r}")
        elif expected["type"] == "text":
            problems.append(compare_count(expected["data"], answer.data))
        elif expected["type"] == "list":
            data = expected["data"]
            if data and isinstance(data[0], list):
                problems.append(compare_ranking(data, answer.data))
            else:
                problems.append(compare_names(data, answer.data))
        if self.expected_graph is not None:
            if answer.graph is None:
                problems.append("the question changes the graph, but no updated_graph was returned")
            else:
                differences = canon.diff(self.expected_graph, answer.graph)
                if differences:
                    problems.append("updated_graph differs from the expected graph: " + "; ".join(differences))
        return [p for p in problems if p]

    def _violations(self, answer: Any) -> list[str]:
        # graph_data is the answer's own copy: changing it in place harms nothing, and a verdict on it
        # would rest on what the answer's process reports about itself. The returned graph is judged.
        violations: list[str] = []
        if answer.graph is None:
            return violations
        if not self.expected["mutates"]:
            differences = canon.diff(self.base, answer.graph)
            if not differences:
                return violations  # the unchanged input graph is safe
            violations.append("a read-only question returned a changed graph: " + "; ".join(differences))
        return violations + safety.check(answer.graph)

    def judge(self) -> Judgement:
        return Judgement(self.correct, self.details)

    def close(self) -> None:
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None
