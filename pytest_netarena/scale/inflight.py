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

import collections
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from typing import Any

from ..core.app import App, Environment, RunOptions
from ..core.errors import BackendUnavailable


def runs_concurrently(app: App) -> bool:
    """Whether two environments of this app may live side by side in one process (App.concurrent_environments)."""
    return bool(getattr(app, "concurrent_environments", True))


def flies(asked: int | None, app: App) -> bool:
    """Whether this app's episodes run on the in-flight threads: with --in-flight K > 1 every app that can; unasked,
    the apps whose episodes mostly wait (App.episodes_in_flight > 1, e.g. route's pingmesh rounds)."""
    wanted = asked if asked is not None else getattr(app, "episodes_in_flight", 1)
    return wanted > 1 and runs_concurrently(app)


def flight(asked: int | None, apps: Iterable[App]) -> int:
    """Episodes one process runs at once: --in-flight K as asked; unasked, the most any of the run's apps wants."""
    if asked is not None:
        return asked
    return max((app.episodes_in_flight for app in apps if flies(None, app)), default=1)


class EnvironmentSlots:
    """Environments by app: checked out by one episode at a time, built when none is free."""

    def __init__(self, options: RunOptions) -> None:
        self.options = options
        self._lock = threading.Lock()
        self._free: dict[str, list[Environment]] = {}
        self._all: list[Environment] = []
        self._unavailable: dict[str, BackendUnavailable] = {}
        self._building: dict[str, threading.Lock] = {}
        self._closed = False

    def checkout(self, app: App) -> Environment:
        """A free environment of this app, or a new one; raises BackendUnavailable when it cannot run here."""
        with self._lock:
            if app.name in self._unavailable:
                raise BackendUnavailable(str(self._unavailable[app.name]))
            free = self._free.setdefault(app.name, [])
            if free:
                return free.pop()
            building = self._building.setdefault(app.name, threading.Lock())
        # One build at a time per app: builds hold the GIL anyway, and K threads starting together
        # would otherwise all miss the app's caches (parsed manifests, ...) and fill them K times.
        with building:
            with self._lock:
                if app.name in self._unavailable:
                    raise BackendUnavailable(str(self._unavailable[app.name]))
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
        # side by side: a close may wait for a server thread to stop, and there may be dozens
        closers = [threading.Thread(target=_close_quietly, args=(environment,), daemon=True)
                   for environment in environments]
        for closer in closers:
            closer.start()
        for closer in closers:
            closer.join(60)


def _close_quietly(environment: Environment) -> None:
    try:
        environment.close()
    except Exception:  # one broken close must not keep the others open
        pass


class InFlight:
    """Runs `start(item)` for queued items on K daemon threads; a test takes its item's future.

    At most K episodes run at once: a test whose episode was not queued yet (its push is still on
    the way) puts it at the head of the queue rather than running it on its own thread.
    """

    def __init__(self, threads: int, start: Callable[[Any], Any], eligible: Callable[[Any], bool]) -> None:
        self._start = start
        self.eligible = eligible
        self._queue: collections.deque[tuple[Any, Future]] = collections.deque()
        self._ready = threading.Condition()
        self._futures: dict[str, Future] = {}
        self._taken: set[str] = set()
        self._stopped = False
        self._threads = [threading.Thread(target=self._work, name=f"netarena-episode-{i}", daemon=True)
                         for i in range(threads)]
        for thread in self._threads:
            thread.start()

    @property
    def threads(self) -> int:
        return len(self._threads)

    def submit(self, items: list[Any]) -> None:
        """Queue the episodes of these items (in this order); items already queued or taken are ignored."""
        with self._ready:
            for item in items:
                if item.nodeid in self._taken or not self.eligible(item):
                    continue
                self._taken.add(item.nodeid)
                future: Future = Future()
                self._futures[item.nodeid] = future
                self._queue.append((item, future))
            self._ready.notify_all()

    def take(self, item: Any) -> Future:
        """The future of this (eligible) item's episode, queued first if it was not queued yet."""
        with self._ready:
            future = self._futures.pop(item.nodeid, None)
            if future is None:
                self._taken.add(item.nodeid)
                future = Future()
                self._queue.appendleft((item, future))
                self._ready.notify()
            return future

    def close(self) -> None:
        """Cancel what has not started; episodes already running finish on their (daemon) threads."""
        with self._ready:
            self._stopped = True
            pending, self._futures = self._futures, {}
            self._queue.clear()
            self._ready.notify_all()
        for future in pending.values():
            future.cancel()

    def _work(self) -> None:
        while True:
            with self._ready:
                while not self._queue and not self._stopped:
                    self._ready.wait()
                if self._stopped:
                    return
                item, future = self._queue.popleft()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(self._start(item))
            except BaseException as error:  # pytest's skip and fail outcomes are BaseExceptions
                future.set_exception(error)
