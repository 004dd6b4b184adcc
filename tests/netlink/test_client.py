"""The one netlink client against the real kernel: every reading and change it makes in namespaces made here, each
checked with iproute2's own view of the namespace (`ip`, `tc`, run inside it)."""

from __future__ import annotations

import errno
import json
import subprocess
import time
from collections.abc import Iterator

import pytest

from pytest_netarena.netlink import Netlink
from pytest_netarena.sandbox import NetNamespace


def _can_make_namespaces() -> str | None:
    try:
        NetNamespace.create().close()
    except OSError as error:
        return f"cannot make a network namespace here: {error}"
    return None


pytestmark = pytest.mark.skipif(_can_make_namespaces() is not None, reason=str(_can_make_namespaces()))


def run(namespace: NetNamespace, *argv: str) -> str:
    """A command's output, run inside the namespace; AssertionError when it fails."""
    result = namespace.run_in(lambda args, fds: subprocess.run(args, capture_output=True, text=True, timeout=30),
                              argv)
    assert result.returncode == 0, f"{' '.join(argv)}: {result.stderr}"
    return result.stdout


def ip_json(namespace: NetNamespace, *argv: str) -> list[dict]:
    return json.loads(run(namespace, "ip", "-json", *argv) or "[]")


@pytest.fixture
def pair() -> Iterator[tuple[NetNamespace, NetNamespace, Netlink]]:
    """Two fresh namespaces and a client in the first."""
    here, there = NetNamespace.create(), NetNamespace.create()
    link = Netlink.inside(here)
    yield here, there, link
    link.close()
    here.close()
    there.close()


def wired(here: NetNamespace, there: NetNamespace, link: Netlink) -> int:
    """A veth pair between the two, both ends up with an address of 10.9.0.0/24; the index of the near end."""
    link.add_veth("near", "far", there)
    near = link.index("near")
    link.add_address(near, "10.9.0.1", 24)
    link.set_up(near)
    with Netlink.inside(there) as far_link:
        far = far_link.index("far")
        far_link.add_address(far, "10.9.0.2", 24)
        far_link.set_up(far)
    return near


def test_a_client_made_inside_a_namespace_reads_that_namespace_from_any_thread(pair) -> None:
    here, _, link = pair
    assert [found.name for found in link.links()] == ["lo"]
    assert link.index("lo") == 1
    with pytest.raises(OSError):
        link.index("eth0")  # the host's interfaces are not there


def test_a_veth_pair_is_made_across_namespaces_and_listed_with_its_kind(pair) -> None:
    here, there, link = pair
    near = wired(here, there, link)
    links = {found.name: found for found in link.links()}
    assert set(links) == {"lo", "near"}
    assert links["near"].kind == "veth" and links["near"].index == near
    assert [entry["ifname"] for entry in ip_json(there, "link", "show")] == ["lo", "far"]


def test_addresses_carry_the_broadcast_address_ip_would_set_only_where_the_prefix_leaves_one(pair) -> None:
    here, there, link = pair
    near = wired(here, there, link)
    link.add_address(near, "10.8.0.7", 32)
    shown = {entry["local"]: entry for entry in ip_json(here, "-4", "addr", "show", "dev", "near")[0]["addr_info"]}
    assert shown["10.9.0.1"]["prefixlen"] == 24 and shown["10.9.0.1"]["broadcast"] == "10.9.0.255"
    assert shown["10.8.0.7"]["prefixlen"] == 32 and "broadcast" not in shown["10.8.0.7"]
    with pytest.raises(OSError) as refused:
        link.add_address(near, "10.9.0.1", 24)
    assert refused.value.errno == errno.EEXIST


def test_routes_through_a_link_via_a_gateway_and_local_ones_land_where_ip_route_puts_them(pair) -> None:
    here, there, link = pair
    near = wired(here, there, link)
    link.add_route("10.7.0.5", 32, near)
    link.add_route("0.0.0.0", 0, gateway="10.9.0.2")
    link.add_route("10.96.0.0", 12, link.index("lo"), local=True)
    main = {entry["dst"]: entry for entry in ip_json(here, "route", "show")}
    assert main["10.7.0.5"]["dev"] == "near" and main["10.7.0.5"]["scope"] == "link"
    assert main["default"]["gateway"] == "10.9.0.2" and main["default"].get("protocol", "boot") == "boot"  # ip leaves out its default
    local = {entry["dst"]: entry for entry in ip_json(here, "route", "show", "table", "local")}
    assert local["10.96.0.0/12"]["type"] == "local" and local["10.96.0.0/12"]["dev"] == "lo"
    with pytest.raises(OSError) as refused:
        link.add_route("10.7.0.5", 32, near)
    assert refused.value.errno == errno.EEXIST
    link.add_route("10.7.0.5", 32, near, gateway="10.9.0.2", replace=True)
    assert {entry["dst"]: entry for entry in ip_json(here, "route", "show")}["10.7.0.5"].get("gateway") == "10.9.0.2"


def test_packets_sent_are_counted_by_both_readings(pair) -> None:
    here, there, link = pair
    near = wired(here, there, link)
    before = link.sent().get(near, 0)
    deadline = time.monotonic() + 10
    while True:  # the veth becomes operational through the kernel's link-watch queue, within about a second
        result = here.run_in(lambda args, fds: subprocess.run(args, capture_output=True, timeout=10),
                             ["ping", "-c", "3", "-i", "0.2", "-W", "1", "10.9.0.2"])
        if result.returncode == 0 or time.monotonic() > deadline:
            break
    assert result.returncode == 0, result.stdout
    assert link.sent()[near] >= before + 3
    listed = {found.index: found for found in link.links()}[near]
    assert listed.packets >= before + 3 and listed.up and not listed.settling


def test_qdiscs_and_filters_are_listed_and_deleted(pair) -> None:
    here, there, link = pair
    wired(here, there, link)
    run(here, "tc", "qdisc", "add", "dev", "near", "root", "handle", "1:", "htb")
    run(here, "tc", "qdisc", "add", "dev", "near", "ingress")
    run(here, "tc", "filter", "add", "dev", "near", "parent", "1:", "protocol", "ip", "prio", "5", "u32", "match",
        "ip", "dst", "10.9.0.2/32", "flowid", "1:1")
    run(here, "tc", "filter", "add", "dev", "near", "parent", "ffff:", "protocol", "ip", "prio", "7", "u32",
        "match", "ip", "src", "10.9.0.2/32")
    qdiscs = link.qdiscs()
    assert sorted(qdisc.kind for qdisc in qdiscs) == ["htb", "ingress"]
    filters = link.filters(qdiscs)
    assert sorted((found.kind, found.info >> 16) for found in filters) == [("u32", 5), ("u32", 7)]
    for found in filters:
        link.delete_filter(found)
    assert link.filters(qdiscs) == []
    assert run(here, "tc", "filter", "show", "dev", "near").strip() == ""
    for qdisc in qdiscs:
        link.delete_qdisc(qdisc)
    assert link.qdiscs() == []


def test_many_links_go_in_one_batch_and_a_veth_takes_its_peer(pair) -> None:
    here, there, link = pair
    for number in range(4):
        link.add_veth(f"v{number}", f"p{number}", there)
    indexes = [link.index(f"v{number}") for number in range(4)]
    link.delete_links(indexes + [9999])  # one gone already is passed over
    assert [found.name for found in link.links()] == ["lo"]
    assert [entry["ifname"] for entry in ip_json(there, "link", "show")] == ["lo"]
    link.delete_links([])


def test_a_client_of_a_process_reads_the_namespace_that_process_is_in(pair) -> None:
    here, there, link = pair
    wired(here, there, link)
    sleeper = there.call(lambda: subprocess.Popen(["sleep", "30"]))
    try:
        with Netlink.of_process(sleeper.pid) as theirs:
            assert [found.name for found in theirs.links()] == ["lo", "far"]
    finally:
        sleeper.kill()
        sleeper.wait()
