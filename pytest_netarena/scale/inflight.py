"""Several episodes in flight per process (`--in-flight K`): threads, each episode with its own environment.

Model-bound episodes spend nearly all their time waiting for replies, so one worker can keep K
of them going on one core; starting K times fewer workers saves their start-up (interpreter,
plugin, litellm import, environments), which is what limited runs on few cores.

pytest still runs tests one at a time: `InFlight` starts the episodes of the tests a process is
about to run (the next ones in its queue: xdist's scheduler pushes them over the netarena link;
without xdist, the next ones in the session) on K threads, and each test's fixture then only
waits for its own episode. `EnvironmentSlots` gives every running episode an environment of its
own (built on demand, at most one per thread and app, reused afterwards).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from ..core.app import App, Environment, RunOptions
from ..errors import BackendUnavailable

#: apps whose environments may not run side by side in one process (Mininet keeps process-wide
#: state); their episodes run one at a time per process, on the test's own thread. An app can say
#: otherwise with a class attribute `concurrent_environments = True`.
SERIAL_APPS = frozenset({"route"})


def runs_concurrently(app: App) -> bool:
    return bool(getattr(app, "concurrent_environments", app.name not in SERIAL_APPS))


class EnvironmentSlots:
    """Environments by app: checked out by one episode at a time, built when none is free."""

    def __init__(self, options: RunOptions) -> None:
        self.options = options
        self._lock = threading.Lock()
        self._free: dict[str, list[Environment]] = {}
        self._all: list[Environment] = []
        self._unavailable: dict[str, BackendUnavailable] = {}
        self._closed = False

    def checkout(self, app: App) -> Environment:
        """A free environment of this app, or a new one; raises BackendUnavailable when it cannot run here."""
        with self._lock:
            if app.name in self._unavailable:
                raise self._unavailable[app.name]
            free = self._free.setdefault(app.name, [])
            if free:
                return free.pop()
        try:
            environment = app.make_environment(self.options)
        except BackendUnavailable as error:
            with self._lock:
                self._unavailable.setdefault(app.name, error)
            raise
        with self._lock:
            self._all.append(environment)
        return environment

    def checkin(self, app: App, environment: Environment) -> None:
        with self._lock:
            if not self._closed:
                self._free.setdefault(app.name, []).append(environment)

    def probe(self, app: App) -> str:
        """Why this app cannot run here ("" when it can); builds its first environment if needed."""
        try:
            self.checkin(app, self.checkout(app))
        except BackendUnavailable as error:
            return str(error) or type(error).__name__
        return ""

    def close(self) -> None:
        with self._lock:
            self._closed = True
            environments, self._all, self._free = self._all, [], {}
        for environment in environments:
            try:
                environment.close()
            except Exception:  # one broken close must not keep the others open
                pass


class InFlight:
    """Runs `start(item)` for queued items on K daemon threads; a test claims its item's future."""

    def __init__(self, threads: int, start: Callable[[Any], Any], eligible: Callable[[Any], bool]) -> None:
        self._start = start
        self._eligible = eligible
        self._queue: queue.Queue[tuple[Any, Future] | None] = queue.Queue()
        self._futures: dict[str, Future] = {}
        self._taken: set[str] = set()
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._work, name=f"netarena-episode-{i}", daemon=True)
                         for i in range(threads)]
        for thread in self._threads:
            thread.start()

    def submit(self, items: list[Any]) -> None:
        """Queue the episodes of these items (in this order); items already queued or run are ignored."""
        for item in items:
            if not self._eligible(item):
                continue
            with self._lock:
                if item.nodeid in self._taken:
                    continue
                self._taken.add(item.nodeid)
                future: Future = Future()
                self._futures[item.nodeid] = future
            self._queue.put((item, future))

    def claim(self, item: Any) -> Future | None:
        """The future of this item's episode, or None: then the caller runs it (and nobody else will)."""
        with self._lock:
            self._taken.add(item.nodeid)
            return self._futures.pop(item.nodeid, None)

    def close(self) -> None:
        """Cancel what has not started; episodes already running finish on their (daemon) threads."""
        with self._lock:
            pending, self._futures = self._futures, {}
        for future in pending.values():
            future.cancel()
        for _ in self._threads:
            self._queue.put(None)

    def _work(self) -> None:
        while True:
            job = self._queue.get()
            if job is None:
                return
            item, future = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(self._start(item))
            except BaseException as error:  # pytest's skip and fail outcomes are BaseExceptions
                future.set_exception(error)
