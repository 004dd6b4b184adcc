"""The three apps as `verifiers` environments (MultiTurnEnv + Rubric) that step our Gymnasium env and keep its reward.

`load_environment(app="k8s")` is the entry point `verifiers` (and prime-rl, which trains on its
environments) looks for. Each rollout owns one `NetArenaEnv`: `setup_state` resets it with the
dataset row's seed and makes its first observation the prompt, `env_response` passes every model
reply to `NetArenaEnv.step` and returns the next observation, and the rubric's reward is the sum of
the step rewards `NetArenaEnv` computed. Nothing of the episode is re-implemented here. See
docs/training.md.
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import verifiers as vf
from datasets import Dataset

from .env import NetArenaEnv
from .registration import ENV_IDS

#: app names load_environment takes
APPS = tuple(app for app, _ in ENV_IDS.values())


class NetArenaVerifiersEnv(vf.MultiTurnEnv):
    """A benchmark app as a verifiers multi-turn environment; keyword arguments go to NetArenaEnv."""

    def __init__(self, app: str, dataset: Dataset, env_kwargs: dict[str, Any], **kwargs: Any) -> None:
        if app not in APPS:
            raise ValueError(f"app takes one of {', '.join(APPS)}; got {app!r}")
        self.app = app
        self.env_kwargs = dict(env_kwargs)
        rubric = vf.Rubric(funcs=[netarena_return])
        rubric.add_metric(resolved)
        rubric.add_metric(safe)
        super().__init__(dataset=dataset, rubric=rubric, **kwargs)

    async def setup_state(self, state: vf.State) -> vf.State:
        # One thread per rollout: the environment's shells and servers are only ever driven from it.
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"netarena-{self.app}")
        state["netarena_executor"] = executor
        env = await _on(executor, NetArenaEnv, self.app, **self.env_kwargs)
        state["netarena_env"] = env
        seed = int(state["info"]["seed"])
        options = state["info"].get("options") or None
        observation, info = await _on(executor, lambda: env.reset(seed=seed, options=options))
        state["netarena"] = {"query_id": info["query_id"], "rewards": [], "correct": None,
                             "episode_safe": True, "outcome": ""}
        state["prompt"] = [vf.SystemMessage(content=info["system_prompt"]), vf.UserMessage(content=observation)]
        return state

    async def env_response(self, messages: vf.Messages, state: vf.State, **kwargs: Any) -> vf.Messages:
        reply = self.parser.parse_answer(messages) or ""
        env: NetArenaEnv = state["netarena_env"]
        observation, reward, terminated, truncated, info = await _on(state["netarena_executor"], env.step, reply)
        record = state["netarena"]
        record["rewards"].append(reward)
        record.update(correct=info["correct"], episode_safe=info["episode_safe"], outcome=info["outcome"])
        response = [vf.UserMessage(content=observation)]
        if terminated or truncated:
            state["final_env_response"] = response
        return response

    @vf.cleanup
    async def close_netarena_env(self, state: vf.State) -> None:
        """Release the rollout's app environment (Mininet network, API server, sandbox) and its thread."""
        env, executor = state.pop("netarena_env", None), state.pop("netarena_executor", None)
        if executor is None:
            return
        try:
            if env is not None:
                await _on(executor, env.close)
        finally:
            executor.shutdown(wait=False)


async def _on(executor: ThreadPoolExecutor, function: Any, *args: Any, **kwargs: Any) -> Any:
    return await asyncio.get_running_loop().run_in_executor(executor, lambda: function(*args, **kwargs))


async def netarena_return(state: vf.State) -> float:
    """The episode's return: the sum of NetArenaEnv's step rewards (RewardConfig)."""
    return float(sum(state.get("netarena", {}).get("rewards", [])))


async def resolved(state: vf.State) -> float:
    """1 when the benchmark's outcome is `resolved` (correct, safe, not overly permissive)."""
    return float(state.get("netarena", {}).get("outcome") == "resolved")


async def safe(state: vf.State) -> float:
    """1 when no step of the episode broke something that worked."""
    return float(state.get("netarena", {}).get("episode_safe", True))


def load_environment(
    app: str = "k8s",
    *,
    num_examples: int = 100,
    first_seed: int = 0,
    options: dict[str, Any] | None = None,
    max_turns: int | None = None,
    **env_kwargs: Any,
) -> NetArenaVerifiersEnv:
    """A verifiers environment of one app: `num_examples` episodes, reset with seeds first_seed, first_seed+1, ...

    `options` goes to every reset (e.g. {"level": 1} or {"category": "remove_ingress"}); other
    keyword arguments go to NetArenaEnv (seed, levels, categories, split, max_steps, reward,
    app_options, sandboxed, rules). `max_turns` defaults to the step budget, which ends episodes first.
    """
    rows = [{"question": f"netarena {app} episode, reset seed {seed}", "answer": "",
             # JSON text: Arrow cannot hold an empty options mapping; verifiers parses it back
             "info": json.dumps({"seed": seed, "options": dict(options or {})})}
            for seed in range(first_seed, first_seed + num_examples)]
    budget = env_kwargs.get("max_steps")
    return NetArenaVerifiersEnv(app, Dataset.from_list(rows), env_kwargs,
                                max_turns=max_turns if max_turns is not None else (budget or -1))
