"""The network a reset builds is the one Mininet's own configuration made: addresses, routes, bridges and ports, IPv6
off in the fabric, nothing in the host's namespace (root only)."""

from __future__ import annotations

import json
import subprocess

from pytest_netarena.apps.route.network.leases import leftover_links

from .conftest import needs_mininet, started_network

pytestmark = needs_mininet


def ip_json(pid: int, *argv: str) -> list[dict]:
    output = subprocess.run(["mnexec", "-a", str(pid), "ip", "-j", *argv], capture_output=True, text=True, check=True)
    return json.loads(output.stdout)


def test_every_node_bridge_and_port_is_configured_as_mininet_would():
    with started_network(900) as (lease, topo, network):
        assert list(network.pids) == [topo.router, *topo.host_names]
        for node in topo.nodes:
            links = {link["ifname"]: link for link in ip_json(network.pids[node], "addr", "show")}
            assert "UP" in links["lo"]["flags"] and links["lo"]["addr_info"][0]["local"] == "127.0.0.1", node
            if node == topo.router:
                expected = {topo.router_intf(k): topo.gateway(k) for k in range(1, topo.subnets + 1)}
            else:
                expected = {topo.intf(node): topo.address[node]}
            assert set(links) == {"lo", *expected}, node
            for intf, address in expected.items():
                ipv4 = [a for a in links[intf]["addr_info"] if a["family"] == "inet"]
                assert "UP" in links[intf]["flags"] and links[intf]["operstate"] == "UP", (node, intf)
                assert [(a["local"], a["prefixlen"], a["broadcast"]) for a in ipv4] == [
                    (address, 24, address.rsplit(".", 1)[0] + ".255")], (node, ipv4)
            routes = ip_json(network.pids[node], "route", "show")
            defaults = [route for route in routes if route["dst"] == "default"]
            if node == topo.router:
                assert defaults == [] and len(routes) == topo.subnets
                forward = subprocess.run(["mnexec", "-a", str(network.pids[node]), "cat", "/proc/sys/net/ipv4/ip_forward"],
                                         capture_output=True, text=True, check=True).stdout.strip()
                assert forward == "1"
            else:
                assert [(d["gateway"], d["dev"]) for d in defaults] == [
                    (topo.gateway(topo.subnet_of(node)), topo.intf(node))], (node, routes)
        fabric = network.fabric.pid
        links = {link["ifname"]: link for link in ip_json(fabric, "addr", "show")}
        for k in range(1, topo.subnets + 1):
            ports = {name for name, link in links.items() if link.get("master") == topo.switch(k)}
            assert ports == {f"{topo.switch(k)}-eth{port}" for port in range(1, topo.hosts + 2)}
        assert all(link["addr_info"] == [] for link in links.values()), "an address in the fabric"
        disabled = subprocess.run(["mnexec", "-a", str(fabric), "cat", "/proc/sys/net/ipv6/conf/default/disable_ipv6",
                                   f"/proc/sys/net/ipv6/conf/{topo.switch(1)}-eth1/disable_ipv6"],
                                  capture_output=True, text=True, check=True).stdout.split()
        assert disabled == ["1", "1"]
        assert leftover_links(lease.prefix) == []  # nothing of the running network in the host's namespace
    assert leftover_links(lease.prefix) == [] and not lease.path.exists()
