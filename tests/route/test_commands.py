"""Reply reading basics: objects in prose and fences, refusals that say what was wrong and show the accepted form
(no root needed; the corpus in test_reply_corpus.py covers the styles models write)."""

from __future__ import annotations

import pytest

from pytest_netarena.apps.route.commands import Refusal, parse_reply
from pytest_netarena.apps.route.topology import Topology

TOPO = Topology("na0a01", 2, 1)
NODES = TOPO.nodes


@pytest.mark.parametrize(
    "reply",
    [
        '{"machine": "na0a01r0", "command": "ip route"}',
        'I will look at the routes.\n```json\n{"machine": "na0a01r0", "command": "ip route"}\n```\nThen decide.',
        'Action: {"machine": "na0a01r0", "command": "ip route"} (read only)',
        '```\n{"machine": "na0a01r0", "command": "ip route"}\n```',
    ],
)
def test_one_json_object_is_found_in_prose_and_fences(reply):
    action = parse_reply(reply, NODES, TOPO.prefix)
    assert (action.machine, action.command) == ("na0a01r0", "ip route")


@pytest.mark.parametrize(
    "reply, reason",
    [
        ("let me think", "no action found"),
        ('{"machine": "na0a01r0"}', 'no "command" string'),
        ('{"machine": "na0a01r0", "command": "ip route"} {"machine": "na0a01r0", "command": "ip addr"}',
         "2 different actions found"),
        ('{"machine": "na0a01r0", "command": ""}', 'no "command" string'),
        ('{"machine": ["na0a01r0"], "command": "ip route"}', "must be a node name"),
        ('{"machine": "r9", "command": "ip route"}', "unknown machine 'r9'"),
        ('{"machine": "na0a01s1", "command": "ip route"}', "switches are plain Linux bridges"),
        ("```bash\nip route\n```", "No node is named"),
    ],
)
def test_unusable_replies_are_refused_with_a_reason_and_the_accepted_form(reply, reason):
    with pytest.raises(Refusal, match=reason) as refused:
        parse_reply(reply, NODES, TOPO.prefix)
    assert '{"machine": "na0a01r0", "command": "ip route"}' in str(refused.value)


def test_prompt_examples_are_accepted_by_the_reader():
    from pytest_netarena.apps.route import APP
    from pytest_netarena.apps.route.prompt import EXAMPLE_NODES, EXAMPLE_PREFIX

    prompt = APP.prompt()
    assert len(prompt.examples) >= 3 and '{"machine"' in prompt.action_format
    for observation, reply in prompt.examples:
        action = parse_reply(reply, EXAMPLE_NODES, EXAMPLE_PREFIX)
        assert action.machine in observation and action.command
    for line in prompt.action_format.splitlines():
        if line.startswith(("Example:", "Also accepted:")):
            example = line.split("e.g.:" if "e.g.:" in line else ":", 1)[1]
            assert parse_reply(example, EXAMPLE_NODES, EXAMPLE_PREFIX).machine == "na0a01r0"
