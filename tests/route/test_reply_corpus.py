"""The route reply corpus: replies in the styles strong models write, each with the action it must produce
(or the refusal it must get), read for a 2x2 network prefixed na0a01 (no root needed)."""

from __future__ import annotations

import pytest

from pytest_netarena.apps.route.replies import Refusal, parse_reply
from pytest_netarena.apps.route.topology import Topology

TOPO = Topology("na0a01", 2, 2)
R0, H1, H3 = "na0a01r0", "na0a01h1", "na0a01h3"
FENCE = "```"

#: (name, reply, expected (machine, command)); zero-shot unless the name starts with "cot"
CORPUS: list[tuple[str, str, tuple[str, str]]] = [
    ("json-bare", '{"machine": "na0a01r0", "command": "ip route"}', (R0, "ip route")),
    ("json-fence", f'{FENCE}json\n{{"machine": "na0a01r0", "command": "ip route"}}\n{FENCE}', (R0, "ip route")),
    ("json-multiline", '{\n  "machine": "na0a01r0",\n  "command": "sysctl -w net.ipv4.ip_forward=1"\n}',
     (R0, "sysctl -w net.ipv4.ip_forward=1")),
    ("json-in-prose", 'Forwarding looks off. {"machine": "na0a01r0", "command": "sysctl net.ipv4.ip_forward"} '
                      'should confirm it.', (R0, "sysctl net.ipv4.ip_forward")),
    ("json-crlf", '```json\r\n{"machine": "na0a01r0",\r\n "command": "ip link"}\r\n```\r\n', (R0, "ip link")),
    ("json-node-key", '{"node": "na0a01h1", "cmd": "ip addr"}', (H1, "ip addr")),
    ("json-nested-action", '{"thought": "check routes", "action": {"machine": "na0a01r0", "command": "ip route"}}',
     (R0, "ip route")),
    ("json-short-name", '{"machine": "r0", "command": "ip rule"}', (R0, "ip rule")),
    ("json-repeated-same", 'I will run {"machine": "na0a01r0", "command": "ip route"}.\n'
                           f'{FENCE}json\n{{"machine": "na0a01r0", "command": "ip route"}}\n{FENCE}', (R0, "ip route")),
    ("json-pipe", '{"machine": "na0a01r0", "command": "iptables-save | grep -v ^#"}', (R0, "iptables-save | grep -v ^#")),
    ("json-escaped-newline", '{"machine": "na0a01r0", "command": "ip route add 192.168.2.0/24 \\\\\\n dev na0a01r0-eth2"}',
     (R0, "ip route add 192.168.2.0/24 \\\n dev na0a01r0-eth2")),
    ("pydict", "{'machine': 'na0a01h1', 'command': 'ip route'}", (H1, "ip route")),
    ("pydict-fence", f"{FENCE}python\n{{'machine': 'na0a01r0', 'command': 'tc qdisc show'}}\n{FENCE}",
     (R0, "tc qdisc show")),
    ("pydict-action-label", "Action: {'machine': 'na0a01r0', 'command': 'ip -br link'}", (R0, "ip -br link")),
    ("react-json", 'Thought: the router may not forward.\nAction: {"machine": "na0a01r0", "command": "sysctl net.ipv4.ip_forward"}',
     (R0, "sysctl net.ipv4.ip_forward")),
    ("react-node-colon", "Thought: check the router's addresses.\nAction: na0a01r0: ip addr show", (R0, "ip addr show")),
    ("react-cli", "Thought: look at the rules.\nAction: na0a01r0 ip rule list", (R0, "ip rule list")),
    ("react-backticks", "Action: `na0a01r0 iptables -L -n -v`", (R0, "iptables -L -n -v")),
    ("react-on-node", "Action: `ip route` on na0a01r0", (R0, "ip route")),
    ("bold-labels", "**Machine:** na0a01r0\n**Command:** `ip neigh`", (R0, "ip neigh")),
    ("yaml-labels", "machine: na0a01r0\ncommand: ip -s link", (R0, "ip -s link")),
    ("yaml-fence", f"{FENCE}yaml\nmachine: na0a01h3\ncommand: ip route\n{FENCE}", (H3, "ip route")),
    ("cli-fence-bash", f"{FENCE}bash\nna0a01r0 ip route\n{FENCE}", (R0, "ip route")),
    ("cli-fence-plain", f"Let me look.\n{FENCE}\nna0a01r0 ip -br addr\n{FENCE}", (R0, "ip -br addr")),
    ("cli-mininet-prompt", f"{FENCE}\nmininet> na0a01r0 ip link show\n{FENCE}", (R0, "ip link show")),
    ("cli-bare-line", "na0a01r0 iptables-save", (R0, "iptables-save")),
    ("cli-short-name", f"{FENCE}sh\nr0 ip route\n{FENCE}", (R0, "ip route")),
    ("fence-on-node-prose", f"I'll check the routing table on na0a01r0:\n{FENCE}bash\nip route\n{FENCE}", (R0, "ip route")),
    ("fence-on-the-router", f"Let's inspect the firewall on the router.\n{FENCE}shell\niptables-save\n{FENCE}",
     (R0, "iptables-save")),
    ("fence-comments", f"On na0a01r0:\n{FENCE}bash\n# enable forwarding\nsysctl -w net.ipv4.ip_forward=1\n{FENCE}",
     (R0, "sysctl -w net.ipv4.ip_forward=1")),
    ("fence-dollar-prompt", f"Run this on na0a01r0:\n{FENCE}console\n$ ip route\n{FENCE}", (R0, "ip route")),
    ("fence-root-prompt", f"{FENCE}console\nroot@na0a01r0:~# ip link set dev na0a01r0-eth2 up\n{FENCE}",
     (R0, "ip link set dev na0a01r0-eth2 up")),
    ("fence-node-prompt", f"{FENCE}\nna0a01h1# ip route\n{FENCE}", (H1, "ip route")),
    ("fence-console-output", f"{FENCE}console\nroot@na0a01r0:~# sysctl net.ipv4.ip_forward\nnet.ipv4.ip_forward = 0\n{FENCE}",
     (R0, "sysctl net.ipv4.ip_forward")),
    ("fence-backslashes", f"On na0a01r0:\n{FENCE}bash\nip route add 192.168.2.0/24 \\\n    dev na0a01r0-eth2 \\\n    proto kernel\n{FENCE}",
     (R0, "ip route add 192.168.2.0/24 dev na0a01r0-eth2 proto kernel")),
    ("fence-two-lines-one-node", f"{FENCE}bash\nna0a01r0 ip link\nna0a01r0 ip addr\n{FENCE}", (R0, "ip link\nip addr")),
    # several fences or objects for one node run together, in order, as one action (the prompt allows it)
    ("two-fences-one-node", f"Let me look at the router.\n{FENCE}bash\nna0a01r0 ip -br addr\n{FENCE}\nand its routes:\n"
                            f"{FENCE}bash\nna0a01r0 ip route\n{FENCE}", (R0, "ip -br addr\nip route")),
    ("two-objects-one-node", '{"machine": "na0a01r0", "command": "ip link"} then {"machine": "na0a01r0", "command": "ip addr"}',
     (R0, "ip link\nip addr")),
    ("two-fences-one-named-by-prose", f"On na0a01r0:\n{FENCE}bash\nsysctl net.ipv4.ip_forward\n{FENCE}\n"
                                      f"{FENCE}bash\nip route\n{FENCE}", (R0, "sysctl net.ipv4.ip_forward\nip route")),
    ("fence-crlf", f"On na0a01r0:\r\n{FENCE}bash\r\nip rule\r\n{FENCE}\r\n", (R0, "ip rule")),
    ("fence-tilde", "~~~\nna0a01r0 tc qdisc show\n~~~", (R0, "tc qdisc show")),
    ("fence-routers-possessive", f"I'll check the router's routing table first.\n\n{FENCE}bash\nip route show\n{FENCE}",
     (R0, "ip route show")),
    ("fence-from-to", f"Check the path from na0a01h1 to na0a01h3:\n{FENCE}bash\nip route get 192.168.2.100\n{FENCE}",
     (H1, "ip route get 192.168.2.100")),
    ("fence-machine-label", f"Machine: na0a01r0\n{FENCE}bash\nip -4 addr\n{FENCE}", (R0, "ip -4 addr")),
    ("fence-unclosed", f"Checking na0a01r0.\n{FENCE}bash\nip route", (R0, "ip route")),
    ("quoted-output-then-command", f"The mesh shows\n{FENCE}\nna0a01h1 -> na0a01h2 X X na0a01r0\n{FENCE}\n"
                                   f"so on na0a01r0:\n{FENCE}bash\nip route\n{FENCE}", (R0, "ip route")),
    ("quoted-rules-then-json", f"{FENCE}\n*filter\n:FORWARD DROP [0:0]\nCOMMIT\n{FENCE}\n"
                               '{"machine": "na0a01r0", "command": "iptables -P FORWARD ACCEPT"}',
     (R0, "iptables -P FORWARD ACCEPT")),
    ("inline-backticks", "I will run `ip route` on na0a01r0 next.", (R0, "ip route")),
    ("inline-cli", "Next: `na0a01r0 ip -6 route`.", (R0, "ip -6 route")),
    ("bare-command-line", "Checking the router na0a01r0\nip route show table all", (R0, "ip route show table all")),
    ("cot-fences-last", f"First I looked at {FENCE}bash\nna0a01r0 ip link\n{FENCE} which was fine. Now:\n"
                        f"{FENCE}bash\nna0a01r0 ip addr\n{FENCE}", (R0, "ip addr")),
    ("cot-objects-last", 'Earlier {"machine": "na0a01r0", "command": "ip route"} showed the problem, so: '
                         '{"machine": "na0a01r0", "command": "ip route add 192.168.2.0/24 dev na0a01r0-eth2"}',
     (R0, "ip route add 192.168.2.0/24 dev na0a01r0-eth2")),
    ("cot-inline-last", "`ip route` was fine; the fix is `ip link set dev na0a01r0-eth1 up` on na0a01r0.",
     (R0, "ip link set dev na0a01r0-eth1 up")),
]

#: (name, reply, what the refusal must say)
REFUSED: list[tuple[str, str, str]] = [
    ("prose-only", "I think the router is misconfigured.", "no action found"),
    ("two-objects-two-nodes", '{"machine": "na0a01r0", "command": "ip link"} then {"machine": "na0a01h1", "command": "ip addr"}',
     "2 different actions found, for 2 nodes"),
    ("two-fences-two-nodes", f"{FENCE}\nna0a01r0 ip route\n{FENCE}\n{FENCE}\nna0a01h1 ip route\n{FENCE}",
     "2 different actions found, for 2 nodes"),
    ("one-fence-two-nodes", f"{FENCE}bash\nna0a01r0 ip route\nna0a01h1 ip route\n{FENCE}", "2 different actions found"),
    ("no-node", f"{FENCE}bash\nip route\n{FENCE}", "No node is named"),
    ("two-nodes-in-prose", f"h1 and h3 cannot talk; na0a01h1 and na0a01h3 both\n{FENCE}bash\nip route\n{FENCE}",
     "No node is named"),
    ("unknown-node", '{"machine": "router1", "command": "ip route"}', "unknown machine 'router1'"),
    ("empty-command", '{"machine": "na0a01r0", "command": "  "}', 'no "command" string'),
]


def read(reply: str, last: bool = False):
    return parse_reply(reply, TOPO.nodes, TOPO.prefix, last=last)


def test_the_corpus_is_large_enough():
    assert len(CORPUS) + len(REFUSED) >= 40 and len(CORPUS) >= 40


@pytest.mark.parametrize("name, reply, expected", CORPUS, ids=[name for name, _, _ in CORPUS])
def test_each_reply_gives_its_action(name, reply, expected):
    action = read(reply, last=name.startswith("cot"))
    assert (action.machine, action.command) == expected


@pytest.mark.parametrize("name, reply, reason", REFUSED, ids=[name for name, _, _ in REFUSED])
def test_each_refusal_says_what_was_wrong_and_shows_the_accepted_form(name, reply, reason):
    with pytest.raises(Refusal) as refused:
        read(reply)
    message = str(refused.value)
    assert reason in message and '{"machine": "na0a01r0", "command": "ip route"}' in message


@pytest.mark.parametrize("name, reply", [(n, r) for n, r, _ in CORPUS if n.startswith("cot")])
def test_outside_cot_several_actions_for_one_node_run_together_in_order(name, reply):
    """These chain-of-thought replies act on one node: outside cot every command runs, in order."""
    action = read(reply, last=False)
    last = read(reply, last=True)
    assert action.machine == last.machine and action.command.endswith("\n" + last.command)


def test_netarenas_rules_keep_refusing_several_actions():
    """--compat netarena's reader runs one command per turn, as NetArena does."""
    from pytest_netarena.apps.route.replies import Reader

    reader = Reader(TOPO.nodes, TOPO.router, TOPO.prefix, join=False)
    with pytest.raises(Refusal, match="2 different actions found"):
        reader.read(f"{FENCE}bash\nna0a01r0 ip -br addr\n{FENCE}\n{FENCE}bash\nna0a01r0 ip route\n{FENCE}")


@pytest.mark.parametrize("command", ["ip route", "ip route replace 192.168.2.0/24 dev na0a01r0-eth2 proto kernel scope link src 192.168.2.1",
                                     "iptables -t filter -D FORWARD -s 192.168.1.0/24 -j DROP"])
def test_every_chatty_style_is_read_back_as_its_action(command):
    from pytest_netarena.apps.route.agents.builtin import CHATTY_STYLES

    for number, style in enumerate(CHATTY_STYLES):
        reply = style(R0, command, "*** Results: 33% dropped (4/6 received)")
        action = read(reply)
        assert (action.machine, action.command) == (R0, command), (number, reply)
