"""The verifiers environments: one rollout per app through verifiers' own evaluate loop against the local stub model."""

from __future__ import annotations

import pytest

from pytest_netarena.core.types import Task
from pytest_netarena.testing.openai_server import OpenAIStubServer

SMALL_MALT = {"malt-topology": "synthetic:300"}
DECLINE = "I would rather not answer."


@pytest.fixture(scope="module")
def vf():
    return pytest.importorskip("verifiers", reason="verifiers is not installed (pip install pytest-netarena[rl])")


@pytest.fixture(autouse=True)
def stub_key(monkeypatch):
    monkeypatch.setenv("NETARENA_STUB_KEY", "test")


def reference(app: str, reset_seed: int, options: dict | None, policy, **env_kwargs) -> tuple[list[str], list[float], str]:
    """Our Gymnasium environment's own episode: the policy's replies, the step rewards and the first observation."""
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
                return replies, rewards, first
    finally:
        env.close()


def expert(env, info):
    agent = env.app.builtin_agent("expert", env.query, None)
    agent.reset(Task(env.app.name, "e1", info["system_prompt"], "zero-shot", info["max_steps"]))

    def act(observation: str) -> str:
        reply = agent.act(observation)
        return getattr(reply, "text", reply)

    return act


def fixed(reply: str):
    return lambda env, info: (lambda observation: reply)


def rollout(vf, app: str, reset_seed: int, options: dict | None, replies: list[str], **env_kwargs):
    """One rollout of load_environment(app) by verifiers' evaluate loop, the stub answering `replies` in order."""
    from pytest_netarena.training.verifiers_env import load_environment

    env = load_environment(app, num_examples=1, first_seed=reset_seed, options=options, **env_kwargs)
    with OpenAIStubServer(replies) as server:
        client = vf.ClientConfig(api_base_url=server.url + "/v1", api_key_var="NETARENA_STUB_KEY", max_retries=0)
        results = env.evaluate_sync(client=client, model="stub-model", num_examples=1, rollouts_per_example=1)
        requests = server.requests
    (output,) = results["outputs"]
    assert output["error"] is None
    return output, requests


def user_turns(request) -> list[str]:
    return [message["content"] for message in request.messages if message["role"] == "user"]


def test_k8s_expert_rollout_earns_our_envs_reward(vf) -> None:
    options = {"category": "remove_ingress"}
    replies, rewards, first = reference("k8s", 3, options, expert, seed=1)
    output, requests = rollout(vf, "k8s", 3, options, replies, seed=1)
    assert sum(rewards) >= 0.9  # the expert resolves it (a refused reply costs 0.1)
    assert output["reward"] == pytest.approx(sum(rewards))
    assert output["resolved"] == 1.0 and output["safe"] == 1.0
    # the model saw our environment's episode: its first observation, then one reply per step
    assert len(requests) == len(replies) and user_turns(requests[0]) == [first]
    assert requests[0].messages[0]["role"] == "system"


@pytest.mark.parametrize("policy, expected, turns", [(expert, 1.0, 1), (fixed(DECLINE), -0.3, 3)],
                         ids=["expert", "decline"])
def test_malt_rollout_earns_our_envs_reward(vf, policy, expected, turns) -> None:
    """MALT's budget is three replies: a model that declines is refused three times (-0.1 each)."""
    kwargs = {"levels": (1,), "split": "train", "app_options": SMALL_MALT}
    replies, rewards, first = reference("malt", 7, None, policy, **kwargs)
    output, requests = rollout(vf, "malt", 7, None, replies, **kwargs)
    assert sum(rewards) == pytest.approx(expected)
    assert output["reward"] == pytest.approx(expected)
    assert output["resolved"] == float(expected == 1.0)
    assert len(requests) == turns and user_turns(requests[0]) == [first]


def test_route_rollout_earns_our_envs_reward(vf, route_backend) -> None:
    reply = '{"machine": "r0", "command": "ip route"}'
    kwargs = {"max_steps": 2, "levels": (1,), "app_options": {"route-size": "2x1"}}
    replies, rewards, _ = reference("route", 5, None, fixed(reply), **kwargs)
    output, requests = rollout(vf, "route", 5, None, replies, **kwargs)
    assert output["reward"] == pytest.approx(sum(rewards))
    assert output["resolved"] == 0.0  # reading the routes repairs nothing
    assert len(requests) == 2 and output["num_turns"] == 2.0


def test_load_environment_rejects_an_unknown_app(vf) -> None:
    from pytest_netarena.training.verifiers_env import load_environment

    with pytest.raises(ValueError, match="app takes one of"):
        load_environment("dns", num_examples=1)
