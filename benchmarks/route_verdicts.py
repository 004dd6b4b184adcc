"""Route verdict figures: the per-step cost of the pingmesh by every protocol (ICMP, TCP and UDP) against ICMP alone,
and of the watch during a command (a pure read, a command that changes the node), on 2x1 and 16x4 networks.

The pingmesh alone: one network per size, its prober measuring it healthy and with forwarding off (medians of
--repeats, wall and this process's CPU). Whole steps: an episode whose router runs a pure read, then a command that
adds and removes an address on lo (each change starts a probe of every pair while the command runs), then the first
command on a host (its change feed is made then); medians of --steps, wall and CPU, with the probes run during the
commands. Needs root and Mininet. Run: python benchmarks/route_verdicts.py [--repeats N] [--steps N] [--small];
with PYTHONPATH set to an older checkout it measures that code instead (the figures before)."""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

if "PYTHONPATH" not in os.environ:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_netarena.apps.route import APP
from pytest_netarena.apps.route.agents.builtin import action
from pytest_netarena.apps.route.network.build import Network
from pytest_netarena.apps.route.network.leases import claim
from pytest_netarena.apps.route.network.prober import Prober
from pytest_netarena.apps.route.topology import Topology
from pytest_netarena.core.app import RunOptions
from pytest_netarena.core.types import Query

FORWARD_OFF = {"type": "disable_routing", "method": "ip_forward_off"}
READ = "ip route"
CHANGE = "ip addr add 10.200.0.1/32 dev lo; ip addr del 10.200.0.1/32 dev lo"


def _new_code() -> bool:
    try:
        from pytest_netarena.apps.route.network import flaps  # noqa: F401
    except ImportError:
        return False
    return True


def _timed(function, repeats: int) -> tuple[float, float]:
    """Median wall and CPU milliseconds of function()."""
    walls, cpus = [], []
    for _ in range(repeats):
        started, cpu = time.perf_counter(), time.process_time()
        function()
        walls.append(time.perf_counter() - started)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls) * 1000, statistics.median(cpus) * 1000


def mesh_figures(repeats: int, sizes: tuple[tuple[int, int], ...]) -> None:
    kinds = (("ICMP alone", ("icmp",)), ("ICMP+TCP+UDP", ("icmp", "tcp", "udp"))) if _new_code() else (("ICMP", None),)
    print(f"pingmesh per step (median of {repeats}, wall / this process's CPU):")
    for episode, (subnets, hosts) in enumerate(sizes):
        lease = claim(1600 + episode)
        topo = Topology(lease.prefix, subnets, hosts)
        network = Network(topo, lease)
        network.start()
        try:
            for label, protocols in kinds:
                prober = (Prober(network.pids, topo.address, topo.nodes) if protocols is None
                          else Prober(network.pids, topo.address, topo.nodes, protocols))
                try:
                    mesh = prober.measure()
                    while not mesh.complete:
                        mesh = prober.measure(previous=frozenset(mesh.pairs))
                    healthy = _timed(lambda: prober.measure(previous=mesh.reachable), repeats)
                    network.run(topo.router, ["sysctl", "-w", "net.ipv4.ip_forward=0"])
                    broken = prober.measure(previous=mesh.reachable)
                    off = _timed(lambda: prober.measure(previous=broken.reachable), repeats)
                    network.run(topo.router, ["sysctl", "-w", "net.ipv4.ip_forward=1"])
                finally:
                    prober.close()
                print(f"  {subnets}x{hosts} ({len(mesh.pairs)} pairs) {label}: healthy {healthy[0]:.1f} ms "
                      f"({healthy[1]:.1f} ms CPU), forwarding off {off[0]:.1f} ms ({off[1]:.1f} ms CPU)")
        finally:
            network.stop()


def step_figures(steps: int, sizes: tuple[tuple[int, int], ...]) -> None:
    print(f"whole steps (median of {steps}; wall / this process's CPU; probes run during the command):")
    for subnets, hosts in sizes:
        env = APP.make_environment(RunOptions())
        try:
            env.reset(Query("route", 1, "disable_routing", 0, 0,
                            {"subnets": subnets, "hosts": hosts, "faults": [FORWARD_OFF]}))
            router, host = env.topology.router, env.topology.host(1, 1)
            env.step(action(router, "sysctl -w net.ipv4.ip_forward=1"))  # healthy: every pair is watched
            figures = []
            for label, node, command, repeats in (("pure read", router, READ, steps),
                                                  ("one change", router, CHANGE, steps),
                                                  ("first command on a host", host, READ, 1)):
                probes = []

                def step(node=node, command=command, probes=probes) -> None:
                    outcome = env.step(action(node, command))
                    assert not outcome.violations, outcome.violations
                    flap = getattr(env, "flap", None)
                    probes.append(flap.probes if flap is not None else 0)

                wall, cpu = _timed(step, repeats)
                figures.append(f"{label} {wall:.0f} ms ({cpu:.0f} ms CPU, {statistics.median(probes):g} probes)")
        finally:
            env.close()
        print(f"  {subnets}x{hosts}: " + "; ".join(figures))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--steps", type=int, default=9)
    parser.add_argument("--small", action="store_true", help="2x1 only (a quick check that every part runs)")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("benchmarks/route_verdicts.py needs root (Mininet)")
    import pytest_netarena

    sizes = ((2, 1),) if args.small else ((2, 1), (16, 4))
    print(f"code: {Path(pytest_netarena.__file__).parent} ({'new' if _new_code() else 'old'}); load average "
          f"{' '.join(f'{load:.2f}' for load in os.getloadavg())} on {os.cpu_count()} CPUs")
    mesh_figures(args.repeats, sizes)
    step_figures(args.steps, sizes)


if __name__ == "__main__":
    main()
