"""One real request to an agent's model provider before a run: is the endpoint there, and does it take the key?

A refused key, an endpoint with no route to it or a dead local server would otherwise cost a whole run of
infrastructure errors (a minute or more each, with retries) before anyone sees why. The request reads, never
writes and costs nothing where the API has a listing of models (OpenAI and every compatible server, Anthropic,
Ollama); other litellm providers get the smallest completion there is (one token out).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import UsageError

#: how long the check may take: a run that cannot reach its provider fails in seconds, not after 200 s of retries
CONNECT_TIMEOUT_S = 5.0
READ_TIMEOUT_S = 20.0
ANTHROPIC_VERSION = "2023-06-01"
OPENAI_BASE = "https://api.openai.com/v1"
ANTHROPIC_BASE = "https://api.anthropic.com"
OLLAMA_BASE = "http://localhost:11434"


@dataclass(frozen=True)
class ReachRequest:
    """The one GET a check sends: where, with which headers (the key among them), and what it is for."""

    url: str
    headers: dict[str, str] = field(default_factory=dict, repr=False)  #: never shown: they hold the key
    base: str = ""  #: the endpoint as the user names it (--llm-api-base, or the provider's own)
    purpose: str = "the list of models"


@dataclass(frozen=True)
class ReachAnswer:
    """What came back: an HTTP status and the provider's message, or no answer at all (`error`)."""

    status: int | None
    message: str = ""
    error: str = ""


def send(request: ReachRequest, timeout_s: float = READ_TIMEOUT_S) -> ReachAnswer:
    """The request, sent once (no retries, no redirects)."""
    import httpx

    timeout = httpx.Timeout(timeout_s, connect=CONNECT_TIMEOUT_S)
    try:
        response = httpx.get(request.url, headers=request.headers, timeout=timeout, follow_redirects=False)
    except httpx.HTTPError as error:
        return ReachAnswer(None, error=_short(f"{type(error).__name__}: {error}") or type(error).__name__)
    return ReachAnswer(response.status_code, _provider_message(response))


def judge(who: str, request: ReachRequest, answer: ReachAnswer, key_fix: str, reach_fix: str) -> str:
    """Raise UsageError when the provider is out of reach or refused the key; return a warning for the run's
    header when it answered with a server error, else ""."""
    where = request.base or request.url
    if answer.status is None:
        raise UsageError(f"{who}: {where} does not answer ({answer.error}); {reach_fix}")
    if answer.status in (401, 403):
        said = f": {answer.message}" if answer.message else ""
        raise UsageError(f"{who}: the provider at {where} refused the key (HTTP {answer.status}{said}); {key_fix}")
    if answer.status >= 500:
        return f"{who}: {where} answered {request.purpose} with HTTP {answer.status} ({answer.message or 'no message'})"
    return ""


def model_request(provider: str, settings: dict[str, Any]) -> ReachRequest | None:
    """The listing request of a `provider/model` agent's provider, None for a provider without a known one."""
    base = settings.get("api_base")
    if provider == "openai":
        base = base or os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE") or OPENAI_BASE
        key = settings.get("api_key") or os.environ.get("OPENAI_API_KEY") or ""
        return openai_listing(str(base), key)
    if provider == "anthropic":
        base = base or os.environ.get("ANTHROPIC_BASE_URL") or os.environ.get("ANTHROPIC_API_BASE") or ANTHROPIC_BASE
        return anthropic_listing(str(base), settings.get("api_key") or os.environ.get("ANTHROPIC_API_KEY") or "")
    if provider in ("ollama", "ollama_chat"):
        base = base or os.environ.get("OLLAMA_API_BASE") or OLLAMA_BASE
        return ReachRequest(f"{str(base).rstrip('/')}/api/tags", {}, str(base), "the list of local models")
    if base:  # any other provider pointed at a server of the user's: OpenAI-compatible, as litellm speaks to it
        return openai_listing(str(base), settings.get("api_key") or "")
    return None


def openai_listing(base: str, key: str) -> ReachRequest:
    return ReachRequest(f"{base.rstrip('/')}/models", {"Authorization": f"Bearer {key}"} if key else {}, base)


def anthropic_listing(base: str, key: str) -> ReachRequest:
    root = base.rstrip("/").removesuffix("/v1")
    headers = {"anthropic-version": ANTHROPIC_VERSION, **({"x-api-key": key} if key else {})}
    return ReachRequest(f"{root}/v1/models", headers, base)


def api_listing(api: str, base: str, key: str) -> ReachRequest:
    """The listing request of an API a CLI agent speaks ("anthropic-messages", else OpenAI's)."""
    return anthropic_listing(base, key) if api == "anthropic-messages" else openai_listing(base, key)


def smallest_completion(model: str, settings: dict[str, Any]) -> ReachAnswer:
    """For a litellm provider without a known listing: one completion of one token, its failure read as an answer."""
    from .model_agent import import_litellm

    litellm = import_litellm()
    request: dict[str, Any] = {"model": model, "messages": [{"role": "user", "content": "ping"}], "max_tokens": 1,
                               "timeout": READ_TIMEOUT_S, "num_retries": 0, "max_retries": 0}
    for name in ("api_base", "api_key"):
        if settings.get(name):
            request[name] = settings[name]
    try:
        litellm.completion(**request)
    except (litellm.AuthenticationError, litellm.PermissionDeniedError) as error:
        return ReachAnswer(getattr(error, "status_code", None) or 401, _short(str(error)))
    except (litellm.APIConnectionError, litellm.Timeout) as error:
        return ReachAnswer(None, error=_short(str(error)))
    except Exception as error:  # any other answer (a bad request, a rate limit) came from a provider that is there
        status = getattr(error, "status_code", None)
        return ReachAnswer(status if isinstance(status, int) else 200, _short(str(error)))
    return ReachAnswer(200)


def _provider_message(response: Any) -> str:
    try:
        body = response.json()
    except ValueError:
        return _short(response.text)
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        return _short(str(error.get("message") or error.get("type") or ""))
    if isinstance(error, str):
        return _short(error)
    return ""


def _short(text: str, keep: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= keep else text[:keep] + "..."
