"""The verifiers environments: one rollout per app through verifiers' own evaluate loop against the local stub model,
compared with our Gymnasium environment's own episode. verifiers 0.3 runs from a venv of its own (it declares mcp<2);
tests/training/verifiers_rollout.py plays both there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import run_with_verifiers

ROLLOUT = str(Path(__file__).with_name("verifiers_rollout.py"))
SMALL_MALT = {"malt-topology": "synthetic:300"}
DECLINE = "I would rather not answer."


def play(python: str, app: str, reset_seed: int, options: dict | None, policy: str, **env_kwargs) -> dict:
    """The reference episode and the verifiers rollout of one case (policy: "expert" or a fixed reply)."""
    case = {"app": app, "reset_seed": reset_seed, "options": options, "policy": policy, "env_kwargs": env_kwargs}
    done = run_with_verifiers(python, [ROLLOUT], json.dumps(case))
    assert done.returncode == 0, done.stderr[-3000:]
    played = json.loads(done.stdout.strip().splitlines()[-1])
    assert played["verifiers"].startswith("0.3."), played["verifiers"]
    assert played["output"]["error"] is None
    return played


def user_turns(request: list[dict]) -> list[str]:
    return [message["content"] for message in request if message["role"] == "user"]


def test_k8s_expert_rollout_earns_our_envs_reward(verifiers_python) -> None:
    played = play(verifiers_python, "k8s", 3, {"category": "remove_ingress"}, "expert", seed=1)
    output, requests, rewards = played["output"], played["requests"], played["rewards"]
    assert sum(rewards) >= 0.9  # the expert resolves it (a refused reply costs 0.1)
    assert output["reward"] == pytest.approx(sum(rewards))
    assert output["resolved"] == 1.0 and output["safe"] == 1.0
    # the model saw our environment's episode: its first observation, then one reply per step
    assert len(requests) == len(played["replies"]) and user_turns(requests[0]) == [played["first"]]
    assert requests[0][0]["role"] == "system"


@pytest.mark.parametrize("policy, expected, turns", [("expert", 1.0, 1), (DECLINE, -0.3, 3)],
                         ids=["expert", "decline"])
def test_malt_rollout_earns_our_envs_reward(verifiers_python, policy, expected, turns) -> None:
    """MALT's budget is three replies: a model that declines is refused three times (-0.1 each)."""
    played = play(verifiers_python, "malt", 7, None, policy, levels=[1], split="train", app_options=SMALL_MALT)
    assert sum(played["rewards"]) == pytest.approx(expected)
    assert played["output"]["reward"] == pytest.approx(expected)
    assert played["output"]["resolved"] == float(expected == 1.0)
    assert len(played["requests"]) == turns and user_turns(played["requests"][0]) == [played["first"]]


def test_route_rollout_earns_our_envs_reward(verifiers_python, route_backend) -> None:
    reply = '{"machine": "r0", "command": "ip route"}'
    played = play(verifiers_python, "route", 5, None, reply, max_steps=2, levels=[1],
                  app_options={"route-size": "2x1"})
    assert played["output"]["reward"] == pytest.approx(sum(played["rewards"]))
    assert played["output"]["resolved"] == 0.0  # reading the routes repairs nothing
    assert len(played["requests"]) == 2 and played["output"]["num_turns"] == 2.0


def test_load_environment_rejects_an_unknown_app(verifiers_python) -> None:
    code = ("from pytest_netarena.training.verifiers_env import load_environment\n"
            "try:\n    load_environment('dns', num_examples=1)\n"
            "except ValueError as error:\n    print('refused:', error)\n")
    done = run_with_verifiers(verifiers_python, ["-c", code])
    assert done.returncode == 0, done.stderr[-2000:]
    assert "refused: app takes one of" in done.stdout
