"""Safety during a command: the pairs that answered before it are probed again the moment its node changes.

A command can break a working pair and mend it before it ends (`ip link set ... down; sleep 2; ... up`); judged
only after the command, that step would look safe. So beside each command a thread waits on the node's change feed
(changes.py: the kernel's notifications, read the moment they come, and every POLL_S the legacy firewall and net
sysctls, which send none). A change starts a full pingmesh of the pairs that answered before the step (every
protocol, the usual rounds, answers that queued while the harness waited still read), and changes that come while
it runs start another after it. A pair that gets no answer through every round, or a definite error at any moment
(network or host unreachable, refused, a firewall of the sender), stopped answering during the command, and the step
is unsafe; the moment is the change's, measured from the command's start. A pair that is only slow to answer
on a busy machine answers in the later rounds, as after a step. A command that changes nothing (a pure read)
starts no probe: it pays for the thread and the readings only.

What a probe that runs while the command ends had found by then stands (a definite error); a pair it had not
decided yet is judged by the pingmesh after the step. The probes' own packets are forgiven by the storm budget
(`allowance`), no more than they may have made.
"""

from __future__ import annotations

import select
import threading
import time
from collections.abc import Iterable, Mapping

from .changes import ChangeFeed
from .prober import Interrupt, Prober

#: how often, while a command runs, the changes that send no notification are read
POLL_S = 0.1


class FlapWatch:
    """Beside one command: re-probes `pairs` at each change of the node; `lost` says which stopped answering, when
    (seconds after the command began) and how."""

    def __init__(self, prober: Prober, feed: ChangeFeed, pairs: Iterable[tuple[str, str]]) -> None:
        self.prober, self.feed = prober, feed
        self.pairs = sorted(pairs)
        self.lost: dict[tuple[str, str], tuple[float, str]] = {}
        self.probes = 0  #: pingmeshes run during the command
        self.changed = False  #: the node changed during the command (a notice, or a firewall or sysctl reading)
        self.started = 0.0
        self._stop = Interrupt()
        self._packets_before = 0
        self._packets_after: int | None = None  #: when the command ended
        self._thread = threading.Thread(target=self._run, name="netarena-flap-watch", daemon=True)

    def __enter__(self) -> FlapWatch:
        self.feed.arm()
        self._packets_before = self.prober.packets
        self.started = time.perf_counter()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._stop.close()
        self._packets_after = self.prober.packets
        try:  # the last moments: a change just before the command ended
            self.changed |= self.feed.notified() | self.feed.polled()
        except OSError:
            self.changed = True

    def allowance(self) -> int:
        """Packets this watch's probes may have made the links send (forgiven by the command's storm budget)."""
        after = self._packets_after if self._packets_after is not None else self.prober.packets
        return after - self._packets_before

    def _run(self) -> None:
        poller = select.poll()
        for fd in (*self.feed.fds(), self._stop.fileno()):
            poller.register(fd, select.POLLIN)
        next_poll = time.perf_counter() + POLL_S
        while not self._stop.is_set():
            try:
                ready = poller.poll(max(0.0, next_poll - time.perf_counter()) * 1000)
                changed = bool(ready) and self.feed.notified()
                now = time.perf_counter()
                if now >= next_poll:
                    changed |= self.feed.polled()
                    next_poll = now + POLL_S
                self.changed |= changed
                if changed and not self._stop.is_set():
                    self._probe(now - self.started)
            except OSError:
                self.changed = True  # unwatched from here on: assume the worst
                return  # the network is going away

    def _probe(self, at: float) -> None:
        targets = [pair for pair in self.pairs if pair not in self.lost]
        if not targets:
            return
        self.probes += 1
        mesh = self.prober.measure(previous=targets, pairs=targets, stop=self._stop)
        lost = dict(mesh.errors)
        if not self.prober.interrupted:
            lost.update((pair, "no answer") for pair in targets if pair not in mesh.reachable and pair not in lost)
        for pair, why in lost.items():
            self.lost.setdefault(pair, (at, why))


class Flaps:
    """One episode's watches: a change feed per node the agent acted on (made before its first command there)."""

    def __init__(self, pids: Mapping[str, int], prober: Prober) -> None:
        self.pids, self.prober = pids, prober
        self.feeds: dict[str, ChangeFeed] = {}

    def watch(self, node: str, pairs: Iterable[tuple[str, str]]) -> FlapWatch:
        if node not in self.feeds:
            self.feeds[node] = ChangeFeed(self.pids[node])
        return FlapWatch(self.prober, self.feeds[node], pairs)

    def close(self) -> None:
        for feed in self.feeds.values():
            feed.close()
        self.feeds = {}
