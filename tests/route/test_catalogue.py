"""The route query catalogue: categories, sizes, fault parameters chosen so that they break (no root needed)."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netarena.apps.route import APP
from pytest_netarena.apps.route import faults as fault_catalogue
from pytest_netarena.apps.route.app import parse_size
from pytest_netarena.apps.route.network.mesh import PROTOCOLS, Mesh
from pytest_netarena.apps.route.network.prober import PROBE_BYTES
from pytest_netarena.apps.route.topology import Topology
from pytest_netarena.core.app import RunOptions
from pytest_netarena.core.catalogue import Category, HypothesisChooser
from pytest_netarena.core.errors import UsageError

from .conftest import NO_NETEM, fault


def test_categories_follow_netarena_levels():
    categories = APP.categories(RunOptions())
    by_level = {level: [c.name for c in categories if c.level == level] for level in (1, 2, 3)}
    assert len(by_level[1]) == 5 and len(by_level[2]) == 6 and len(by_level[3]) == 4
    assert "disable_routing+disable_interface" in by_level[2]
    assert "disable_interface+remove_ip" in by_level[3]


def test_generation_is_a_pure_function_of_the_seed():
    first = APP.generate(RunOptions(seed=7, queries=2))
    second = APP.generate(RunOptions(seed=7, queries=2))
    other = APP.generate(RunOptions(seed=8, queries=2))
    assert [q.to_dict() for q in first] == [q.to_dict() for q in second]
    assert [q.params for q in first] != [q.params for q in other]
    assert len(first) == 15 * 2
    for query in first:
        assert 2 <= query.params["subnets"] <= 8 and 1 <= query.params["hosts"] <= 4


def test_route_size_option_fixes_the_size_and_is_validated():
    queries = APP.generate(RunOptions(seed=1, queries=1, extra={"route_size": "32x8"}))
    assert {(q.params["subnets"], q.params["hosts"]) for q in queries} == {(32, 8)}
    assert parse_size("4X4") == (4, 4)
    for bad in ("4", "1x4", "4x0", "axb", "64x16", "40x1", "33x8", "32x9"):  # 32x8 is the documented bound
        with pytest.raises(UsageError):
            parse_size(bad)


def test_excluded_methods_are_never_drawn_and_are_reported():
    for seed in range(300):
        drawn = fault_catalogue.draw_fault(fault_catalogue.DROP_TRAFFIC, _chooser(seed), 4, NO_NETEM)
        assert drawn["method"] != "netem_delay"
    if APP.missing_features():
        assert "drop_traffic_to_from_subnet/netem_delay" in APP.excluded_methods()
        assert "netem_delay excluded" in APP.header(RunOptions())
        assert any(note.startswith("drop_traffic_to_from_subnet/netem_delay excluded: ") for note in APP.header_notes())


def _chooser(seed):
    from pytest_netarena.core.catalogue import RandomChooser

    return RandomChooser(seed)


def test_every_method_is_reachable_by_the_sampler():
    for kind, methods in fault_catalogue.METHODS.items():
        for method in methods:
            if method == "netem_delay":
                continue
            assert fault(kind, method, 4)["method"] == method


def test_wrong_masks_exclude_every_host_and_small_mtus_cannot_carry_a_probe():
    topo = Topology("na0000", 8, 8)
    for mask in fault_catalogue.BREAKING_MASKS:
        network = ipaddress.ip_network(f"{topo.gateway(3)}/{mask}", strict=False)
        assert not any(ipaddress.ip_address(topo.host_ip(3, j)) in network for j in range(1, 9))
    assert fault_catalogue.SMALL_MTUS and all(mtu < PROBE_BYTES for mtu in fault_catalogue.SMALL_MTUS)


@settings(max_examples=200, deadline=None)
@given(st.data(), st.sampled_from(fault_catalogue.TYPES), st.integers(2, 32))
def test_drawn_faults_are_well_formed_under_hypothesis(data, kind, subnets):
    drawn = fault_catalogue.draw_fault(kind, HypothesisChooser(data.draw), subnets, NO_NETEM)
    topo = Topology("na0000", subnets, 1)
    commands = fault_catalogue.inject_commands(drawn, topo) + fault_catalogue.repair_commands(drawn, topo)
    assert commands and all(command.argv for command in commands)
    for key in ("subnet", "to", "other"):
        if key in drawn:
            assert 1 <= drawn[key] <= subnets
    if "to" in drawn:
        assert drawn["to"] != drawn["subnet"]
    if "other" in drawn:
        assert drawn["other"] != drawn["subnet"]


def test_draw_params_goes_through_the_chooser_only():
    category = Category(2, "remove_ip+wrong_routing_table")
    params = APP.draw_params(category, _chooser(3), RunOptions())
    assert params == APP.draw_params(category, _chooser(3), RunOptions())
    assert [f["type"] for f in params["faults"]] == ["remove_ip", "wrong_routing_table"]


def test_names_fit_linux_limits_at_the_largest_size():
    topo = Topology("na0zzz", 32, 8)
    names = [topo.intf(host) for host in topo.host_names] + [topo.router_intf(k) for k in range(1, 33)]
    names += [f"{topo.switch(k)}-eth9" for k in range(1, 33)]
    assert max(map(len, names)) <= 15
    with pytest.raises(ValueError):
        Topology("na0zzz", 64, 16)


def test_the_pingmesh_names_what_failed_per_row_as_the_prompt_shows():
    from pytest_netarena.apps.route.prompt import EXAMPLES

    nodes = ("na0a01h1", "na0a01h2", "na0a01r0")
    reachable = frozenset({("na0a01h1", "na0a01r0"), ("na0a01r0", "na0a01h1"), ("na0a01r0", "na0a01h2"),
                           ("na0a01h2", "na0a01r0")})
    mesh = Mesh(nodes, reachable, protocols=PROTOCOLS)
    assert mesh.render() == EXAMPLES[0][0].split("Pingall result:\n")[1]
    # ping answers where TCP and UDP do not: the destination is named with the protocols that failed
    partial = {("na0a01h1", "na0a01h2"): frozenset({"icmp"}), ("na0a01h2", "na0a01h1"): frozenset({"icmp"})}
    rows = Mesh(nodes, reachable, protocols=PROTOCOLS, partial=partial).render().splitlines()
    assert rows[1:] == ["na0a01h1 -> all except na0a01h2(tcp,udp)", "na0a01h2 -> all except na0a01h1(tcp,udp)",
                        "na0a01r0 -> all", "*** Results: 33% dropped (4/6 received)"]
    assert "\n".join(rows) in EXAMPLES[4][0]  # the prompt's example of a firewall that lets only ping through


def test_without_root_make_environment_says_why(monkeypatch):
    from pytest_netarena.core.errors import BackendUnavailable

    monkeypatch.setattr("os.geteuid", lambda: 1000)
    with pytest.raises(BackendUnavailable, match="needs root"):
        APP.make_environment(RunOptions())


def test_importing_the_app_does_not_import_mininet():
    import subprocess
    import sys

    code = "import sys, pytest_netarena.apps.route as r; r.APP; print('mininet' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_wide_meshes_stay_readable():
    """An 8x4 row names the few destinations that failed, never a position in a 32-wide row of X's."""
    nodes = tuple(f"h{i}" for i in range(1, 33)) + ("r0",)
    reachable = frozenset((a, b) for a in nodes for b in nodes if a != b and b != "h3" and a != "h9")
    lines = Mesh(nodes, reachable, protocols=PROTOCOLS).render().splitlines()
    assert "h1 -> all except h3" in lines and "h3 -> all" in lines and "h9 -> none" in lines
    assert "r0 -> all except h3" in lines and "X" not in "".join(lines[1:])
    assert lines[-1] == "*** Results: 5% dropped (993/1056 received)"
