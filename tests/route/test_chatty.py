"""builtin:chatty writes the oracle's actions in model-like styles; the reader takes every one (root, Mininet)."""

from __future__ import annotations

from pytest_netarena.apps.route import APP
from pytest_netarena.core.app import RunOptions
from pytest_netarena.core.types import Outcome

from .conftest import needs_mininet, run

pytestmark = needs_mininet


def test_chatty_resolves_every_category_of_the_default_suite_with_no_refused_step(route_env):
    queries = APP.generate(RunOptions(queries=1))
    assert len({query.category for query in queries}) == 15
    for query in queries:
        result = run(route_env, "chatty", query)
        assert result.outcome is Outcome.RESOLVED, (query.id, result.details)
        assert not any(step.refused for step in result.steps), [step.output for step in result.steps if step.refused]
        assert len({step.reply.split("\n", 1)[0][:12] for step in result.steps}) >= min(3, len(result.steps))
