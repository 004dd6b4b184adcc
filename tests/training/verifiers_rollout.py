"""One episode played twice, run with verifiers 0.3's own Python (tests/training/verifiers_venv.py): by our Gymnasium
environment directly (the reference: its replies, step rewards, first observation) and by verifiers' evaluate loop
on `load_environment`, the local stub model answering the reference's replies in order. Reads its case as JSON on
stdin, prints both as JSON; the tests compare them."""

from __future__ import annotations

import json
import os
import sys

from pytest_netarena.core.types import Task
from pytest_netarena.testing.openai_server import OpenAIStubServer


def expert(env, info):
    agent = env.app.builtin_agent("expert", env.query, None)
    agent.reset(Task(env.app.name, "e1", info["system_prompt"], "zero-shot", info["max_steps"]))

    def act(observation: str) -> str:
        reply = agent.act(observation)
        return getattr(reply, "text", reply)

    return act


def fixed(reply: str):
    return lambda env, info: (lambda observation: reply)


def reference(app: str, reset_seed: int, options: dict | None, policy, env_kwargs: dict) -> dict:
    from pytest_netarena.training.env import NetArenaEnv

    env = NetArenaEnv(app, **env_kwargs)
    try:
        observation, info = env.reset(seed=reset_seed, options=options)
        first, act = observation, policy(env, info)
        replies, rewards = [], []
        while True:
            replies.append(act(observation))
            observation, reward, terminated, truncated, _ = env.step(replies[-1])
            rewards.append(reward)
            if terminated or truncated:
                return {"replies": replies, "rewards": rewards, "first": first}
    finally:
        env.close()


def rollout(app: str, reset_seed: int, options: dict | None, replies: list[str], env_kwargs: dict) -> dict:
    import verifiers as vf

    from pytest_netarena.training.verifiers_env import load_environment

    os.environ.setdefault("NETARENA_STUB_KEY", "test")
    env = load_environment(app, num_examples=1, first_seed=reset_seed, options=options, **env_kwargs)
    with OpenAIStubServer(replies) as server:
        client = vf.ClientConfig(api_base_url=server.url + "/v1", api_key_var="NETARENA_STUB_KEY", max_retries=0)
        results = env.evaluate_sync(client=client, model="stub-model", num_examples=1, rollouts_per_example=1)
        requests = server.requests
    (output,) = results["outputs"]
    return {"output": {key: output.get(key) for key in ("error", "reward", "resolved", "safe", "num_turns")},
            "requests": [[{"role": message["role"], "content": message["content"]} for message in request.messages]
                         for request in requests],
            "verifiers": vf.__version__}


def main() -> None:
    case = json.load(sys.stdin)
    kwargs = {key: tuple(value) if key == "levels" else value for key, value in case["env_kwargs"].items()}
    policy = expert if case["policy"] == "expert" else fixed(case["policy"])
    played = reference(case["app"], case["reset_seed"], case["options"], policy, kwargs)
    played.update(rollout(case["app"], case["reset_seed"], case["options"], played["replies"], kwargs))
    print(json.dumps(played, default=str))


if __name__ == "__main__":
    main()
