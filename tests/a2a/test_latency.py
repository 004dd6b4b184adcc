"""The agent's time for a reply is what transport cannot move: padding, chunking and a slow link change nothing.

A purple agent thinks THINK_S seconds, then answers "set 5", or the same answer padded with PADDING bytes of trailing
whitespace; between it and the harness sits a slow link (testing/slow_link.py) that delivers its bytes in small
pieces. The wall clock of the exchange grows by seconds; the measured time (request out to the first byte of what
settled the reply, docs/metrics.md) stays the agent's own. Margins are wide: only transport's seconds are told apart.
"""

from __future__ import annotations

import time
from urllib.parse import urlsplit

import pytest

from pytest_netarena.agentbeats.purple import purple_app
from pytest_netarena.agentbeats.server import RunningServer
from pytest_netarena.agents.a2a_agent import A2AAgent
from pytest_netarena.core.episode import agent_time
from pytest_netarena.core.types import Reply, Task
from pytest_netarena.testing.slow_link import SlowLink

THINK_S = 0.4
PADDING = 400_000  #: through the slow link below, about 2.5 s on the wire
PIECE, PAUSE_S = 8_192, 0.05


def answer(padded: bool):
    def respond(text: str) -> str:
        time.sleep(THINK_S)
        return "set 5" + (" " * PADDING if padded else "")

    return respond


def measured(padded: bool, slow: bool, style: str, streaming: bool) -> tuple[float, float, Reply]:
    """(the agent's time as recorded for the step, the wall time of act(), the reply) of one turn."""
    link = SlowLink(piece=PIECE, pause_s=PAUSE_S) if slow else None
    build = purple_app(answer(padded), style=style, streaming=streaming)
    server = RunningServer(build, card_url=link.url if link else None)
    if link:
        link.target = ("127.0.0.1", urlsplit(server.url).port)
    try:
        with server:
            agent = A2AAgent(server.url, timeout_s=30, streaming=streaming)
            agent.reset(Task("toy", "e1", "system", "zero-shot", 3))
            started = time.perf_counter()
            reply = agent.act("make it 5")
            wall = time.perf_counter() - started
    finally:
        if link:
            link.stop()
    return agent_time(reply, wall), wall, reply


@pytest.mark.parametrize("style, streaming", [("message", False), ("message", True), ("task", True)])
def test_padding_and_a_slow_link_do_not_move_an_a2a_agents_time(style: str, streaming: bool) -> None:
    plain, plain_wall, plain_reply = measured(False, False, style, streaming)
    padded, padded_wall, padded_reply = measured(True, True, style, streaming)
    assert plain_reply.text == "set 5" and padded_reply.text.strip() == "set 5"
    assert padded_wall - plain_wall > 1.0  # the transport took seconds more ...
    # ... the agent's time did not. (The clock starts once the request's last byte was handed over; the server here
    # runs in this process, and may start thinking a thread switch, up to 5 ms, before the client notes the time.)
    least = THINK_S - 0.02
    assert least <= plain < THINK_S + 1.0 and least <= padded < THINK_S + 1.0
    assert abs(padded - plain) < 0.6
    assert padded_wall - padded > 1.0


def test_the_measured_time_never_exceeds_the_wall_time_of_act() -> None:
    assert agent_time(Reply("x", answer_s=5.0), 1.0) == 1.0
    assert agent_time(Reply("x", answer_s=-1.0), 1.0) == 0.0
    assert agent_time(Reply("x"), 1.5) == 1.5  # nothing measured: act()'s wall time


def test_a_slow_link_to_a_model_provider_does_not_move_a_model_agents_time(monkeypatch) -> None:
    """A model agent's time is its provider's answer (the response headers of the completion that answered): how
    the body travels, and the attempts the provider failed before, are not the agent's."""
    from pytest_netarena.agents.model_agent import ModelAgent, ModelSettings
    from pytest_netarena.testing.openai_server import OpenAIStubServer, StubReply

    monkeypatch.setenv("OPENAI_API_KEY", "any")
    long_answer = "set 5" + " " * PADDING
    with OpenAIStubServer([StubReply.error(503, "busy"), StubReply(long_answer, delay_s=THINK_S)]) as server, \
            SlowLink(("127.0.0.1", urlsplit(server.url).port), piece=PIECE, pause_s=PAUSE_S) as link:
        agent = ModelAgent("openai/my-model", ModelSettings(api_base=link.url + "/v1", backoff_s=1.0))
        agent.reset(Task("toy", "e1", "system", "zero-shot", 3))
        started = time.perf_counter()
        reply = agent.act("make it 5")
        wall = time.perf_counter() - started
    assert reply.text == long_answer and agent.attempts == 2
    assert wall > THINK_S + 2.0  # a second of backoff, then the answer's body trickled over the link
    assert THINK_S <= agent_time(reply, wall) < THINK_S + 1.0
