"""The storm budget and the kernel-object caps of an episode: enforced during each command, after it, and between steps.

Packet work is judged as the episode's total over every link it can reach (meter.py), never one link's rate: a
command may make at most STORM_PPS x its time limit packets cross the network (100,000 for 5 s), whether it
leaves a loop behind or deletes it before it ends; after a command or a pingmesh, and while the agent thinks, the
network may carry at most STORM_PPS. A thread beside each command reads the meter every 50 ms and stops the
command's box as soon as the budget or a cap is passed. What the agent adds to the kernel is counted from the
kernel's own notifications (monitor.py) and capped per episode (CAPS); nothing the harness does counts.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from subprocess import Popen

from ....core.process import kill_group
from .meter import Meter, Reading

#: packets per second the whole network may carry on the agent's account (received + sent, summed over every link
#: of the fabric and of the nodes the agent acted on). The harness's own traffic outside a pingmesh is a few
#: packets; a one-packet tc mirred loop runs at 0.6-2.6 million
STORM_PPS = 20_000
#: how often the kernel's notifications are counted while a command runs (cheap: the caps are checked at once),
#: and every how many of those the meter is read
GUARD_PERIOD_S = 0.01
READ_EVERY = 5
#: the guard thread's priority (nice): a flood of `ip -batch` makes ~3,000 links a second, so each moment it waits
#: for a busy CPU is more links to tear down
GUARD_NICE = -10
#: after a command or a pingmesh, the network is read over this window, and a storm confirmed over CONFIRM_S
WINDOW_S = 0.02
CONFIRM_S = 0.1
#: how often the meter is read while the agent thinks (the budget for one reading is STORM_PPS x this, at least)
BETWEEN_STEPS_S = 0.5
#: the most of each kind the agent may add in one episode (counted from the kernel's notifications, so routes and
#: addresses the kernel adds for a new link count too: one veth pair brought up with IPv6 adds about 13 routes and
#: 5 addresses; a veth has a send and a receive queue per CPU unless asked for more, each torn down on its own).
#: An honest repair adds a handful
CAPS: Mapping[str, int] = {"links": 64, "queues": 64 * 2 * (os.cpu_count() or 1), "qdiscs": 128, "filters": 512,
                           "routes": 2048, "addresses": 512, "rules": 256, "neighbours": 512, "nexthops": 256,
                           "firewall": 1024}
#: how a kind reads in a message
NAMES = {"filters": "tc filters, actions and chains", "rules": "routing rules", "neighbours": "static neighbours and "
         "bridge entries", "firewall": "firewall rules, chains and sets"}


@dataclass(frozen=True)
class Storm:
    """More packets than the budget over a window."""

    packets: int
    seconds: float
    budget: int  #: the packets the window allowed
    busiest: tuple[tuple[str, str, int], ...] = ()  #: (place, link, packets), the most first

    def describe(self, strip: Callable[[str], str], when: str) -> str:
        most = "; ".join(f"{strip(link)} of {strip(place)}: {count:,}" for place, link, count in self.busiest)
        return (f"traffic storm {when}: {self.packets:,} packets crossed the network's links in {self.seconds:.2f} s "
                f"(at most {self.budget:,} are allowed there: {STORM_PPS:,} per second, summed over every link "
                f"of the episode, deleted ones included{'; the most on ' + most if most else ''})")


def over(packets: int, seconds: float, budget: int, busiest: list[tuple[str, str, int]]) -> Storm | None:
    return Storm(packets, seconds, budget, tuple(busiest)) if packets > budget else None


def past_caps(meter: Meter) -> str:
    """Why the agent's kernel objects are past their caps ('' when they are not)."""
    lost = meter.overflowed()
    if lost:
        return (f"the kernel's change notifications of {', '.join(lost)} overflowed: the agent changed the kernel "
                f"faster than the harness can count")
    added = meter.added()
    for kind, cap in CAPS.items():
        if added[kind] > cap:
            return f"the agent added {added[kind]:,} {NAMES.get(kind, kind)} in this episode, more than the {cap:,} allowed"
    return ""


def window(meter: Meter, first: Reading | None = None) -> Storm | None:
    """A storm going on now: over STORM_PPS in a window of WINDOW_S (from `first`, if given), confirmed over
    CONFIRM_S."""
    first = first or meter.read()
    time.sleep(max(0.0, WINDOW_S - (time.monotonic() - first.at)))
    second = meter.read()
    packets, elapsed, _ = second.since(first)
    if packets <= STORM_PPS * max(elapsed, WINDOW_S):
        return None
    return confirm(meter, second)


def confirm(meter: Meter, since: Reading) -> Storm | None:
    """A storm seen at `since`, still going on over the next CONFIRM_S."""
    time.sleep(CONFIRM_S)
    packets, elapsed, busiest = meter.read().since(since)
    return over(packets, elapsed, int(STORM_PPS * max(elapsed, CONFIRM_S)), busiest)


class CommandGuard:
    """Beside one command: counts the kernel's notifications every GUARD_PERIOD_S and reads the meter every
    READ_EVERY of those, and stops the command's box (and everything in it) once the agent's objects pass a cap or
    the episode's packets since the command began pass `budget` (plus `allowance()`, the packets the harness's own
    probes during the command may have made). Use as a context manager; pass `started` to the box as its on_start."""

    def __init__(self, meter: Meter, budget: int, allowance: Callable[[], int] = lambda: 0) -> None:
        self.meter = meter
        self.budget = budget
        self.allowance = allowance
        self.storm: Storm | None = None
        self.capped = ""  #: why the caps were passed
        self.killed = False  #: the box was stopped while the command ran
        self.start: Reading | None = None
        self.end: Reading | None = None  #: when the command ended
        self._process: Popen | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="netarena-command-guard", daemon=True)

    @property
    def stopped(self) -> bool:
        return self.storm is not None or bool(self.capped)

    def started(self, process: Popen) -> None:
        with self._lock:
            self._process = process
            if self.stopped:
                kill_group(process)
                self.killed = True

    def __enter__(self) -> CommandGuard:
        self.start = self.meter.read()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.end = self.meter.read()
        if not self.stopped:
            self._check()  # the command's whole window, after it ended (every deleted link's counters are in)

    def after(self) -> tuple[Storm | None, str]:
        """Once the command's objects are listed: its window runs on until WINDOW_S after it ended (no moment is
        left out), and a storm it left behind is over STORM_PPS since it ended (confirmed over CONFIRM_S). Returns
        the storm, if any, and when it was ("during the command" or "after the command")."""
        assert self.start is not None and self.end is not None
        time.sleep(max(0.0, WINDOW_S - (time.monotonic() - self.end.at)))
        second = self.meter.read()
        if self.storm is None:
            packets, elapsed, busiest = second.since(self.start)
            self.storm = over(packets, elapsed, self.budget + self.allowance(), busiest)
        if self.storm is not None:
            return self.storm, "during the command"
        packets, elapsed, _ = second.since(self.end)
        if packets <= STORM_PPS * max(elapsed, WINDOW_S):
            return None, ""
        return confirm(self.meter, second), "after the command"

    def _run(self) -> None:
        try:  # ahead of the agent's processes on a busy machine (root may raise a thread's priority)
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), GUARD_NICE)
        except OSError:
            pass
        ticks = 0
        while not self._stop.wait(GUARD_PERIOD_S):
            ticks += 1
            try:
                if self._check(packets=ticks % READ_EVERY == 0):
                    return
            except OSError:
                return  # the network is going away

    def _check(self, packets: bool = True) -> bool:
        """Whether the command must stop (and stop it): the caps, then (if `packets`) the packet budget."""
        assert self.start is not None
        self.capped = past_caps(self.meter)
        if packets and not self.capped:
            allowance = self.allowance()  # before the reading: never less than the probes it covers
            count, elapsed, busiest = self.meter.read().since(self.start)
            self.storm = over(count, elapsed, self.budget + allowance, busiest)
        if not self.stopped:
            return False
        with self._lock:
            if self._process is not None and self._process.poll() is None:
                kill_group(self._process)
                self.killed = True
        return True


class StormWatch:
    """The storm watch while the agent thinks: a thread that reads the meter every BETWEEN_STEPS_S once the agent
    has acted on a node; when the network carried more than STORM_PPS since the last reading, `stop` runs at
    once (it removes the agent's objects). The environment holds `lock` during its steps (the thread never runs
    beside one) and calls `rebase` at the end of each, so the step's own traffic is never counted here."""

    def __init__(self, meter: Meter, stop: Callable[[], list[str]]) -> None:
        self.meter = meter
        self._remove = stop
        self.lock = threading.Lock()
        self.found: list[tuple[Storm, list[str]]] = []  #: storms stopped between steps, and what was removed
        self._last: Reading | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="netarena-storm-watch", daemon=True)
        self._thread.start()

    def rebase(self) -> None:
        """Call with `lock` held at the end of a step: count from now."""
        self._last = self.meter.read() if self.meter.nodes else None

    def _run(self) -> None:
        while not self._stop.wait(BETWEEN_STEPS_S):
            if not self.lock.acquire(timeout=0.1):
                continue  # a step runs (it may be stopping this watch: never wait for it)
            try:
                if not self._stop.is_set():
                    self.look()
            except OSError:
                continue  # the network is going away
            finally:
                self.lock.release()

    def look(self) -> None:
        """One reading (call with `lock` held; a step calls it first, so no moment between steps is left out)."""
        if not self.meter.nodes:
            return
        reading = self.meter.read()
        last, self._last = self._last, reading
        if last is None:
            return
        packets, elapsed, busiest = reading.since(last)
        storm = over(packets, elapsed, int(STORM_PPS * max(elapsed, BETWEEN_STEPS_S)), busiest)
        if storm is not None:
            self.found.append((storm, self._remove()))
            self._last = self.meter.read()

    def take(self) -> list[tuple[Storm, list[str]]]:
        """What the watch stopped since the last call (call with `lock` held)."""
        found, self.found = self.found, []
        return found

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
