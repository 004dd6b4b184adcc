"""No box an agent acts in has a way out of its episode: a listener the test opens on every address of the host
(127.0.0.1 and the host's own non-loopback address) is unreachable from inside, and no box's routing table has a
default route to the outside (a route host's default route points at the episode's own router).

Each box is attacked with what an agent has there: bash's /dev/tcp and the kernel's routing table read from
/proc (the same table `ip route` prints; `ip route` itself where the box offers it).
"""

from __future__ import annotations

import ipaddress
import socket
import subprocess
from collections.abc import Iterator

import pytest

from .conftest import accepted, act, malt_box, needs_boxes, needs_root_boxes, needs_route

#: bash that tries each address, then prints the IPv4 and IPv6 routing tables (a default route is destination 0)
PROBE = ("for a in {addresses}; do (exec 3<>/dev/tcp/$a/{port}) 2>/dev/null && echo REACHED $a || echo UNREACHABLE $a; "
         "done; echo ROUTES; while read -r line; do echo \"$line\"; done < /proc/net/route; echo ROUTES6; "
         "while read -r line; do echo \"$line\"; done < /proc/net/ipv6_route; echo END")


def host_addresses() -> list[str]:
    """127.0.0.1 and the host's global IPv4 addresses (the ones a packet leaving a box would be sent to)."""
    shown = subprocess.run(["ip", "-4", "-o", "addr", "show", "scope", "global"], capture_output=True, text=True,
                           check=False).stdout
    found = [line.split()[3].split("/")[0] for line in shown.splitlines() if len(line.split()) > 3]
    return ["127.0.0.1", *[a for a in found if not ipaddress.ip_address(a).is_loopback]]


@pytest.fixture
def everywhere() -> Iterator[tuple[socket.socket, int, list[str]]]:
    """A TCP listener on every IPv4 address of the host's own network namespace, and those addresses."""
    addresses = host_addresses()
    if len(addresses) < 2:
        pytest.skip("this host has no non-loopback IPv4 address to listen on")
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("0.0.0.0", 0))
    server.listen(8)
    server.settimeout(0.5)
    port = server.getsockname()[1]
    for address in addresses:  # the listener answers on each address from the host itself: the test can fail
        with socket.create_connection((address, port), timeout=2):
            pass
        assert accepted(server)
    try:
        yield server, port, addresses
    finally:
        server.close()


def default_routes(output: str) -> list[str]:
    """The default-route lines of /proc/net/route (destination 00000000) and /proc/net/ipv6_route (::/0)."""
    lines = output.split("ROUTES", 1)[1].split("END", 1)[0].splitlines()
    four = [line for line in lines if line.split()[1:2] == ["00000000"]]
    six = [line for line in lines if line.split()[:2] == ["0" * 32, "00"] and not line.split()[-1] == "lo"]
    return four + six


def gateway(line: str) -> str:
    """The IPv4 gateway of a /proc/net/route line (little-endian hex)."""
    return str(ipaddress.ip_address(bytes.fromhex(line.split()[2])[::-1]))


def check_unreachable(output: str, server: socket.socket, addresses: list[str]) -> None:
    for address in addresses:
        assert f"UNREACHABLE {address}" in output and f"REACHED {address}" not in output, output[:2000]
    assert not accepted(server)


@needs_root_boxes
def test_the_k8s_box_reaches_no_host_address_and_has_no_default_route(k8s, everywhere) -> None:
    server, port, addresses = everywhere
    # the reading of a reply wants a kubectl command in it; the box runs the whole script
    output = act(k8s, "kubectl get pods >/dev/null 2>&1; " + PROBE.format(addresses=" ".join(addresses), port=port)).output
    check_unreachable(output, server, addresses)
    assert "ROUTES" in output and "END" in output and default_routes(output) == []


@needs_route
def test_route_node_boxes_reach_no_host_address_and_route_only_inside_the_episode(route_env, forward_off,
                                                                                  everywhere) -> None:
    from pytest_netarena.apps.route.agents.builtin import action

    server, port, addresses = everywhere
    for node in (forward_off.router, *forward_off.host_names):
        outcome = route_env.step(action(node, PROBE.format(addresses=" ".join(addresses), port=port)
                                        + "; ip route show default"))
        assert not outcome.refused, outcome.output
        check_unreachable(outcome.output, server, addresses)
        defaults = default_routes(outcome.output)
        if node == forward_off.router:
            assert defaults == [], outcome.output
        else:  # a host's default route leads to the episode's router, whose own table has none
            gateways = {gateway(line) for line in defaults}
            assert gateways and gateways <= {forward_off.gateway(k) for k in range(1, forward_off.subnets + 1)}, outcome.output


@needs_boxes
def test_the_malt_answer_box_reaches_no_host_address_and_has_no_route(everywhere) -> None:
    server, port, addresses = everywhere
    code = ("import socket\n"
            f"ADDRESSES = {addresses!r}\n"
            "def process_graph(graph_data):\n"
            "    reached = []\n"
            "    for address in ADDRESSES:\n"
            "        try:\n"
            f"            socket.create_connection((address, {port}), 2).close()\n"
            "            reached.append(address)\n"
            "        except OSError:\n"
            "            pass\n"
            "    routes = open('/proc/net/route').read().splitlines()[1:]\n"
            "    return {'type': 'list', 'data': [reached, routes]}")
    box = malt_box()
    try:
        result = box.run(code)
    finally:
        box.close()
    assert result.ok, result.error
    reached, routes = result.value["data"]
    assert reached == [] and not accepted(server)
    assert routes == [], routes  # not even a route to the loopback's neighbours: no interface but lo


@needs_root_boxes
def test_a_cli_agents_box_reaches_no_host_address_and_has_no_default_route(everywhere, tmp_path) -> None:
    from .test_cli_box import bash_box, run_bash
    from pytest_netarena.sandbox import NetNamespace

    server, port, addresses = everywhere
    namespace = NetNamespace.create()
    try:
        ended = run_bash(bash_box(namespace, tmp_path), PROBE.format(addresses=" ".join(addresses), port=port))
    finally:
        namespace.close()
    check_unreachable(ended.output, server, addresses)
    assert "END" in ended.output and default_routes(ended.output) == []
