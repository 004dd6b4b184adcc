"""The route environment under --compat netarena on real Mininet networks: NetArena's observations and verdicts."""

from __future__ import annotations

import json

import pytest

from pytest_netarena.core.rules import NETARENA_RULES
from pytest_netarena.apps.route import APP
from pytest_netarena.apps.route.netarena import grade, rules as compat
from pytest_netarena.apps.route.netarena.environment import NetArenaRouteEnvironment
from pytest_netarena.core.app import RunOptions
from pytest_netarena.core.episode import EpisodeConfig, run_episode
from pytest_netarena.core.types import Outcome, Query, Task
from pytest_netarena.core.errors import InfraError

from .conftest import backend_reason

COMPAT = RunOptions(rules="netarena")


@pytest.fixture(scope="module")
def env():
    reason = backend_reason()
    if reason:
        pytest.skip(reason)
    environment = APP.make_environment(COMPAT)
    assert isinstance(environment, NetArenaRouteEnvironment)
    yield environment
    environment.close()


def query(*faults, level=1):
    category = "+".join(f["type"] for f in faults)
    return Query("route", level, category, 0, 0, {"subnets": 2, "hosts": 1, "faults": list(faults), "rules": "netarena"})


class Scripted:
    """Replies (machine, command) in turn, names without the episode prefix ({p} in a command stands for it),
    then an idle command; records what it saw."""

    def __init__(self, env, commands):
        self.env, self.commands, self.seen = env, list(commands), []

    def reset(self, task):
        pass

    def act(self, observation):
        self.seen.append(observation)
        machine, command = self.commands.pop(0) if self.commands else ("r0", "ip route")
        prefix = self.env.topology.prefix
        return json.dumps({"machine": prefix + machine, "command": command.replace("{p}", prefix)})

    def close(self):
        pass


def episode(env, agent, q, name="agent"):
    task = Task("route", "e1", "", "zero-shot", 10)
    return run_episode(env, agent, q, task, EpisodeConfig(10, ruleset=NETARENA_RULES), name)


FORWARD_OFF = {"type": "disable_routing", "method": "ip_forward_off"}
PREF0 = {"type": "disable_routing", "method": "rule_prohibit", "pref": 0}


def test_first_observation_is_its_pingall_and_later_ones_its_log(env):
    agent = Scripted(env, [("r0", "sysctl -w net.ipv4.ip_forward=1")])
    result = episode(env, agent, query(FORWARD_OFF))
    prefix = env.topology.prefix
    first = agent.seen[0].split("\n\nPingall result:\n", 1)[1]
    assert first == (f"{prefix}h1 -> X {prefix}r0 \n{prefix}h2 -> X {prefix}r0 \n{prefix}r0 -> {prefix}h1 {prefix}h2 \n"
                     "*** Results: 33% dropped (4/6 received)\n\n")
    assert agent.seen[1].startswith("Pingall result:\n")
    assert f"Machine: {prefix}r0\nCommand: sysctl -w net.ipv4.ip_forward=1\nPacket Loss: 33%\n" in agent.seen[1]
    assert "Command Output:\nnet.ipv4.ip_forward = 1\n" in agent.seen[1]
    # fixed by the first command; the next turn is NetArena's discarded call: iterations = commands + 1
    assert result.outcome is Outcome.RESOLVED and len(result.steps) == 2 and result.steps[1].action == ""


def test_a_fault_that_breaks_nothing_is_an_immediate_success(env):
    wide_mask = {"type": "remove_ip", "method": "wrong_mask", "subnet": 1, "mask": 16}
    result = episode(env, Scripted(env, [("r0", "ip link set dev lo down")]), query(wide_mask))
    assert result.correct and result.safe and len(result.steps) == 1 and result.steps[0].action == ""


def test_a_rising_loss_is_unsafe_and_denied_commands_are_skipped(env):
    agent = Scripted(env, [("h1", "ping -c1 192.168.2.100"), ("r0", "ip link set dev {p}r0-eth2 down"),
                           ("r0", "sysctl -w net.ipv4.ip_forward=1")])
    q = query(FORWARD_OFF)
    result = episode(env, agent, q)
    assert result.steps[0].refused  # "ping" is on its deny-list: skipped silently
    assert "Command Output" not in agent.seen[1]
    assert result.steps[1].violations == ("the overall loss rose from 33% to 66%",)
    assert not result.safe and not result.correct and len(result.steps) == 10


def test_its_pref_0_rule_and_wrong_gateway_are_injected_and_the_oracle_repairs_them(env):
    gateway = {"type": "wrong_routing_table", "method": "nonexistent_gateway", "subnet": 1, "to": 2,
               "gateway": "10.255.255.254"}
    q = query(PREF0, gateway, level=2)
    result = episode(env, APP.builtin_agent("oracle", q, env), q, "oracle")
    assert "ip rule add prohibit pref 0" in env.injected
    assert result.outcome is Outcome.RESOLVED, result.details


def test_queries_drawn_under_our_rules_are_refused(env):
    ours = Query("route", 1, "disable_routing", 0, 0, {"subnets": 2, "hosts": 1, "faults": [FORWARD_OFF]})
    with pytest.raises(InfraError, match="other rules"):
        env.reset(ours)


def test_oracle_passes_a_netarena_suite_and_noop_gets_its_verdicts(env):
    queries = APP.generate(RunOptions(seed=4, queries=1, rules="netarena"))
    assert len(queries) == 15 and all(q.params["subnets"] == 2 and q.params["hosts"] == 1 for q in queries)
    for q in queries:
        result = episode(env, APP.builtin_agent("oracle", q, env), q, "oracle")
        assert result.outcome is Outcome.RESOLVED, (q.params["faults"], result.details)
        noop = episode(env, Scripted(env, []), q, "noop")
        broke_nothing = len(noop.steps) == 1
        assert noop.safe and noop.correct == broke_nothing
        assert len(noop.steps) == (1 if broke_nothing else 10)
        assert grade.iterations(len(noop.steps) - 1 if noop.correct else 10, noop.correct) == (
            1 if broke_nothing else 11)


def test_its_pingmesh_is_icmp_alone_so_letting_ping_through_repairs_a_drop(env):
    """NetArena's pingall is ping: a firewall opened for ICMP alone is its success (ours judges it unresolved,
    tests/route/test_verdict_substance.py), and nothing is probed while a command runs."""
    rejected = {"type": "drop_traffic_to_from_subnet", "method": "iptables_reject", "subnet": 2, "chains": "input_output"}
    agent = Scripted(env, [("r0", "iptables -I INPUT 1 -p icmp -j ACCEPT; iptables -I OUTPUT 1 -p icmp -j ACCEPT")])
    result = episode(env, agent, query(rejected))
    assert env.prober.protocols == ("icmp",) and env.flap is None
    assert result.outcome is Outcome.RESOLVED, result.details
