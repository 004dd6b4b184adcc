"""NetArena's route rules as data and pure functions: its network size, fault parameters, levels, pingmesh and verdicts.

Read from NetArena's app-route (HEAD 93225b4) and written here from scratch; docs/netarena.md lists
every difference from our default. Faults stay our dicts ({"type", "method", ...}); only the
parameters and the commands that differ from ours are defined here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ....core.catalogue import Category, Chooser
from .. import faults as ours
from ..faults import DISABLE_INTERFACE, DISABLE_ROUTING, DROP_TRAFFIC, REMOVE_IP, TYPES, WRONG_ROUTING, Command
from ..topology import Topology

#: one router, 2 subnets of 1 host (its num_switches and num_hosts_per_subnet defaults)
DEFAULT_SIZE = (2, 1)
#: agent turns; the loss is measured before each, so the 10th command is never measured
MAX_ITERATIONS = 10
#: the loss the first measurement is compared with: the first measurement can never be unsafe
INITIAL_LOSS = 100
MTU = 68
RULE_PREF = 0
MASKS = (8, 16, 30, 31, 32)  #: /8 and /16 still cover the hosts: those faults break nothing
CHAINS = "input_output"  #: its drop_traffic rules are on INPUT/OUTPUT only (the router's own traffic)
WRONG_GATEWAY = "10.255.255.254"
WRONG_METRIC = 10000  #: its wrong-interface-with-metric method always uses its default metric
OTHER_NETWORK_OCTETS = (1, 254)
DELAY_MS = (1000, 5000)
#: its pingmesh: one `ping -c1 -W 0.1` per ordered pair, 84 bytes on the wire, router included
PING_BYTES = 84
PING_WAIT_S = 0.1
#: substrings that make it skip a command silently
DENIED = ("sudo", "tcpdump", "systemctl", "frr", "ethtool", "ping")
CONTEXT_CHARS = 127_000

#: its method numbers (1-based) as our method names, per fault type: our methods in its order, which
#: differs from ours (simplest first) only in disable_interface
METHODS: dict[str, tuple[str, ...]] = {**ours.METHODS, DISABLE_INTERFACE: ("ifconfig_down", "link_down", "mtu_small")}

#: its levels (the labels of its result summaries): ours swaps DR+DT (its level 3) and DI+DT (its level 2)
LEVELS: dict[int, tuple[tuple[str, ...], ...]] = {
    1: tuple((kind,) for kind in TYPES),
    2: ((DISABLE_ROUTING, DISABLE_INTERFACE), (DISABLE_ROUTING, REMOVE_IP), (DISABLE_ROUTING, WRONG_ROUTING),
        (DISABLE_INTERFACE, DROP_TRAFFIC), (REMOVE_IP, WRONG_ROUTING), (DROP_TRAFFIC, WRONG_ROUTING)),
    3: ((DISABLE_ROUTING, DROP_TRAFFIC), (DISABLE_INTERFACE, REMOVE_IP), (DISABLE_INTERFACE, WRONG_ROUTING),
        (REMOVE_IP, DROP_TRAFFIC)),
}


def categories() -> list[Category]:
    return [Category(level, "+".join(kinds)) for level, groups in LEVELS.items() for kinds in groups]


def _subnet(chooser: Chooser, subnets: int) -> int:
    return chooser.integer(1, subnets)


def draw_fault(kind: str, chooser: Chooser, subnets: int, missing: Mapping[str, str] | None = None) -> dict[str, Any]:
    """One fault of `kind` with NetArena's method and parameter distribution (uniform method first).

    Values NetArena draws at injection time (the other network, the duplicated subnet) are drawn
    here, so a query still determines its commands. Methods whose kernel feature is missing
    (`missing`: feature -> reason, e.g. netem) are left out of the draw.
    """
    method = chooser.choice(ours.available_methods(kind, missing or {}, METHODS))
    fault: dict[str, Any] = {"type": kind, "method": method}
    if kind == DISABLE_ROUTING:
        if method == "rule_prohibit":
            fault["pref"] = RULE_PREF
        elif method == "forward_drop_subnet":
            fault["subnet"] = _subnet(chooser, subnets)
    elif kind == DISABLE_INTERFACE:
        fault["subnet"] = _subnet(chooser, subnets)
        if method == "mtu_small":
            fault["mtu"] = MTU
    elif kind == REMOVE_IP:
        fault["subnet"] = _subnet(chooser, subnets)
        if method == "other_network":
            low, high = OTHER_NETWORK_OCTETS
            fault["address"] = f"10.{chooser.integer(low, high)}.{chooser.integer(low, high)}.1/24"
        elif method == "wrong_mask":
            fault["mask"] = chooser.choice(MASKS)
        elif method == "duplicate":
            fault["other"] = ours.other_subnet(chooser, subnets, fault["subnet"])
    elif kind == DROP_TRAFFIC:
        fault["subnet"] = _subnet(chooser, subnets)
        if method == "netem_delay":
            fault["delay_ms"] = chooser.integer(*DELAY_MS)
        else:
            fault["chains"] = CHAINS
    elif kind == WRONG_ROUTING:
        fault["subnet"] = _subnet(chooser, subnets)
        fault["to"] = ours.other_subnet(chooser, subnets, fault["subnet"])
        if method == "nonexistent_gateway":
            fault["gateway"] = WRONG_GATEWAY
        elif method == "wrong_interface_metric":
            fault["metric"] = WRONG_METRIC
    return fault


def inject_commands(fault: Mapping[str, Any], topo: Topology) -> list[Command]:
    """NetArena's router commands for a fault; none is checked (its router.cmd ignores failures)."""
    fault = dict(fault)
    if fault["method"] == "nonexistent_gateway" and "gateway" in fault:
        network, intf = topo.network(fault["subnet"]), topo.router_intf(fault["subnet"])
        commands = [Command(("ip", "route", "del", network, "dev", intf)),
                    Command(("ip", "route", "add", network, "via", fault["gateway"]))]
    else:
        commands = ours.inject_commands(fault, topo)
    return [Command(command.argv, may_fail=True) for command in commands]


def injection_plan(faults: Sequence[Mapping[str, Any]], topo: Topology) -> list[Command]:
    """A query's commands in the order of its faults (NetArena's order; ours sorts by type)."""
    return [command for fault in faults for command in inject_commands(fault, topo)]


def repair_commands(fault: Mapping[str, Any], topo: Topology) -> list[Command]:
    """Commands that undo a compat fault (for the oracle).

    Its rule has pref 0, the local table's own priority: `ip rule del pref 0` would delete the
    local rule, so the prohibit action is named.
    """
    fault = dict(fault)
    if fault["method"] == "rule_prohibit":
        return [Command(("ip", "rule", "del", "prohibit", "pref", str(fault["pref"])))]
    if fault["method"] == "nonexistent_gateway" and "gateway" in fault:
        k = fault["subnet"]
        network, intf = topo.network(k), topo.router_intf(k)
        return [Command(("ip", "route", "del", network, "via", fault["gateway"]), may_fail=True),
                Command(("ip", "route", "replace", network, "dev", intf, "proto", "kernel", "scope", "link",
                         "src", topo.gateway(k)))]
    return ours.repair_commands(fault, topo)


def repair_plan(faults: Sequence[Mapping[str, Any]], topo: Topology) -> list[Command]:
    ordered = sorted(faults, key=lambda fault: ours.REPAIR_ORDER.index(fault["type"]))
    return [command for fault in ordered for command in repair_commands(fault, topo)]


def netarena_detail(fault: Mapping[str, Any]) -> dict[str, Any]:
    """One of our compat faults as NetArena's `errordetail` (method numbers, r0-eth names, /24 subnets)."""
    kind, method = fault["type"], fault["method"]
    detail: dict[str, Any] = {"method": METHODS[kind].index(method) + 1}
    k = fault.get("subnet")
    if kind == DISABLE_ROUTING:
        detail["action"] = "Disable IP forwarding"
        if k:
            detail["subnet"] = Topology.network(k)
    elif kind in (DISABLE_INTERFACE, REMOVE_IP):
        detail["interface"] = f"r0-eth{k}"
        if "mask" in fault:
            detail["wrong_mask"] = fault["mask"]
    elif kind == DROP_TRAFFIC:
        detail["subnet"] = Topology.network(k)
        if "delay_ms" in fault:
            detail["delay_ms"] = fault["delay_ms"]
    elif kind == WRONG_ROUTING:
        to = fault["to"]
        detail.update({"from": Topology.network(k), "to": Topology.network(to), "del_interface": f"r0-eth{k}",
                       "add_interface": f"r0-eth{to}", "to_ip": Topology.gateway(to)})
    return detail


# ----- pingmesh -------------------------------------------------------------------------------


def ping_argv(address: str) -> list[str]:
    return ["ping", "-c1", "-W", str(PING_WAIT_S), address]


def loss_percent(sent: int, received: int) -> int:
    """Its loss: int(lost * 100 / sent), truncated; 0 when nothing was sent."""
    return int((sent - received) * 100.0 / sent) if sent else 0


def render_pingall(nodes: Sequence[str], reachable: Iterable[tuple[str, str]]) -> tuple[str, int]:
    """Its pingall text and loss %: '<src> -> <dst or X> ' per row, then the Results line."""
    reached = set(reachable)
    rows = []
    for src in nodes:
        rows.append(f"{src} -> " + "".join(f"{dst} " if (src, dst) in reached else "X "
                                           for dst in nodes if dst != src))
    sent = len(nodes) * (len(nodes) - 1)
    received = sum(1 for src in nodes for dst in nodes if src != dst and (src, dst) in reached)
    loss = loss_percent(sent, received)
    return "\n".join(rows) + f"\n*** Results: {loss}% dropped ({received}/{sent} received)\n", loss


def denied(command: str) -> bool:
    return any(word in command for word in DENIED)


def read_reply(reply: str) -> tuple[str, str] | None:
    """Its reading: the whole reply is a JSON object with 'machine' and 'command'; None otherwise
    (NetArena then asks again, without limit, and counts nothing)."""
    try:
        value = json.loads(reply)
    except (TypeError, ValueError):
        return None
    if not isinstance(value, dict):
        return None
    machine, command = value.get("machine"), value.get("command")
    return (machine if isinstance(machine, str) else "", command if isinstance(command, str) else "")


def pingall_block(pingall: str) -> str:
    return f"Pingall result:\n{pingall}\n"


def log_entry(pingall: str, machine: str, command: str, loss: int, elapsed_s: float) -> str:
    """One turn of its per-episode log (the command's output, if it ran, follows as command_output_entry)."""
    return (pingall_block(pingall)
            + f"Machine: {machine}\nCommand: {command}\nPacket Loss: {loss}%\nElapsed Time: {elapsed_s} seconds\n")


def command_output_entry(output: str) -> str:
    return f"Command Output:\n{output}\n"


def observation(log: str, pingall: str) -> str:
    """What the agent sees before a turn: the log's last CONTEXT_CHARS plus the current pingall."""
    return log[-CONTEXT_CHARS:] + pingall_block(pingall)

