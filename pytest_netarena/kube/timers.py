"""The controllers' clock: work due later queued back into its stage when its time comes, and the controllers run over it.

What comes due: a CronJob's next schedule, a Job's back-off, a refused pod tried again, an autoscaler's sync period.

Controllers run synchronously after writes; what depends on time alone has no write to wake it, so a
controller asks `after(seconds, stage, key)` and one daemon thread of the cluster queues the key in the
stage then (`WorkQueue`), under the store lock, and runs the controllers, as a write would.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time

#: timers kept at most (a controller asking again for the same key and time is one timer)
MAX_TIMERS = 100_000


class Timers:
    """Keys of queue stages to revisit at given times, for one Cluster."""

    def __init__(self, cluster) -> None:
        self.cluster = cluster
        self._heap: list[tuple[float, int, str, object]] = []
        self._pending: set[tuple[str, object]] = set()  #: (stage, key) already due at or before a kept time
        self._order = itertools.count()
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stopping = False

    def after(self, seconds: float, stage: str, key) -> None:
        """Queue key in stage in `seconds` (at once when the cluster runs its controllers again before that, the
        controller's own check decides what is due)."""
        due = time.monotonic() + max(0.0, seconds)
        with self._changed:
            if self._stopping or len(self._heap) >= MAX_TIMERS:
                return
            if self._heap and (stage, key) in self._pending and any(
                    s == stage and k == key and t <= due for t, _, s, k in self._heap):
                return
            heapq.heappush(self._heap, (due, next(self._order), stage, key))
            self._pending.add((stage, key))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="kube-controller-timers", daemon=True)
                self._thread.start()
            self._changed.notify()

    def _run(self) -> None:
        while True:
            with self._changed:
                while not self._stopping and (not self._heap or self._heap[0][0] > time.monotonic()):
                    self._changed.wait(None if not self._heap else max(0.0, self._heap[0][0] - time.monotonic()))
                if self._stopping:
                    return
                due = []
                now = time.monotonic()
                while self._heap and self._heap[0][0] <= now:
                    _, _, stage, key = heapq.heappop(self._heap)
                    due.append((stage, key))
                self._pending = {(s, k) for _, _, s, k in self._heap}
            self._fire(due)

    def _fire(self, due: list[tuple[str, object]]) -> None:
        cluster = self.cluster
        try:
            with cluster.store.transaction():
                for stage, key in due:
                    getattr(cluster.queue, stage).add(key)
                cluster.settle_now()
        except Exception:  # noqa: BLE001  (a stopped store, a controller's bug: the clock keeps going)
            import traceback

            cluster.timer_errors.append(traceback.format_exc())

    def clear(self) -> None:
        """Forget every timer (the store was reset to a snapshot)."""
        with self._changed:
            self._heap.clear()
            self._pending.clear()

    def stop(self) -> None:
        with self._changed:
            self._stopping = True
            self._changed.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=5)
