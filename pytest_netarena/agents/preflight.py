"""Every agent checked once before a run: credentials, one real request to its provider, a cost cap that can be enforced.

A missing or refused key, an endpoint out of reach or a CLI that is not installed would otherwise be one
error per episode, charged to nobody or to the agent; a cost cap on a model whose price is unknown would
record $0 and never stop. Each agent kind gets one real request (agents/reach.py: a provider's list of
models, an A2A agent's card) and is one usage error, with the fix, when it fails. Nothing is checked for
--llm-replay, which needs no network.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from ..core.errors import UsageError
from . import reach
from .kinds import KINDS

#: how to run one's own model on an OpenAI-compatible server (vLLM, llama.cpp, Ollama's /v1, LM Studio...)
LOCAL_RECIPE = ("for a model on an OpenAI-compatible server of your own: --agent=openai:MODEL --llm-api-base URL "
                "(e.g. http://127.0.0.1:8000/v1) with OPENAI_API_KEY=any")
#: providers litellm reaches on this machine by default, and where
LOCAL_DEFAULTS = {"ollama": "http://localhost:11434", "ollama_chat": "http://localhost:11434"}
A2A_TIMEOUT_S = 30.0


def check_agents(specs: Iterable[Any], run_budget: Any = None, episode_budget: Any = None) -> list[str]:
    """Raise UsageError for the first agent that cannot run; return warnings for the run's header. The budgets
    (run.budget.Budget) are the run's caps, checked against the models' prices when given."""
    warnings: list[str] = []
    for spec in specs:
        if spec.kind == "model" and not spec.settings.get("replay_dir"):
            _check_credentials(spec)
            warnings.extend(filter(None, [_reach_model(spec)]))
            if run_budget is not None and episode_budget is not None:
                warnings.extend(_check_cost_caps(spec, run_budget, episode_budget))
        elif spec.kind == "a2a":
            _reach_a2a(spec)
        else:
            warnings.extend(filter(None, [KINDS[spec.kind].reach(spec)]))
    return warnings


def _check_credentials(spec: Any) -> None:
    from .model_agent import uses_litellm

    provider = spec.target.partition("/")[0]
    if spec.settings.get("api_key"):
        missing = []
    elif not uses_litellm(spec.target, spec.settings.get("client")):
        missing = [] if os.environ.get("OPENAI_API_KEY") else ["OPENAI_API_KEY"]
    elif provider in LOCAL_DEFAULTS:
        missing = []
    else:
        from .model_agent import import_litellm

        try:
            found = import_litellm().validate_environment(model=spec.target)
        except Exception:  # a provider litellm cannot check: the real request below says what is wrong
            return
        missing = list(found.get("missing_keys") or []) if isinstance(found, dict) else []
    if missing:
        raise UsageError(f"model agent {spec.raw}: {' and '.join(missing)} not set (the provider's key); "
                         f"{LOCAL_RECIPE}")


def _reach_model(spec: Any) -> str:
    """One real request to the model's provider; a warning, or ""."""
    provider = spec.target.partition("/")[0]
    settings = dict(spec.settings)
    if provider in LOCAL_DEFAULTS and not settings.get("api_base"):
        settings["api_base"] = LOCAL_DEFAULTS[provider]
    who = f"model agent {spec.raw}"
    request = reach.model_request(provider, settings)
    key_fix = f"set the provider's key to one it accepts; {LOCAL_RECIPE}"
    reach_fix = f"start the server first, or fix --llm-api-base or the route to the provider; {LOCAL_RECIPE}"
    if request is None:  # a provider without a known listing: the smallest completion
        answer = reach.smallest_completion(spec.target, settings)
        request = reach.ReachRequest(spec.target, base=f"{provider}'s endpoint", purpose="a one-token completion")
    else:
        answer = reach.send(request)
    return reach.judge(who, request, answer, key_fix, reach_fix)


def _reach_a2a(spec: Any) -> None:
    """An A2A agent that cannot be reached is one usage error before the run, as the green agent fails an
    assessment it cannot reach: never a run of episodes scored 0 for an agent that was not there."""
    from .a2a_agent import unreachable

    problem = unreachable(spec.target, min(float(spec.settings.get("timeout_s") or A2A_TIMEOUT_S), A2A_TIMEOUT_S))
    if problem:
        raise UsageError(f"--agent {spec.raw}: {problem}; start the agent or fix its URL (nothing was run)")


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
