"""Run settings resolved once from the command line, the ini file and the xdist controller."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .agents.spec import AgentSpec, parse_agent_spec
from .core.app import RunOptions
from .core.types import Query
from .budget import Budget
from .gates import Gate
from .search import SearchConfig
from .errors import UsageError


@dataclass
class Settings:
    """Everything the plugin needs to generate, run and report episodes."""

    seed: int
    run_id: str
    agents: list[AgentSpec]
    run_options: RunOptions
    trials: int
    agent_timeout_s: float
    reports_dir: Path
    corpus: list[Query] | None = None  #: --corpus: run these queries instead of generating
    search: SearchConfig | None = None  #: --adversarial: search instead of sampling
    save_corpus: str | None = None
    run_budget: Budget = Budget()
    episode_budget: Budget = Budget()
    gates: list[Gate] = field(default_factory=list)
    #: --resume: episodes.jsonl lines of finished episodes by (query id, agent, trial)
    finished: dict[tuple[str, str, int], dict[str, Any]] = field(default_factory=dict)
    query_cache: dict[str, Any] = field(default_factory=dict)

    @property
    def run_dir(self) -> Path:
        return self.reports_dir / self.run_id


def parse_levels(text: str) -> tuple[int, ...]:
    try:
        levels = tuple(sorted({int(part) for part in str(text).replace(" ", "").split(",") if part}))
    except ValueError:
        raise UsageError(f"--levels takes levels separated by commas, e.g. 1,2,3; got {text!r}") from None
    if not levels or any(level not in (1, 2, 3) for level in levels):
        raise UsageError(f"--levels must list levels among 1, 2 and 3; got {text!r}")
    return levels


def positive_int(name: str, value: Any) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise UsageError(f"{name} takes a whole number; got {value!r}") from None
    if number < 1:
        raise UsageError(f"{name} must be at least 1; got {number}")
    return number


def parse_agents(raw_specs: list[str], builtin_names: tuple[str, ...]) -> list[AgentSpec]:
    specs = [parse_agent_spec(raw, builtin_names) for raw in raw_specs]
    seen: set[str] = set()
    for spec in specs:
        if spec.raw in seen:
            raise UsageError(f"--agent {spec.raw} is given twice")
        seen.add(spec.raw)
    return specs
