"""The model agent: any chat model (litellm's names), text or native tool calls, retries, usage and cost, bounded context.

`openai/` models go straight to their OpenAI-compatible endpoint (agents/openai_http.py) unless the
`client` setting is "litellm": litellm's import alone costs about 2 s of CPU per process.
"""

from __future__ import annotations

import dataclasses
import math
import os
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..core.types import Reply, Task, Usage
from ..core.errors import InfraError, UsageError
from .conversation import Conversation
from .recording import Recording

#: how the plugin's option names (dest form) map onto ModelSettings fields
SETTING_ALIASES = {
    "llm_api_base": "api_base",
    "llm_api_key": "api_key",
    "llm_temperature": "temperature",
    "llm_seed": "seed",
    "llm_max_retries": "max_retries",
    "llm_backoff_s": "backoff_s",
    "llm_timeout": "request_timeout_s",
    "llm_request_timeout_s": "request_timeout_s",
    "llm_max_history_chars": "max_history_chars",
    "llm_max_tokens": "max_tokens",
    "llm_deadline_s": "deadline_s",
    "llm_client": "client",
    "timeout": "request_timeout_s",
    "record": "record_dir",
    "replay": "replay_dir",
}
DEFAULT_MAX_HISTORY_CHARS = 200_000  #: about 50k tokens: fits every current chat model's context
#: how a model is reached: "auto" (openai/ models over plain HTTP, the others through litellm),
#: "litellm" (always litellm) or "http" (plain HTTP; openai/ models only)
CLIENTS = ("auto", "litellm", "http")


@dataclass(frozen=True)
class ModelSettings:
    """How a model agent reaches its model and how it behaves: one value, checked when made."""

    api_base: str | None = None
    api_key: str | None = None
    temperature: float = 0.0
    seed: int | None = None
    max_retries: int = 4
    backoff_s: float = 1.0
    request_timeout_s: float = 120.0
    deadline_s: float = 270.0  #: act() gives up within this, retries included (below the agent timeout)
    max_history_chars: int = DEFAULT_MAX_HISTORY_CHARS
    max_tokens: int | None = None
    record_dir: str | None = None
    replay_dir: str | None = None
    client: str = "auto"  #: one of CLIENTS

    def __post_init__(self) -> None:
        if self.client not in CLIENTS:
            raise UsageError(f"the model client is one of {', '.join(CLIENTS)}; got {self.client!r}")

    @classmethod
    def from_options(cls, options: Mapping[str, Any], model: str = "") -> ModelSettings:
        """Settings from field names or the plugin's option names; None means the default. Unknown names and
        values of the wrong kind are usage errors."""
        fields = {field.name: field for field in dataclasses.fields(cls)}
        given: dict[str, Any] = {}
        for name, value in options.items():
            field = SETTING_ALIASES.get(name, name)
            if field not in fields:
                accepted = ", ".join(sorted({*fields, *SETTING_ALIASES}))
                raise UsageError(f"unknown setting {name!r} for model agent {model!r}; accepted: {accepted}")
            if value is not None and (name in SETTING_ALIASES or field not in given):  # the plugin's names win
                given[field] = value
        try:
            converted = {name: _CONVERT.get(name, str)(value) for name, value in given.items()}
        except (TypeError, ValueError) as error:
            raise UsageError(f"bad setting for model agent {model!r}: {error}") from error
        return cls(**converted)


_CONVERT: dict[str, Any] = {
    "temperature": float, "seed": int, "max_retries": lambda v: max(0, int(v)),
    "backoff_s": lambda v: max(0.0, float(v)), "request_timeout_s": float, "deadline_s": float,
    "max_history_chars": int, "max_tokens": int,
}
MAX_BACKOFF_S = 60.0
#: HTTP statuses worth retrying: request timeout, conflict, too early, rate limit
_TRANSIENT_STATUSES = frozenset({408, 409, 425, 429})
#: litellm reports a missing key as a 500; retrying it only delays the inevitable
_CONFIG_MARKERS = ("missing credentials", "api_key client option", "llm provider not provided")

_litellm_module: Any = None


def import_litellm() -> Any:
    """Import litellm once, offline: its price map comes from the installed package, not the network."""
    global _litellm_module
    if _litellm_module is None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        try:
            import litellm
        except ImportError as error:
            raise UsageError("model agents need litellm: pip install 'pytest-netarena[llm]'") from error
        litellm.suppress_debug_info = True  # no "Give Feedback / Get Help" banners on every error
        _litellm_module = litellm
    return _litellm_module


def uses_litellm(model: str, client: str | None) -> bool:
    """Whether this model, with this `client` setting, is reached through litellm."""
    from .openai_http import provider_model

    return client == "litellm" or (client in (None, "auto") and provider_model(model) is None)


def is_transient(error: BaseException) -> bool:
    """Whether a failed completion is worth retrying (rate limits, 5xx, timeouts, dropped connections)."""
    from .openai_http import ModelRequestError

    if isinstance(error, ModelRequestError):
        return error.transient
    litellm = import_litellm()
    text = str(error).lower()
    if any(marker in text for marker in _CONFIG_MARKERS):
        return False
    if isinstance(error, (litellm.Timeout, litellm.APIConnectionError, TimeoutError, ConnectionError)):
        return True
    status = getattr(error, "status_code", None)
    if isinstance(status, int):
        return status in _TRANSIENT_STATUSES or status >= 500
    return False


def _retry_after_s(error: BaseException) -> float | None:
    """The provider's Retry-After in seconds, when it sent one."""
    if getattr(error, "retry_after_s", None) is not None:  # openai_http.ModelRequestError
        return error.retry_after_s  # type: ignore[attr-defined]
    # litellm keeps the provider's headers apart; its own error.response is rebuilt without them
    response = getattr(error, "response", None)
    for headers in (getattr(error, "litellm_response_headers", None), getattr(response, "headers", None)):
        try:
            value = float(headers.get("retry-after"))  # type: ignore[union-attr]
        except (AttributeError, TypeError, ValueError):
            continue
        if math.isfinite(value) and value >= 0:
            return value
    return None


def takes_tools(model: str) -> bool:
    """Whether the provider takes native tool calls: every OpenAI-compatible endpoint (openai/ models) does;
    for the others, litellm's model map says (an unknown model: no)."""
    from .openai_http import provider_model

    if provider_model(model) is not None:
        return True
    litellm = import_litellm()
    try:
        return bool(litellm.supports_function_calling(model=model))
    except Exception:  # an unknown model or provider: the text protocol is always there
        return False


class ModelAgent:
    """An agent answering with a chat model named as litellm names it (`openai/gpt-4o`, `ollama/qwen2.5`, ...):
    through litellm, or for `openai/` models (unless client="litellm") over plain HTTP.

    When its task offers tools (Task.tools), they go with every request in OpenAI's function format; the
    model's tool calls come back in the Reply, and each call's result goes back as a `tool` message with its
    `tool_call_id` (a reply without a tool call is read as text, as for a text model).

    Failure policy (the environment never blames the agent for a broken endpoint):
    - transient errors (429, 5xx, timeouts, connection errors, unparseable bodies) are retried
      `max_retries` times with exponential backoff (honouring Retry-After), then raise InfraError;
      act() gives up within `deadline_s` in total, keep it below the episode's agent timeout;
    - every other provider error (401, 400, unknown model, missing key) raises InfraError at once:
      it is a configuration problem of the run that retrying cannot fix and that says nothing
      about the model's ability, so it must not be scored as an agent failure;
    - a well-formed response without text or tool call (no choices, null content) is the model's own
      answer: it is returned as an empty Reply (tokens still counted), and the environment records an
      unusable action, exactly as for any reply it cannot parse.
    """

    def __init__(self, model: str, settings: ModelSettings | None = None) -> None:
        self.settings = settings = settings or ModelSettings()
        if not model or "/" not in model:
            raise UsageError(f"model agent needs a litellm model 'provider/model', got {model!r}")
        if settings.client == "http" and not model.startswith("openai/"):
            raise UsageError(f"client 'http' speaks to OpenAI-compatible endpoints: {model!r} is not an openai/ model")
        self.model = model
        self.record = Recording(settings.record_dir) if settings.record_dir else None
        self.replay = Recording(settings.replay_dir) if settings.replay_dir else None
        self.litellm = uses_litellm(model, settings.client)  #: False: plain HTTP to an OpenAI-compatible endpoint
        self._takes_tools: bool | None = None
        self.tools: tuple[dict[str, Any], ...] = ()  #: the tools sent with every request (OpenAI function form)
        self.conversation = Conversation("", settings.max_history_chars)
        self.attempts = 0  #: HTTP requests made, retries included (for tests and reports)
        self._ready = False

    @property
    def uses_tools(self) -> bool:
        """Whether this agent takes the app's actions as tools: what its provider takes (run/plan.py decides, with
        --tool-calls, whether an episode offers them; its task says)."""
        if self._takes_tools is None:
            self._takes_tools = takes_tools(self.model)
        return self._takes_tools

    # the Agent protocol

    def reset(self, task: Task) -> None:
        self.tools = tuple(tool.to_function() for tool in task.tools)
        self.conversation = Conversation(task.system_prompt, self.settings.max_history_chars)
        self._ready = True

    def act(self, observation: str) -> Reply:
        if not self._ready:
            raise RuntimeError("ModelAgent.act() called before reset(task)")
        history, dropped = self.conversation.pending(observation)
        messages = self.conversation.sendable(history, dropped)
        if self.replay is not None:  # answered from the recording: no litellm, no network
            reply = self.replay.load(self._request(messages))
        else:
            reply = self._complete(messages)
        if not self.tools and reply.tool_calls:  # no tools were offered: a stray call is not an action
            reply = dataclasses.replace(reply, tool_calls=())
        if self.record is not None:
            self.record.save(self._request(messages), reply)
        self.conversation.commit(history, dropped, reply)  # only on success: a retried act() adds no turn twice
        return reply

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The conversation as it would be sent now (system first, with the truncation marker)."""
        return self.conversation.sendable()

    @property
    def history(self) -> list[dict[str, Any]]:
        return self.conversation.history

    @property
    def dropped_messages(self) -> int:
        return self.conversation.dropped

    def close(self) -> None:
        self.conversation = Conversation("", self.settings.max_history_chars)
        self._ready = False

    # internals

    def _request(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        settings = self.settings
        request: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "timeout": settings.request_timeout_s,
            "drop_params": True,  # temperature/seed go only to providers that take them
            "num_retries": 0,  # retries are ours, so they are counted, bounded and reported
            "max_retries": 0,
            "temperature": settings.temperature,
        }
        if self.tools:
            request["tools"] = list(self.tools)
        if settings.seed is not None:
            request["seed"] = settings.seed
        if settings.max_tokens is not None:
            request["max_tokens"] = settings.max_tokens
        if settings.api_base:
            request["api_base"] = settings.api_base
        if settings.api_key:
            request["api_key"] = settings.api_key
        return request

    def _complete(self, messages: list[dict[str, Any]]) -> Reply:
        request = self._request(messages)
        from . import openai_http

        if self.litellm:
            litellm = import_litellm()

            def send() -> Reply:
                response = litellm.completion(**request)
                text, calls = _reply_text(response), openai_http.tool_calls(_message_field(response, "tool_calls"))
                return Reply(text, self._usage(response), calls)
        else:
            def send() -> Reply:
                timing: dict[str, float] = {}
                text, calls, tokens_in, tokens_out, cost = openai_http.complete(self.model, request, timing)
                return Reply(text, Usage(tokens_in, tokens_out, cost), calls, answer_s=timing.get("answer_s"))

        settings = self.settings
        started = time.monotonic()
        for attempt in range(settings.max_retries + 1):
            remaining = settings.deadline_s - (time.monotonic() - started)
            request["timeout"] = max(0.1, min(settings.request_timeout_s, remaining))
            self.attempts += 1
            attempt_started = time.perf_counter()
            try:
                reply = send()
                # the agent's time is its answered attempt's: failed attempts and backoff are the provider's
                answered = reply.answer_s if reply.answer_s is not None else time.perf_counter() - attempt_started
                return dataclasses.replace(reply, answer_s=answered)
            except Exception as error:  # every provider failure is infrastructure, never the agent's
                if not is_transient(error):
                    raise InfraError(
                        f"model {self.model} refused the request (not retried): {_describe(error)}"
                    ) from error
                delay = self._delay_s(attempt, error)
                elapsed = time.monotonic() - started
                # act() must end inside the episode's agent timeout, or a dead endpoint would be
                # recorded as the agent being slow
                if attempt == settings.max_retries or elapsed + delay >= settings.deadline_s:
                    raise InfraError(
                        f"model {self.model} failed {attempt + 1} times in {elapsed:.1f} s with transient "
                        f"errors; last: {_describe(error)}"
                    ) from error
                time.sleep(delay)
        raise AssertionError("unreachable")

    def _delay_s(self, attempt: int, error: BaseException) -> float:
        # jitter spreads the retries of parallel xdist workers that hit one rate limit together
        delay = self.settings.backoff_s * (2**attempt) * (1.0 + 0.25 * random.random())
        retry_after = _retry_after_s(error)
        if retry_after is not None:
            delay = max(delay, retry_after)
        return min(delay, MAX_BACKOFF_S)

    def _usage(self, response: Any) -> Usage:
        usage = getattr(response, "usage", None)
        tokens_in = _count(getattr(usage, "prompt_tokens", 0))
        tokens_out = _count(getattr(usage, "completion_tokens", 0))
        return Usage(tokens_in, tokens_out, _cost(response))


def _message_field(response: Any, name: str) -> Any:
    choices = getattr(response, "choices", None) or []
    if not choices:
        return None
    return getattr(getattr(choices[0], "message", None), name, None)


def _reply_text(response: Any) -> str:
    content = _message_field(response, "content")
    return content if isinstance(content, str) else ""


def _count(value: Any) -> int:
    return value if isinstance(value, int) and value > 0 else 0


def _cost(response: Any) -> float:
    """The reply's price from litellm's bundled price map; 0.0 for unpriced or local models."""
    litellm = import_litellm()
    try:
        cost = float(litellm.completion_cost(completion_response=response) or 0.0)
    except Exception:  # unpriced models raise; a missing price is not worth failing a run over
        return 0.0
    return cost if math.isfinite(cost) and cost > 0 else 0.0


def _describe(error: BaseException) -> str:
    status = getattr(error, "status_code", None)
    message = " ".join(str(error).split())
    if len(message) > 500:
        message = message[:500] + "..."
    prefix = f"HTTP {status} " if isinstance(status, int) else ""
    return f"{prefix}{type(error).__name__}: {message}"


def build(spec: Any, app: Any, query: Any, env: Any) -> ModelAgent:
    """The agent of a PROVIDER:MODEL spec (agents/kinds.py), with the run's model settings."""
    return ModelAgent(spec.target, ModelSettings.from_options(spec.settings, spec.target))
