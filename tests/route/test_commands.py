"""Reply parsing and the command guard: every refused class, argument checks, tolerated formats (no root needed)."""

from __future__ import annotations

import pytest

from pytest_netarena.apps.route.commands import Refusal, guard, parse_reply


@pytest.mark.parametrize(
    "reply",
    [
        '{"machine": "r0", "command": "ip route"}',
        'I will look at the routes.\n```json\n{"machine": "r0", "command": "ip route"}\n```\nThen decide.',
        'Action: {"machine": "r0", "command": "ip route"} (read only)',
        '```\n{"machine": "r0", "command": "ip route"}\n```',
    ],
)
def test_one_json_object_is_found_in_prose_and_fences(reply):
    action = parse_reply(reply)
    assert (action.machine, action.command) == ("r0", "ip route")


@pytest.mark.parametrize(
    "reply, reason",
    [
        ("machine: r0 command: ip route", "no action found"),
        ('{"machine": "r0"}', "no action found"),
        ('{"machine": "r0", "command": "ip route"} {"machine": "r0", "command": "ip addr"}', "2 actions found"),
        ('{"machine": "r0", "command": ""}', "non-empty strings"),
        ('{"machine": ["r0"], "command": "ip route"}', "non-empty strings"),
    ],
)
def test_unusable_replies_are_refused_with_a_reason(reply, reason):
    with pytest.raises(Refusal, match=reason):
        parse_reply(reply)


@pytest.mark.parametrize(
    "command, argv",
    [
        ("ip route", ["ip", "route"]),
        ("ip -br addr show", ["ip", "-br", "addr", "show"]),
        ("/usr/sbin/ip link set dev x up", ["ip", "link", "set", "dev", "x", "up"]),
        ("ifconfig x up", ["ifconfig", "x", "up"]),
        ("route -n", ["route", "-n"]),
        ("arp -n", ["arp", "-n"]),
        ("iptables -D FORWARD -s 192.168.2.0/24 -j DROP", ["iptables", "-D", "FORWARD", "-s", "192.168.2.0/24", "-j", "DROP"]),
        ("iptables-save", ["iptables-save"]),
        ("sysctl -w net.ipv4.ip_forward=1", ["sysctl", "-w", "net.ipv4.ip_forward=1"]),
        ("sysctl net/ipv4/ip_forward", ["sysctl", "net/ipv4/ip_forward"]),
        ("tc qdisc show", ["tc", "qdisc", "show"]),
        ("cat /proc/sys/net/ipv4/ip_forward", ["cat", "/proc/sys/net/ipv4/ip_forward"]),
        ("cat /proc/net/route", ["cat", "/proc/net/route"]),
        ("ip route add 10.0.0.0/8 via '192.168.1.2'", ["ip", "route", "add", "10.0.0.0/8", "via", "192.168.1.2"]),
    ],
)
def test_allowed_commands_become_argv(command, argv):
    assert guard(command) == argv


@pytest.mark.parametrize(
    "command, reason",
    [
        # privilege wrappers
        ("sudo ip route", "already run as root"),
        # traffic generators
        ("ping -c1 192.168.1.1", "pingmesh is measured for you"),
        ("traceroute 192.168.2.100", "pingmesh is measured for you"),
        ("tcpdump -i any", "pingmesh is measured for you"),
        # shells, interpreters, wrappers
        ("bash -c 'ip route'", "shells, interpreters"),
        ("sh", "shells, interpreters"),
        ("python3 -c 'print(1)'", "shells, interpreters"),
        ("nsenter -t 1 -n ip link", "shells, interpreters"),
        ("env ip route", "shells, interpreters"),
        # editors and file writers
        ("vi /etc/network/interfaces", "writes files"),
        ("nano /etc/hosts", "writes files"),
        ("tee /tmp/x", "writes files"),
        ("iptables-restore", "writes files"),
        ("iptables-save -f /tmp/rules", "only print the rules"),
        ("iptables-save --file=/tmp/rules", "only print the rules"),
        # daemons, services, interactive tools
        ("vtysh -c 'show ip route'", "daemons"),
        ("systemctl restart networking", "daemons"),
        ("dhclient eth0", "daemons"),
        ("sleep 100", "daemons"),
        ("top", "daemons"),
        # shell syntax
        ("ip route | grep 192", "shell syntax"),
        ("ip route > /tmp/routes", "shell syntax"),
        ("ip link set x up; ip route", "shell syntax"),
        ("ip link set x up && ip route", "shell syntax"),
        ("ip route $(echo show)", "shell syntax"),
        ("ip route `id`", "shell syntax"),
        # leaving the namespace, running programs, batch files
        ("ip netns exec other ip route", "ip netns is refused"),
        ("ip -n other route", "stay in this node's namespace"),
        ("ip --netns other route", "stay in this node's namespace"),
        ("ip -batch /tmp/cmds", "stay in this node's namespace"),
        ("ip link set dev x netns 1", "netns is refused"),
        ("ip vrf exec blue bash", "exec is refused"),
        ("ip link set dev x xdp obj prog.o", "is refused"),
        ("ip monitor", "monitor is refused"),
        ("tc -batch /tmp/cmds", "stay in this node's namespace"),
        ("tc filter add dev x bpf obj prog.o", "is refused"),
        ("iptables --modprobe=/tmp/evil -L", "runs a program"),
        ("arp -f /etc/ethers", "reads a file"),
        # sysctl outside net.*, or loading files
        ("sysctl -w kernel.panic=1", "only net"),
        ("sysctl vm.swappiness", "only net"),
        ("sysctl -p", "may not load settings files"),
        ("sysctl --system", "may not load settings files"),
        # reading outside /proc/sys/net
        ("cat /etc/shadow", "only files under /proc/sys/net"),
        ("cat /proc/sys/net/../../../etc/shadow", "only files under /proc/sys/net"),
        ("cat /proc/sys/kernel/hostname", "only files under /proc/sys/net"),
        ("cat", "needs a path"),
        # unknown programs and paths
        ("nmap 192.168.1.0/24", "not an allowed program"),
        ("/tmp/ip route", "run allowed programs by name"),
        ("ip route 'unterminated", "cannot parse"),
        ("   ", "empty command"),
    ],
)
def test_refused_commands_name_their_reason(command, reason):
    with pytest.raises(Refusal, match=reason):
        guard(command)


def test_prompt_examples_obey_the_one_json_command_format_they_state():
    from pytest_netarena.apps.route import APP

    prompt = APP.prompt()
    assert len(prompt.examples) >= 3 and '{"machine"' in prompt.action_format
    for observation, reply in prompt.examples:
        action = parse_reply(reply)
        assert reply.strip().startswith("{") and reply.strip().endswith("}")
        assert action.machine in observation and guard(action.command)
