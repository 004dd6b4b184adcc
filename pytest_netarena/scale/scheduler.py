"""xdist's load scheduling, taught two things: which worker can run which app, and episodes in flight.

Each worker builds one environment of every app in its collection before it reports the
collection, and tells the controller which apps it cannot run (no root for Mininet, no
bubblewrap, no kubectl, ...). This scheduler then never hands those apps' episodes to it: they go
to workers that can run them. An app no live worker can run is handed out anyway, so its
episodes skip with the reason, as on one machine.

With K episodes in flight per worker (`--in-flight K`, or the run's apps' own default: route's 3) a
worker is kept 2K to 3K items ahead and told (over the netarena link) which items are coming, so
it can start K episodes at once. Runs without benchmark items are
scheduled exactly as by xdist's LoadScheduling.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from xdist.scheduler import LoadScheduling

from .link import push

if TYPE_CHECKING:
    from .service import RunService


class NetarenaScheduling(LoadScheduling):
    def __init__(self, config: Any, log: Any, service: RunService, in_flight: Callable[[Sequence[str | None]], int]) -> None:
        """in_flight: episodes a worker runs at once, given the collected items' apps."""
        super().__init__(config, log)
        self.service = service
        self._in_flight_for = in_flight
        self.in_flight = 1  #: settled when the collection is known
        self.collection: list[str] | None

    @property
    def _benchmark(self) -> bool:
        apps = self.service.item_apps
        return apps is not None and any(apps)

    def _app(self, index: int) -> str | None:
        apps = self.service.item_apps or []
        return apps[index] if index < len(apps) else None

    def _refuses(self, node: Any, app: str) -> bool:
        return app in self.service.refusals.get(node.gateway.id, {})

    def _takes(self, node: Any, index: int) -> bool:
        app = self._app(index)
        if app is None or not self._refuses(node, app):
            return True
        live = [other for other in self.node2pending if not other.shutting_down]
        return all(self._refuses(other, app) for other in live)  # nobody can: it skips wherever it goes

    # ---- LoadScheduling's hooks ----------------------------------------------------------------

    def schedule(self) -> None:
        if not self._benchmark or self.collection is not None:
            super().schedule()
            return
        assert self.collection_is_completed
        if not self._check_nodes_have_same_collection():
            self.log("**Different tests collected, aborting run**")
            return
        self.collection = next(iter(self.node2collection.values()))
        self.in_flight = max(1, self._in_flight_for(self.service.item_apps or []))
        self.pending[:] = range(len(self.collection))
        if not self.collection:
            return
        share = -(-len(self.pending) // max(1, len(self.nodes)))
        for node in self.nodes:
            self._fill(node, limit=share)
        for node in self.nodes:
            if not any(self._takes(node, index) for index in self.pending):
                node.shutdown()

    def check_schedule(self, node: Any, duration: float = 0) -> None:
        if not self._benchmark:
            super().check_schedule(node, duration)
            return
        if node.shutting_down:
            return
        self._fill(node)
        if not any(self._takes(node, index) for index in self.pending):
            node.shutdown()  # it finishes what it holds, then stops

    def _fill(self, node: Any, limit: int | None = None) -> None:
        held = self.node2pending[node]
        # K running and K queued behind them: when a round of K ends (the worker reports its tests
        # only then), the next K start at once while the refill travels. K=1 keeps xdist's 2..3.
        low, high = max(2, 2 * self.in_flight), 3 * self.in_flight
        if len(held) >= low and limit is None:
            return
        want = high - len(held)
        if limit is None:  # share what is left, so no worker hoards the tail of the run
            limit = max(1, -(-len(self.pending) // max(1, len(self.node2pending))))
        want = min(want, limit)
        chosen: list[int] = []
        for index in self.pending:
            if len(chosen) >= want:
                break
            if self._takes(node, index):
                chosen.append(index)
        if chosen:
            self._send(node, chosen)

    def _send(self, node: Any, indices: Sequence[int]) -> None:
        if list(indices) == self.pending[:len(indices)]:
            del self.pending[:len(indices)]  # the usual case, and cheap on runs of many thousand tests
        else:
            taken = set(indices)
            self.pending[:] = [index for index in self.pending if index not in taken]
        self.node2pending[node].extend(indices)
        node.send_runtest_some(list(indices))
        channel = self.service.channels.get(node.gateway.id)
        if self.in_flight > 1 and channel is not None:
            push(channel, "upcoming", list(indices))

