"""Reply parsing: tolerated formats and refusals with a reason (no root needed)."""

from __future__ import annotations

import pytest

from pytest_netarena.apps.route.commands import Refusal, parse_reply


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


def test_prompt_examples_obey_the_one_json_command_format_they_state():
    from pytest_netarena.apps.route import APP

    prompt = APP.prompt()
    assert len(prompt.examples) >= 3 and '{"machine"' in prompt.action_format
    for observation, reply in prompt.examples:
        action = parse_reply(reply)
        assert reply.strip().startswith("{") and reply.strip().endswith("}")
        assert action.machine in observation and action.command
