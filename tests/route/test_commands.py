"""Reply reading basics: objects in prose and fences, refusals that say what was wrong and show the accepted form
(no root needed; the corpus in test_reply_corpus.py covers the styles models write)."""

from __future__ import annotations

import inspect

import pytest

from pytest_netarena.apps.route.replies import Refusal, parse_reply
from pytest_netarena.apps.route.topology import Topology

TOPO = Topology("na0a01", 2, 1)
NODES = TOPO.nodes


@pytest.mark.parametrize(
    "reply",
    [
        '{"machine": "na0a01r0", "command": "ip route"}',
        'I will look at the routes.\n```json\n{"machine": "na0a01r0", "command": "ip route"}\n```\nThen decide.',
        'Action: {"machine": "na0a01r0", "command": "ip route"} (read only)',
        '```\n{"machine": "na0a01r0", "command": "ip route"}\n```',
    ],
)
def test_one_json_object_is_found_in_prose_and_fences(reply):
    action = parse_reply(reply, NODES, TOPO.prefix)
    assert (action.machine, action.command) == ("na0a01r0", "ip route")


@pytest.mark.parametrize(
    "reply, reason",
    [
        ("let me think", "no action found"),
        ('{"machine": "na0a01r0"}', 'no "command" string'),
        ('{"machine": "na0a01r0", "command": "ip route"} {"machine": "na0a01h1", "command": "ip addr"}',
         "2 different actions found, for 2 nodes"),
        ('{"machine": "na0a01r0", "command": ""}', 'no "command" string'),
        ('{"machine": ["na0a01r0"], "command": "ip route"}', "must be a node name"),
        ('{"machine": "r9", "command": "ip route"}', "unknown machine 'r9'"),
        ('{"machine": "na0a01s1", "command": "ip route"}', "switches are plain Linux bridges"),
        ("```bash\nip route\n```", "No node is named"),
    ],
)
def test_unusable_replies_are_refused_with_a_reason_and_the_accepted_form(reply, reason):
    with pytest.raises(Refusal, match=reason) as refused:
        parse_reply(reply, NODES, TOPO.prefix)
    assert '{"machine": "na0a01r0", "command": "ip route"}' in str(refused.value)


def test_prompt_examples_are_accepted_by_the_reader():
    from pytest_netarena.apps.route import APP
    from pytest_netarena.apps.route.prompt import EXAMPLE_NODES, EXAMPLE_PREFIX

    prompt = APP.prompt()
    assert len(prompt.examples) >= 3 and '{"machine"' in prompt.action_format
    for observation, reply in prompt.examples:
        action = parse_reply(reply, EXAMPLE_NODES, EXAMPLE_PREFIX)
        assert action.machine in observation and action.command
    for line in prompt.action_format.splitlines():
        if line.startswith(("Example:", "Also accepted:")):
            example = line.split("e.g.:" if "e.g.:" in line else ":", 1)[1]
            assert parse_reply(example, EXAMPLE_NODES, EXAMPLE_PREFIX).machine == "na0a01r0"


def read(reply: str):
    return parse_reply(reply, NODES, TOPO.prefix, owners=TOPO.owners)


@pytest.mark.parametrize(
    "reply, node, named",
    [
        ("na0a01r0-eth2 is down.\n```bash\nip link set na0a01r0-eth2 up\n```", "na0a01r0", "na0a01r0-eth2"),
        ('{"command": "ip link set dev na0a01h1-eth0 up"}', "na0a01h1", "na0a01h1-eth0"),
        ("`ip addr add 192.168.2.1/24 dev eth9`", "na0a01r0", "192.168.2.1"),
        ("```\nifconfig na0a01r0-eth1 192.168.1.1 netmask 255.255.255.0 up\n```", "na0a01r0", "na0a01r0-eth1"),
    ],
)
def test_a_command_naming_an_interface_of_one_node_runs_there_and_says_why(reply, node, named):
    action = read(reply)
    assert action.machine == node
    assert named in action.inferred and node in action.inferred and "no node was named" in action.inferred


def test_a_node_the_reply_names_wins_over_the_interface_it_mentions():
    # an explicit node, a label or "on <node>" decide; the interface only helps when nothing does
    assert read("na0a01h1 ip link show na0a01r0-eth1").machine == "na0a01h1"
    assert not read("na0a01h1 ip link show na0a01r0-eth1").inferred
    assert read("On na0a01h2:\n```\nip link set na0a01r0-eth2 up\n```").machine == "na0a01h2"


@pytest.mark.parametrize(
    "reply, reason",
    [
        # interfaces of two nodes: ambiguous
        ("```\nip link set na0a01r0-eth1 up; ip link set na0a01h1-eth0 up\n```",
         "are on different nodes (na0a01h1-eth0 is on na0a01h1, na0a01r0-eth1 is on na0a01r0)"),
        # a switch port (on a Linux bridge, no node) and an interface that does not exist
        ("```\nip link set na0a01s1-eth1 up\n```", "na0a01s1-eth1 is no node's interface"),
        ("```\nip link set na0a01r0-eth9 up\n```", "na0a01r0-eth9 is no node's interface"),
        # an address that is a destination (ping) or a gateway says nothing about where to run
        ("```\nping -c 3 192.168.2.100\n```", "192.168.2.100 is a destination or a gateway"),
        ("```\nip route add default via 192.168.1.1\n```", "192.168.1.1 is a destination or a gateway"),
    ],
)
def test_an_ambiguous_or_unknown_interface_is_still_refused_with_the_reason(reply, reason):
    with pytest.raises(Refusal, match="No node is named") as refused:
        read(reply)
    assert reason in str(refused.value) and '{"machine": "na0a01r0", "command": "ip route"}' in str(refused.value)


def test_without_owners_the_reader_infers_nothing():
    with pytest.raises(Refusal, match="No node is named"):
        parse_reply("```bash\nip link set na0a01r0-eth2 up\n```", NODES, TOPO.prefix)


def test_the_prompt_states_the_time_limit_in_seconds():
    from pytest_netarena.apps.route import APP
    from pytest_netarena.apps.route.environment import RouteEnvironment
    from pytest_netarena.apps.route.prompt import route_prompt

    rules = " ".join(APP.prompt().rules.split())
    default = inspect.signature(RouteEnvironment).parameters["command_timeout_s"].default
    assert "time limit of 5 s" in rules and default == 5.0
    assert "16,000 characters" in rules
    assert "time limit of 2.5 s" in " ".join(route_prompt(2.5).rules.split())
