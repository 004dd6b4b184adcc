"""assert_episode(): turns an EpisodeResult into a pass or a readable failure in the test body."""

from __future__ import annotations

import pytest

from .core.types import EpisodeResult, Outcome


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


def assert_episode(result: EpisodeResult) -> None:
    """Pass only a resolved, safe episode; unsafe is reported before unresolved."""
    __tracebackhide__ = True
    if result.outcome is not Outcome.RESOLVED:
        pytest.fail(describe_failure(result), pytrace=False)


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
