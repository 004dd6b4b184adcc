"""Packet work and kernel objects an agent's command sets off, held to the episode's budget and caps: a storm that lives
only inside one command, many loops each under a per-link threshold, a flood of veth pairs that would make teardown
unbounded, and links made, used and deleted between two readings. Real Mininet, real boxes, namespaces the test
holds (root, Mininet)."""

from __future__ import annotations

import ctypes
import json
import os
import re
import subprocess
import time

import pytest

from pytest_netarena.apps.route.agents.builtin import action
from pytest_netarena.apps.route.network.guard import CAPS
from pytest_netarena.apps.route.network.leases import leftover_links, leftover_processes

from .conftest import FORWARD_OFF, needs_route, route_query

pytestmark = needs_route


@pytest.fixture(scope="module")
def env(route_env):
    return route_env


def in_namespace(fd: int, *argv: str) -> str:
    """argv run in the network namespace this process holds open by fd."""
    return subprocess.run(["nsenter", f"--net=/proc/self/fd/{fd}", *argv], capture_output=True, text=True,
                          pass_fds=(fd,), check=False).stdout


def link_names(fd: int) -> set[str]:
    return {link["ifname"] for link in json.loads(in_namespace(fd, "ip", "-j", "link") or "[]")}


def delete_links(fd: int, pattern: str) -> None:
    """Stop whatever loops the harness did not: delete the test's links in the held namespace."""
    for name in link_names(fd):
        if re.fullmatch(pattern, name):
            in_namespace(fd, "ip", "link", "del", name)


#: one command: a veth pair bouncing every frame between its ends, kicked by one ping, left running 2.5 s, deleted
ONE_COMMAND_STORM = (
    "ip link add va type veth peer name vb && ip link set va up && ip link set vb up && "
    "tc qdisc add dev va clsact && tc qdisc add dev vb clsact && "
    "tc filter add dev va ingress protocol all u32 match u32 0 0 action mirred egress redirect dev va && "
    "tc filter add dev vb ingress protocol all u32 match u32 0 0 action mirred egress redirect dev vb && "
    "timeout 0.2 ping -c1 -W0.01 -I va 10.99.99.99 >/dev/null 2>&1; sleep 2.5; ip link del va; echo DELETED")


def test_a_storm_that_lives_only_inside_one_command_is_unsafe(env, forward_off):
    router = forward_off.router
    held = os.open(f"/proc/{env.network.pids[router]}/ns/net", os.O_RDONLY)
    try:
        outcome = env.step(action(router, ONE_COMMAND_STORM))
        # on the old code the command ran to its end, deleted its loop, and the step carried no violation
        storms = [violation for violation in outcome.violations if "traffic storm during the command" in violation]
        assert storms, outcome.violations
        assert "traffic storm during the command" in outcome.observation
        assert "DELETED" in outcome.output or "the harness stopped the command" in storms[0], outcome.output
        print(f"\n{'stopped by the harness' if 'DELETED' not in outcome.output else 'seen at its end'}: {storms[0][:160]}")
        assert not link_names(held) & {"va", "vb"}
    finally:
        delete_links(held, "v[ab]")
        os.close(held)


#: twelve veth loops, each end shaped by tbf to ~11,500 packets/s (received + sent per link, under the 20,000 a
#: per-link threshold allowed), armed with their links down, then brought up and kicked with one ping each
SHAPED_LOOPS = (
    "for i in $(seq 0 11); do ip link add l${i}a type veth peer name l${i}b; for e in a b; do "
    "tc qdisc add dev l$i$e root tbf rate 4mbit burst 4k limit 10k; tc qdisc add dev l$i$e clsact; "
    "tc filter add dev l$i$e ingress protocol all u32 match u32 0 0 action mirred egress redirect dev l$i$e; "
    "done; done; for i in $(seq 0 11); do ip link set l${i}a up; ip link set l${i}b up; done; "
    "for i in $(seq 0 11); do timeout 0.2 ping -c1 -W0.01 -I l${i}a 10.99.99.99 >/dev/null 2>&1; done; echo KICKED")


def test_many_loops_each_under_a_per_link_threshold_are_one_storm_and_are_stopped(env, forward_off):
    router = forward_off.router
    held = os.open(f"/proc/{env.network.pids[router]}/ns/net", os.O_RDONLY)
    try:
        outcome = env.step(action(router, SHAPED_LOOPS))
        storms = [violation for violation in outcome.violations if "traffic storm" in violation]
        assert storms, outcome.violations  # the old watch compared only the fastest link with 20,000/s
        assert "traffic storm" in outcome.observation
        # the busiest link was under the old per-link threshold: only the episode's total gave it away
        found = re.search(r"in ([\d.]+) s .*?the most on \S+ of \S+: ([\d,]+)", storms[0])
        assert found, storms[0]
        seconds, busiest = float(found[1]), int(found[2].replace(",", ""))
        assert 2 * busiest / seconds < 20_000, storms[0]  # received + sent: twice what a loop's end sent
        assert not {name for name in link_names(held) if re.fullmatch(r"l\d+[ab]", name)}  # stopped: removed
        assert not outcome.done and not env.ended  # removing the loops stopped them
    finally:
        delete_links(held, r"l\d+a")
        os.close(held)


class _Handle(ctypes.Structure):
    _fields_ = [("handle_bytes", ctypes.c_uint), ("handle_type", ctypes.c_int), ("f_handle", ctypes.c_ubyte * 64)]


def namespace_handle(pid: int) -> _Handle | None:
    """A file handle of pid's network namespace that does not hold it (Linux 6.18+), or None where unsupported."""
    libc = ctypes.CDLL(None, use_errno=True)
    handle, mount = _Handle(), ctypes.c_int()
    handle.handle_bytes = 64
    fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
    try:
        if libc.name_to_handle_at(fd, b"", ctypes.byref(handle), ctypes.byref(mount), 0x1000) != 0:  # AT_EMPTY_PATH
            return None
    finally:
        os.close(fd)
    return handle


def namespace_alive(handle: _Handle) -> bool:
    libc = ctypes.CDLL(None, use_errno=True)
    own = os.open("/proc/self/ns/net", os.O_RDONLY)
    try:
        fd = libc.open_by_handle_at(own, ctypes.byref(handle), os.O_RDONLY)
    finally:
        os.close(own)
    if fd >= 0:
        os.close(fd)
    return fd >= 0


def test_a_flood_of_veth_pairs_ends_the_episode_at_the_cap_and_teardown_stays_bounded(env):
    env.reset(route_query(FORWARD_OFF))
    topo = env.topology
    pids = dict(env.network.pids)
    handles = {node: namespace_handle(pid) for node, pid in pids.items()}
    flood = ("for i in $(seq 1500); do echo link add f$i type veth peer name g$i; done > /tmp/pairs; "
             "ip -force -batch /tmp/pairs; echo MADE")
    started = time.perf_counter()
    outcome = env.step(action(topo.router, flood))  # the step ends the episode and tears the network down
    env.teardown()
    took = time.perf_counter() - started
    print(f"\n1,500 veth pairs asked for: step and teardown took {took:.2f} s; {outcome.violations[:1]}")
    assert outcome.done and env.ended.startswith("kernel object limit"), (outcome.violations, outcome.output[-300:])
    assert "kernel object limit" in outcome.observation
    added = int(re.search(r"added ([\d,]+) links", env.ended)[1].replace(",", ""))
    assert CAPS["links"] < added <= 3000, env.ended
    print(f"{added} links made before the guard stopped the command ({'before' if 'MADE' not in outcome.output else 'after'}"
          f" the flood's end)")
    assert took < 30, f"teardown took {took:.1f} s"  # the old one-request-per-link teardown took 14-60 s
    assert leftover_links(topo.prefix) == [] and leftover_processes(topo.prefix) == []
    if all(handles.values()):  # the namespaces themselves are gone (the kernel frees them shortly after)
        deadline = time.monotonic() + 10
        while any(namespace_alive(handle) for handle in handles.values()) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [node for node, handle in handles.items() if namespace_alive(handle)]


#: floods of the other kinds of kernel object, each past its cap in one command (and what the cap names)
FLOODS = {
    "tc actions": ("for n in $(seq 700); do echo actions add action mirred egress redirect dev lo index $n; done > /tmp/a; "
                   "tc -batch /tmp/a", "tc filters, actions and chains"),
    "static neighbours": ("ip link add va type veth peer name vb; for n in $(seq 2000); do echo neigh add "
                          "10.1.$((n/250)).$((n%250+1)) lladdr 02:00:00:00:00:01 dev va; done > /tmp/n; ip -batch /tmp/n",
                          "static neighbours"),
    "queues": ("for n in $(seq 30); do echo link add q${n}a numtxqueues 1024 numrxqueues 1024 type veth peer name q${n}b "
               "numtxqueues 1024 numrxqueues 1024; done > /tmp/q; ip -batch /tmp/q", "queues"),
    "nftables rules": ("a=$(for n in $(seq 3000); do printf '10.0.%d.%d,' $((n/256)) $((n%256)); done); "
                       "iptables -A INPUT -s ${a%,} -j DROP", "firewall rules"),
    "legacy iptables rules": ("a=$(for n in $(seq 3000); do printf '10.0.%d.%d,' $((n/256)) $((n%256)); done); "
                              "iptables-legacy -A INPUT -s ${a%,} -j DROP", "firewall rules"),
}


@pytest.mark.parametrize("kind", FLOODS)
def test_a_flood_of_other_kernel_objects_ends_the_episode_at_its_cap(env, kind):
    env.reset(route_query(FORWARD_OFF))
    topo = env.topology
    command, named = FLOODS[kind]
    outcome = env.step(action(topo.router, f"{command}; echo MADE"))
    assert outcome.done and env.ended.startswith("kernel object limit"), (outcome.violations, outcome.output[-300:])
    assert named in env.ended and "kernel object limit" in outcome.observation, env.ended
    assert leftover_links(topo.prefix) == [] and leftover_processes(topo.prefix) == []


def test_links_made_used_and_deleted_between_two_readings_are_counted():
    from pytest_netarena.apps.route.network.meter import Meter

    holder = subprocess.Popen(["unshare", "--net", "sleep", "60"])
    fabric = subprocess.Popen(["unshare", "--net", "sleep", "60"])
    try:
        while os.readlink(f"/proc/{holder.pid}/ns/net") == os.readlink("/proc/self/ns/net"):
            time.sleep(0.01)
        meter = Meter({"node": holder.pid}, fabric.pid)
        meter.watch("node")
        first = meter.read()
        # a loop shaped to ~5,000 packets/s runs 0.4 s, its counters are read, and it is deleted: all between readings
        script = ("ip link add va type veth peer name vb; tc qdisc add dev va root tbf rate 2mbit burst 4k limit 10k; "
                  "for d in va vb; do tc qdisc add dev $d clsact; tc filter add dev $d ingress protocol all u32 "
                  "match u32 0 0 action mirred egress redirect dev $d; done; ip link set va up; ip link set vb up; "
                  "timeout 0.2 ping -c1 -W0.01 -I va 10.99.99.99 >/dev/null 2>&1; sleep 0.4; "
                  "ip -j -s link show va; ip link del va")
        shown = subprocess.run(["nsenter", "-t", str(holder.pid), "-n", "bash", "-c", script], capture_output=True,
                               text=True, check=False).stdout
        second = meter.read()
        stats = json.loads(shown.strip().splitlines()[-1])[0]["stats64"]
        counted_by_the_link = stats["tx"]["packets"] + stats["rx"]["packets"]  # what va and vb sent
        packets, _, busiest = second.since(first)
        assert counted_by_the_link > 1000, shown  # the loop ran
        assert packets >= counted_by_the_link, (packets, counted_by_the_link, busiest)
        assert {name for _, name, _ in busiest} & {"va", "vb"}
        meter.close()
    finally:
        subprocess.run(["nsenter", "-t", str(holder.pid), "-n", "ip", "link", "del", "va"], capture_output=True)
        for process in (holder, fabric):
            process.kill()
            process.wait()
