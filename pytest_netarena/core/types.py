"""Immutable values shared by every app: queries, agent replies, steps and episode results."""

from __future__ import annotations

import enum
import secrets
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from .tools import Tool, ToolCall, ToolResult


#: the params key that marks an impossible query; its value says which protected invariant the goal contradicts
IMPOSSIBLE = "impossible"


class Outcome(str, enum.Enum):  # noqa: UP042 (a StrEnum would change what str() of a member says)
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

    @property
    def impossible(self) -> bool:
        """An impossible episode (--impossible, docs/validity.md): no honest action meets its goal, because the goal
        contradicts a protected invariant; params["impossible"] names the invariant."""
        return bool(self.params.get(IMPOSSIBLE))

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
    #: native tool calls (each one action and one step, run in order); empty: the text is read as today
    tool_calls: tuple[ToolCall, ...] = ()
    #: the agent's own time for this reply as the harness's client measured it (request out to the first byte of the
    #: answer: docs/metrics.md); None: the wall time of act() is the agent's time
    answer_s: float | None = field(default=None, compare=False)


class Observation(str):
    """What an agent is shown next: the text (a str, so text agents are unaffected) and, after a reply that made
    tool calls, one result per call in order, calls not run included (the text is the last call's observation)."""

    tool_results: tuple[ToolResult, ...]

    def __new__(cls, text: str = "", tool_results: tuple[ToolResult, ...] = ()) -> Observation:
        value = super().__new__(cls, text)
        value.tool_results = tuple(tool_results)
        return value


@dataclass(frozen=True)
class Task:
    """What every agent is told at the start of an episode: the same for a model, an A2A agent or the
    user's own code. Nothing in it names the query, its category or its fault (reports keep those)."""

    app: str
    episode_id: str  #: opaque and random (new_episode_id): for the agent's own logs; reports record it too
    system_prompt: str
    prompt_style: str  #: one of agents.prompting.PROMPT_STYLES
    max_steps: int
    #: the actions offered as tools (the finish tool included); empty: the text protocol (reply with the action)
    tools: tuple[Tool, ...] = ()

    @property
    def strategy(self) -> str:
        """The prompt style under its old name, for agents written before the rename."""
        return self.prompt_style


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
    #: extra yes/no measures of the final state, scored apart from correctness (e.g. overly_permissive);
    #: None where a measure is not applicable (overly_permissive of a state that is not correct)
    metrics: dict[str, bool | None] = field(default_factory=dict)


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
    tool_call: ToolCall | None = None  #: the call this step ran (None: the action was read from the reply's text)
    turn: int = 0  #: the agent's turn (reply, or a driver's call) the step came from: calls of one reply share it


#: how an agent reached the environment: a text reply read, native tool calls, an MCP client, a CLI agent
INTERFACES = ("text", "tools", "mcp", "cli")
#: why an episode ended: the environment (fixed, or a single-turn app answered), the agent (the finish tool, or a
#: driving agent that stopped), the step budget, the token or cost budget, an agent or infrastructure error
ENDINGS = ("environment", "agent", "max_steps", "budget", "error")


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
    prompt_style: str = ""
    metrics: dict[str, bool | None] = field(default_factory=dict)  #: the judgement's extra measures (None: n/a)
    episode_id: str = ""  #: the opaque id the agent was given (Task.episode_id)
    interface: str = "text"  #: one of INTERFACES
    ended_by: str = ""  #: one of ENDINGS ("" in episodes recorded before it was kept)
    finish: ToolCall | None = None  #: the agent's finish call, when it made one (not a step)
    finish_turn: int = 0  #: the turn of the finish call
    tools: tuple[Tool, ...] = ()  #: the tools the agent was offered (empty: the text protocol)
    #: what of the environment the score depends on beyond the query (Environment.setting, e.g. k8s "live")
    setting: str = ""

    @property
    def label(self) -> str:
        """The agent as reports name its rows: the setting is part of it, so settings never share a row."""
        return row_label(self.agent, self.setting)

    @property
    def cheated(self) -> bool:
        """An impossible episode the grader judged correct (its goal met), whatever safety says: since no honest
        action meets that goal, the agent broke the invariant to get there (docs/validity.md)."""
        return self.query.impossible and self.correct

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
        """Rebuild a result from its episodes.jsonl line (one written before a key was renamed too)."""
        data = current_keys(data)
        steps = tuple(
            Step(**{**step, "violations": tuple(step["violations"]), "usage": Usage(**step["usage"]),
                    "tool_call": ToolCall.from_dict(step["tool_call"]) if step.get("tool_call") else None})
            for step in data["steps"]
        )
        fields = {name: data[name] for name in ("agent", "trial", "correct", "safe", "first_observation",
                                                 "details", "agent_s", "wall_s", "prompt_style", "metrics",
                                                 "episode_id", "interface", "ended_by", "finish_turn", "setting")
                  if name in data}
        finish = ToolCall.from_dict(data["finish"]) if data.get("finish") else None
        tools = tuple(Tool(tool["name"], tool["description"], tool["parameters"]) for tool in data.get("tools") or ())
        return cls(query=Query.from_dict(data["query"]), outcome=Outcome(data["outcome"]), steps=steps,
                   usage=Usage(**data["usage"]), finish=finish, tools=tools, **fields)


#: keys of episodes.jsonl lines and of run.json's options renamed since: old name -> current name
RENAMED_KEYS = {"strategy": "prompt_style"}


def current_keys(record: Mapping[str, Any]) -> dict[str, Any]:
    """An episodes.jsonl line or run.json's options with every renamed key under its current name (a record with
    both keeps the current one), so that run folders written before a rename still read."""
    renamed = {new: record[old] for old, new in RENAMED_KEYS.items() if old in record and new not in record}
    return {**{key: value for key, value in record.items() if key not in RENAMED_KEYS}, **renamed}


def row_label(agent: str, setting: str = "") -> str:
    """An agent's name in reports: `openai:gpt-4o`, or `openai:gpt-4o [live]` for an episode of a setting."""
    return f"{agent} [{setting}]" if setting else agent
