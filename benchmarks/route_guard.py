"""Route guard figures: the per-step cost of the storm budget and object caps, teardown times and the delay they impose.

On 2x1 and 16x4 networks: the median step and the median cost of the checks beside the pingmesh (accounting, the
guard and the storm windows); the cost of one reading of the meter (the watch's between steps); the teardown of an
episode whose agent made the most objects the caps allow, and of one whose agent asked for a flood of veth pairs;
and, for both, the worst delay another process's netlink work suffered meanwhile (a probe in a namespace of its own
changing its loopback's MTU every 5 ms: a request that takes the kernel's rtnl lock, as every link change does).
Needs root and Mininet. Run: python benchmarks/route_guard.py [--steps N] [--flood PAIRS] [--small]; with PYTHONPATH set to an
older checkout it measures that code instead (the figures before)."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

if "PYTHONPATH" not in os.environ:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_netarena.apps.route import APP
from pytest_netarena.apps.route.agents.builtin import action
from pytest_netarena.core.app import RunOptions
from pytest_netarena.core.types import Query

FORWARD_OFF = {"type": "disable_routing", "method": "ip_forward_off"}
COMMANDS = ("ip route", "iptables-save", "sysctl net.ipv4.ip_forward", "ip -br addr | grep UP")

#: a process in its own namespace timing one link change (RTM_NEWLINK on its loopback) every 5 ms until stdin closes
PROBE = r"""
import json, select, socket, struct, sys, time
sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
sock.bind((0, 0))
delays, sequence = [], 0
print("READY", flush=True)
while not select.select([sys.stdin], [], [], 0.005)[0]:
    sequence += 1
    mtu = 65535 + sequence % 2
    body = struct.pack("=BxHiII", 0, 0, 1, 0, 0) + struct.pack("=HHI", 8, 4, mtu)
    started = time.perf_counter()
    sock.send(struct.pack("=IHHII", 16 + len(body), 16, 0x5, sequence, 0) + body)
    sock.recv(65536)
    delays.append((time.time(), time.perf_counter() - started))
print(json.dumps(delays))
"""


class Probe:
    """The delay probe, started before the work it watches; `worst(since)` after it stops."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(["unshare", "--net", sys.executable, "-c", PROBE], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)
        assert self.process.stdout.readline().strip() == "READY"
        time.sleep(0.5)  # a baseline of undisturbed delays

    def stop(self) -> list[tuple[float, float]]:
        out, _ = self.process.communicate("\n", timeout=60)
        return json.loads(out)


def worst(delays: list[tuple[float, float]], since: float) -> str:
    during = [delay for at, delay in delays if at >= since]
    before = [delay for at, delay in delays if at < since]
    typical = statistics.median(before) * 1000 if before else float("nan")
    return (f"worst {max(during) * 1000:.0f} ms over {len(during)} probes (median before {typical:.2f} ms)"
            if during else "no probe ran")


def query(subnets: int, hosts: int) -> Query:
    return Query("route", 1, "disable_routing", 0, 0, {"subnets": subnets, "hosts": hosts, "faults": [FORWARD_OFF]})


def step_figures(steps: int, sizes: tuple[tuple[int, int], ...] = ((2, 1), (16, 4))) -> None:
    guarded = _new_code()
    print(f"per step (median of {steps} router commands: {', '.join(COMMANDS)}), {'new' if guarded else 'old'} code:")
    for subnets, hosts in sizes:
        env = APP.make_environment(RunOptions())
        try:
            env.reset(query(subnets, hosts))
            router = env.topology.router
            walls, checks = [], []
            for number in range(steps):
                started = time.perf_counter()
                outcome = env.step(action(router, COMMANDS[number % len(COMMANDS)]))
                walls.append(time.perf_counter() - started)
                checks.append(outcome.check_s - env.mesh.seconds)
                assert not outcome.violations, outcome.violations
            reading = ""
            if guarded:
                times = []
                for _ in range(20):
                    started = time.perf_counter()
                    env.meter.read()
                    times.append(time.perf_counter() - started)
                reading = f"; one reading of the meter (the watch's, every 0.5 s between steps) {statistics.median(times) * 1000:.1f} ms"
        finally:
            env.close()
        print(f"  {subnets}x{hosts}: step {statistics.median(walls) * 1000:.0f} ms, checks beside the pingmesh "
              f"{statistics.median(checks) * 1000:.1f} ms{reading}")


#: the most objects the caps allow (64 links, 128 qdiscs, 512 filters; the routes and addresses the kernel adds for
#: them stay under their caps), made in four commands
def most_allowed() -> list[str]:
    pairs = "".join(f"link add m{i}a type veth peer name m{i}b\\n" for i in range(32))
    ups = "".join(f"link set m{i}{end} up\\n" for i in range(32) for end in "ab")
    qdiscs = "".join(f"qdisc add dev m{i}{end} clsact\\nqdisc add dev m{i}{end} root tbf rate 1mbit burst 4k limit 10k\\n"
                     for i in range(32) for end in "ab")
    filters = "".join(f"filter add dev m{i}{end} ingress protocol all prio {prio} u32 match u32 0 0 action drop\\n"
                      for i in range(32) for end in "ab" for prio in range(1, 9))
    return [f"printf '{pairs}' > /tmp/p; ip -batch /tmp/p", f"printf '{ups}' > /tmp/u; ip -batch /tmp/u",
            f"printf '{qdiscs}' > /tmp/q; tc -batch /tmp/q", f"printf '{filters}' > /tmp/f; tc -batch /tmp/f && echo OK"]


def teardown_figures(flood: int) -> None:
    for label, commands in (("the most objects the caps allow", most_allowed()),
                            (f"a flood of {flood:,} veth pairs in one command",
                             [f"for i in $(seq {flood}); do echo link add f$i type veth peer name g$i; done > /tmp/b; "
                              "ip -force -batch /tmp/b"])):
        env = APP.make_environment(RunOptions())
        try:
            env.reset(query(2, 1))
            router = env.topology.router
            probe = Probe()
            for command in commands[:-1]:
                outcome = env.step(action(router, command))
                assert not outcome.violations, outcome.violations
            since = time.time()
            started = time.perf_counter()
            outcome = env.step(action(router, commands[-1]))
            made_s = time.perf_counter() - started
            started = time.perf_counter()
            env.teardown()
            teardown_s = time.perf_counter() - started
            delays = probe.stop()
        finally:
            env.close()
        note = outcome.violations[0][:90] if outcome.violations else "no violation"
        print(f"  {label}: last command's step {made_s:.2f} s ({note}); teardown {teardown_s:.2f} s after it; "
              f"another process's link change: {worst(delays, since)}")


def _new_code() -> bool:
    try:
        from pytest_netarena.apps.route.network import guard  # noqa: F401
    except ImportError:
        return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--flood", type=int, default=1500, help="veth pairs the flooding command asks for")
    parser.add_argument("--small", action="store_true", help="the step figures on 2x1 only (a quick check that it runs)")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("benchmarks/route_guard.py needs root (Mininet)")
    import pytest_netarena

    print(f"code: {Path(pytest_netarena.__file__).parent}")
    step_figures(args.steps, ((2, 1),) if args.small else ((2, 1), (16, 4)))
    print("teardown (2x1 network; the probe's delays from the last command's start to the end of the teardown):")
    teardown_figures(args.flood)


if __name__ == "__main__":
    main()
