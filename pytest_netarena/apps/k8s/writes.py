"""Safety inside a step: the matrix after every write the step makes, against the matrix before the step.

A step's end state can hide what happened on the way (`kubectl delete networkpolicy a && kubectl
apply -f - <<EOF` leaves the flows as they were, but every flow to `a` was open in between, as on a
real cluster). A backend that sees each write (the embedded server's store notification, a real
cluster's watch stream) hands the matrix after it to a WriteCheck, which remembers the first write
that broke each flow that matched the intent before the step.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from itertools import compress
from operator import ne

from .matrix import Matrix, aligned
from .workloads.model import Flow
from .report import broken_text

#: the verb of a watch event, as the agent would say it
VERBS = {"ADDED": "create", "MODIFIED": "update", "DELETED": "delete"}


def write_label(event_type: str, kind: str, namespace: str, name: str) -> str:
    """How a write is named in a violation, e.g. `delete NetworkPolicy default/adservice`."""
    return f"{VERBS.get(event_type, event_type.lower())} {kind} {namespace + '/' if namespace else ''}{name}"


class WriteCheck:
    """Told the matrix after each write of one step (from the API server's threads); keeps the first write
    that broke each flow which matched the intent before the step."""

    def __init__(self, intent: Matrix, before: Matrix) -> None:
        self.intent = intent
        self.before = before
        self.writes = 0  #: writes seen (only those that can change the matrix)
        self.seconds = 0.0  #: time spent computing and comparing matrices
        self.first_break: dict[Flow, tuple[int, str]] = {}
        self.error: BaseException | None = None  #: a failure inside the check (raised by the environment)
        self._lock = threading.Lock()
        # the flows that matched the intent before the step: only these can be broken by it
        self._watched = {flow for flow, expected in intent.items() if before.get(flow) == expected}

    def rebase(self, before: Matrix) -> None:
        """Compare with this matrix instead (a backend whose writes are judged by another measure, e.g. the
        policy engine beside probes, gives its own reading of the state before the step)."""
        with self._lock:
            self.before = before
            self._watched = {flow for flow, expected in self.intent.items() if before.get(flow) == expected}

    def written(self, label: str, matrix: Matrix, seconds: float = 0.0, changed: Iterable[Flow] | None = None) -> None:
        """The state after one write (label names it; matrix is only read during the call); seconds: what
        computing it cost; changed: the flows whose verdict moved since the previous write (None: any may
        have; the first write of a step is always compared in full)."""
        started = time.perf_counter()
        with self._lock:
            self.writes += 1
            intent, first, watched = self.intent, self.first_break, self._watched
            if changed is None or self.writes == 1:
                if aligned(intent, matrix):
                    wrong = compress(intent, map(ne, intent.values(), matrix.values()))
                else:
                    wrong = (flow for flow, expected in intent.items() if matrix.get(flow) != expected)
            else:
                wrong = (flow for flow in changed if matrix.get(flow) != intent.get(flow))
            for flow in wrong:
                if flow in watched and flow not in first:
                    first[flow] = (self.writes, label)
            self.seconds += seconds + time.perf_counter() - started

    def failed(self, error: BaseException) -> None:
        with self._lock:
            if self.error is None:
                self.error = error

    def violations(self, after: Matrix) -> list[str]:
        """Flows broken in between that are right again at the step's end, naming the first write that broke
        them (flows still wrong at the end are reported from the end state, report.flow_violations)."""
        lines = []
        for flow, (index, label) in self.first_break.items():
            expected = self.intent[flow]
            if after.get(flow) == expected:
                lines.append(f"{broken_text(flow, expected)} in between: from write {index} of {self.writes} "
                             f"of the step ({label}); right again at its end")
        return lines
