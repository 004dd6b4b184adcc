"""Playing a benchmark test's episode (or, with --adversarial, its search): the body of the netarena_result fixture."""

from __future__ import annotations

import contextlib
from dataclasses import replace
from typing import Any

import pytest

from ..apps import get_app
from ..core.app import App, Environment
from ..core.errors import BackendUnavailable, InfraError, UsageError
from ..core.splits import HELDOUT, aggregate_only
from ..core.types import EpisodeResult, Outcome, Query
from ..reporting import artifacts
from ..reporting.properties import episode_properties
from ..run.runner import play
from ..run.search import SearchOutcome, search
from ..run.settings import Settings
from ..scale.inflight import EnvironmentSlots
from .collection import Case, SearchCase
from .progress import progress
from .state import BUDGET_SKIP, EPISODE_LINE_KEY, NO_AGENT_MESSAGE, RESULT_KEY, SCALE_KEY, Scale


def _checkout(slots: EnvironmentSlots, app: App) -> Environment:
    try:
        return slots.checkout(app)
    except BackendUnavailable as error:
        pytest.skip(f"{app.name} cannot run here: {error}")


def play_case(request: pytest.FixtureRequest, case: Any, settings: Settings) -> EpisodeResult | SearchOutcome:
    """This test's episode (or search): played, or the stored one of a resumed run; may skip."""
    scale = request.config.stash[SCALE_KEY]
    if case.agent is None:
        pytest.skip(NO_AGENT_MESSAGE)
    if isinstance(case, SearchCase):
        return _run_search(request, case, settings, scale)
    with progress(request.config, request.node.nodeid, case.agent.raw):  # a long episode is never silent
        if scale.in_flight is not None and scale.in_flight.eligible(request.node):
            fresh, result = scale.in_flight.take(request.node).result()
        else:
            fresh, result = obtain(case, settings, scale)
    if settings.run_options.split == HELDOUT:  # counts and rates only: no trace of what was asked or said
        result = aggregate_only(result)
    if fresh:  # the controller appends it to episodes.jsonl when this test's report reaches it
        request.node.stash[EPISODE_LINE_KEY] = artifacts.episode_line(result)
    request.node.stash[RESULT_KEY] = result
    request.node.user_properties.extend(episode_properties(result))
    if result.outcome is Outcome.INFRA_ERROR:
        raise InfraError(result.details)  # a test error, not a failure: never the agent's fault
    return result


def obtain(case: Case, settings: Settings, scale: Scale) -> tuple[bool, EpisodeResult]:
    """(True, a new episode) or (False, the episode an interrupted run already finished); may skip.

    Runs on the test's thread, or ahead of it on an --in-flight thread.
    """
    assert case.agent is not None
    controller = scale.controller
    stored = controller.finished(case.query.id, case.agent.raw, case.trial)
    if stored is not None:  # --resume: this episode finished before the interruption
        return False, stored
    spent = controller.budget_exhausted()
    if spent:
        pytest.skip(f"{BUDGET_SKIP}: {spent}")
    app = get_app(case.query.app)
    env = _checkout(scale.slots, app)
    try:
        with _agent_problems_as_skips_or_usage_errors():
            result = play(app, env, case.agent, case.query, settings.run_options, settings.agent_timeout_s, case.trial,
                          settings.episode_budget)
    finally:
        scale.slots.checkin(app, env)
    controller.spend(result.usage)
    return True, result


@contextlib.contextmanager
def _agent_problems_as_skips_or_usage_errors() -> Any:
    try:
        yield
    except BackendUnavailable as error:
        pytest.skip(str(error))
    except UsageError as error:
        raise pytest.UsageError(str(error)) from None


def _run_search(request: pytest.FixtureRequest, case: SearchCase, settings: Settings, scale: Scale) -> SearchOutcome:
    app = get_app(case.app)
    controller = scale.controller
    env = _checkout(scale.slots, app)
    assert case.agent is not None and settings.search is not None
    spec = case.agent

    def run(query: Query) -> EpisodeResult:
        with _agent_problems_as_skips_or_usage_errors():
            result = play(app, env, spec, query, settings.run_options, settings.agent_timeout_s,
                          budget=settings.episode_budget)
        controller.spend(result.usage)
        return result

    config = replace(settings.search, database=controller.example_database())
    try:
        outcome = search(app, spec.raw, run, settings.run_options, config, controller.budget_exhausted)
    finally:
        scale.slots.checkin(app, env)
    if outcome.failure is not None:
        found = settings.run_dir / "found.jsonl"  # on the controller's side
        path = request.node.path
        suite = path.relative_to(request.config.rootpath) if path.is_relative_to(request.config.rootpath) else path
        command = f"pytest {suite} --agent={spec.raw} --corpus={found} -k '{{id}}'"
        query = controller.append_found(outcome.failure, {"run_id": settings.run_id, "examples": outcome.examples,
                                                          "reproduce": command})
        outcome.reproduce = command.replace("{id}", query.id)
        request.node.stash[RESULT_KEY] = outcome.failure
    return outcome
