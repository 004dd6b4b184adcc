"""Attacks from an agent's command on a Mininet node: host files, host kernel settings, processes, signals,
sockets, bombs and floods, each against the real route environment and its node boxes (root, Mininet)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from pytest_netarena.apps.route.agents.builtin import action
from pytest_netarena.apps.route.network.build import OUTPUT_LIMIT

from .conftest import accepted, needs_route

pytestmark = needs_route


@pytest.fixture(scope="module")
def env(route_env):
    return route_env


@pytest.fixture
def router(forward_off) -> str:
    return forward_off.router


def on(env, node: str, command: str) -> str:
    outcome = env.step(action(node, command))
    assert not outcome.refused, outcome.output
    return outcome.output


def host_sysctl(name: str) -> str:
    return Path("/proc/sys", *name.split(".")).read_text().strip()


def test_arp_f_cannot_echo_a_host_file(env, router, canary: Path) -> None:
    secret = canary.read_text().strip()
    output = on(env, router, f"arp -f {canary}; arp --file {canary}; arp -f /proc/1/root{canary}")
    assert secret not in output and output.count("cannot open etherfile") == 3


def test_sysctl_load_flags_cannot_read_a_host_file(env, router, canary: Path) -> None:
    secret = canary.read_text().strip()
    output = on(env, router, f"sysctl --lo={canary}; sysctl --load {canary}; sysctl -p {canary}; sysctl -f {canary}; "
                             f"ip -batch {canary}; tc -batch {canary}; cat {canary}")
    assert secret not in output and "No such file" in output


@pytest.mark.parametrize("flag", ["-f {}", "--file={}", "--file {}", "--fi={}", "--f {}"])
def test_iptables_save_cannot_write_host_files(env, router, tmp_path: Path, flag: str) -> None:
    tmp_path.chmod(0o777)  # even a folder anyone may write to stays out of reach
    victim = tmp_path / "victim.conf"
    victim.write_text("ORIGINAL\n")
    created = tmp_path / "created.conf"
    output = on(env, router, f"iptables-save {flag.format(victim)}; iptables-save {flag.format(created)}; "
                             f"iptables-legacy-save {flag.format(victim)}; echo done")
    assert victim.read_text() == "ORIGINAL\n" and not created.exists()
    assert "done" in output


def test_sysctl_path_traversal_cannot_change_host_kernel_settings(env, router) -> None:
    before = host_sysctl("kernel.printk_ratelimit_burst")
    wanted = str(int(before) + 7)
    try:
        output = on(env, router, f"sysctl -w net/../kernel/printk_ratelimit_burst={wanted}; "
                                 f"sysctl -w net.ipv4/../../kernel/printk_ratelimit_burst={wanted}; "
                                 f"sysctl -w kernel.printk_ratelimit_burst={wanted}; "
                                 f"sysctl -w net/ipv4/../../kernel.printk_ratelimit_burst={wanted}")
        assert host_sysctl("kernel.printk_ratelimit_burst") == before, output
    finally:
        Path("/proc/sys/kernel/printk_ratelimit_burst").write_text(before)


def test_writes_to_proc_sys_outside_net_fail(env, router) -> None:
    targets = ("kernel/printk_ratelimit_burst", "vm/stat_interval", "fs/lease-break-time", "net/../kernel/printk_ratelimit")
    before = {target: Path("/proc/sys", target).read_text() for target in targets}
    host_forwarding = host_sysctl("net.ipv4.ip_forward")
    try:
        script = "; ".join(f"(echo 9 > /proc/sys/{target}) 2>&1 && echo WROTE {target}" for target in targets)
        output = on(env, router, script + "; echo 1 > /proc/sys/net/ipv4/ip_forward && echo NET-OK")
        assert "WROTE" not in output and "Read-only file system" in output
        assert {target: Path("/proc/sys", target).read_text() for target in targets} == before
        node_forwarding = env.network.run(router, ["cat", "/proc/sys/net/ipv4/ip_forward"]).output.strip()
        assert "NET-OK" in output and node_forwarding == "1"  # the node's own net tree is writable ...
        assert host_sysctl("net.ipv4.ip_forward") == host_forwarding  # ... and it is the node's, not the host's
    finally:
        for target, value in before.items():
            Path("/proc/sys", target).write_text(value)


def test_node_net_settings_are_the_nodes_own(env, router) -> None:
    host_value = host_sysctl("net.ipv4.icmp_ratelimit")
    wanted = "777" if host_value != "777" else "778"
    output = on(env, router, f"sysctl -w net.ipv4.icmp_ratelimit={wanted}")
    assert f"= {wanted}" in output
    assert host_sysctl("net.ipv4.icmp_ratelimit") == host_value


def test_background_processes_do_not_survive_a_step(env, router) -> None:
    marker = f"{time.time_ns() % 10**9}"
    on(env, router, f"(sleep {marker}.1 &); nohup sleep {marker}.2 >/dev/null 2>&1 & disown; "
                    f"setsid sleep {marker}.3 & (trap '' HUP TERM; sleep {marker}.4) & echo started")
    survivors = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True).stdout.split()
    assert survivors == []
    assert "sleep" not in on(env, router, "ps -eo args")


def test_signals_cannot_reach_the_harness_its_responders_or_other_processes(env, router) -> None:
    victim = subprocess.Popen(["sleep", "60"])
    try:
        before = env.prober.measure()
        output = on(env, router, f"kill -0 {os.getpid()}; kill -9 {victim.pid}; kill -STOP {os.getpid()}; "
                                 f"kill -9 -1; echo done")
        assert "No such process" in output
        assert victim.poll() is None
        after = env.prober.measure(previous=before.reachable)  # the responders are the harness's own sockets: still answering
        assert after.reachable == before.reachable and after.reachable
    finally:
        victim.kill()
        victim.wait()


def test_a_listener_on_host_loopback_is_unreachable(env, router, listener) -> None:
    server, port = listener
    output = on(env, router, f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo CONNECTED; echo done")
    assert "CONNECTED" not in output and not accepted(server)


def test_a_fork_bomb_is_bounded_and_the_run_goes_on(env, router) -> None:
    env.command_timeout_s = 2.0
    try:
        output = on(env, router, "b(){ b|b; }; b; echo ended")  # never ends but by failing to fork or being killed
    finally:
        env.command_timeout_s = 5.0
    assert "Resource temporarily unavailable" in output or "killed after" in output
    assert on(env, router, "sysctl -w net.ipv4.ip_forward=1").strip() == "net.ipv4.ip_forward = 1"


def test_a_memory_bomb_hits_the_limit(env, router) -> None:
    output = on(env, router, "x=$(head -c 600000000 /dev/zero | tr '\\0' a); echo LEN ${#x}")
    assert "LEN 600000000" not in output
    assert "cannot allocate" in output or "exit status" in output or "killed" in output


def test_huge_output_is_bounded(env, router) -> None:
    outcome = env.step(action(router, "yes flood; cat /dev/zero"))
    assert len(outcome.output) < OUTPUT_LIMIT + 200 and "output truncated" in outcome.output
    assert not outcome.refused
