"""Model agents checked once before a run: credentials, an endpoint that answers, a cost cap that can be enforced.

A missing key or a dead endpoint would otherwise be one infra error per episode; a cost cap on a model
whose price is unknown would record $0 and never stop. Checks are cheap (environment variables, a
TCP connect, litellm's bundled price map) and skipped for --llm-replay, which needs no network.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from ..core.errors import UsageError

#: how to run one's own model on an OpenAI-compatible server (vLLM, llama.cpp, Ollama's /v1, LM Studio...)
LOCAL_RECIPE = ("for a model on an OpenAI-compatible server of your own: --agent=openai:MODEL --llm-api-base URL "
                "(e.g. http://127.0.0.1:8000/v1) with OPENAI_API_KEY=any")
#: providers litellm reaches on this machine by default, and where
LOCAL_DEFAULTS = {"ollama": "http://localhost:11434", "ollama_chat": "http://localhost:11434"}
CONNECT_TIMEOUT_S = 3.0


def check_model_agents(specs: Iterable[Any], run_budget: Any, episode_budget: Any) -> list[str]:
    """Raise UsageError for the first model agent that cannot run; return warnings for the run's header."""
    warnings: list[str] = []
    for spec in specs:
        if spec.kind != "model" or spec.settings.get("replay_dir"):
            continue
        _check_credentials(spec)
        _check_endpoint(spec)
        warnings.extend(_check_cost_caps(spec, run_budget, episode_budget))
    return warnings


def _endpoint(spec: Any) -> str | None:
    """The base URL the agent will call when it is one the user chose (or a local default), else None."""
    provider = spec.target.partition("/")[0]
    if spec.settings.get("api_base"):
        return str(spec.settings["api_base"])
    if provider == "openai":
        return os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE")
    return LOCAL_DEFAULTS.get(provider)


def _check_credentials(spec: Any) -> None:
    from .model_agent import uses_litellm

    provider = spec.target.partition("/")[0]
    if not uses_litellm(spec.target, spec.settings.get("client")):
        missing = [] if os.environ.get("OPENAI_API_KEY") else ["OPENAI_API_KEY"]
    elif provider in LOCAL_DEFAULTS:
        missing = []
    else:
        from .model_agent import import_litellm

        try:
            found = import_litellm().validate_environment(model=spec.target)
        except Exception:  # a provider litellm cannot check: the first episode says what is wrong
            return
        missing = list(found.get("missing_keys") or []) if isinstance(found, dict) else []
    if missing:
        raise UsageError(f"model agent {spec.raw}: {' and '.join(missing)} not set (the provider's key); "
                         f"{LOCAL_RECIPE}")


def _check_endpoint(spec: Any) -> None:
    base = _endpoint(spec)
    if not base:
        return  # the provider's public endpoint: proxies and DNS are the network's business
    url = urlsplit(base)
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        with socket.create_connection((url.hostname or "", port), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as error:
        raise UsageError(f"model agent {spec.raw}: the endpoint {base} does not answer ({error.strerror or error}); "
                         f"start the server first, or fix --llm-api-base; {LOCAL_RECIPE}") from None


def _check_cost_caps(spec: Any, run_budget: Any, episode_budget: Any) -> list[str]:
    """A cost cap needs a price: refused without a token cap beside it, a warning with one."""
    capped = [(budget, name) for budget, name in ((run_budget, "--max-cost-usd"), (episode_budget,
                                                                                   "--max-episode-cost-usd"))
              if budget.max_cost_usd is not None]
    if not capped or priced(spec.target):
        return []
    warnings = []
    for budget, name in capped:
        tokens = "--max-tokens" if name == "--max-cost-usd" else "--max-episode-tokens"
        if budget.max_tokens is None:
            raise UsageError(f"{name} cannot stop {spec.raw}: no price is known for {spec.raw} (a local or unlisted "
                             f"model costs this run $0), so the cap would never trip; cap its tokens instead "
                             f"({tokens} N), beside or instead of {name}")
        warnings.append(f"no price is known for {spec.raw}: {name} cannot stop it; {tokens} "
                        f"{budget.max_tokens} does")
    return warnings


def priced(model: str) -> bool:
    """Whether litellm's bundled price map gives `provider/name` a price above zero."""
    from .openai_http import _price_map

    prices = _price_map()
    name = model.partition("/")[2]
    for key in (model, name):
        entry = prices.get(key)
        if isinstance(entry, dict) and any(_positive(entry.get(field)) for field in
                                           ("input_cost_per_token", "output_cost_per_token")):
            return True
    return False


def _positive(value: Any) -> bool:
    try:
        return float(value) > 0
    except (TypeError, ValueError):
        return False
