"""A small client for OpenAI-compatible chat completions over httpx: `openai:` models without litellm's import.

litellm costs about 2 s of CPU to import in every process that talks to a model; on a few cores
that start-up, paid by each xdist worker, was what limited LLM-bound runs (docs/scale.md). For the
`openai` provider, which is one HTTP endpoint (api.openai.com or any compatible server given by
--llm-api-base), this client sends the same request litellm would, with the same failure
semantics, and prices replies from litellm's bundled price map read as JSON. `--llm-client
litellm` (or the agent setting `client="litellm"`) goes through litellm instead.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import threading
import time
from pathlib import Path
from typing import Any

from ..core.tools import ToolCall

#: request keys that are litellm's own options, not part of the chat completion body
LITELLM_ONLY = frozenset({"model", "timeout", "drop_params", "num_retries", "max_retries", "api_base", "api_key"})
#: parameters a model may refuse (reasoning models take no temperature or seed): dropped and the
#: request sent again, as litellm's drop_params does; max_tokens is renamed instead
DROPPABLE = frozenset({"temperature", "seed", "top_p"})
TRANSIENT_STATUSES = frozenset({408, 409, 425, 429})
DEFAULT_BASE = "https://api.openai.com/v1"
MAX_ERROR_BODY = 2000

_client: Any = None  #: one httpx pool per process, shared by every episode in flight
_client_lock = threading.Lock()
#: (base, model) -> parameters that endpoint refused, learnt once per process
_refused: dict[tuple[str, str], set[str]] = {}
_prices: dict[str, dict] | None = None
_prices_lock = threading.Lock()


class ModelRequestError(Exception):
    """A failed chat completion: HTTP status (None for transport errors), whether a retry may help."""

    def __init__(self, message: str, status_code: int | None = None, transient: bool = False,
                 retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.transient = transient
        self.retry_after_s = retry_after_s


def provider_model(model: str) -> str | None:
    """The model name an OpenAI endpoint expects, for `openai/NAME` models; None for other providers."""
    provider, _, name = model.partition("/")
    return name if provider == "openai" and name else None


def complete(model: str, request: dict[str, Any],
             timing: dict[str, float] | None = None) -> tuple[str, tuple[ToolCall, ...], int, int, float]:
    """Send one chat completion; (text, tool calls, prompt tokens, completion tokens, cost in USD).

    `request` is the agent's litellm-style request (messages, temperature, timeout, api_base, ...); `timing`, when
    given, gets "answer_s": the request out to the provider's answer (its response headers, which a non-streamed
    completion sends once generated), so the body's size and how it travels move nothing. Raises ModelRequestError.
    """
    name = provider_model(model)
    if name is None:
        raise ValueError(f"{model!r} is not an openai/ model")
    base = (request.get("api_base") or os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE")
            or DEFAULT_BASE).rstrip("/")
    key = request.get("api_key") or os.environ.get("OPENAI_API_KEY")
    if not key:
        raise ModelRequestError("missing credentials: set OPENAI_API_KEY (any value for a local server)")
    body = {name_: value for name_, value in request.items() if name_ not in LITELLM_ONLY}
    body["model"] = name
    refused = _refused.setdefault((base, name), set())
    while True:  # one more request per parameter the endpoint refuses (a finite set)
        response, answered = _post(base, key, _adapted(body, refused), float(request.get("timeout") or 120.0))
        if timing is not None:
            timing["answer_s"] = answered
        param = _refused_parameter(response) if response.status_code == 400 else None
        if param is None or param in refused:
            return _parse(response, name)
        refused.add(param)


def _adapted(body: dict[str, Any], refused: set[str]) -> dict[str, Any]:
    sent = {name: value for name, value in body.items() if name not in refused}
    if "max_tokens" in refused and "max_tokens" in body:
        sent["max_completion_tokens"] = body["max_tokens"]
    return sent


def _refused_parameter(response: Any) -> str | None:
    """The parameter a 400 says the model does not support, when it is one we may drop or rename."""
    error = _error_object(response)
    param, message = error.get("param"), str(error.get("message") or "").lower()
    refusing = any(words in message for words in ("unsupported", "not supported", "does not support"))
    return param if refusing and (param in DROPPABLE or param == "max_tokens") else None


def _httpx() -> Any:
    try:
        import httpx  # lazy: only model runs need it
    except ImportError as error:
        raise ModelRequestError("openai: models need httpx: pip install 'pytest-netarena[llm]'") from error
    return httpx


def _pool() -> Any:
    global _client
    httpx = _httpx()
    with _client_lock:
        if _client is None:
            _client = httpx.Client(limits=httpx.Limits(max_connections=256, max_keepalive_connections=64))
        return _client


def _post(base: str, key: str, body: dict[str, Any], timeout_s: float) -> tuple[Any, float]:
    """(the response, read whole; seconds from the request to its headers)."""
    httpx = _httpx()
    client = _pool()
    try:
        request = client.build_request("POST", f"{base}/chat/completions", json=body, timeout=timeout_s,
                                       headers={"Authorization": f"Bearer {key}"})
        started = time.perf_counter()
        response = client.send(request, stream=True)
        answered = time.perf_counter() - started
        try:
            response.read()
        finally:
            response.close()
        return response, answered
    except httpx.TimeoutException as error:
        raise ModelRequestError(f"Timeout: the request timed out after {timeout_s:g} s ({type(error).__name__})",
                                transient=True) from error
    except httpx.HTTPError as error:
        raise ModelRequestError(f"APIConnectionError: {type(error).__name__}: {error}", transient=True) from error


def _parse(response: Any, name: str) -> tuple[str, tuple[ToolCall, ...], int, int, float]:
    status = response.status_code
    if status >= 400:
        error = _error_object(response)
        said = str(error.get("message") or response.text[:MAX_ERROR_BODY] or response.reason_phrase)
        raise ModelRequestError(said, status, status in TRANSIENT_STATUSES or status >= 500,
                                _retry_after_s(response.headers.get("retry-after")))
    try:
        payload = response.json()
    except ValueError:
        payload = None
    if not isinstance(payload, dict) or not isinstance(payload.get("choices"), list):
        raise ModelRequestError(f"the endpoint answered {status} with a body that is not a chat completion: "
                                f"{response.text[:200]!r}", status, transient=True)
    text, calls = "", tuple[ToolCall, ...]()
    if payload["choices"] and isinstance(payload["choices"][0], dict):
        found = payload["choices"][0].get("message")
        message: dict[str, Any] = found if isinstance(found, dict) else {}
        content = message.get("content")
        text = content if isinstance(content, str) else ""
        calls = tool_calls(message.get("tool_calls"))
    usage = _object(payload.get("usage"))
    tokens_in, tokens_out = _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))
    cached = min(tokens_in, _count(_object(usage.get("prompt_tokens_details")).get("cached_tokens")))
    model = payload.get("model")
    served = model if isinstance(model, str) else name
    return text, calls, tokens_in, tokens_out, price(served, name, tokens_in, tokens_out, cached)


def _object(value: Any) -> dict[str, Any]:
    """A JSON object of the answer, or an empty one for anything else."""
    return value if isinstance(value, dict) else {}


def tool_calls(raw: Any) -> tuple[ToolCall, ...]:
    """The tool calls of a completion's message (OpenAI's form, as dicts or as objects with the same fields).

    The model's output is kept as sent: arguments that are not text are written as JSON, a call without an id
    gets one (call_<n>), and nothing is judged here (the episode refuses a malformed call as a step)."""
    found = []
    for number, call in enumerate(raw if isinstance(raw, (list, tuple)) else ()):
        function = _field(call, "function")
        name, arguments, call_id = _field(function, "name"), _field(function, "arguments"), _field(call, "id")
        if arguments is None:
            arguments = ""
        elif not isinstance(arguments, str):
            try:
                arguments = json.dumps(arguments)
            except (TypeError, ValueError):
                arguments = str(arguments)
        found.append(ToolCall("" if name is None else str(name), arguments,
                              str(call_id) if call_id else f"call_{number}"))
    return tuple(found)


def _field(value: Any, name: str) -> Any:
    return value.get(name) if isinstance(value, dict) else getattr(value, name, None)


def _error_object(response: Any) -> dict[str, Any]:
    try:
        payload = response.json()
    except ValueError:
        return {}
    error = payload.get("error") if isinstance(payload, dict) else None
    return error if isinstance(error, dict) else {}


def _retry_after_s(value: str | None) -> float | None:
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date: our own backoff applies
    return seconds if seconds is not None and math.isfinite(seconds) and seconds >= 0 else None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and value > 0 else 0


def price(served: str, requested: str, tokens_in: int, tokens_out: int, cached: int = 0) -> float:
    """The cost of a reply from litellm's price map (the served model's entry, else the requested one)."""
    prices = _price_map()
    entry = next((prices[name] for name in (served, requested)
                  if isinstance(prices.get(name), dict) and prices[name].get("litellm_provider") == "openai"), None)
    if entry is None:
        return 0.0
    try:
        per_in = float(entry.get("input_cost_per_token") or 0.0)
        per_cached = float(entry.get("cache_read_input_token_cost") or per_in)
        per_out = float(entry.get("output_cost_per_token") or 0.0)
    except (TypeError, ValueError):
        return 0.0
    cost = (tokens_in - cached) * per_in + cached * per_cached + tokens_out * per_out
    return cost if math.isfinite(cost) and cost > 0 else 0.0


def _price_map() -> dict[str, dict]:
    """litellm's bundled price map, read as JSON without importing litellm ({} when it is not installed)."""
    global _prices
    with _prices_lock:
        if _prices is None:
            _prices = {}
            spec = importlib.util.find_spec("litellm")  # finds the package without running it
            for folder in (spec.submodule_search_locations or []) if spec is not None else []:
                path = Path(folder) / "model_prices_and_context_window_backup.json"
                try:
                    loaded = json.loads(path.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    continue
                if isinstance(loaded, dict):
                    _prices = loaded
                    break
        return _prices
