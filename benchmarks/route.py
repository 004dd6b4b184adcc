"""Route app figures: the cost of a node command with and without its sealed box, the per-step kernel accounting and
storm watch (and how fast a storm is stopped), pingmesh time (our prober vs NetArena's process per pair), network
set-up and teardown, oracle episodes per minute.
Needs root and Mininet. Run: python benchmarks/route.py [--repeats N] [--box-steps N] [--box-only] [--checks-only]
[--episodes-only] [--small]
(the guard beside each command, teardown times and their cost to other processes: benchmarks/route_guard.py)"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_netarena.apps.route import APP
from pytest_netarena.apps.route.network.leases import claim
from pytest_netarena.apps.route.network.build import Network
from pytest_netarena.apps.route.network.prober import Mesh, Prober
from pytest_netarena.apps.route.topology import Topology
from pytest_netarena.core.app import RunOptions

SIZES = ((2, 1), (4, 4), (16, 4))


def netarena_pingmesh(network: Network) -> Mesh:
    """NetArena's parallelPing: every ordered pair as its own `ping -c1 -W 0.1` process, all started at once."""
    topo = network.topology
    started = time.perf_counter()
    processes = {}
    for src in topo.nodes:
        for dst in topo.nodes:
            if src != dst:
                argv = ["mnexec", "-a", str(network.pids[src]), "ping", "-c1", "-W", "0.1", topo.address[dst]]
                processes[(src, dst)] = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    reached = set()
    for pair, process in processes.items():
        out, _ = process.communicate()
        if b" 1 received" in out:
            reached.add(pair)
    return Mesh(topo.nodes, frozenset(reached), time.perf_counter() - started)


def median_time(function, repeats: int) -> tuple[float, Mesh]:
    times, mesh = [], None
    for _ in range(repeats):
        mesh = function()
        times.append(mesh.seconds)
    return statistics.median(times), mesh


def pingmesh_figures(repeats: int, sizes: tuple[tuple[int, int], ...] = SIZES) -> None:
    print(f"pingmesh per step (median of {repeats}), same network, healthy and with ip_forward=0:")
    print(f"{'size':>6} {'nodes':>5} {'pairs':>6} | {'ours ok':>8} {'NetArena ok':>11} | {'ours broken':>11} {'NetArena broken':>15} | {'setup':>6} {'teardown':>8}")
    for episode, (subnets, hosts) in enumerate(sizes):
        lease = claim(1200 + episode)
        topo = Topology(lease.prefix, subnets, hosts)
        network = Network(topo, lease)
        started = time.perf_counter()
        network.start()
        prober = Prober(network.pids, topo.address, topo.nodes)
        setup = time.perf_counter() - started
        try:
            prober.measure()  # warm ARP caches for both methods alike
            ours_ok, mesh = median_time(prober.measure, repeats)
            theirs_ok, their_mesh = median_time(lambda net=network: netarena_pingmesh(net), max(1, repeats // 3))
            assert mesh.complete and their_mesh.complete, "healthy meshes disagree"
            network.run(topo.router, ["sysctl", "-w", "net.ipv4.ip_forward=0"])
            ours_bad, mesh = median_time(prober.measure, repeats)
            theirs_bad, their_mesh = median_time(lambda net=network: netarena_pingmesh(net), max(1, repeats // 3))
            agree = mesh.reachable == their_mesh.reachable
        finally:
            prober.close()
            started = time.perf_counter()
            network.stop()
            teardown = time.perf_counter() - started
        print(
            f"{subnets}x{hosts:<4} {len(topo.nodes):>5} {len(mesh.pairs):>6} | {ours_ok:>7.3f}s {theirs_ok:>10.3f}s | "
            f"{ours_bad:>10.3f}s {theirs_bad:>14.3f}s | {setup:>5.2f}s {teardown:>7.2f}s"
            + ("" if agree else "  (broken meshes differ!)")
        )


def _oracle_worker(args: tuple[int, int, int, int, bool]) -> tuple[int, int, float]:
    worker, workers, seed, queries, small = args
    os.environ["PYTEST_XDIST_WORKER"] = f"gw{worker}"
    from pytest_netarena.core.episode import EpisodeConfig, run_episode
    from pytest_netarena.core.types import Outcome, Task, new_episode_id

    options = (RunOptions(seed=seed, queries=queries, levels=(1,), extra={"route_size": "2x1"}) if small
               else RunOptions(seed=seed, queries=queries))
    mine = APP.generate(options)[worker::workers]
    env = APP.make_environment(options)
    resolved = 0
    started = time.perf_counter()
    try:
        for query in mine:
            agent = APP.builtin_agent("oracle", query, env)
            task = Task("route", new_episode_id(), "", "zero-shot", 20)
            result = run_episode(env, agent, query, task, EpisodeConfig(max_steps=20), "builtin:oracle")
            resolved += result.outcome is Outcome.RESOLVED
    finally:
        env.close()
    return len(mine), resolved, time.perf_counter() - started


def _cpu_s(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def oracle_rate(workers: int, queries: int, seed: int, small: bool = False) -> None:
    """Oracle episodes per minute, with the CPU they used (this process and its children: the workers, their boxes
    and node shells), since the machine may be shared."""
    started, cpu = time.perf_counter(), _cpu_s(resource.RUSAGE_SELF) + _cpu_s(resource.RUSAGE_CHILDREN)
    with ProcessPoolExecutor(workers) as pool:
        results = list(pool.map(_oracle_worker, [(w, workers, seed, queries, small) for w in range(workers)]))
    wall = time.perf_counter() - started
    cpu = _cpu_s(resource.RUSAGE_SELF) + _cpu_s(resource.RUSAGE_CHILDREN) - cpu
    episodes = sum(r[0] for r in results)
    resolved = sum(r[1] for r in results)
    print(
        f"oracle: {episodes} episodes (seed {seed}, {'2x1, level 1' if small else 'sizes from the seed, levels 1-3'}) "
        f"on {workers} worker(s): "
        f"{wall:.1f}s wall, {episodes / wall * 60:.1f} episodes/min, {cpu / episodes:.2f} CPU s per episode, "
        f"resolved {resolved}/{episodes}"
    )


EPISODE_SIZES = ((2, 1), (4, 2), (8, 4), (16, 4))


def episode_figures(repeats: int, sizes: tuple[tuple[int, int], ...] = EPISODE_SIZES) -> None:
    """What every episode pays before and after the agent's steps: the network built and its healthy pingmesh
    complete (set-up), then the network torn down and checked for leftovers (teardown); medians of `repeats`, wall
    time and this process's CPU time (the node shells' own CPU is not in it)."""
    print(f"episode set-up (network started, healthy pingmesh complete) and teardown, median of {repeats}:")
    for episode, (subnets, hosts) in enumerate(sizes):
        times: dict[str, list[float]] = {"setup": [], "setup cpu": [], "teardown": [], "teardown cpu": []}
        broken = 0  #: networks whose healthy pingmesh was still incomplete after 10 s
        for number in range(repeats):
            lease = claim(1500 + episode * repeats + number)
            topo = Topology(lease.prefix, subnets, hosts)
            network = Network(topo, lease)
            started, cpu = time.perf_counter(), time.process_time()
            try:
                network.start()
                prober = Prober(network.pids, topo.address, topo.nodes)
                mesh = prober.measure()
                while not mesh.complete and time.perf_counter() - started < 10:
                    mesh = prober.measure(previous=frozenset(mesh.pairs))
                prober.close()
                broken += not mesh.complete
                times["setup"].append(time.perf_counter() - started)
                times["setup cpu"].append(time.process_time() - cpu)
            finally:
                started, cpu = time.perf_counter(), time.process_time()
                network.stop()
                times["teardown"].append(time.perf_counter() - started)
                times["teardown cpu"].append(time.process_time() - cpu)
        setup, setup_cpu, down, down_cpu = (statistics.median(times[key]) * 1000 for key in times)
        print(f"  {subnets}x{hosts} ({len(topo.nodes)} nodes): set-up {setup:.0f} ms ({setup_cpu:.0f} ms CPU), "
              f"teardown {down:.0f} ms ({down_cpu:.0f} ms CPU), together {setup + down:.0f} ms"
              + (f"; {broken} of {repeats} never fully reachable" if broken else ""))


BOX_COMMANDS = ("ip route", "iptables-save", "sysctl net.ipv4.ip_forward", "ip -br addr | grep UP")


def box_figures(steps: int) -> None:
    """Median per-step cost of running the agent's command: boxed vs --unsandboxed, same node, same commands."""
    from pytest_netarena.apps.route.nodebox import NodeBoxes

    lease = claim(1300)
    topo = Topology(lease.prefix, 2, 1)
    network = Network(topo, lease)
    network.start()
    prober = Prober(network.pids, topo.address, topo.nodes)
    boxed, unboxed = NodeBoxes(network.pids, sandboxed=True), NodeBoxes(network.pids, sandboxed=False)
    try:
        times: dict[str, list[float]] = {"box": [], "no box": []}
        for number in range(steps):
            command = BOX_COMMANDS[number % len(BOX_COMMANDS)]
            for name, boxes in (("box", boxed), ("no box", unboxed)) if number % 2 else (("no box", unboxed), ("box", boxed)):
                started = time.perf_counter()
                result = boxes.run(topo.router, command)
                times[name].append(time.perf_counter() - started)
                assert result.returncode == 0, result.output
        mesh_s = statistics.median(prober.measure().seconds for _ in range(5))
    finally:
        boxed.close()
        unboxed.close()
        prober.close()
        network.stop()
    box, bare = statistics.median(times["box"]), statistics.median(times["no box"])
    print(f"node command per step (median of {steps}, {', '.join(BOX_COMMANDS)}): with box {box * 1000:.1f} ms, "
          f"without {bare * 1000:.1f} ms, box overhead {(box - bare) * 1000:.1f} ms ({box / bare:.2f}x); "
          f"a step also measures the pingmesh ({mesh_s * 1000:.1f} ms on 2x1): whole step with box "
          f"{(box + mesh_s) * 1000:.1f} ms vs {(bare + mesh_s) * 1000:.1f} ms without")


STORM = ("ip link add va type veth peer name vb && ip link set va up && ip link set vb up && "
         "tc qdisc add dev va ingress && tc qdisc add dev vb ingress && "
         "tc filter add dev va parent ffff: protocol all u32 match u32 0 0 action mirred egress redirect dev va && "
         "tc filter add dev vb parent ffff: protocol all u32 match u32 0 0 action mirred egress redirect dev vb && "
         "ping -c1 -W0.2 -I va 10.99.99.99 >/dev/null")


def check_figures(steps: int, sizes: tuple[tuple[int, int], ...] = ((2, 1), (16, 4))) -> None:
    """Median per-step cost of the kernel accounting (router listed before and after) and of the storm windows, on
    2x1 and 16x4 networks; then the time from a tc mirred loop's start to its removal. The guard beside a command
    and whole steps are measured by benchmarks/route_guard.py."""
    from pytest_netarena.apps.route.network.guard import STORM_PPS, WINDOW_S, window
    from pytest_netarena.apps.route.network.ledger import Ledger
    from pytest_netarena.apps.route.network.meter import Meter
    from pytest_netarena.apps.route.nodebox import NodeBoxes

    print(f"per-step checks (median of {steps} router commands; storm window: {WINDOW_S * 1000:.0f} ms after the "
          f"command and after the pingmesh, budget {STORM_PPS:,} packets/s over the whole network):")
    for episode, (subnets, hosts) in enumerate(sizes):
        lease = claim(1400 + episode)
        topo = Topology(lease.prefix, subnets, hosts)
        network = Network(topo, lease)
        network.start()
        boxes = NodeBoxes(network.pids)
        ledger = Ledger(network.pids, network.fabric.pid)
        meter = Meter(network.pids, network.fabric.pid)
        meter.watch(topo.router)
        times: dict[str, list[float]] = {"account": [], "watch": [], "command": []}
        try:
            for number in range(steps):
                started = time.perf_counter()
                before = ledger.before(topo.router)
                account = time.perf_counter() - started
                started = time.perf_counter()
                boxes.run(topo.router, BOX_COMMANDS[number % len(BOX_COMMANDS)])
                times["command"].append(time.perf_counter() - started)
                started = time.perf_counter()
                ledger.after(topo.router, before)
                times["account"].append(account + time.perf_counter() - started)
                started = time.perf_counter()
                assert window(meter) is None, "a storm on a quiet network"
                times["watch"].append(time.perf_counter() - started)
            if (subnets, hosts) == (2, 1):
                before = ledger.before(topo.router)
                started = time.perf_counter()
                boxes.run(topo.router, STORM)
                command_s = time.perf_counter() - started
                ledger.after(topo.router, before)
                started = time.perf_counter()
                storm = window(meter)
                seen_s = time.perf_counter() - started
                removed = ledger.remove_made()
                stop_s = time.perf_counter() - started
                stopped = window(meter) is None
        finally:
            meter.close()
            ledger.close()
            boxes.close()
            network.stop()
        account, watch, command = (statistics.median(times[key]) * 1000 for key in ("account", "watch", "command"))
        print(f"  {subnets}x{hosts} ({len(network.pids)} nodes): accounting {account:.1f} ms, storm window "
              f"{watch:.1f} ms (x2 per step: {2 * watch:.1f} ms), beside the boxed command's {command:.1f} ms")
    assert storm is not None, "the tc mirred loop was not seen"
    print(f"  tc mirred loop: {storm.packets / storm.seconds:,.0f} packets/s over the network; seen and confirmed "
          f"{seen_s:.2f} s after the command ({command_s:.2f} s) ended, {len(removed)} objects removed by "
          f"{stop_s:.2f} s; quiet afterwards: {stopped}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--queries", type=int, default=2, help="oracle queries per category (15 categories)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--box-steps", type=int, default=60)
    parser.add_argument("--box-only", action="store_true", help="only the per-step box cost")
    parser.add_argument("--checks-only", action="store_true", help="only the per-step accounting and storm watch")
    parser.add_argument("--episodes-only", action="store_true",
                        help="only per-episode set-up and teardown by size, then oracle episodes per minute")
    parser.add_argument("--small", action="store_true",
                        help="2x1 networks only, the oracle on level 1 (a quick check that every part runs)")
    args = parser.parse_args()
    sizes = ((2, 1),) if args.small else SIZES
    if os.geteuid() != 0:
        sys.exit("benchmarks/route.py needs root (Mininet)")
    print(APP.header(RunOptions()))
    print(f"load average {' '.join(f'{load:.2f}' for load in os.getloadavg())} on {os.cpu_count()} CPUs")
    if args.episodes_only:
        episode_figures(args.repeats, ((2, 1),) if args.small else EPISODE_SIZES)
        oracle_rate(args.workers, args.queries, args.seed, args.small)
        return
    checked = ((2, 1),) if args.small else ((2, 1), (16, 4))
    if args.checks_only:
        check_figures(args.box_steps, checked)
        return
    box_figures(args.box_steps)
    if args.box_only:
        return
    check_figures(args.box_steps, checked)
    pingmesh_figures(args.repeats, sizes)
    oracle_rate(args.workers, args.queries, args.seed, args.small)


if __name__ == "__main__":
    main()
