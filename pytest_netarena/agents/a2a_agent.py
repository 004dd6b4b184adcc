"""An agent reached over the A2A protocol (AgentBeats purple agents), one stateless message per turn."""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from concurrent.futures import Future
from typing import Any

from ..core.types import Reply, Task, Usage
from ..core.errors import AgentError, UsageError

CARD_PATH = "/.well-known/agent-card.json"
DEFAULT_TIMEOUT_S = 60.0  #: NetArena's client timeout: the longest silence between streamed updates
DEFAULT_MAX_REPLY_S = 600.0  #: hard cap on one reply, however often the agent says it is still working
CLEAN_UP_S = 0.5  #: how long past its deadline an exchange may take to close its connection
DEFAULT_MAX_PROMPT_CHARS = 200_000  #: about 50k tokens, as for model agents
#: keyword aliases accepted from the plugin's settings
SETTING_ALIASES = {"timeout": "timeout_s", "a2a_timeout_s": "timeout_s", "agent_timeout_s": "timeout_s",
                   "max_history_chars": "max_prompt_chars", "max_reply_s": "max_reply_s", "hard_timeout_s": "max_reply_s"}
#: metadata keys a purple agent may use to report what a reply cost (OpenAI's and Anthropic's names)
USAGE_KEYS = {"tokens_in": ("prompt_tokens", "input_tokens", "tokens_in"),
              "tokens_out": ("completion_tokens", "output_tokens", "tokens_out"),
              "cost_usd": ("cost_usd", "cost", "response_cost")}


def import_a2a() -> Any:
    try:
        import a2a.client
    except ImportError as error:
        raise UsageError("A2A agents need a2a-sdk: pip install 'pytest-netarena[a2a]'") from error
    return a2a


def render_prompt(system_prompt: str, turns: list[tuple[str, str]], observation: str,
                  max_chars: int = DEFAULT_MAX_PROMPT_CHARS) -> str:
    """The whole conversation as one user message: system prompt, earlier turns, the new observation.

    When it is too long, the oldest turns after the first go first (the first observation states
    the problem), and a marker says how many were left out.
    """
    def block(kept: list[tuple[int, tuple[str, str]]], omitted: int) -> str:
        if not kept and not omitted:
            return f"{system_prompt}\n\n{observation}"
        lines = [system_prompt, "", "## Conversation so far"]
        for number, (seen, replied) in kept:
            lines += [f"### Observation {number}", seen, f"### Your reply {number}", replied]
            if number == 1 and omitted:
                lines.append(f"[{omitted} earlier turns omitted]")
        lines += ["## Current observation", observation, "", "Reply with your next action."]
        return "\n".join(lines)

    numbered = list(enumerate(turns, 1))
    omitted = 0
    text = block(numbered, 0)
    while len(text) > max_chars and len(numbered) > 1:
        numbered.pop(1)
        omitted += 1
        text = block(numbered, omitted)
    return text


def _parts_text(parts: Any) -> str | None:
    """Text parts as they are, data parts as indented JSON, joined by newlines; None without either."""
    from google.protobuf.json_format import MessageToDict

    pieces = []
    for part in parts:
        if part.HasField("text"):
            pieces.append(part.text)
        elif part.HasField("data"):
            pieces.append(json.dumps(MessageToDict(part.data), indent=2))
    return "\n".join(pieces) if pieces else None


def reply_text(events: list[Any]) -> str:
    """The reply in a stream of StreamResponse events, read the way NetArena's client reads it.

    A Message gives its parts; a Task gives its last artifact, or else its last agent message.
    Raises AgentError when the reply holds no text (or data), or the task failed or was rejected.
    """
    from a2a.types.a2a_pb2 import Role, TaskState
    from a2a.types.a2a_pb2 import Task as A2ATask

    if not events:
        raise AgentError("the agent sent no event")
    task: Any = None
    for event in events:
        if event.HasField("message"):
            text = _parts_text(event.message.parts)
            if text is None:
                raise AgentError("the agent's reply message has no text or data part")
            return text
        if event.HasField("task"):
            task = A2ATask()
            task.CopyFrom(event.task)
            continue
        if task is None:  # updates without the task first: a server that streams deltas only
            task = A2ATask()
        if event.HasField("status_update"):
            if task.status.HasField("message"):
                task.history.append(task.status.message)
            task.status.CopyFrom(event.status_update.status)
        elif event.HasField("artifact_update"):
            _apply_artifact(task, event.artifact_update)
    if task is None:
        raise AgentError("the agent's reply has neither a message nor a task")
    state = task.status.state
    status_text = _parts_text(task.status.message.parts) if task.status.HasField("message") else None
    if state in (TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_REJECTED, TaskState.TASK_STATE_CANCELED):
        name = TaskState.Name(state).removeprefix("TASK_STATE_").lower()
        raise AgentError(f"the agent's task ended {name}" + (f": {status_text}" if status_text else ""))
    if task.artifacts:
        return _parts_text(task.artifacts[-1].parts) or ""  # an empty artifact is an (empty) answer
    if status_text is not None and task.status.message.role != Role.ROLE_USER:
        return status_text
    for message in reversed(task.history):
        if message.role == Role.ROLE_AGENT and (text := _parts_text(message.parts)) is not None:
            return text
    raise AgentError(f"the agent's task ({TaskState.Name(state)}) has no artifact and no agent message")


def _reply_so_far(events: Any) -> str | None:
    """The reply the first events give, or None while they give none."""
    try:
        return reply_text(list(events))
    except AgentError:
        return None


def _apply_artifact(task: Any, update: Any) -> None:
    for artifact in task.artifacts:
        if artifact.artifact_id == update.artifact.artifact_id:
            if update.append:
                artifact.parts.extend(update.artifact.parts)
            else:
                artifact.CopyFrom(update.artifact)
            return
    task.artifacts.append(update.artifact)


def reply_usage(events: list[Any]) -> Usage:
    """Token usage and cost a purple agent reported in its reply's metadata (`usage: {...}`), else zero.

    The last report wins (agents that stream send running totals); values that are not
    non-negative numbers are ignored rather than trusted.
    """
    from google.protobuf.json_format import MessageToDict

    found: dict[str, Any] = {}
    for event in events:
        for holder in (event.message, event.task, event.status_update, event.artifact_update.artifact,
                       event.status_update.status.message):
            if holder.HasField("metadata"):
                usage = MessageToDict(holder.metadata).get("usage")
                if isinstance(usage, dict):
                    found = usage
    values: dict[str, float] = {}
    for name, keys in USAGE_KEYS.items():
        for key in keys:
            value = found.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 1e12:
                values[name] = value
                break
    return Usage(int(values.get("tokens_in", 0)), int(values.get("tokens_out", 0)), float(values.get("cost_usd", 0.0)))


def _describe(error: BaseException) -> str:
    """The innermost useful cause of a client error (the SDK wraps httpx errors)."""
    import httpx

    seen = error
    while seen is not None:
        if isinstance(seen, httpx.ConnectError):
            return f"cannot connect: {seen}"
        if isinstance(seen, httpx.TimeoutException):
            return f"timed out: {type(seen).__name__}"
        seen = seen.__cause__ or seen.__context__  # type: ignore[assignment]
    return f"{type(error).__name__}: {error}"


def unreachable(url: str, timeout_s: float = 30.0) -> str:
    """"" when the agent card at url can be fetched, else why not. A run (or an assessment) never scores an
    agent it could not reach: every episode would look like a valid zero."""
    agent = A2AAgent(url, timeout_s=timeout_s)
    try:
        agent.connect()
    except AgentError as error:
        return str(error)
    finally:
        agent.close()
    return ""


class A2AAgent:
    """An agent behind an A2A server (`--agent=a2a:http://HOST:PORT`), e.g. an AgentBeats purple agent.

    Like NetArena's client, every turn is one new user Message with a single text part and no
    context or task id: A2A agents in AgentBeats keep no conversation state, so the text carries
    the system prompt, every earlier observation and reply, and the new observation. The agent
    card is fetched from /.well-known/agent-card.json at the first reset() and reused; the card
    decides the endpoint, the protocol version (1.0, or 0.3) and streaming.

    Deadlines, as NetArena's client: `timeout_s` is the longest the agent may stay silent (the
    card fetch, a non-streamed reply, or the gap between two streamed updates), so an agent that
    streams "working" keeps its turn; `max_reply_s` caps a whole reply however often it streams.

    Failure policy: an agent that cannot be reached when the run starts is one usage error before it
    (`unreachable`, which the plugin and the green agent ask first). Later, an unreachable agent, a missed
    deadline, a failed or rejected task and a reply without any text are AgentErrors, so the episode ends
    as an agent error with the reason; nothing here is an infrastructure error, because the agent under
    test is the only party on the other end.
    """

    def __init__(self, url: str, *, timeout_s: float | None = DEFAULT_TIMEOUT_S, streaming: bool = True,
                 max_prompt_chars: int | None = DEFAULT_MAX_PROMPT_CHARS, **settings: Any) -> None:
        values: dict[str, Any] = {"timeout_s": timeout_s, "max_prompt_chars": max_prompt_chars,
                                  "max_reply_s": DEFAULT_MAX_REPLY_S}
        for name, value in settings.items():
            if name not in SETTING_ALIASES:
                accepted = ", ".join(sorted({*values, "streaming", *SETTING_ALIASES}))
                raise UsageError(f"unknown setting {name!r} for A2A agent {url!r}; accepted: {accepted}")
            if value is not None:
                values[SETTING_ALIASES[name]] = value
        if not url.startswith(("http://", "https://")):
            raise UsageError(f"A2A agent URL must start with http:// or https://, got {url!r}")
        self.url = url.rstrip("/")
        self.timeout_s = float(values["timeout_s"] if values["timeout_s"] is not None else DEFAULT_TIMEOUT_S)
        self.max_prompt_chars = int(values["max_prompt_chars"] or DEFAULT_MAX_PROMPT_CHARS)
        self.max_reply_s = max(float(values["max_reply_s"]), self.timeout_s)
        self.streaming = streaming
        self.card: Any = None
        self.system_prompt = ""
        self.turns: list[tuple[str, str]] = []  #: (observation, reply) of this episode
        self.last_prompt = ""  #: the text sent by the last act(), for transcripts and tests

    # the Agent protocol

    def reset(self, task: Task) -> None:
        self.system_prompt = task.system_prompt
        self.turns = []
        self.connect()

    def connect(self) -> None:
        """Fetch the agent card, once (AgentError when the agent cannot be reached)."""
        if self.card is None:
            self.card = self._run(self._fetch_card(), "fetching the agent card", self.timeout_s)

    def act(self, observation: str) -> Reply:
        if self.card is None:
            raise RuntimeError("A2AAgent.act() called before reset(task)")
        prompt = render_prompt(self.system_prompt, self.turns, observation, self.max_prompt_chars)
        self.last_prompt = prompt
        text, usage, answered = self._run(self._send(prompt), "sending the prompt", self.max_reply_s)
        self.turns.append((observation, text))
        return Reply(text, usage, answer_s=answered)

    def close(self) -> None:
        self.turns = []

    # internals

    def _run(self, coroutine: Any, doing: str, deadline_s: float) -> Any:
        """Run one exchange on a private event loop under a hard deadline; failures become AgentError."""
        outcome: Future = Future()

        def exchange() -> None:
            try:
                outcome.set_result(asyncio.run(asyncio.wait_for(coroutine, deadline_s)))
            except BaseException as error:  # handed to the caller's thread
                outcome.set_exception(error)

        # The deadline is kept on this thread: wait_for's cancellation waits for the client's clean-up, and a
        # reply streamed by the agent could hold that for as long as it streams (seen: a 1.5-s cap ending at 9.6 s).
        # An exchange still cleaning up after the deadline finishes on its own daemon thread.
        threading.Thread(target=exchange, name="a2a-exchange", daemon=True).start()
        try:
            return outcome.result(timeout=deadline_s + CLEAN_UP_S)
        except AgentError as error:
            raise AgentError(f"A2A agent at {self.url}: {error}") from error
        except TimeoutError as error:
            raise AgentError(f"A2A agent at {self.url} did not answer within {deadline_s:g} s ({doing})") from error
        except Exception as error:
            raise AgentError(f"A2A agent at {self.url} failed while {doing}: {_describe(error)}") from error

    async def _fetch_card(self) -> Any:
        import httpx

        import_a2a()
        from a2a.client.card_resolver import parse_agent_card

        async with httpx.AsyncClient(timeout=self.timeout_s) as http:
            response = await http.get(self.url + CARD_PATH)
        if response.status_code != 200:
            raise AgentError(f"GET {CARD_PATH} answered HTTP {response.status_code}")
        try:
            return parse_agent_card(response.json())
        except Exception as error:
            raise AgentError(f"malformed agent card at {CARD_PATH}: {error}") from error

    async def _send(self, prompt: str) -> tuple[str, Usage, float | None]:
        """(the reply's text, the usage it reported, the agent's time: request out to the first byte of what settled
        the reply, answer_clock.py)."""
        import httpx
        from a2a.client import ClientConfig, ClientFactory
        from a2a.helpers import new_text_message
        from a2a.types.a2a_pb2 import Role, SendMessageRequest

        from .answer_clock import ClockedTransport, answer_s

        message = new_text_message(prompt, role=Role.ROLE_USER)
        message.message_id = uuid.uuid4().hex
        transport = ClockedTransport()
        async with httpx.AsyncClient(timeout=self.timeout_s, transport=transport) as http:
            client = ClientFactory(ClientConfig(streaming=self.streaming, httpx_client=http)).create(self.card)
            stream = client.send_message(SendMessageRequest(message=message)).__aiter__()
            events = []
            while True:  # the idle deadline restarts with every update the agent streams
                try:
                    events.append(await asyncio.wait_for(stream.__anext__(), self.timeout_s))
                except StopAsyncIteration:
                    break
                except TimeoutError:
                    raise AgentError(f"sent nothing for {self.timeout_s:g} s "
                                     f"({len(events)} updates before)") from None
        text = reply_text(events)
        answered = [exchange for exchange in transport.exchanges if exchange.body_at is not None]
        return text, reply_usage(events), answer_s(answered[-1], events, _reply_so_far) if answered else None


def build(spec: Any, app: Any, query: Any, env: Any) -> A2AAgent:
    """The agent of an a2a:URL spec (agents/kinds.py), with the run's A2A settings."""
    return A2AAgent(spec.target, **spec.settings)
