"""The route fault catalogue: types, methods, parameters drawn through a Chooser, injection and repair commands.

Every random value is drawn at generation (draw_fault), so a query fully determines the commands
injected. Parameters are chosen by construction so that each fault breaks at least one pair
(e.g. only prefix lengths that exclude the hosts, MTUs below the probe size, gateways no node
owns); reset() still verifies it. Faults are plain dicts so they live in Query.params (JSON).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...core.catalogue import Chooser
from .network.icmp import PROBE_BYTES
from .topology import Topology

DISABLE_ROUTING = "disable_routing"
DISABLE_INTERFACE = "disable_interface"
REMOVE_IP = "remove_ip"
DROP_TRAFFIC = "drop_traffic_to_from_subnet"
WRONG_ROUTING = "wrong_routing_table"
TYPES = (DISABLE_ROUTING, DISABLE_INTERFACE, REMOVE_IP, DROP_TRAFFIC, WRONG_ROUTING)

#: methods of each type, simplest first (Hypothesis shrinks towards the first)
METHODS: dict[str, tuple[str, ...]] = {
    DISABLE_ROUTING: ("ip_forward_off", "forward_policy_drop", "rule_prohibit", "forward_drop_subnet"),
    DISABLE_INTERFACE: ("link_down", "ifconfig_down", "mtu_small"),
    REMOVE_IP: ("flush", "other_network", "wrong_mask", "duplicate"),
    DROP_TRAFFIC: ("iptables_drop", "iptables_reject", "icmp_drop", "netem_delay"),
    WRONG_ROUTING: ("wrong_interface", "nonexistent_gateway", "wrong_interface_metric", "via_local_address"),
}
#: methods that need a kernel feature, by feature
FEATURE_OF = {"netem_delay": "netem"}
#: what a method blocks in the pairs it breaks, where not every protocol: an ICMP drop blocks ping alone (so letting
#: ICMP through repairs it), and a small MTU the 512-byte ICMP and UDP probes with don't-fragment set (TCP's
#: segments are small or fragmented). Every other method blocks ICMP, TCP and UDP alike
BLOCKS: dict[str, tuple[str, ...]] = {"icmp_drop": ("icmp",), "mtu_small": ("icmp", "udp")}

#: level -> categories (pairs as in NetArena's table)
LEVELS: dict[int, tuple[tuple[str, ...], ...]] = {
    1: tuple((kind,) for kind in TYPES),
    2: (
        (DISABLE_ROUTING, DISABLE_INTERFACE),
        (DISABLE_ROUTING, REMOVE_IP),
        (DISABLE_ROUTING, DROP_TRAFFIC),
        (DISABLE_ROUTING, WRONG_ROUTING),
        (REMOVE_IP, WRONG_ROUTING),
        (DROP_TRAFFIC, WRONG_ROUTING),
    ),
    3: (
        (DISABLE_INTERFACE, DROP_TRAFFIC),
        (DISABLE_INTERFACE, WRONG_ROUTING),
        (REMOVE_IP, DROP_TRAFFIC),
        (DISABLE_INTERFACE, REMOVE_IP),
    ),
}

#: prefix lengths whose network 192.168.k.0/len excludes the hosts (.100 and up): they break the subnet
BREAKING_MASKS = (32, 30, 28, 26, 31, 29, 27)
#: MTUs too small to carry a probe (PROBE_BYTES, don't-fragment set)
SMALL_MTUS = tuple(mtu for mtu in (68, 128, 256, 400, 500) if mtu < PROBE_BYTES)
#: DT chains: the router's own traffic, or traffic it forwards
DT_CHAINS = ("input_output", "forward")
HEALTHY_MTU = 1500


@dataclass(frozen=True)
class Command:
    """One command run on the router (argv, no shell); may_fail: its failure is expected."""

    argv: tuple[str, ...]
    may_fail: bool = False

    @property
    def text(self) -> str:
        return " ".join(self.argv)


def available_methods(kind: str, missing: Mapping[str, str],
                      methods: Mapping[str, tuple[str, ...]] = METHODS) -> tuple[str, ...]:
    """Methods of kind (in the order of `methods`) whose kernel feature is present (missing: feature -> reason)."""
    return tuple(method for method in methods[kind] if FEATURE_OF.get(method) not in missing)


def draw_fault(kind: str, chooser: Chooser, subnets: int, missing: dict[str, str]) -> dict[str, Any]:
    """Draw one fault of kind for a network of `subnets` subnets."""
    method = chooser.choice(available_methods(kind, missing))
    fault: dict[str, Any] = {"type": kind, "method": method}
    if kind == DISABLE_ROUTING:
        if method == "rule_prohibit":
            fault["pref"] = chooser.integer(1, 32765)
        elif method == "forward_drop_subnet":
            fault["subnet"] = chooser.integer(1, subnets)
    elif kind == DISABLE_INTERFACE:
        fault["subnet"] = chooser.integer(1, subnets)
        if method == "mtu_small":
            fault["mtu"] = chooser.choice(SMALL_MTUS)
    elif kind == REMOVE_IP:
        fault["subnet"] = chooser.integer(1, subnets)
        if method == "other_network":
            fault["address"] = f"10.{chooser.integer(0, 255)}.{chooser.integer(0, 255)}.1/24"
        elif method == "wrong_mask":
            fault["mask"] = chooser.choice(BREAKING_MASKS)
        elif method == "duplicate":
            fault["other"] = other_subnet(chooser, subnets, fault["subnet"])
    elif kind == DROP_TRAFFIC:
        fault["subnet"] = chooser.integer(1, subnets)
        if method == "netem_delay":
            fault["delay_ms"] = chooser.integer(1000, 5000)
        else:
            fault["chains"] = chooser.choice(DT_CHAINS)
    elif kind == WRONG_ROUTING:
        fault["subnet"] = chooser.integer(1, subnets)
        fault["to"] = other_subnet(chooser, subnets, fault["subnet"])
        if method == "nonexistent_gateway":
            fault["gateway_host"] = chooser.integer(200, 254)
        elif method == "wrong_interface_metric":
            fault["metric"] = chooser.integer(5000, 20000)
    return fault


def other_subnet(chooser: Chooser, subnets: int, subnet: int) -> int:
    """A subnet index other than subnet."""
    other = chooser.integer(1, subnets - 1)
    return other if other < subnet else other + 1


def describe(fault: dict[str, Any]) -> str:
    """A short label, e.g. 'remove_ip/wrong_mask(subnet=2, mask=30)'."""
    params = ", ".join(f"{key}={value}" for key, value in fault.items() if key not in ("type", "method"))
    return f"{fault['type']}/{fault['method']}({params})"


def _ipt_rules(fault: dict[str, Any], topo: Topology) -> list[tuple[str, ...]]:
    """The iptables rule specs (chain first) a drop_traffic fault appends."""
    network = topo.network(fault["subnet"])
    match = ("-p", "icmp") if fault["method"] == "icmp_drop" else ()
    target = ("-j", "REJECT") if fault["method"] == "iptables_reject" else ("-j", "DROP")
    if fault["chains"] == "input_output":
        return [("INPUT", "-s", network, *match, *target), ("OUTPUT", "-d", network, *match, *target)]
    return [("FORWARD", "-s", network, *match, *target), ("FORWARD", "-d", network, *match, *target)]


def _wrong_address(fault: dict[str, Any], topo: Topology) -> str:
    """The address (with prefix) a remove_ip fault other than flush puts on the router interface."""
    method = fault["method"]
    if method == "other_network":
        return fault["address"]
    if method == "wrong_mask":
        return f"{topo.gateway(fault['subnet'])}/{fault['mask']}"
    if method == "duplicate":
        return f"{topo.gateway(fault['other'])}/24"
    raise ValueError(f"unknown remove_ip method {method!r}")


def _wrong_route(fault: dict[str, Any], topo: Topology) -> tuple[str, ...]:
    """What follows the network in the wrong route a wrong_routing_table fault adds ("dev ..." or "via ...")."""
    method, to = fault["method"], fault["to"]
    if method == "wrong_interface":
        return ("dev", topo.router_intf(to))
    if method == "nonexistent_gateway":
        return ("via", f"192.168.{to}.{fault['gateway_host']}")
    if method == "wrong_interface_metric":
        return ("dev", topo.router_intf(to), "metric", str(fault["metric"]))
    if method == "via_local_address":
        return ("via", topo.gateway(to))
    raise ValueError(f"unknown wrong_routing_table method {method!r}")


def _inject_and_repair(fault: dict[str, Any], topo: Topology) -> tuple[list[Command], list[Command]]:
    """The router commands that inject fault and those that undo it, side by side."""
    method = fault["method"]
    k = fault.get("subnet")
    intf = topo.router_intf(k) if k else ""
    if method == "ip_forward_off":
        return ([Command(("sysctl", "-w", "net.ipv4.ip_forward=0"))],
                [Command(("sysctl", "-w", "net.ipv4.ip_forward=1"))])
    if method == "forward_policy_drop":
        return [Command(("iptables", "-P", "FORWARD", "DROP"))], [Command(("iptables", "-P", "FORWARD", "ACCEPT"))]
    if method == "rule_prohibit":
        pref = str(fault["pref"])
        return ([Command(("ip", "rule", "add", "prohibit", "pref", pref))],
                [Command(("ip", "rule", "del", "pref", pref))])
    if method == "forward_drop_subnet":
        rule = ("FORWARD", "-s", topo.network(k), "-j", "DROP")
        return [Command(("iptables", "-A", *rule))], [Command(("iptables", "-D", *rule))]
    link_up = [Command(("ip", "link", "set", "dev", intf, "up"))]
    if method == "link_down":
        return [Command(("ip", "link", "set", "dev", intf, "down"))], link_up
    if method == "ifconfig_down":
        return [Command(("ifconfig", intf, "down"))], link_up
    if method == "mtu_small":
        mtu = ("ip", "link", "set", "dev", intf, "mtu")
        return [Command((*mtu, str(fault["mtu"])))], [Command((*mtu, str(HEALTHY_MTU)))]
    if method == "netem_delay":
        return ([Command(("tc", "qdisc", "add", "dev", intf, "root", "netem", "delay", f"{fault['delay_ms']}ms"))],
                [Command(("tc", "qdisc", "del", "dev", intf, "root"))])
    if fault["type"] == REMOVE_IP:
        # repair adds the right address before deleting the wrong one, so no step loses a pair
        flush = Command(("ip", "addr", "flush", "dev", intf))
        add = Command(("ip", "addr", "add", f"{topo.gateway(k)}/24", "dev", intf))
        if method == "flush":
            return [flush], [add]
        wrong = _wrong_address(fault, topo)
        return ([flush, Command(("ip", "addr", "add", wrong, "dev", intf))],
                [add, Command(("ip", "addr", "del", wrong, "dev", intf))])
    if fault["type"] == DROP_TRAFFIC:
        rules = _ipt_rules(fault, topo)
        return ([Command(("iptables", "-A", *rule)) for rule in rules],
                [Command(("iptables", "-D", *rule)) for rule in rules])
    if fault["type"] == WRONG_ROUTING:
        network, wrong_route = topo.network(k), _wrong_route(fault, topo)
        # injection: the connected route may already be gone (e.g. remove_ip on the same subnet); the kernel
        # refuses a router-local gateway, so that fault is the deleted route plus a failed add
        inject = [
            Command(("ip", "route", "del", network, "dev", intf), may_fail=True),
            Command(("ip", "route", "add", network, *wrong_route),
                    may_fail=method in ("nonexistent_gateway", "via_local_address")),
        ]
        # repair: the wrong route carries no working pair, so it goes first; then the connected route comes
        # back (it may be gone already, e.g. with its link down, hence may_fail)
        repair = [
            Command(("ip", "route", "del", network, *wrong_route), may_fail=True),
            Command(("ip", "route", "replace", network, "dev", intf, "proto", "kernel", "scope", "link",
                     "src", topo.gateway(k))),
        ]
        return inject, repair
    raise ValueError(f"unknown fault {fault!r}")


def inject_commands(fault: dict[str, Any], topo: Topology) -> list[Command]:
    """The router commands that inject fault."""
    return _inject_and_repair(fault, topo)[0]


#: order in which faults are injected: routes before links go down (the kernel refuses routes on a down link)
INJECT_ORDER = (WRONG_ROUTING, REMOVE_IP, DISABLE_ROUTING, DROP_TRAFFIC, DISABLE_INTERFACE)


def injection_plan(faults: Sequence[dict[str, Any]], topo: Topology) -> list[Command]:
    """The commands that inject a whole query's faults, in INJECT_ORDER."""
    ordered = sorted(faults, key=lambda fault: INJECT_ORDER.index(fault["type"]))
    return [command for fault in ordered for command in inject_commands(fault, topo)]


#: order in which the oracle repairs fault types (links before addresses before routes ...)
REPAIR_ORDER = (DISABLE_INTERFACE, REMOVE_IP, WRONG_ROUTING, DISABLE_ROUTING, DROP_TRAFFIC)


def repair_commands(fault: dict[str, Any], topo: Topology) -> list[Command]:
    """Router commands that undo fault; additions come before removals so no step loses a pair."""
    return _inject_and_repair(fault, topo)[1]


def repair_plan(faults: Sequence[dict[str, Any]], topo: Topology) -> list[Command]:
    """The oracle's commands for a whole query, in REPAIR_ORDER."""
    ordered = sorted(faults, key=lambda fault: REPAIR_ORDER.index(fault["type"]))
    return [command for fault in ordered for command in repair_commands(fault, topo)]
