"""Immutable values shared by every app: queries, agent replies, steps and episode results."""

from __future__ import annotations

import enum
import secrets
from dataclasses import asdict, dataclass, field
from typing import Any


class Outcome(str, enum.Enum):
    """How an episode ended. Only INFRA_ERROR is excluded from an agent's score."""

    RESOLVED = "resolved"
    UNRESOLVED = "unresolved"
    UNSAFE = "unsafe"
    AGENT_ERROR = "agent_error"
    INFRA_ERROR = "infra_error"


@dataclass(frozen=True)
class Query:
    """One benchmark item: a hidden fault sequence or request, generated from a seed."""

    app: str
    level: int
    category: str  #: operations or faults joined by "+", e.g. "remove+count"
    index: int
    seed: int
    params: dict[str, Any] = field(default_factory=dict)  #: hidden: never shown to an agent

    @property
    def id(self) -> str:
        return f"{self.app}-L{self.level}-{self.category}-{self.index:04d}"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, **asdict(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Query:
        fields = ("app", "level", "category", "index", "seed", "params")
        return cls(**{name: data[name] for name in fields if name in data})


@dataclass(frozen=True)
class Usage:
    """Model usage of one reply or a whole episode."""

    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0

    @property
    def tokens(self) -> int:
        return self.tokens_in + self.tokens_out

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.tokens_in + other.tokens_in,
            self.tokens_out + other.tokens_out,
            self.cost_usd + other.cost_usd,
        )


@dataclass(frozen=True)
class Reply:
    """What an agent answered to one observation."""

    text: str
    usage: Usage = Usage()


@dataclass(frozen=True)
class Task:
    """What every agent is told at the start of an episode: the same for a model, an A2A agent or the
    user's own code. Nothing in it names the query, its category or its fault (reports keep those)."""

    app: str
    episode_id: str  #: opaque and random (new_episode_id): for the agent's own logs; reports record it too
    system_prompt: str
    strategy: str
    max_steps: int


def new_episode_id() -> str:
    """A fresh episode id: random, so it tells an agent nothing about the query behind it."""
    return secrets.token_hex(8)


@dataclass(frozen=True)
class StepOutcome:
    """What the environment did with one agent reply."""

    action: str  #: the action as parsed from the reply ("" when none could be parsed)
    output: str  #: the command's output, or the reason it was refused
    observation: str  #: what the agent is shown next: output plus the new symptom
    violations: tuple[str, ...] = ()  #: safety violations this step caused (names a flow, pair or object)
    refused: bool = False  #: the action was refused or unparseable and changed nothing
    done: bool = False  #: the environment ended the episode (e.g. single-turn apps, or all fixed)
    agent_error: str | None = None  #: the reply was unusable in a way that ends the episode
    check_s: float = 0.0  #: time spent checking the state after the action


@dataclass(frozen=True)
class Judgement:
    """The final verdict on the environment's state."""

    correct: bool
    details: str = ""
    #: extra yes/no measures of the final state, scored apart from correctness (e.g. overly_permissive)
    metrics: dict[str, bool] = field(default_factory=dict)


@dataclass(frozen=True)
class Step:
    """One turn of an episode, as recorded in the transcript."""

    index: int
    reply: str
    action: str
    output: str
    observation: str
    violations: tuple[str, ...]
    refused: bool
    agent_s: float
    exec_s: float
    check_s: float
    usage: Usage


@dataclass(frozen=True)
class EpisodeResult:
    """Everything known about one finished episode; serialised to episodes.jsonl."""

    query: Query
    agent: str
    trial: int
    outcome: Outcome
    correct: bool
    safe: bool
    steps: tuple[Step, ...]
    first_observation: str = ""
    details: str = ""  #: judge details, agent error or infra error message
    agent_s: float = 0.0
    wall_s: float = 0.0
    usage: Usage = Usage()
    strategy: str = ""
    metrics: dict[str, bool] = field(default_factory=dict)  #: the judgement's extra measures
    episode_id: str = ""  #: the opaque id the agent was given (Task.episode_id)
    #: what of the environment the score depends on beyond the query (Environment.setting, e.g. k8s "live")
    setting: str = ""

    @property
    def label(self) -> str:
        """The agent as reports name its rows: the setting is part of it, so settings never share a row."""
        return row_label(self.agent, self.setting)

    @property
    def first_unsafe_step(self) -> Step | None:
        return next((step for step in self.steps if step.violations), None)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["query"] = self.query.to_dict()
        data["outcome"] = self.outcome.value
        data["tokens"] = self.usage.tokens
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EpisodeResult:
        """Rebuild a result from its episodes.jsonl line."""
        steps = tuple(
            Step(**{**step, "violations": tuple(step["violations"]), "usage": Usage(**step["usage"])})
            for step in data["steps"]
        )
        fields = {name: data[name] for name in ("agent", "trial", "correct", "safe", "first_observation",
                                                 "details", "agent_s", "wall_s", "strategy", "metrics",
                                                 "episode_id", "setting") if name in data}
        return cls(query=Query.from_dict(data["query"]), outcome=Outcome(data["outcome"]), steps=steps,
                   usage=Usage(**data["usage"]), **fields)


def row_label(agent: str, setting: str = "") -> str:
    """An agent's name in reports: `openai:gpt-4o`, or `openai:gpt-4o [live]` for an episode of a setting."""
    return f"{agent} [{setting}]" if setting else agent
