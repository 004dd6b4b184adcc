"""The run-wide token and cost budget, shared by xdist workers through a locked file in the run folder."""

from __future__ import annotations

import fcntl
import json
from dataclasses import dataclass
from pathlib import Path

from .core.types import Usage
from .reporting.artifacts import make_private_dir


@dataclass(frozen=True)
class Budget:
    """Caps; None means no cap."""

    max_tokens: int | None = None
    max_cost_usd: float | None = None

    @property
    def capped(self) -> bool:
        return self.max_tokens is not None or self.max_cost_usd is not None


class RunLedger:
    """Tokens and dollars spent by every worker of a run (usage.json in the run folder)."""

    def __init__(self, run_dir: Path, budget: Budget) -> None:
        self.path = run_dir / "usage.json"
        self.budget = budget

    def _update(self, usage: Usage | None) -> Usage:
        make_private_dir(self.path.parent)
        with open(self.path, "a+", encoding="utf-8") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                handle.seek(0)
                text = handle.read()
                data = json.loads(text) if text.strip() else {}
                total = Usage(data.get("tokens_in", 0), data.get("tokens_out", 0), data.get("cost_usd", 0.0))
                if usage is not None:
                    total = total + usage
                    handle.seek(0)
                    handle.truncate()
                    handle.write(json.dumps({"tokens_in": total.tokens_in, "tokens_out": total.tokens_out,
                                             "cost_usd": total.cost_usd}))
                    handle.flush()  # before the lock is released, or another worker reads a stale file
                return total
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def spent(self) -> Usage:
        return self._update(None)

    def add(self, usage: Usage) -> Usage:
        return self._update(usage)

    def exhausted(self) -> str:
        """Why the run's budget is spent, or "" while it is not."""
        if not self.budget.capped:
            return ""
        spent = self.spent()
        if self.budget.max_tokens is not None and spent.tokens >= self.budget.max_tokens:
            return f"run token budget of {self.budget.max_tokens} spent ({spent.tokens} tokens)"
        if self.budget.max_cost_usd is not None and spent.cost_usd >= self.budget.max_cost_usd:
            return f"run cost budget of ${self.budget.max_cost_usd:g} spent (${spent.cost_usd:.4f})"
        return ""
