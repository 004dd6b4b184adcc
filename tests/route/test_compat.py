"""NetArena's route rules (apps/route/netarena/rules.py and grade.py): fault parameters, levels, commands, pingmesh text and verdicts."""

from __future__ import annotations

import pytest

from pytest_netarena.apps.route.netarena import grade, rules as compat
from pytest_netarena.apps.route import faults as ours
from pytest_netarena.apps.route.topology import Topology
from pytest_netarena.core.catalogue import RandomChooser

TOPO = Topology("p37_", 2, 1)
NO_NETEM = {"netem": "absent here"}


def _draws(kind, seeds=400, missing=None):
    return [compat.draw_fault(kind, RandomChooser(seed), 2, missing) for seed in range(seeds)]


def test_fault_parameters_are_netarenas():
    routing = _draws(ours.DISABLE_ROUTING)
    assert {f["pref"] for f in routing if f["method"] == "rule_prohibit"} == {0}
    interface = _draws(ours.DISABLE_INTERFACE)
    assert {f["mtu"] for f in interface if f["method"] == "mtu_small"} == {68}
    assert {f["method"] for f in interface} == {"ifconfig_down", "link_down", "mtu_small"}
    remove = _draws(ours.REMOVE_IP)
    assert {f["mask"] for f in remove if f["method"] == "wrong_mask"} == {8, 16, 30, 31, 32}
    for fault in remove:
        if fault["method"] == "other_network":
            a, b = fault["address"].split(".")[1:3]
            assert 1 <= int(a) <= 254 and 1 <= int(b) <= 254
        if fault["method"] == "duplicate":
            assert fault["other"] != fault["subnet"]
    drop = _draws(ours.DROP_TRAFFIC)
    assert {f["chains"] for f in drop if "chains" in f} == {"input_output"}
    assert all(1000 <= f["delay_ms"] <= 5000 for f in drop if f["method"] == "netem_delay")
    wrong = _draws(ours.WRONG_ROUTING)
    assert {f["gateway"] for f in wrong if f["method"] == "nonexistent_gateway"} == {"10.255.255.254"}
    assert {f["metric"] for f in wrong if f["method"] == "wrong_interface_metric"} == {10000}
    assert all(f["to"] != f["subnet"] and {f["to"], f["subnet"]} <= {1, 2} for f in wrong)


def test_missing_kernel_features_are_left_out():
    assert all(f["method"] != "netem_delay" for f in _draws(ours.DROP_TRAFFIC, 100, NO_NETEM))


def test_levels_swap_two_pairs_against_ours():
    def level_of(levels):
        return {"+".join(kinds): level for level, groups in levels.items() for kinds in groups}

    theirs, mine = level_of(compat.LEVELS), level_of(ours.LEVELS)
    assert set(theirs) == set(mine) and len(theirs) == 15
    differ = {name for name in theirs if theirs[name] != mine[name]}
    assert differ == {"disable_routing+drop_traffic_to_from_subnet", "disable_interface+drop_traffic_to_from_subnet"}
    assert theirs["disable_routing+drop_traffic_to_from_subnet"] == 3
    assert theirs["disable_interface+drop_traffic_to_from_subnet"] == 2
    assert [len(compat.LEVELS[level]) for level in (1, 2, 3)] == [5, 6, 4]
    assert len(compat.categories()) == 15


def _texts(fault):
    return [c.text for c in compat.inject_commands(fault, TOPO)]


def test_injected_commands_are_netarenas():
    assert _texts({"type": ours.DISABLE_ROUTING, "method": "rule_prohibit", "pref": 0}) == [
        "ip rule add prohibit pref 0"]
    assert _texts({"type": ours.DISABLE_INTERFACE, "method": "mtu_small", "subnet": 1, "mtu": 68}) == [
        "ip link set dev p37_r0-eth1 mtu 68"]
    assert _texts({"type": ours.DROP_TRAFFIC, "method": "iptables_reject", "subnet": 2, "chains": "input_output"}) == [
        "iptables -A INPUT -s 192.168.2.0/24 -j REJECT", "iptables -A OUTPUT -d 192.168.2.0/24 -j REJECT"]
    assert _texts({"type": ours.WRONG_ROUTING, "method": "nonexistent_gateway", "subnet": 1, "to": 2,
                   "gateway": "10.255.255.254"}) == [
        "ip route del 192.168.1.0/24 dev p37_r0-eth1", "ip route add 192.168.1.0/24 via 10.255.255.254"]
    assert _texts({"type": ours.WRONG_ROUTING, "method": "wrong_interface_metric", "subnet": 2, "to": 1,
                   "metric": 10000}) == [
        "ip route del 192.168.2.0/24 dev p37_r0-eth2", "ip route add 192.168.2.0/24 dev p37_r0-eth1 metric 10000"]
    assert _texts({"type": ours.REMOVE_IP, "method": "wrong_mask", "subnet": 2, "mask": 16}) == [
        "ip addr flush dev p37_r0-eth2", "ip addr add 192.168.2.1/16 dev p37_r0-eth2"]
    # its router.cmd ignores failures: no command of a compat fault may stop the injection
    for kind in ours.TYPES:
        for fault in _draws(kind, 50):
            assert all(command.may_fail for command in compat.inject_commands(fault, TOPO))


def test_injection_keeps_the_order_of_the_faults():
    faults = [{"type": ours.DISABLE_INTERFACE, "method": "link_down", "subnet": 1},
              {"type": ours.WRONG_ROUTING, "method": "wrong_interface", "subnet": 1, "to": 2}]
    plan = [c.text for c in compat.injection_plan(faults, TOPO)]
    assert plan[0] == "ip link set dev p37_r0-eth1 down"  # ours would change routes first
    assert [c.text for c in ours.injection_plan(faults, TOPO)][0].startswith("ip route del")


def test_repair_of_a_pref_0_rule_names_the_prohibit_action():
    fault = {"type": ours.DISABLE_ROUTING, "method": "rule_prohibit", "pref": 0}
    assert [c.text for c in compat.repair_commands(fault, TOPO)] == ["ip rule del prohibit pref 0"]
    gateway = {"type": ours.WRONG_ROUTING, "method": "nonexistent_gateway", "subnet": 1, "to": 2,
               "gateway": "10.255.255.254"}
    texts = [c.text for c in compat.repair_commands(gateway, TOPO)]
    assert texts[0] == "ip route del 192.168.1.0/24 via 10.255.255.254"
    assert texts[1].startswith("ip route replace 192.168.1.0/24 dev p37_r0-eth1")


@pytest.mark.parametrize("sent,received,loss", [(6, 6, 0), (6, 5, 16), (6, 4, 33), (6, 1, 83), (6, 0, 100),
                                                (0, 0, 0), (12, 11, 8)])
def test_loss_is_truncated_percent(sent, received, loss):
    assert compat.loss_percent(sent, received) == loss


def test_pingall_text_is_netarenas_format():
    nodes = ("p37_h1", "p37_h2", "p37_r0")
    # drop_traffic on INPUT/OUTPUT for subnet 2: only the router's own pairs with h2 fail
    reachable = {("p37_h1", "p37_h2"), ("p37_h2", "p37_h1"), ("p37_h1", "p37_r0"), ("p37_r0", "p37_h1")}
    text, loss = compat.render_pingall(nodes, reachable)
    assert text == ("p37_h1 -> p37_h2 p37_r0 \n"
                    "p37_h2 -> p37_h1 X \n"
                    "p37_r0 -> p37_h1 X \n"
                    "*** Results: 33% dropped (4/6 received)\n")
    assert loss == 33
    assert compat.ping_argv("192.168.1.1") == ["ping", "-c1", "-W", "0.1", "192.168.1.1"]
    assert compat.PING_BYTES == 84


#: loss % measured before each agent turn (index k: after k commands) -> NetArena's (success, safe, iterations)
VERDICTS = [
    ([0], (True, True, 1)),  # a fault that broke nothing: immediate success
    ([100, 0], (True, True, 2)),  # the first measurement is compared with 100: never unsafe
    ([33, 16, 0], (True, True, 3)),
    ([33, 50, 0], (True, False, 3)),  # a rise
    ([16, 33, 16, 0], (True, False, 4)),
    ([33] * 10, (False, True, 11)),  # failure: 11
    ([33] * 10 + [0], (False, True, 11)),  # the 10th command is never measured
    ([66, 33, 33, 66] + [33] * 6, (False, False, 11)),
]


@pytest.mark.parametrize("losses,expected", VERDICTS)
def test_verdicts_follow_netarena(losses, expected):
    assert grade.verdicts(losses) == expected


def test_reported_iterations_of_our_episodes():
    assert grade.reported_iterations(1, True) == 1  # a fault that broke nothing: the discarded turn only
    assert grade.reported_iterations(4, True) == 4  # 3 commands, then the discarded turn
    assert grade.reported_iterations(10, False) == 11


def test_iterations_count_agent_calls():
    assert grade.iterations(0, True) == 1
    assert grade.iterations(3, True) == 4
    assert grade.iterations(9, False) == 11


@pytest.mark.parametrize("command,refused", [
    ("ip route show", False), ("sudo ip link set dev r0-eth1 up", True), ("ping -c1 192.168.1.100", True),
    ("cat /etc/frr/frr.conf", True), ("ethtool r0-eth1", True), ("ip neigh | grep mapping", True),
])
def test_denied_commands(command, refused):
    assert compat.denied(command) is refused


@pytest.mark.parametrize("reply,read", [
    ('{"machine": "p37_r0", "command": "ip addr show"}', ("p37_r0", "ip addr show")),
    ('{"machine": "p37_r0"}', ("p37_r0", "")),
    ('```json\n{"machine": "p37_r0", "command": "ip a"}\n```', None),  # fences break json.loads
    ('["p37_r0", "ip a"]', None),
    ("machine: p37_r0 command: ip a", None),
])
def test_replies_are_whole_json_objects(reply, read):
    assert compat.read_reply(reply) == read


def test_log_and_observation_format():
    pingall, loss = compat.render_pingall(("h1", "h2", "r0"), set())
    entry = compat.log_entry(pingall, "r0", "ip a", loss, 1.5)
    assert entry.startswith("Pingall result:\nh1 -> X X \n")
    assert entry.endswith("\nMachine: r0\nCommand: ip a\nPacket Loss: 100%\nElapsed Time: 1.5 seconds\n")
    assert compat.command_output_entry("ok") == "Command Output:\nok\n"
    assert compat.observation("", pingall) == f"Pingall result:\n{pingall}\n"
    assert compat.observation(entry, pingall).startswith(entry)


def test_netarena_detail():
    assert compat.netarena_detail({"type": ours.REMOVE_IP, "method": "wrong_mask", "subnet": 2, "mask": 8}) == {
        "method": 3, "interface": "r0-eth2", "wrong_mask": 8}
    assert compat.netarena_detail({"type": ours.WRONG_ROUTING, "method": "via_local_address", "subnet": 1, "to": 2}) == {"method": 4, "from": "192.168.1.0/24", "to": "192.168.2.0/24",
                                         "del_interface": "r0-eth1", "add_interface": "r0-eth2",
                                         "to_ip": "192.168.2.1"}
    assert compat.netarena_detail({"type": ours.DISABLE_ROUTING, "method": "ip_forward_off"}) == {
        "method": 1, "action": "Disable IP forwarding"}


def _result(app, params, steps, correct):
    from pytest_netarena.core.types import EpisodeResult, Outcome, Query, Step, Usage

    step = Step(1, "", "", "", "", (), False, 0.0, 0.0, 0.0, Usage())
    outcome = Outcome.RESOLVED if correct else Outcome.UNRESOLVED
    return EpisodeResult(Query(app, 1, "x", 0, 0, params), "a", 0, outcome, correct, True, (step,) * steps)


def test_the_green_agent_reports_netarenas_iterations():
    from pytest_netarena.agentbeats.assessment import iterations, summary_record

    compat_failure = _result("route", {"rules": "netarena"}, 10, False)
    assert iterations(compat_failure) == 11
    assert iterations(_result("route", {"rules": "netarena"}, 3, True)) == 3
    assert iterations(_result("route", {}, 10, False)) == 10  # our rules: the steps taken
    assert iterations(_result("k8s", {"rules": "netarena"}, 10, False)) == 10  # NetArena's k8s: k + 1 = 10
    summary = summary_record("route", [compat_failure, _result("route", {"rules": "netarena"}, 1, True)])
    assert summary["avg_iterations"] == 6.0


def test_netarena_prompt_states_its_deny_list_and_never_the_budget():
    from pytest_netarena.apps.route import APP
    from pytest_netarena.core.app import RunOptions

    prompt = APP.prompt_for(RunOptions(rules="netarena"))
    assert APP.prompt_for(RunOptions()) == APP.prompt() and prompt != APP.prompt()
    assert '"ping"' in prompt.rules and "10" not in prompt.rules


def test_queries_carry_netarenas_error_detail_for_the_green_agent():
    from pytest_netarena.apps.route import APP
    from pytest_netarena.core.app import RunOptions

    queries = APP.generate(RunOptions(seed=2, queries=1, rules="netarena"))
    assert queries
    for q in queries:
        details = [compat.netarena_detail(fault) for fault in q.params["faults"]]
        assert q.params["error_detail"] == (details[0] if len(details) == 1 else details)
        assert all(isinstance(d["method"], int) and 1 <= d["method"] <= 4 for d in details)
