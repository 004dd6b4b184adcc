"""The run-wide token and cost budget: caps, and the controller's ledger of what every worker spent.

Only the controller (the pytest process that writes the run folder) keeps a ledger; workers,
on this host or another, ask it over the netarena link (pytest_netarena.scale) whether the
budget is spent and tell it what each episode cost. `usage.json` in the run folder is the
ledger's copy on disk, so `--resume` carries the spending of the interrupted run forward.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path

from ..core.types import Usage


@dataclass(frozen=True)
class Budget:
    """Caps; None means no cap."""

    max_tokens: int | None = None
    max_cost_usd: float | None = None

    @property
    def capped(self) -> bool:
        return self.max_tokens is not None or self.max_cost_usd is not None

    def exhausted_by(self, spent: Usage) -> str:
        """Why `spent` uses up this budget, or "" while it does not."""
        if self.max_tokens is not None and spent.tokens >= self.max_tokens:
            return f"run token budget of {self.max_tokens} spent ({spent.tokens} tokens)"
        if self.max_cost_usd is not None and spent.cost_usd >= self.max_cost_usd:
            return f"run cost budget of ${self.max_cost_usd:g} spent (${spent.cost_usd:.4f})"
        return ""


class RunLedger:
    """Tokens and dollars spent in a run, kept by the controller (thread-safe), mirrored in usage.json."""

    def __init__(self, run_dir: Path, budget: Budget) -> None:
        self.path = run_dir / "usage.json"
        self.budget = budget
        self._lock = threading.Lock()
        self._total = _read(self.path)

    def spent(self) -> Usage:
        with self._lock:
            return self._total

    def add(self, usage: Usage) -> Usage:
        from ..reporting.artifacts import write_json

        with self._lock:
            self._total = self._total + usage
            write_json(self.path, {"tokens_in": self._total.tokens_in, "tokens_out": self._total.tokens_out,
                                   "cost_usd": self._total.cost_usd})
            return self._total

    def exhausted(self) -> str:
        """Why the run's budget is spent, or "" while it is not."""
        return self.budget.exhausted_by(self.spent()) if self.budget.capped else ""


def _read(path: Path) -> Usage:
    """What an earlier session of the same run spent (--resume), or nothing."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Usage(int(data.get("tokens_in", 0)), int(data.get("tokens_out", 0)), float(data.get("cost_usd", 0.0)))
    except (OSError, ValueError, TypeError, AttributeError, RecursionError):
        return Usage()
