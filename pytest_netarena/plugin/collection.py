"""One test per query x agent x trial: the tests' parameters, their generation, --shard and --save-corpus."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import pytest

from ..agents.spec import AgentSpec
from ..apps import available_apps, get_app, load_errors
from ..core.types import Query
from ..run.settings import Settings
from .state import SCALE_KEY, SETTINGS_KEY


@dataclass(frozen=True)
class Case:
    """The parameter of one benchmark test."""

    query: Query
    agent: AgentSpec | None
    trial: int


@dataclass(frozen=True)
class SearchCase:
    """The parameter of one adversarial search test: an app and an agent."""

    app: str
    agent: AgentSpec | None


def queries_for(settings: Settings, app_name: str) -> list[Query]:
    if app_name not in settings.query_cache:
        if settings.corpus is not None:
            queries = [q for q in settings.corpus if q.app == app_name and q.level in settings.run_options.levels]
            if settings.run_options.split is not None:
                from ..core.splits import split_of

                queries = [q for q in queries if split_of(q.app, q.params) == settings.run_options.split]
        else:
            queries = get_app(app_name).generate(settings.run_options)
        if settings.impossible:
            queries = queries + get_app(app_name).impossible_queries(settings.run_options)
        settings.query_cache[app_name] = queries
    return settings.query_cache[app_name]


def generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize a benchmark test (one using netarena_case) with its cases."""
    marker = metafunc.definition.get_closest_marker("netarena")
    if marker is None or not marker.args:
        raise pytest.UsageError(f"{metafunc.definition.nodeid}: use @pytest.mark.netarena('<app>') with netarena_case")
    settings = metafunc.config.stash[SETTINGS_KEY]
    if marker.args[0] not in available_apps():
        reason = load_errors().get(marker.args[0], "it is not registered")
        raise pytest.UsageError(f"{metafunc.definition.nodeid}: app {marker.args[0]!r} cannot be loaded: {reason}")
    agents: list[AgentSpec | None] = list(settings.agents) or [None]
    if settings.search is not None:
        searches = [SearchCase(marker.args[0], agent) for agent in agents]
        ids = [f"search-{marker.args[0]}" + (f"-{a.slug}" if a and len(agents) > 1 else "") for a in agents]
        metafunc.parametrize("netarena_case", searches, ids=ids)
        return
    queries = queries_for(settings, marker.args[0])
    cases, ids = [], []
    for query, agent, trial in itertools.product(queries, agents, range(settings.trials)):
        cases.append(Case(query, agent, trial))
        suffix = f"-{agent.slug}" if agent is not None and len(agents) > 1 else ""
        suffix += f"-t{trial}" if settings.trials > 1 else ""
        ids.append(query.id + suffix)
    metafunc.parametrize("netarena_case", cases, ids=ids)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    settings, scale = config.stash[SETTINGS_KEY], config.stash[SCALE_KEY]
    total = len(items)
    shard = scale.options.shard
    if shard is not None:
        kept = [item for item in items if shard.holds(item.nodeid)]
        deselected = [item for item in items if not shard.holds(item.nodeid)]
        if deselected:
            config.hook.pytest_deselected(items=deselected)
        items[:] = kept
    scale.collected = {"total": total, "selected": len(items)}
    if scale.service is not None:
        scale.service.report_collection(scale.collected)
    worker = getattr(config, "workerinput", {}).get("workerid", "gw0")
    if not settings.save_corpus or worker != "gw0":
        return  # every worker collects the same items: one sends them to the controller, which writes
    queries: dict[str, Any] = {}
    for item in items:
        case = benchmark_case(item)
        if isinstance(case, Case):
            queries.setdefault(case.query.id, case.query)
    scale.controller.save_corpus(list(queries.values()))


def benchmark_case(item: pytest.Item) -> Any:
    return getattr(getattr(item, "callspec", None), "params", {}).get("netarena_case")
