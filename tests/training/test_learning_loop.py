"""The loop closes: a tabular policy improves its mean reward on a tiny MALT split from the rewards alone."""

from __future__ import annotations

import random
from collections import defaultdict

from pytest_netarena.apps.malt.agents.expert import ExpertAgent
from pytest_netarena.core.types import Task

_EMPTY_LIST = "```python\ndef process_graph(graph_data):\n    return {'type': 'list', 'data': []}\n```"
_DECOMMISSION = """```python
def process_graph(graph_data):
    victim = next(n for n, kinds in graph_data.nodes(data='type') if 'EK_PACKET_SWITCH' in kinds)
    graph_data.remove_node(victim)
    return {'type': 'graph', 'data': None, 'updated_graph': graph_data}
```"""


def _expert(observation: str, info: dict) -> str:
    agent = ExpertAgent()
    agent.reset(Task("malt", "e1", info["system_prompt"], "zero-shot", 1))
    return agent.act(observation).text


#: the policy's arms: ways of answering, none of which is told which one fits a question
ARMS = {
    "decline": lambda observation, info: "I would rather not answer this one.",
    "decommission": lambda observation, info: _DECOMMISSION,
    "empty list": lambda observation, info: _EMPTY_LIST,
    "plan from the question": _expert,
}


def test_tabular_policy_improves_its_mean_reward_from_rewards_alone(gym) -> None:
    env = gym.make("netarena/Malt-v0", split="train", levels=(1,), max_steps=1,  # one reply: a bandit
                   app_options={"malt-topology": "synthetic:300"})
    rng = random.Random(7)
    value: dict[tuple[str, str], float] = defaultdict(float)
    count: dict[tuple[str, str], int] = defaultdict(int)
    rewards: list[float] = []
    observation, info = env.reset(seed=7)
    try:
        for step in range(300):
            state = info["query_id"].split("-")[2]  # the category: what the question asks for, as a word
            epsilon = max(0.05, 1.0 - step / 150)
            if rng.random() < epsilon:
                arm = rng.choice(list(ARMS))
            else:
                arm = max(ARMS, key=lambda a: (value[state, a], rng.random()))
            observation, reward, terminated, truncated, _ = env.step(ARMS[arm](observation, info))
            count[state, arm] += 1
            value[state, arm] += (reward - value[state, arm]) / count[state, arm]
            rewards.append(reward)
            assert terminated or truncated  # one reply per MALT episode
            observation, info = env.reset()
    finally:
        env.close()
    first, last = sum(rewards[:100]) / 100, sum(rewards[-100:]) / 100
    print(f"mean reward: first 100 steps {first:.3f}, last 100 steps {last:.3f}")
    assert last > first + 0.4, (first, last)
    assert last > 0.8
    # what it learnt is the arm that solves the questions, for every category it met
    assert {max(ARMS, key=lambda a: value[s, a]) for s, _ in value} == {"plan from the question"}
