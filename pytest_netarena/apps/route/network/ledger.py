"""What the agent made in the kernel during an episode, and the removal of all the agent made.

The ledger keeps links, qdiscs and tc filters per node namespace: a command can change only the namespace of
the node it ran on (its box joins that namespace and no other), so that node is listed over netlink before and
after the command; what is there after and was not there before the agent first touched the node is the agent's.
The removal deletes the agent's links in one batch per node (netlink.delete_links) while the harness still holds
the namespaces: a loop carrying a packet of a local socket keeps its namespace alive after every process in it
is gone, so a network torn down without it could leave a storm running where no one can reach it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from ....netlink import Filter, Link, Netlink, Qdisc

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


@dataclass
class Ledger:
    """The agent's kernel objects in one episode's namespaces."""

    pids: Mapping[str, int]  #: node -> a process in its namespace
    fabric_pid: int
    sockets: dict[str, Netlink] = field(default_factory=dict)
    baseline: dict[str, Snapshot] = field(default_factory=dict)  #: before the agent's first command on a node
    made: dict[str, Objects] = field(default_factory=dict)  #: what the agent's commands added and is still there

    def _socket(self, where: str) -> Netlink:
        if where not in self.sockets:
            self.sockets[where] = Netlink.of_process(self.fabric_pid if where == "fabric" else self.pids[where])
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

    # ---- removal ------------------------------------------------------------------------------
    def remove_made(self) -> list[str]:
        """Delete every filter, qdisc and link the agent made in every node it acted on; what was removed.

        Filters and qdiscs on the agent's own links go with them; the links go in one batch per node."""
        removed: list[str] = []
        for node, baseline in self.baseline.items():
            try:
                sock = self._socket(node)
                objects = self.snapshot(node).minus(baseline)
                names = self.names(node)
            except OSError:
                continue
            mine = {link.index for link in objects.links}
            qdiscs = {(qdisc.index, qdisc.handle) for qdisc in objects.qdiscs}
            # a filter hangs under its qdisc's major number (ingress and clsact: ffff:)
            filters = [found for found in objects.filters
                       if found.index not in mine and (found.index, found.parent & 0xFFFF0000) not in qdiscs]
            for items, delete in ((filters, sock.delete_filter), ([q for q in objects.qdiscs if q.index not in mine],
                                                                 sock.delete_qdisc)):
                for item in items:
                    try:
                        delete(item)
                    except OSError:
                        continue  # already gone with its qdisc
            try:
                sock.delete_links(sorted(mine))
            except OSError:
                pass  # gone already
            removed += [f"{node}: {item}" for item in objects.describe(names)]
            self.made[node] = self.snapshot(node).minus(baseline)
        return removed

    def clear(self) -> None:
        """At the end of the episode: delete every link but loopback, and every qdisc on loopback, of every node the
        agent acted on, one batch per node (the harness's links too: the namespaces are about to go anyway, and
        an object the agent disguised as one of the harness's goes as well)."""
        for node in self.baseline:
            try:
                sock = self._socket(node)
                links = sock.links()
                loopback = {link.index for link in links if link.name == "lo"}
                for qdisc in sock.qdiscs():
                    if qdisc.index in loopback:
                        try:
                            sock.delete_qdisc(qdisc)
                        except OSError:
                            continue
                sock.delete_links(sorted(link.index for link in links if link.index not in loopback))
            except OSError:
                continue
            self.made[node] = Objects()

    def left(self) -> dict[str, Objects]:
        """Agent-made objects still present, per node (empty after a successful removal)."""
        return {node: objects for node, objects in self.made.items() if objects}

    def close(self) -> None:
        for sock in self.sockets.values():
            sock.close()
        self.sockets = {}
