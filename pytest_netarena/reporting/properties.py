"""Per-episode JUnit user_properties (`netarena.*`), and reading them back into records."""

from __future__ import annotations

from typing import Any

from ..core.types import EpisodeResult, Outcome

PREFIX = "netarena."
#: extra measures of an episode (Judgement.metrics) are properties netarena.metric.<name>
METRIC = "metric."
#: the value of a measure an episode does not define
NOT_APPLICABLE = "n/a"


def episode_properties(result: EpisodeResult) -> list[tuple[str, Any]]:
    """The properties attached to an episode's test report (strings and numbers only)."""
    values: dict[str, Any] = {
        "query": result.query.id,
        "app": result.query.app,
        "level": result.query.level,
        "category": result.query.category,
        "agent": result.label,
        "setting": result.setting,
        "trial": result.trial,
        "seed": result.query.seed,
        "outcome": result.outcome.value,
        "resolved": result.outcome is Outcome.RESOLVED,  # the headline: correct, safe, not overly permissive
        "correct": result.correct,
        "safe": result.safe,
        "steps": len(result.steps),
        "latency_s": round(result.agent_s, 4),
        "wall_s": round(result.wall_s, 4),
        "tokens": result.usage.tokens,
        "cost_usd": round(result.usage.cost_usd, 6),
        "episode_id": result.episode_id,
        "interface": result.interface,  # text, tools, mcp or cli: how the agent reached the environment
        "refused": sum(step.refused for step in result.steps),  # steps refused unrun (unreadable replies, bad calls)
    }
    values.update({METRIC + name: metric_value(value) for name, value in sorted(result.metrics.items())})
    if result.query.impossible:  # only then: a run without --impossible keeps its properties as they were
        values.update(impossible=True, cheated=result.cheated)
    return [(PREFIX + key, value) for key, value in values.items()]


def metric_value(value: Any) -> bool | str:
    """An extra measure as a property: yes/no, or "n/a" where it is not defined (overly_permissive of a state
    that is not correct)."""
    return NOT_APPLICABLE if value is None or value == NOT_APPLICABLE else bool(value)


def record_from_properties(properties: list[tuple[str, Any]]) -> dict[str, Any] | None:
    """The episode record carried by a report's user_properties, or None if it has none."""
    record = {key[len(PREFIX):]: value for key, value in properties if key.startswith(PREFIX)}
    return record if "outcome" in record else None
