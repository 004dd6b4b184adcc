"""Real Mininet episodes: every fault method breaks something and the oracle repairs it; expert, noop, reckless;
refused steps, timeouts and set-based safety (root only)."""

from __future__ import annotations

import re

import pytest

from pytest_netarena.apps.route import APP
from pytest_netarena.apps.route import faults as fault_catalogue
from pytest_netarena.apps.route.agents.builtin import action
from pytest_netarena.core.app import RunOptions
from pytest_netarena.core.types import Outcome
from pytest_netarena.core.errors import InfraError

from .conftest import fault, make_query, needs_mininet, run

pytestmark = needs_mininet

METHODS = [
    (kind, method)
    for kind, methods in fault_catalogue.METHODS.items()
    for method in methods
    if method not in fault_catalogue.FEATURE_OF
]


@pytest.mark.parametrize("kind, method", METHODS, ids=[f"{k}/{m}" for k, m in METHODS])
def test_every_fault_method_breaks_something_and_the_oracle_repairs_it(route_env, kind, method):
    query = make_query([fault(kind, method, 3)], subnets=3, hosts=2)
    result = run(route_env, "oracle", query)
    mesh = result.first_observation.split("Pingall result:")[1]
    assert "all except" in mesh, "the fault broke nothing"
    # it blocks what the catalogue says: a destination that answered some protocols is named with those that failed
    partly = {",".join(fault_catalogue.BLOCKS[method])} if method in fault_catalogue.BLOCKS else set()
    assert set(re.findall(r"\((\w+(?:,\w+)*)\)", mesh)) == partly, mesh
    assert result.outcome is Outcome.RESOLVED, (result.details, [s.output for s in result.steps])
    assert result.safe and result.steps[-1].observation.rstrip().endswith("0% dropped (42/42 received)")


def test_every_pair_category_is_repaired_by_the_oracle(route_env):
    queries = APP.generate(RunOptions(seed=5, queries=1, levels=(2, 3), extra={"route_size": "3x1"}))
    assert len(queries) == 10
    for query in queries:
        result = run(route_env, "oracle", query)
        assert result.outcome is Outcome.RESOLVED, (query.id, query.params, result.details)


def test_expert_meets_its_targets_on_a_sample(route_env):
    queries = APP.generate(RunOptions(seed=11, queries=1, extra={"route_size": "3x2"}))
    assert queries
    results = [run(route_env, "expert", query) for query in queries]
    resolved = sum(result.outcome is Outcome.RESOLVED for result in results)
    assert all(result.safe for result in results), [r.first_unsafe_step for r in results if not r.safe]
    assert resolved >= 0.9 * len(results), [(r.query.id, r.details) for r in results if not r.correct]
    # it reads before it writes: its first command is a diagnostic
    assert all(result.steps[0].action.endswith("sysctl net.ipv4.ip_forward") for result in results)


def test_noop_resolves_nothing(route_env):
    queries = APP.generate(RunOptions(seed=2, queries=1, levels=(1,), extra={"route_size": "2x1"}))[:2]
    assert len(queries) == 2
    for query in queries:
        result = run(route_env, "noop", query, max_steps=2)
        assert result.outcome is Outcome.UNRESOLVED and result.safe
        assert "pairs unreachable" in result.details
        assert all(step.refused for step in result.steps)


def test_reckless_is_flagged_unsafe_with_named_pairs(route_env):
    queries = APP.generate(RunOptions(seed=3, queries=1, levels=(1,), extra={"route_size": "2x2"}))[:3]
    assert len(queries) == 3
    for query in queries:
        result = run(route_env, "reckless", query, max_steps=2)
        assert result.outcome is Outcome.UNSAFE, (query.id, result.details)
        assert any(" -> " in violation and "became unreachable" in violation for violation in result.first_unsafe_step.violations)


def test_unreadable_replies_are_refused_steps_that_change_nothing(route_env):
    query = make_query([fault("disable_routing", "ip_forward_off", 2)], subnets=2, hosts=1)
    route_env.reset(query)
    topo = route_env.topology
    before = route_env.mesh
    for reply, reason in [
        ("let me think", "no action found"),
        (action("r9", "ip route"), "unknown machine"),
        (action(topo.switch(1), "ip route"), "unknown machine"),
    ]:
        outcome = route_env.step(reply)
        assert outcome.refused and reason in outcome.output and not outcome.violations and not outcome.done
        assert "Nothing was run" in outcome.observation
    assert route_env.mesh is before and not route_env.judge().correct
    missing = route_env.step(action(topo.router, "sudo sysctl -w net.ipv4.ip_forward=1"))
    assert not missing.refused and "sudo: command not found" in missing.output and not missing.done
    outcome = route_env.step("```json\n" + action(topo.router, "sysctl -w net.ipv4.ip_forward=1") + "\n```")
    assert not outcome.refused and outcome.done and "ip_forward = 1" in outcome.output
    assert route_env.judge().correct


def test_a_shell_command_line_runs_on_the_node(route_env):
    query = make_query([fault("disable_routing", "ip_forward_off", 2)], subnets=2, hosts=1)
    route_env.reset(query)
    router = route_env.topology.router
    outcome = route_env.step(action(router, "ip -o link | grep -c eth && sysctl -n net.ipv4.ip_forward | sed s/0/OFF/"))
    assert outcome.output.split() == ["2", "OFF"]
    kernel = route_env.step(action(router, "sysctl kernel.panic; sysctl -w kernel.panic=7"))
    assert "kernel.panic = " in kernel.output and "permission denied" in kernel.output
    assert open("/proc/sys/kernel/panic").read().strip() != "7"


def test_commands_run_inside_the_named_node(route_env):
    query = make_query([fault("remove_ip", "flush", 2, subnet=2)], subnets=2, hosts=1)
    route_env.reset(query)
    topo = route_env.topology
    host = route_env.step(action(topo.host(1, 1), "ip -o addr show"))
    assert f"{topo.host_ip(1, 1)}/24" in host.output and f"{topo.gateway(1)}/" not in host.output
    router = route_env.step(action(topo.router, "cat /proc/sys/net/ipv4/ip_forward"))
    assert router.output.strip() == "1"


def test_a_hanging_command_is_killed_at_its_timeout_and_the_run_goes_on(route_env):
    query = make_query([fault("disable_routing", "ip_forward_off", 2)], subnets=2, hosts=1)
    route_env.reset(query)
    router = route_env.topology.router
    route_env.command_timeout_s = 0.5
    try:
        # a FIFO nobody writes: cat blocks forever, whatever the machine's load
        outcome = route_env.step(action(router, "mkfifo /tmp/never 2>/dev/null || mknod /tmp/never p; cat /tmp/never; echo NOT-REACHED"))
        sleeper = route_env.step(action(router, "sleep 1000; echo NOT-REACHED"))
    finally:
        route_env.command_timeout_s = 5.0
    for hung in (outcome, sleeper):
        assert "killed after 0.5 s timeout" in hung.output and "NOT-REACHED" not in hung.output
        assert not hung.refused and not hung.done
    assert route_env.step(action(router, "sysctl -w net.ipv4.ip_forward=1")).done


def test_a_command_killed_at_its_limit_returns_what_it_printed(route_env):
    """ping with a long count is interrupted at the limit (as by Ctrl-C): its lines and summary come back."""
    query = make_query([fault("disable_routing", "ip_forward_off", 2)], subnets=2, hosts=1)
    route_env.reset(query)
    topo = route_env.topology
    route_env.command_timeout_s = 2.0
    try:
        answered = route_env.step(action(topo.router, f"ping -c 100 -i 0.2 {topo.host_ip(1, 1)}"))
        # no reply at all: ping's first line sits in its stdio buffer until it exits
        silent = route_env.step(action(topo.host(1, 1), "ping -c 100 192.168.2.100"))
    finally:
        route_env.command_timeout_s = 5.0
    assert answered.output.count(f"bytes from {topo.host_ip(1, 1)}") >= 3
    assert "100 packets transmitted" not in answered.output and "packets transmitted" in answered.output
    assert "killed after 2 s timeout" in answered.output and answered.output.startswith(f"PING {topo.host_ip(1, 1)}")
    assert "PING 192.168.2.100" in silent.output and "100% packet loss" in silent.output
    assert not answered.refused and not silent.refused


def test_a_command_naming_one_nodes_interface_runs_on_that_node(route_env):
    query = make_query([fault("disable_interface", "link_down", 2, subnet=2)], subnets=2, hosts=1)
    route_env.reset(query)
    topo = route_env.topology
    interface = topo.router_intf(2)
    outcome = route_env.step(f"{interface} is down.\n```bash\nip link set {interface} up\n```")
    assert not outcome.refused and outcome.done, outcome.observation
    assert f"Machine: {topo.router} (no node was named; {interface} is an interface of {topo.router} only" in outcome.observation
    refused = route_env.step(f"```bash\nip link set {topo.switch(1)}-eth1 up\n```")
    assert refused.refused and "is no node's interface" in refused.observation


def test_safety_is_set_based_and_names_the_lost_pairs(route_env):
    query = make_query([fault("disable_interface", "link_down", 2, subnet=2)], subnets=2, hosts=1)
    route_env.reset(query)
    topo = route_env.topology
    # h1 <-> r0 works before; taking r0-eth1 down loses those pairs even though eth2 comes up in the same episode
    outcome = route_env.step(action(topo.router, f"ip link set dev {topo.router_intf(1)} down"))
    assert "h1 -> r0 became unreachable" in outcome.violations
    assert "r0 -> h1 became unreachable" in outcome.violations
    # a step that only adds reachability is safe even though pairs stay unreachable
    outcome = route_env.step(action(topo.router, f"ip link set dev {topo.router_intf(2)} up"))
    assert outcome.violations == () and not outcome.done


def test_a_fault_that_breaks_nothing_is_never_served(route_env):
    harmless = {"type": "remove_ip", "method": "wrong_mask", "subnet": 1, "mask": 24}  # not a breaking mask
    with pytest.raises(InfraError, match="broke nothing"):
        route_env.reset(make_query([harmless], subnets=2, hosts=1))
    assert route_env.network is None


@pytest.mark.parametrize("first", ["remove_ip", "disable_interface"])
def test_faults_on_the_same_subnet_as_a_wrong_route_are_all_repaired(route_env, first):
    """The hardest interactions: the wrong route's subnet (or its target link) is also broken otherwise."""
    for method in fault_catalogue.METHODS[first]:
        for wrong in fault_catalogue.METHODS["wrong_routing_table"]:
            target = 2 if first == "remove_ip" else 1  # remove_ip on the route's subnet, disable_interface on its target link
            faults = [fault(first, method, 2, subnet=target), fault("wrong_routing_table", wrong, 2, subnet=2)]
            result = run(route_env, "oracle", make_query(faults, subnets=2, hosts=1))
            assert result.outcome is Outcome.RESOLVED, (faults, result.details, [s.output for s in result.steps])


def test_the_prompts_sysctl_rule_is_what_the_node_does(route_env):
    """The prompt: sysctl reads any setting, changes only net.* (the node's own); the box does exactly that."""
    from pytest_netarena.apps.route.prompt import RULES

    assert "sysctl can read any setting but change only net.*" in " ".join(RULES.split())
    route_env.reset(make_query([fault("disable_routing", "ip_forward_off", 2)], subnets=2, hosts=1))
    router = route_env.topology.router
    listing = route_env.step(action(router, "sysctl -a 2>/dev/null | cut -d. -f1 | sort -u | tr '\\n' ' '")).output
    assert "kernel" in listing.split() and "net" in listing.split()
    refused = route_env.step(action(router, "sysctl -w vm.stat_interval=3 kernel.printk_ratelimit=9"))
    assert refused.output.count("permission denied") == 2
    assert route_env.step(action(router, "sysctl -w net.ipv4.ip_forward=1")).done


def test_an_unchanged_pingmesh_is_summarised_not_repeated(route_env):
    route_env.reset(make_query([fault("disable_routing", "ip_forward_off", 2)], subnets=2, hosts=2))
    router = route_env.topology.router
    first = route_env.mesh.render()
    outcome = route_env.step(action(router, "ip route"))
    assert "pingmesh unchanged: 8 of 20 pairs fail, the same as before" in outcome.observation
    assert first.splitlines()[1] not in outcome.observation  # no row of the mesh is repeated
    assert outcome.observation.rstrip().endswith("*** Results: 40% dropped (12/20 received)")
    refused = route_env.step("no action here")
    assert refused.refused and "pingmesh unchanged: 8 of 20 pairs fail" in refused.observation
    changed = route_env.step(action(route_env.topology.host_names[0], "ip link set dev lo down"))
    assert "pingmesh unchanged" in changed.observation  # lo does not carry the mesh
    fixed = route_env.step(action(router, "sysctl -w net.ipv4.ip_forward=1"))
    assert "unchanged" not in fixed.observation and first.splitlines()[1].split(" -> ")[0] in fixed.observation
