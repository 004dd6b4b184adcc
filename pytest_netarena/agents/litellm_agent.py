"""The model-backed agent: any litellm model, with retries, token and cost accounting and a bounded context.

`openai/` models go straight to their OpenAI-compatible endpoint (agents/openai_http.py) unless the
`client` setting is "litellm": litellm's import alone costs about 2 s of CPU per process.
"""

from __future__ import annotations

import math
import os
import random
import time
from typing import Any

from ..core.types import Reply, Task, Usage
from ..core.errors import InfraError, UsageError
from .recording import Recording

#: how the plugin's option names (dest form) map onto constructor keywords
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
_DEFAULTS: dict[str, Any] = {
    "api_base": None, "api_key": None, "temperature": 0.0, "seed": None, "max_retries": 4, "backoff_s": 1.0,
    "request_timeout_s": 120.0, "deadline_s": 270.0, "max_history_chars": DEFAULT_MAX_HISTORY_CHARS,
    "max_tokens": None, "record_dir": None, "replay_dir": None, "client": "auto",
}
#: how a model is reached: "auto" (openai/ models over plain HTTP, the others through litellm),
#: "litellm" (always litellm) or "http" (plain HTTP; openai/ models only)
CLIENTS = ("auto", "litellm", "http")
MAX_BACKOFF_S = 60.0
#: HTTP statuses worth retrying: request timeout, conflict, too early, rate limit
_TRANSIENT_STATUSES = frozenset({408, 409, 425, 429})
#: litellm reports a missing key as a 500; retrying it only delays the inevitable
_CONFIG_MARKERS = ("missing credentials", "api_key client option", "llm provider not provided")
EMPTY_REPLY_PLACEHOLDER = "(empty reply)"

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


class LiteLLMAgent:
    """An agent answering with a chat model named as litellm names it (`openai/gpt-4o`, `ollama/qwen2.5`, ...):
    through litellm, or for `openai/` models (unless client="litellm") over plain HTTP.

    Failure policy (the environment never blames the agent for a broken endpoint):
    - transient errors (429, 5xx, timeouts, connection errors, unparseable bodies) are retried
      `max_retries` times with exponential backoff (honouring Retry-After), then raise InfraError;
      act() gives up within `deadline_s` in total, keep it below the episode's agent timeout;
    - every other provider error (401, 400, unknown model, missing key) raises InfraError at once:
      it is a configuration problem of the run that retrying cannot fix and that says nothing
      about the model's ability, so it must not be scored as an agent failure;
    - a well-formed response without text (no choices, null content) is the model's own answer:
      it is returned as an empty Reply (tokens still counted), and the environment records an
      unusable action, exactly as for any reply it cannot parse.
    """

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        temperature: float | None = 0.0,
        seed: int | None = None,
        max_retries: int = 4,
        backoff_s: float = 1.0,
        request_timeout_s: float = 120.0,
        deadline_s: float = 270.0,
        max_history_chars: int = DEFAULT_MAX_HISTORY_CHARS,
        max_tokens: int | None = None,
        record_dir: str | None = None,
        replay_dir: str | None = None,
        client: str = "auto",
        **settings: Any,
    ) -> None:
        given = {
            "api_base": api_base, "api_key": api_key, "temperature": temperature, "seed": seed,
            "max_retries": max_retries, "backoff_s": backoff_s, "request_timeout_s": request_timeout_s,
            "deadline_s": deadline_s, "max_history_chars": max_history_chars, "max_tokens": max_tokens,
            "record_dir": record_dir, "replay_dir": replay_dir, "client": client,
        }
        for name, value in settings.items():
            if name not in SETTING_ALIASES:
                accepted = ", ".join(sorted({*given, *SETTING_ALIASES}))
                raise UsageError(f"unknown setting {name!r} for model agent {model!r}; accepted: {accepted}")
            if value is not None:
                given[SETTING_ALIASES[name]] = value
        # None means "the default" everywhere: the plugin passes options the user left unset as None
        values = {name: _DEFAULTS[name] if value is None else value for name, value in given.items()}
        if not model or "/" not in model:
            raise UsageError(f"model agent needs a litellm model 'provider/model', got {model!r}")
        try:
            self.model = model
            self.api_base: str | None = values["api_base"]
            self.api_key: str | None = values["api_key"]
            self.temperature = float(values["temperature"])
            self.seed: int | None = None if values["seed"] is None else int(values["seed"])
            self.max_retries = max(0, int(values["max_retries"]))
            self.backoff_s = max(0.0, float(values["backoff_s"]))
            self.request_timeout_s = float(values["request_timeout_s"])
            self.deadline_s = float(values["deadline_s"])
            self.max_history_chars = int(values["max_history_chars"])
            self.max_tokens: int | None = None if values["max_tokens"] is None else int(values["max_tokens"])
            self.record = Recording(values["record_dir"]) if values["record_dir"] else None
            self.replay = Recording(values["replay_dir"]) if values["replay_dir"] else None
        except (TypeError, ValueError) as error:
            raise UsageError(f"bad setting for model agent {model!r}: {error}") from error
        if values["client"] not in CLIENTS:
            raise UsageError(f"the model client is one of {', '.join(CLIENTS)}; got {values['client']!r}")
        if values["client"] == "http" and not model.startswith("openai/"):
            raise UsageError(f"client 'http' speaks to OpenAI-compatible endpoints: {model!r} is not an openai/ model")
        self.litellm = uses_litellm(model, values["client"])  #: False: plain HTTP to an OpenAI-compatible endpoint
        self.system_prompt = ""
        self.history: list[dict[str, str]] = []  #: system, first observation, recent turns
        self.dropped_messages = 0  #: turns removed from the middle of the history so far
        self.attempts = 0  #: HTTP requests made, retries included (for tests and reports)
        self._ready = False

    # the Agent protocol

    def reset(self, task: Task) -> None:
        self.system_prompt = task.system_prompt
        self.history = [{"role": "system", "content": task.system_prompt}]
        self.dropped_messages = 0
        self._ready = True

    def act(self, observation: str) -> Reply:
        if not self._ready:
            raise RuntimeError("LiteLLMAgent.act() called before reset(task)")
        dropped_before = self.dropped_messages
        history = self._trim([*self.history, {"role": "user", "content": observation}])
        messages = self._sendable(history)
        try:
            if self.replay is not None:  # answered from the recording: no litellm, no network
                reply = self.replay.load(self._request(messages))
            else:
                reply = self._complete(messages)
        except BaseException:
            self.dropped_messages = dropped_before  # nothing is committed when the call fails
            raise
        if self.record is not None:
            self.record.save(self._request(messages), reply)
        # some providers reject empty assistant turns, so the history keeps a visible placeholder
        history.append({"role": "assistant", "content": reply.text or EMPTY_REPLY_PLACEHOLDER})
        self.history = history  # committed only on success: a retried act() does not duplicate turns
        return reply

    @property
    def messages(self) -> list[dict[str, str]]:
        """The conversation as it would be sent now (system first, with the truncation marker)."""
        return self._sendable(self.history)

    def close(self) -> None:
        self.history = []
        self._ready = False

    # internals

    def _request(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "timeout": self.request_timeout_s,
            "drop_params": True,  # temperature/seed go only to providers that take them
            "num_retries": 0,  # retries are ours, so they are counted, bounded and reported
            "max_retries": 0,
        }
        request["temperature"] = self.temperature
        if self.seed is not None:
            request["seed"] = self.seed
        if self.max_tokens is not None:
            request["max_tokens"] = self.max_tokens
        if self.api_base:
            request["api_base"] = self.api_base
        if self.api_key:
            request["api_key"] = self.api_key
        return request

    def _complete(self, messages: list[dict[str, str]]) -> Reply:
        request = self._request(messages)
        if self.litellm:
            litellm = import_litellm()

            def send() -> Reply:
                response = litellm.completion(**request)
                return Reply(_reply_text(response), self._usage(response))
        else:
            from . import openai_http

            def send() -> Reply:
                text, tokens_in, tokens_out, cost = openai_http.complete(self.model, request)
                return Reply(text, Usage(tokens_in, tokens_out, cost))

        started = time.monotonic()
        for attempt in range(self.max_retries + 1):
            remaining = self.deadline_s - (time.monotonic() - started)
            request["timeout"] = max(0.1, min(self.request_timeout_s, remaining))
            self.attempts += 1
            try:
                return send()
            except Exception as error:  # every provider failure is infrastructure, never the agent's
                if not is_transient(error):
                    raise InfraError(
                        f"model {self.model} refused the request (not retried): {_describe(error)}"
                    ) from error
                delay = self._delay_s(attempt, error)
                elapsed = time.monotonic() - started
                # act() must end inside the episode's agent timeout, or a dead endpoint would be
                # recorded as the agent being slow
                if attempt == self.max_retries or elapsed + delay >= self.deadline_s:
                    raise InfraError(
                        f"model {self.model} failed {attempt + 1} times in {elapsed:.1f} s with transient "
                        f"errors; last: {_describe(error)}"
                    ) from error
                time.sleep(delay)
        raise AssertionError("unreachable")

    def _delay_s(self, attempt: int, error: BaseException) -> float:
        # jitter spreads the retries of parallel xdist workers that hit one rate limit together
        delay = self.backoff_s * (2**attempt) * (1.0 + 0.25 * random.random())
        retry_after = _retry_after_s(error)
        if retry_after is not None:
            delay = max(delay, retry_after)
        return min(delay, MAX_BACKOFF_S)

    def _usage(self, response: Any) -> Usage:
        usage = getattr(response, "usage", None)
        tokens_in = _count(getattr(usage, "prompt_tokens", 0))
        tokens_out = _count(getattr(usage, "completion_tokens", 0))
        return Usage(tokens_in, tokens_out, _cost(response))

    def _trim(self, messages: list[dict[str, str]]) -> list[dict[str, str]]:
        """Keep system + first observation + the most recent turns within max_history_chars.

        Whole turns go from the front, so the kept tail still starts with an observation; the
        latest observation is always kept, even alone over the limit. Counts the marker's length.
        """
        head, tail = messages[:2], messages[2:]
        dropped = self.dropped_messages
        while len(tail) > 1:
            marker = len(_marker_text(dropped)) if dropped else 0
            if _chars(head) + marker + _chars(tail) <= self.max_history_chars:
                break
            cut = 1
            while cut < len(tail) - 1 and tail[cut]["role"] != "user":
                cut += 1
            dropped += cut
            tail = tail[cut:]
        self.dropped_messages = dropped
        return [*head, *tail]

    def _sendable(self, history: list[dict[str, str]]) -> list[dict[str, str]]:
        """The history as sent: a marker after the first observation says how much was dropped."""
        if not self.dropped_messages:
            return list(history)
        return [*history[:2], {"role": "user", "content": _marker_text(self.dropped_messages)}, *history[2:]]


def _marker_text(dropped: int) -> str:
    return f"[{dropped} earlier messages were removed to keep the conversation short; the latest follow.]"


def _chars(messages: list[dict[str, str]]) -> int:
    return sum(len(message.get("content") or "") for message in messages)


def _reply_text(response: Any) -> str:
    choices = getattr(response, "choices", None) or []
    if not choices:
        return ""
    message = getattr(choices[0], "message", None)
    content = getattr(message, "content", None)
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
