"""The packets an episode's links have sent, summed over every link the agent can reach, deleted links included.

The places are the fabric (every frame between two nodes crosses it) and every node the agent has acted on (only
there can its commands make links). A reading drains each place's change notifications, then dumps its links'
counters (RTM_GETSTATS: 0.3 ms for the hundred links of a 16x4 fabric, where a full link listing takes 20 ms).
A link seen before adds what its counter rose by; a new one adds all it counted; a deleted one adds what its
counter rose by until the kernel deleted it (monitor.py). So the total only grows, and no way of making, using
and deleting links between two readings hides packets from it. Windows are differences of readings. Sent
packets count each hop of a frame once (netlink.packets).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from .firewall import LegacyTables
from .monitor import Monitor
from ....netlink import Netlink

FABRIC = "fabric"


@dataclass(frozen=True)
class Reading:
    """The episode's packet total at one moment, and its share per link (place, link name)."""

    at: float  #: time.monotonic()
    total: int
    links: Mapping[tuple[str, str], int]

    def since(self, earlier: Reading) -> tuple[int, float, list[tuple[str, str, int]]]:
        """Packets, seconds and the busiest links (place, link, packets) between an earlier reading and this one."""
        rises = [(place, name, count - earlier.links.get((place, name), 0))
                 for (place, name), count in self.links.items()]
        busiest = sorted((rise for rise in rises if rise[2] > 0), key=lambda rise: -rise[2])[:3]
        return self.total - earlier.total, self.at - earlier.at, busiest


class Meter:
    """Cumulative packet counts of one episode's places; safe to read from several threads."""

    def __init__(self, pids: Mapping[str, int], fabric_pid: int) -> None:
        self._pids = {**pids, FABRIC: fabric_pid}
        self._places: dict[str, tuple[Netlink, Monitor]] = {}
        self._last: dict[tuple[str, int], int] = {}  #: (place, ifindex) -> packets at the last reading
        self._total = 0
        self._links: Counter[tuple[str, str]] = Counter()
        self._legacy: dict[str, tuple[LegacyTables, int]] = {}  #: node -> its legacy firewall, entries at first
        self.lock = threading.Lock()
        self.watch(FABRIC)

    @property
    def nodes(self) -> list[str]:
        """The nodes watched (those the agent has acted on)."""
        return [place for place in self._places if place != FABRIC]

    def watch(self, place: str) -> None:
        """Start counting a place (a node, before the agent's first command on it): what it counted so far is not
        the agent's."""
        with self.lock:
            if place in self._places:
                return
            monitor = Monitor(self._pids[place], count_objects=place != FABRIC)
            sock = Netlink.of_process(self._pids[place])
            links = sock.links()  # after subscribing: no link can slip between the two
            monitor.know({link.index: link.name for link in links})
            for link in links:
                self._last[(place, link.index)] = link.packets
            self._places[place] = (sock, monitor)
            if place != FABRIC:
                legacy = LegacyTables(self._pids[place])
                self._legacy[place] = (legacy, legacy.entries())

    def read(self) -> Reading:
        with self.lock:
            for place, (sock, monitor) in self._places.items():
                try:
                    self._read(place, sock, monitor)
                except OSError:
                    continue  # the namespace is going away
            return Reading(time.monotonic(), self._total, dict(self._links))

    def _read(self, place: str, sock: Netlink, monitor: Monitor) -> None:
        monitor.drain()  # notifications first: a link deleted after the listing below is counted next time
        gone, reused = monitor.take()
        for link in gone:
            self._add(place, link.name, link.packets - self._last.pop((place, link.index), 0))
        for index, count in sock.sent().items():
            # a reused index may name a new link whose counters started from 0: count all it holds
            before = 0 if index in reused else self._last.get((place, index), 0)
            self._add(place, monitor.names.get(index, f"ifindex {index}"), count - before if count >= before else count)
            self._last[(place, index)] = count

    def _add(self, place: str, name: str, rise: int) -> None:
        if rise > 0:
            self._total += rise
            self._links[(place, name)] += rise

    def added(self) -> Counter[str]:
        """What the kernel's notifications say was added in the watched nodes, by kind, since watching began."""
        total: Counter[str] = Counter()
        with self.lock:
            for place, (_, monitor) in self._places.items():
                if place != FABRIC:
                    monitor.drain()
                    total.update(monitor.added)
            for legacy, first in self._legacy.values():
                total["firewall"] += max(0, legacy.entries() - first)  # iptables-legacy sends no notification
        return total

    def overflowed(self) -> list[str]:
        """Places whose notifications overflowed (counts there can no longer be trusted)."""
        return [place for place, (_, monitor) in self._places.items() if monitor.overflowed]

    def close(self) -> None:
        with self.lock:
            for sock, monitor in self._places.values():
                sock.close()
                monitor.close()
            for legacy, _ in self._legacy.values():
                legacy.close()
            self._places, self._legacy = {}, {}
