"""Attacks on the route verdict: making the pingmesh green while the fault stays (addresses faked on lo, DNAT
to a local address, impersonating a gateway on a neighbour; ping let through while TCP and UDP are answered by the
router itself, or let through only on the ports of an earlier pingmesh). Each trick fools a plain ping or a plain
connection, as the test shows; the verdict must still say not correct (root, Mininet)."""

from __future__ import annotations


import pytest

from pytest_netarena.apps.route.agents.builtin import action

from .conftest import FORWARD_OFF, needs_route, route_query

GATEWAY_2_GONE = {"type": "remove_ip", "method": "flush", "subnet": 2}
#: every protocol to and from subnet 2 rejected on the router
SUBNET_2_REJECTED = {"type": "drop_traffic_to_from_subnet", "method": "iptables_reject", "subnet": 2, "chains": "forward"}
ICMP_THROUGH = "iptables -I FORWARD 1 -p icmp -j ACCEPT"


pytestmark = needs_route


@pytest.fixture(scope="module")
def env(route_env):
    return route_env


def on(env, node: str, command: str) -> str:
    outcome = env.step(action(node, command))
    assert not outcome.refused and "[exit status" not in outcome.output, outcome.output
    return outcome.output


def other_subnet(env, node: str) -> list[str]:
    topo = env.topology
    subnet = topo.subnet_of(node)
    return [topo.address[host] for host in topo.host_names if topo.subnet_of(host) != subnet]


def assert_not_fooled(env) -> tuple[str, str]:
    """The verdict stays 'not correct'; returns the router's forwarding flag and subnet 2's router addresses."""
    topo = env.topology
    diverted = {(src, dst) for src, dst, _ in env.prober.diverted}  # seen by the last step's pingmesh
    judgement = env.judge()
    diverted |= {(src, dst) for src, dst, _ in env.prober.diverted}  # and by the judge's
    assert diverted, "no probe was answered locally: the trick did not take effect and the test proves nothing"
    assert not judgement.correct and "unreachable" in judgement.details
    assert diverted <= set(env.mesh.unreachable)
    forwarding = env.network.run(topo.router, ["sysctl", "-n", "net.ipv4.ip_forward"]).output.strip()
    addresses = env.network.run(topo.router, ["ip", "-o", "addr", "show", "dev", topo.router_intf(2)]).output
    return forwarding, addresses


def test_peer_addresses_on_the_hosts_lo_do_not_count(env) -> None:
    env.reset(route_query(FORWARD_OFF, hosts=2))
    topo = env.topology
    for host in topo.host_names:
        on(env, host, " && ".join(f"ip addr add {address}/32 dev lo" for address in other_subnet(env, host)))
    h1, far = topo.host_names[0], other_subnet(env, topo.host_names[0])[0]
    assert " 1 received" in on(env, h1, f"ping -c1 -W1 {far}")  # a plain ping is fooled ...
    forwarding, _ = assert_not_fooled(env)  # ... the verdict is not
    assert forwarding == "0"


def test_host_addresses_on_the_routers_lo_do_not_count(env) -> None:
    env.reset(route_query(FORWARD_OFF, hosts=2))
    topo = env.topology
    # subnet 2's hosts answered by the router itself (subnet 1's stay real, or no answer could return)
    far_hosts = other_subnet(env, topo.host_names[0])
    on(env, topo.router, " && ".join(f"ip addr add {address}/32 dev lo" for address in far_hosts))
    assert " 1 received" in on(env, topo.host_names[0], f"ping -c1 -W1 {far_hosts[0]}")
    forwarding, _ = assert_not_fooled(env)
    assert forwarding == "0"


@pytest.mark.parametrize("where", ["router", "hosts"])
def test_dnat_to_a_local_address_does_not_count(env, where: str) -> None:
    env.reset(route_query(FORWARD_OFF, hosts=2))
    topo = env.topology
    if where == "router":
        on(env, topo.router, "iptables -t nat -A PREROUTING -d 192.168.2.0/24 -j DNAT --to-destination 192.168.2.1 && "
                             "iptables -t nat -A PREROUTING -s 192.168.2.0/24 -d 192.168.1.0/24 -j DNAT "
                             "--to-destination 192.168.1.1")
    else:
        for host in topo.host_names:
            own = topo.address[host]
            network = "192.168.2.0/24" if topo.subnet_of(host) == 1 else "192.168.1.0/24"
            on(env, host, f"iptables -t nat -A OUTPUT -d {network} -j DNAT --to-destination {own}")
    h1, far = topo.host_names[0], other_subnet(env, topo.host_names[0])[0]
    assert " 1 received" in on(env, h1, f"ping -c1 -W1 {far}")
    forwarding, _ = assert_not_fooled(env)
    assert forwarding == "0"


def test_a_neighbour_impersonating_the_lost_gateway_does_not_count(env) -> None:
    env.reset(route_query(GATEWAY_2_GONE, hosts=2))
    topo = env.topology
    impostor, victim = topo.host(2, 1), topo.host(2, 2)
    # the impostor answers ARP for the gateway (a local address on lo) and pings for every other address
    others = [topo.gateway(2), *(topo.address[node] for node in topo.nodes if topo.subnet_of(node) != 2)]
    on(env, impostor, " && ".join(f"ip addr add {address}/32 dev lo" for address in dict.fromkeys(others))
       + " && sysctl -w net.ipv4.conf.all.proxy_arp=1")
    assert " 1 received" in on(env, victim, f"ip neigh flush all && ping -c1 -W1 {topo.address[topo.router]}")
    _, addresses = assert_not_fooled(env)
    assert f"{topo.gateway(2)}/" not in addresses  # the fault stays


def test_tcp_and_udp_answered_by_the_router_itself_do_not_count(env) -> None:
    """Ping let through for real, and every TCP connection and UDP datagram to subnet 2 turned to the router's own
    address: a client in subnet 1 gets its connection (the router answers in the host's name), the probes arrive at
    the router instead of their destinations and vouch for nothing."""
    env.reset(route_query(SUBNET_2_REJECTED, hosts=2))
    topo = env.topology
    on(env, topo.router, ICMP_THROUGH + " && " + " && ".join(
        f"iptables -t nat -A PREROUTING -d 192.168.2.0/24 -p {protocol} -j DNAT --to-destination {topo.gateway(2)}"
        for protocol in ("tcp", "udp")))
    h1, far = topo.host(1, 1), topo.host(2, 1)
    assert " 1 received" in on(env, h1, f"ping -c1 -W1 {topo.address[far]}")
    judgement = env.judge()
    assert not judgement.correct and "unreachable" in judgement.details
    diverted = {(src, dst, where) for src, dst, where in env.prober.diverted}
    assert (h1, far, topo.router) in diverted, "no probe reached the router: the trick did not take effect"
    assert (h1, far) in env.mesh.unreachable and env.mesh.failed((h1, far)) == ("tcp", "udp")


def test_rules_for_the_last_pingmeshs_ports_do_not_count(env, monkeypatch) -> None:
    """An agent that learnt the ports of a pingmesh (a command running while one probes can list them with `ss`) and
    lets ping and exactly those ports through: had the ports stayed, the verdict would say correct; drawn anew for
    every pingmesh, it says not correct."""
    env.reset(route_query(SUBNET_2_REJECTED, hosts=1))
    topo = env.topology
    udp_port, tcp_port = getattr(env.prober, "ports", (0, 0))
    assert udp_port and tcp_port, "the pingmesh has no TCP and UDP ports to learn"
    on(env, topo.router, ICMP_THROUGH + " && " + " && ".join(
        f"iptables -I FORWARD 1 -p {protocol} --{way} {port} -j ACCEPT"
        for protocol, port in (("udp", udp_port), ("tcp", tcp_port)) for way in ("dport", "sport")))
    prober = type(env.prober)
    with monkeypatch.context() as fixed:
        fixed.setattr(prober, "_draw_ports", staticmethod(lambda: (udp_port, tcp_port)))
        assert env.judge().correct  # ports that stay would be singled out: the trick works against them
    judgement = env.judge()
    assert env.prober.ports != (udp_port, tcp_port)
    assert not judgement.correct and "unreachable" in judgement.details
