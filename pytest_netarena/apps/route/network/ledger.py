"""What the agent made in the kernel during an episode, the storm watch, and the removal of all the agent made.

The ledger keeps links, qdiscs and tc filters per node namespace; the watch reads packet counters.

A command can change only the namespace of the node it ran on (its box joins that namespace and no
other), so that node is listed over netlink before and after the command; what is there after and
was not there before the agent first touched the node is the agent's. A traffic storm needs an
agent-made object (the network the harness builds is a loop-free tree of bridges), so the watch
samples the packet counters of the fabric (every frame between nodes crosses it) and of every node
the agent has acted on: a link above STORM_PPS over a short window is a storm, and the agent's
links, qdiscs and filters are removed at once.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .netlink import Filter, Link, Netlink, Qdisc

#: packets per second (received + sent) on one link above which traffic is a storm. The harness's
#: own traffic after a command or a pingmesh is a few packets; a one-packet mirred loop runs at
#: hundreds of thousands per second even on a loaded machine
STORM_PPS = 20_000
#: how long counters are sampled after a command and after a pingmesh
WINDOW_S = 0.02
#: a first window over the threshold is confirmed by a second, longer one before anything is removed
CONFIRM_S = 0.1
#: the longest the ledger waits after a command for links it set up to become operational
SETTLE_S = 1.5


@dataclass(frozen=True)
class Snapshot:
    """The links, qdiscs and filters of one namespace at one moment."""

    links: dict[int, Link]
    qdiscs: frozenset[Qdisc]
    filters: frozenset[Filter]

    def minus(self, other: Snapshot) -> Objects:
        """What this snapshot has that `other` has not."""
        return Objects(
            tuple(link for index, link in self.links.items() if index not in other.links),
            tuple(sorted(self.qdiscs - other.qdiscs, key=lambda q: (q.index, q.parent))),
            tuple(sorted(self.filters - other.filters, key=lambda f: (f.index, f.parent, f.info))),
        )


@dataclass(frozen=True)
class Objects:
    """Kernel objects of one namespace (what an agent added)."""

    links: tuple[Link, ...] = ()
    qdiscs: tuple[Qdisc, ...] = ()
    filters: tuple[Filter, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.links or self.qdiscs or self.filters)

    def describe(self, names: Mapping[int, str]) -> list[str]:
        """Readable names: 'link va (veth)', 'qdisc ingress on va', 'filter u32 on va'."""
        def on(index: int) -> str:
            return names.get(index, f"ifindex {index}")

        return ([f"link {link.name} ({link.kind or 'device'})" for link in self.links]
                + [f"qdisc {qdisc.kind} on {on(qdisc.index)}" for qdisc in self.qdiscs]
                + [f"filter {found.kind} on {on(found.index)}" for found in self.filters])


@dataclass(frozen=True)
class Storm:
    """A link whose packet rate crossed STORM_PPS."""

    where: str  #: the node (or "fabric")
    link: str
    pps: float


@dataclass
class Ledger:
    """The agent's kernel objects in one episode's namespaces, and the storm watch over them."""

    pids: Mapping[str, int]  #: node -> a process in its namespace
    fabric_pid: int
    sockets: dict[str, Netlink] = field(default_factory=dict)
    baseline: dict[str, Snapshot] = field(default_factory=dict)  #: before the agent's first command on a node
    made: dict[str, Objects] = field(default_factory=dict)  #: what the agent's commands added and is still there

    def _socket(self, where: str) -> Netlink:
        if where not in self.sockets:
            self.sockets[where] = Netlink(self.fabric_pid if where == "fabric" else self.pids[where])
        return self.sockets[where]

    def snapshot(self, node: str) -> Snapshot:
        sock = self._socket(node)
        qdiscs = sock.qdiscs()
        return Snapshot({link.index: link for link in sock.links()}, frozenset(qdiscs), frozenset(sock.filters(qdiscs)))

    def before(self, node: str) -> Snapshot:
        """Call before the agent's command on node: the state the command starts from."""
        now = self.snapshot(node)
        self.baseline.setdefault(node, now)
        return now

    def after(self, node: str, before: Snapshot) -> Objects:
        """Call after the command: what it added (and the node's agent-made objects are brought up to date).

        Waits (at most SETTLE_S) while a link the command set up has a carrier but is not operational yet: the
        kernel's link-watch makes it pass frames up to a second later, and the pingmesh after the command must
        judge what the command did, not when the kernel got to it."""
        deadline = time.monotonic() + SETTLE_S
        now = self.snapshot(node)
        while any(link.settling for link in now.links.values()) and time.monotonic() < deadline:
            time.sleep(0.02)
            now = self.snapshot(node)
        self.made[node] = now.minus(self.baseline[node])
        return now.minus(before)

    def names(self, node: str) -> dict[int, str]:
        return {link.index: link.name for link in self._socket(node).links()}

    # ---- storms -------------------------------------------------------------------------------
    def _counters(self, places: Iterable[str]) -> dict[tuple[str, str], int]:
        counts = {}
        for where in places:
            try:
                for link in self._socket(where).links():
                    counts[(where, link.name)] = link.packets
            except OSError:
                continue  # a namespace being torn down
        return counts

    def fastest(self, window_s: float = WINDOW_S) -> Storm | None:
        """The fastest link over window_s in the fabric and every node the agent acted on, if above STORM_PPS."""
        places = ["fabric", *self.baseline]
        first = self._counters(places)
        started = time.perf_counter()
        time.sleep(window_s)
        second = self._counters(places)
        elapsed = time.perf_counter() - started
        rates = [(second[key] - count) / elapsed for key, count in first.items() if key in second]
        keys = [key for key in first if key in second]
        if not rates:
            return None
        top = max(range(len(rates)), key=rates.__getitem__)
        if rates[top] <= STORM_PPS:
            return None
        return Storm(keys[top][0], keys[top][1], rates[top])

    def storm(self) -> Storm | None:
        """A storm seen in one short window and confirmed in a longer one, or None."""
        if self.fastest(WINDOW_S) is None:
            return None
        return self.fastest(CONFIRM_S)

    # ---- removal ------------------------------------------------------------------------------
    def remove_made(self) -> list[str]:
        """Delete every filter, qdisc and link the agent made (in that order); what was removed."""
        removed: list[str] = []
        for node, objects in self.made.items():
            if not objects:
                continue
            try:
                sock, names = self._socket(node), self.names(node)
            except OSError:
                continue
            steps = ((objects.filters, sock.delete_filter), (objects.qdiscs, sock.delete_qdisc),
                     (objects.links, sock.delete_link))
            for kind, (items, delete) in zip(("filter", "qdisc", "link"), steps):
                for item in items:
                    try:
                        delete(item)
                    except OSError:
                        continue  # already gone with its link or qdisc (or its veth peer)
                    removed.append(f"{node}: " + Objects(**{f"{kind}s": (item,)}).describe(names)[0])
            self.made[node] = self.snapshot(node).minus(self.baseline[node])
        return removed

    def left(self) -> dict[str, Objects]:
        """Agent-made objects still present, per node (empty after a successful removal)."""
        return {node: objects for node, objects in self.made.items() if objects}

    def close(self) -> None:
        for sock in self.sockets.values():
            sock.close()
        self.sockets = {}


#: how often the watch between steps samples (only while the agent has made something)
BETWEEN_STEPS_S = 0.5


class Watch:
    """The storm watch while the agent thinks: a thread that, every BETWEEN_STEPS_S while the agent has
    made anything, looks for a storm and removes the agent's objects at once; the environment holds
    `lock` during its steps (the thread never runs beside one) and collects what it found."""

    def __init__(self, ledger: Ledger) -> None:
        import threading

        self.ledger = ledger
        self.lock = threading.Lock()
        self.found: list[tuple[Storm, list[str]]] = []  #: storms stopped between steps, and what was removed
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="netarena-storm-watch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(BETWEEN_STEPS_S):
            if not self.lock.acquire(timeout=0.1):
                continue  # a step runs (it may be stopping this watch: never wait for it)
            try:
                if self._stop.is_set() or not self.ledger.left():
                    continue
                storm = self.ledger.storm()
                if storm is not None:
                    self.found.append((storm, self.ledger.remove_made()))
            except OSError:
                continue  # the network is going away
            finally:
                self.lock.release()

    def take(self) -> list[tuple[Storm, list[str]]]:
        """What the watch stopped since the last call (call with `lock` held)."""
        found, self.found = self.found, []
        return found

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
