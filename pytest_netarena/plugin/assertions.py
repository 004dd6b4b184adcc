"""assert_episode(): turns an EpisodeResult into a pass or a readable failure in the test body."""

from __future__ import annotations

import pytest

from ..core.types import EpisodeResult, Outcome
from ..run.search import SearchOutcome


def describe_failure(result: EpisodeResult) -> str:
    """One paragraph saying why an episode did not pass: outcome, first unsafe step, judge details."""
    lines = [f"{result.query.id} with {result.agent}: {result.outcome.value} after {len(result.steps)} step(s)"]
    unsafe = result.first_unsafe_step
    if unsafe is not None:
        lines.append(f"first unsafe step {unsafe.index}: {unsafe.action or unsafe.reply[:200]!r}")
        lines.extend(f"  - {violation}" for violation in unsafe.violations[:10])
    if result.details:
        lines.append(result.details.strip())
    return "\n".join(lines)


def assert_episode(result: EpisodeResult | SearchOutcome) -> None:
    """Pass only a resolved, safe episode (or a search that found no failure)."""
    __tracebackhide__ = True
    if isinstance(result, SearchOutcome):
        if result.failure is not None:
            pytest.fail(describe_search_failure(result), pytrace=False)
        if result.stopped_by_budget and not result.episodes:
            pytest.skip(f"search not run: {result.stopped_by_budget}")
        return
    if result.outcome is not Outcome.RESOLVED:
        pytest.fail(describe_failure(result), pytrace=False)


def describe_search_failure(outcome: SearchOutcome) -> str:
    assert outcome.failure is not None
    lines = [
        f"adversarial search of {outcome.app} found a failure of {outcome.agent} "
        f"({outcome.examples} examples, {outcome.episodes} episodes, {outcome.elapsed_s:.1f} s); shrunk case:",
        f"  {outcome.failure.query.category} (level {outcome.failure.query.level}) params={outcome.failure.query.params}",
        describe_failure(outcome.failure),
        f"reproduce: {outcome.reproduce}",
    ]
    return "\n".join(lines)


def render_transcript(result: EpisodeResult, limit: int = 4000) -> str:
    """A readable transcript for the report section of a failed test."""
    parts = [f"observation 0:\n{result.first_observation[:limit]}"]
    for step in result.steps:
        flags = " REFUSED" if step.refused else ""
        flags += " UNSAFE" if step.violations else ""
        parts.append(f"--- step {step.index}{flags} (agent {step.agent_s:.2f} s)\nreply:\n{step.reply[:limit]}")
        parts.append(f"action: {step.action}\noutput:\n{step.output[:limit]}")
        parts.extend(f"violation: {violation}" for violation in step.violations)
    return "\n".join(parts)
