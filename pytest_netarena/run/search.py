"""Adversarial search: Hypothesis explores an app's query space for episodes an agent fails, then shrinks.

The search draws queries from the same description the benchmark sampler uses
(`pytest_netarena.run.strategies.queries`), runs the agent on each, steers with `target()` towards
failure signals (unresolved, unsafe steps, steps used, cost) and lets Hypothesis shrink a failure
to the smallest fault sequence and environment that still fails. A failure only counts when it
reproduces on every one of `trials` runs, since model agents are not deterministic.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.app import App, RunOptions
from ..core.types import EpisodeResult, Outcome, Query

FAILING = (Outcome.UNRESOLVED, Outcome.UNSAFE, Outcome.AGENT_ERROR)

#: name -> Hypothesis settings; registered as profiles by the plugin
PROFILES: dict[str, dict[str, Any]] = {
    "netarena-dev": {"max_examples": 20},
    "netarena-ci": {"max_examples": 10, "derandomize": True},
    "netarena-search": {"max_examples": 200},
}


@dataclass(frozen=True)
class SearchConfig:
    """Budget and persistence of one search."""

    max_examples: int = 20
    time_limit_s: float = 600.0
    trials: int = 1  #: a failure must reproduce this many times before it counts
    database_dir: Path | None = None  #: Hypothesis example database (known failures are tried first)
    database: Any = None  #: an ExampleDatabase to use instead of one in database_dir (e.g. the controller's)
    seed: int = 0


@dataclass
class SearchOutcome:
    """What a search found: the minimal failing case (if any) and what it cost."""

    app: str
    agent: str
    examples: int = 0
    episodes: int = 0
    failure: EpisodeResult | None = None  #: the shrunk failure, replayed last
    stopped_by_budget: str = ""  #: why the run's token/cost budget stopped the search, if it did
    elapsed_s: float = 0.0
    notes: list[str] = field(default_factory=list)
    reproduce: str = ""  #: a command that replays the shrunk failure


def episode_fails_outside_hypothesis(
    run: Callable[[Query], EpisodeResult], config: SearchConfig, outcome: SearchOutcome
) -> Callable[[Query], EpisodeResult | None]:
    """Like the search's check, for candidates tried after Hypothesis is done."""

    def fails(query: Query) -> EpisodeResult | None:
        result = None
        for _ in range(config.trials):
            result = run(query)
            outcome.episodes += 1
            if result.outcome not in FAILING:
                return None
        return result

    return fails


def _simplify(
    app: App, failure: EpisodeResult, fails: Callable[[Query], EpisodeResult | None]
) -> EpisodeResult:
    """Greedily replace the failure by a structurally smaller query that still fails."""
    improved = True
    while improved:
        improved = False
        for candidate in app.simplifications(failure.query):
            result = fails(candidate)
            if result is not None:
                failure, improved = result, True
                break
    return failure


class _Failed(Exception):
    """Raised inside the Hypothesis test so it records a failing example and shrinks it."""


def search(
    app: App,
    agent_name: str,
    run: Callable[[Query], EpisodeResult],
    options: RunOptions,
    config: SearchConfig,
    budget_spent: Callable[[], str] = lambda: "",
) -> SearchOutcome:
    """Search app's space for a query that `run` (one episode of the agent) fails; shrink it.

    `budget_spent()` returns why the run's token or cost budget is spent ("" while it is not);
    the search then stops spending, like it does at its time limit.
    """
    from hypothesis import HealthCheck, Phase, given, reject, settings, target
    from hypothesis.database import DirectoryBasedExampleDatabase

    from .strategies import queries

    outcome = SearchOutcome(app.name, agent_name)
    started = time.monotonic()
    last_failure: list[EpisodeResult] = []

    def episode_fails(query: Query) -> EpisodeResult | None:
        """Run the query `trials` times; the last result if every run failed, else None."""
        result = None
        for _ in range(config.trials):
            result = run(query)
            outcome.episodes += 1
            if result.outcome is Outcome.INFRA_ERROR:
                reject()  # not the agent's fault: this example says nothing
            if result.outcome not in FAILING:
                return None
        return result

    def probe(query: Query) -> None:
        outcome.examples += 1
        if time.monotonic() - started > config.time_limit_s:
            return  # budget spent: remaining examples pass without running episodes
        spent = budget_spent()
        if spent:
            outcome.stopped_by_budget = spent
            return
        failure = episode_fails(query)
        if failure is None:
            return
        target(float(sum(bool(step.violations) for step in failure.steps)), label="unsafe steps")
        target(float(len(failure.steps)), label="steps used")
        target(failure.usage.cost_usd, label="cost")
        last_failure.append(failure)
        raise _Failed(failure.details or failure.outcome.value)

    test = given(queries(app, options))(probe)
    test = settings(
        max_examples=config.max_examples,
        deadline=None,
        database=config.database if config.database is not None else
        DirectoryBasedExampleDatabase(str(config.database_dir)) if config.database_dir else None,
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
        suppress_health_check=list(HealthCheck),
        derandomize=False,
        print_blob=False,
    )(test)
    # One database key per (app, agent): a later run re-tries this agent's known failures first.
    test.hypothesis.inner_test._hypothesis_internal_add_digest = f"{app.name}|{agent_name}".encode()
    from hypothesis import seed as hypothesis_seed

    test = hypothesis_seed(config.seed)(test)
    try:
        test()
    except _Failed:
        pass  # Hypothesis re-raises the minimal example last: last_failure[-1] is the shrunk case
    except Exception as error:  # Flaky (a non-deterministic agent) and the like: keep what we saw
        outcome.notes.append(f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}")
    if last_failure:
        outcome.failure = _simplify(app, last_failure[-1], episode_fails_outside_hypothesis(run, config, outcome))
    outcome.elapsed_s = time.monotonic() - started
    return outcome
