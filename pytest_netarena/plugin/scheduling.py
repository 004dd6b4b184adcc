"""Spreading the episodes: xdist's controller hooks, episodes in flight on threads, -n N folded into them."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import pytest

from ..apps import get_app
from ..run.settings import Settings
from ..run.worker_input import WorkerInput
from ..scale.inflight import InFlight, flies, flight
from ..scale.service import RemoteController
from ..scale.workers import WorkerSplit, plain_numprocesses, split_workers
from .collection import Case, SearchCase, benchmark_case
from .fixtures import obtain
from .state import SCALE_KEY, SETTINGS_KEY, Scale


def fold_workers_into_flight(config: pytest.Config, settings: Settings, option: Any) -> WorkerSplit | None:
    """`-n N` with a model agent and more workers than cores: a worker per core but the controller's (none when
    that leaves one), N in flight.

    A worker costs a Python start-up and environments of its own, and on few cores N of them queue for
    the CPU while the model is thinking; threads in flight only wait (docs/scale.md). Left alone: `-n auto`,
    an explicit --in-flight, --dist, --tx and --maxprocesses (what xdist already made of -n stays)."""
    # a model-bound agent's steps mostly wait on a remote model (agents/kinds.py), not on this machine's CPU
    if not config.pluginmanager.hasplugin("xdist") or not any(agent.agent_kind.model_bound for agent in settings.agents):
        return None
    typed = config.known_args_namespace  # -n as typed, before xdist turns auto into a number
    asked = plain_numprocesses(getattr(typed, "numprocesses", None))
    if (asked is None or getattr(typed, "dist", "no") != "no" or getattr(typed, "tx", None)
            or getattr(typed, "maxprocesses", None) or option("in-flight") not in (None, "")):
        return None
    split = split_workers(asked, os.cpu_count() or 1)
    if split.workers == asked:
        return None
    # read by xdist's pytest_configure (trylast, after this one) and its DSession
    config.option.numprocesses = split.workers
    config.option.tx = ["popen"] * split.workers
    if not split.workers:
        config.option.dist = "no"
    return split


def in_flight_for(asked: int | None, app_names: Iterable[str | None]) -> int:
    """Episodes one process runs at once for items of these apps: --in-flight as asked, else the apps' defaults."""
    apps = []
    for name in set(filter(None, app_names)):
        try:
            apps.append(get_app(name))
        except KeyError:  # an app this process does not know: its episodes skip with the reason
            continue
    return flight(asked, apps)


def _start_in_flight(config: pytest.Config, scale: Scale, items: list[pytest.Item]) -> None:
    asked = scale.options.in_flight
    cases = [benchmark_case(item) for item in items]
    threads = in_flight_for(asked, [case.query.app for case in cases if isinstance(case, Case)])
    if threads <= 1 or scale.in_flight is not None:
        return

    def runs_in_flight(item: pytest.Item) -> bool:
        case = benchmark_case(item)
        return isinstance(case, Case) and case.agent is not None and flies(asked, get_app(case.query.app))

    settings = config.stash[SETTINGS_KEY]
    scale.in_flight = InFlight(threads, lambda item: obtain(item.callspec.params["netarena_case"], settings, scale),
                               runs_in_flight)


class XdistHooks:
    """The controller's side of xdist: ships the run to each worker and opens the netarena link to it."""

    def pytest_configure_node(self, node: Any) -> None:
        settings, scale = node.config.stash[SETTINGS_KEY], node.config.stash[SCALE_KEY]
        handed = WorkerInput(
            seed=settings.seed,
            run_id=settings.run_id,
            shard=str(scale.options.shard) if scale.options.shard else None,
            in_flight=scale.options.in_flight,
            corpus=None if settings.corpus is None else tuple(settings.corpus),
            run_info=settings.resumed_run,
            secret=settings.run_options.secret,
        )
        node.workerinput.update(handed.to_workerinput())
        if scale.service is not None:
            from ..scale.link import open_link

            worker, service = node.gateway.id, scale.service
            service.channels[worker] = open_link(node.gateway, lambda kind, op, args: service.handle(worker, kind, op, args))

    @pytest.hookimpl(tryfirst=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        scale = config.stash[SCALE_KEY]
        if config.getoption("dist") != "load" or scale.service is None:
            return None  # another --dist mode: xdist's own scheduler
        from ..scale.scheduler import NetarenaScheduling

        asked = scale.options.in_flight
        return NetarenaScheduling(config, log, scale.service, lambda apps: in_flight_for(asked, apps))

    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        scale = node.config.stash[SCALE_KEY]
        service = scale.service
        if service is None or not service.item_apps or not any(service.item_apps):
            return
        from ..scale.host import describe

        worker = node.gateway.id
        facts = service.hosts.get(worker)
        reporter = node.config.pluginmanager.get_plugin("terminalreporter")
        if facts is None or reporter is None or node.config.get_verbosity() < 0:
            return
        refused = service.refusals.get(worker, {})
        runs = sorted({app for app in service.item_apps if app and app not in refused})
        reporter.write_line(describe(worker, facts, refused, runs, in_flight_for(scale.options.in_flight, runs)))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """Start episodes ahead (--in-flight); on an xdist worker, tell the controller what this host can run.

    tryfirst: the controller must know before xdist reports this worker's collection to it.
    """
    config = session.config
    settings, scale = config.stash[SETTINGS_KEY], config.stash[SCALE_KEY]
    _start_in_flight(config, scale, session.items)
    if scale.service is not None:
        scale.positions = {item.nodeid: index for index, item in enumerate(session.items)}
        return
    apps: list[str | None] = []
    for item in session.items:
        case = benchmark_case(item)
        apps.append(case.query.app if isinstance(case, Case) else case.app if isinstance(case, SearchCase) else None)
    refused = {}
    if any(apps):
        from ..scale.host import host_facts

        scale.controller.report_host(host_facts(settings.run_options.sandboxed))
    if any(apps) and settings.agents and not config.option.collectonly:
        # build one environment of each app now: the scheduler must know what runs here
        for name in sorted({app for app in apps if app}):
            why = scale.slots.probe(get_app(name))
            if why:
                refused[name] = why
    controller = scale.controller
    controller.report_collection({**scale.collected, "apps": apps, "refused": refused})
    in_flight = scale.in_flight
    if in_flight is not None and isinstance(controller, RemoteController):  # a worker: the controller pushes
        items = session.items
        controller.client.handle_pushes(
            "upcoming", lambda indices: in_flight.submit([items[i] for i in indices if i < len(items)]))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Without xdist, keep the next 2K episodes queued for the K threads (xdist workers get pushes)."""
    scale = item.config.stash[SCALE_KEY]
    if scale.in_flight is not None and scale.positions is not None:
        start = scale.positions.get(item.nodeid)
        if start is not None:
            items = item.session.items
            scale.in_flight.submit(items[start:start + 2 * scale.in_flight.threads])
