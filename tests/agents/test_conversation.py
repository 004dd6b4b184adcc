"""The model agent's history with tool calls: tool messages answer calls by id, trimming never splits a call from
its results, and a history of text turns is trimmed as before."""

from __future__ import annotations

from pytest_netarena.agents.conversation import Conversation
from pytest_netarena.core.tools import ToolCall, ToolResult
from pytest_netarena.core.types import Observation, Reply


def calls(turn: int, count: int) -> tuple[ToolCall, ...]:
    return tuple(ToolCall("run", f'{{"n": {turn * 10 + i}}}', f"c{turn}-{i}") for i in range(count))


def play_tool_turns(conversation: Conversation, turns: int, per_turn: int, size: int) -> list[list[dict]]:
    sent = []
    observation: str = "first observation"
    for turn in range(turns):
        history, dropped = conversation.pending(observation)
        sent.append(conversation.sendable(history, dropped))
        reply = Reply("", tool_calls=calls(turn, per_turn))
        conversation.commit(history, dropped, reply)
        observation = Observation("x" * size, tuple(ToolResult(c.call_id, c.name, f"result of {c.call_id} " + "x" * size)
                                                    for c in reply.tool_calls))
    return sent


def assert_well_formed(messages: list[dict]) -> None:
    """Every tool message answers a call of the assistant message before its run of tool messages, and every call
    of an assistant message is answered (the last message aside)."""
    for index, message in enumerate(messages):
        if message["role"] == "tool":
            owner = next(m for m in reversed(messages[:index]) if m["role"] != "tool")
            assert owner["role"] == "assistant" and message["tool_call_id"] in {c["id"] for c in owner["tool_calls"]}
        if message["role"] == "assistant" and message.get("tool_calls"):
            answered = [m["tool_call_id"] for m in messages[index + 1:index + 1 + len(message["tool_calls"])]]
            assert answered == [c["id"] for c in message["tool_calls"]]


def test_tool_results_go_back_as_tool_messages_by_call_id() -> None:
    conversation = Conversation("system", 10_000)
    sent = play_tool_turns(conversation, 3, 2, 10)
    last = sent[-1]
    assert [m["role"] for m in last] == ["system", "user", "assistant", "tool", "tool", "assistant", "tool", "tool"]
    assert last[2]["content"] is None and [c["id"] for c in last[2]["tool_calls"]] == ["c0-0", "c0-1"]
    assert last[3] == {"role": "tool", "tool_call_id": "c0-0", "content": "result of c0-0 " + "x" * 10}
    assert_well_formed(last)


def test_trimming_never_splits_a_call_from_its_results() -> None:
    conversation = Conversation("system", 2_000)
    for messages in play_tool_turns(conversation, 12, 3, 150):
        assert_well_formed(messages)
        assert len(messages) == 2 or messages[2]["role"] != "tool"
    assert conversation.dropped > 0
    final = conversation.sendable()
    assert final[2]["content"].startswith(f"[{conversation.dropped} earlier messages were removed")
    assert final[3]["role"] == "assistant"  # the kept history starts with a whole turn


def test_the_latest_turn_is_kept_whole_even_alone_over_the_limit() -> None:
    conversation = Conversation("system", 100)
    sent = play_tool_turns(conversation, 4, 2, 500)
    assert [m["role"] for m in sent[-1][3:]] == ["assistant", "tool", "tool"]
    assert_well_formed(sent[-1])


def test_text_turns_are_trimmed_to_start_with_an_observation() -> None:
    conversation = Conversation("system", 300)
    observation = "first"
    for turn in range(10):
        history, dropped = conversation.pending(observation)
        conversation.commit(history, dropped, Reply(f"reply {turn} " + "y" * 40))
        observation = f"observation {turn} " + "z" * 40
    history, dropped = conversation.pending(observation)
    kept = conversation.sendable(history, dropped)
    assert [m["role"] for m in kept[:4]] == ["system", "user", "user", "user"]  # first, the marker, an observation
    assert kept[-1]["content"] == observation


def test_a_reply_with_no_text_and_no_call_keeps_a_visible_placeholder() -> None:
    conversation = Conversation("system", 1000)
    history, dropped = conversation.pending("obs")
    conversation.commit(history, dropped, Reply(""))
    assert conversation.history[-1] == {"role": "assistant", "content": "(empty reply)"}
