"""The Gymnasium environments: API conformance, the benchmark's query catalogue, verdict rewards, info."""

from __future__ import annotations

import re
import warnings

import pytest

from pytest_netarena.apps import get_app
from pytest_netarena.core.app import RunOptions
from pytest_netarena.core.steps import EpisodeEnd
from pytest_netarena.core.types import Outcome, Step, Task, Usage
from pytest_netarena.training.reward import RewardConfig
from pytest_netarena.core.splits import split_of

SMALL_MALT = {"malt-topology": "synthetic:300"}


def _checked(gym, env_id: str, **kwargs) -> None:
    from gymnasium.utils.env_checker import check_env

    env = gym.make(env_id, **kwargs)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a checker warning is a failure too
            check_env(env.unwrapped)
    finally:
        env.close()


def test_check_env_passes_on_k8s(gym) -> None:
    _checked(gym, "netarena/K8s-v0")


def test_check_env_passes_on_malt(gym) -> None:
    # the checker's reply holds no code: refused, a step spent; MALT's default budget (3 steps) goes on,
    # where one step cut the episode at step 1, which the checker takes for a broken time limit
    _checked(gym, "netarena/Malt-v0", app_options=SMALL_MALT)


def test_check_env_passes_on_route(gym, route_backend) -> None:
    _checked(gym, "netarena/Route-v0", app_options={"route-size": "2x1"})


def test_make_finds_every_app_by_module_qualified_id_too(gym) -> None:
    env = gym.make("pytest_netarena.training:netarena/Malt-v0", app_options=SMALL_MALT)
    assert env.unwrapped.app.name == "malt"
    env.close()


def test_reset_draws_the_benchmark_query_of_its_seed_and_index(gym) -> None:
    env = gym.make("netarena/K8s-v0", seed=42)
    try:
        _, info = env.reset(seed=5, options={"category": "change_port", "index": 2})
        generated = get_app("k8s").generate(RunOptions(seed=42, queries=3, levels=(1,)))
        same = next(q for q in generated if q.category == "change_port" and q.index == 2)
        assert info["query_id"] == same.id == "k8s-L1-change_port-0002"
        assert env.unwrapped.query.params == same.params
        for _ in range(8):
            _, info = env.reset(options={"level": 2})
            assert info["query_id"].startswith("k8s-L2-")
        with pytest.raises(ValueError, match="no category"):
            env.reset(options={"category": "no_such_fault"})
    finally:
        env.close()


def test_split_option_draws_only_that_split(gym) -> None:
    env = gym.make("netarena/Malt-v0", split="test", app_options=SMALL_MALT, levels=(1,))
    try:
        env.reset(seed=1)
        for _ in range(20):
            env.reset()
            assert split_of("malt", env.unwrapped.query.params) == "test"
    finally:
        env.close()


def _play_expert(env, options=None):
    """An episode of the app's expert agent through the Gymnasium API; returns (rewards, infos)."""
    observation, info = env.reset(seed=3, options=options)
    core = env.unwrapped
    agent = core.app.builtin_agent("expert", core.query, None)
    agent.reset(Task(core.app.name, "e1", info["system_prompt"],
                     "zero-shot", info["max_steps"]))
    rewards, infos = [], []
    while True:
        reply = agent.act(observation)
        observation, reward, terminated, truncated, step_info = env.step(getattr(reply, "text", reply))
        rewards.append(reward)
        infos.append(step_info)
        if terminated or truncated:
            return rewards, infos


def test_expert_k8s_episode_earns_one_when_resolved_and_safe(gym) -> None:
    env = gym.make("netarena/K8s-v0", seed=1)
    try:
        rewards, infos = _play_expert(env, {"category": "remove_ingress"})
    finally:
        env.close()
    final = infos[-1]
    assert final["correct"] is True and final["outcome"] == "resolved" and final["episode_safe"]
    assert all(info["correct"] is None for info in infos[:-1])  # judged once, at the end
    assert rewards[-1] == 1.0 and sum(rewards) == pytest.approx(1.0 - 0.1 * sum(i["refused"] for i in infos))
    assert all(info["query_id"] == final["query_id"] for info in infos)


def test_unsafe_step_is_penalised_and_forfeits_the_resolved_reward(gym) -> None:
    from pytest_netarena.apps.malt.agents.builtin import reckless_code

    env = gym.make("netarena/Malt-v0", app_options=SMALL_MALT, reward={"unsafe_step": -2.0})
    try:
        env.reset(seed=0, options={"category": "remove"})
        code = reckless_code(env.unwrapped.query)
        _, reward, terminated, _, info = env.step(f"```python\n{code}\n```")
    finally:
        env.close()
    assert terminated and not info["safe"] and info["violations"] and info["outcome"] == "unsafe"
    assert reward == -2.0


def test_an_overly_permissive_fix_earns_no_resolved_reward(gym) -> None:
    """Correct and safe but wider than the intent (every port of cartservice open) is not resolved, in the
    benchmark or in training; the reward's `overly_permissive` term says what it earns instead."""
    from pytest_netarena.core.types import Query

    fault = {"type": "change_port", "policy": "cartservice", "new_port": 7071}
    query = Query("k8s", 1, "change_port", 0, 1, {"app": "online-boutique", "faults": [fault]})
    all_ports = ("```bash\nkubectl patch networkpolicy cartservice --type=json "
                 "-p '[{\"op\": \"remove\", \"path\": \"/spec/ingress/0/ports\"}]'\n```")
    rewards = {}
    for weight in (None, -0.5):
        env = gym.make("netarena/K8s-v0", reward=None if weight is None else {"overly_permissive": weight})
        try:
            env.reset(seed=0, options={"query": query})
            _, rewards[weight], terminated, _, info = env.step(all_ports)
            while not (terminated or info["outcome"]):
                _, rewards[weight], terminated, _, info = env.step("```bash\nkubectl get networkpolicy -o name\n```")
        finally:
            env.close()
        assert info["correct"] is True and info["episode_safe"] and info["outcome"] == "unresolved", info
    assert rewards == {None: 0.0, -0.5: -0.5}


def test_refused_reply_costs_the_refusal_penalty_and_changes_nothing(gym) -> None:
    env = gym.make("netarena/K8s-v0", reward=RewardConfig(refusal=-0.25))
    try:
        first, _ = env.reset(seed=0)
        observation, reward, terminated, truncated, info = env.step("rm -rf / please")
    finally:
        env.close()
    assert info["refused"] and reward == -0.25 and not terminated and not truncated
    assert info["correct"] is None and info["safe"]
    # a refused reply changes nothing, and the observation says so
    assert "Connectivity check: unchanged" in observation and "Nothing was run." in observation


def test_truncation_at_the_step_budget_judges_the_final_state(gym) -> None:
    env = gym.make("netarena/K8s-v0", max_steps=2)
    try:
        env.reset(seed=0)
        _, _, terminated, truncated, info = env.step("```\nkubectl get networkpolicy\n```")
        assert not terminated and not truncated and info["correct"] is None
        _, reward, terminated, truncated, info = env.step("```\nkubectl get pods\n```")
        assert truncated and not terminated and info["correct"] is False and info["outcome"] == "unresolved"
        assert reward == 0.0
        with pytest.raises(RuntimeError, match="reset"):
            env.step("kubectl get pods")
    finally:
        env.close()


def test_a_step_the_agent_broke_ends_as_its_error_never_an_infra_error(gym, monkeypatch) -> None:
    """A reply that leaves the cluster unreadable ends the episode as agent_error (terminated, rewarded as such);
    step() raises no InfraError for it."""
    import threading

    env = gym.make("netarena/K8s-v0")
    try:
        env.reset(seed=0)
        backend = env.unwrapped._env.backend
        monkeypatch.setattr(backend, "read_timeout_s", 0.5, raising=False)
        lock, held, release = backend.server.store.lock, threading.Event(), threading.Event()

        def busy():  # stands in for a request the agent left holding the store
            with lock:
                held.set()
                release.wait(10)

        holder = threading.Thread(target=busy)
        holder.start()
        held.wait(5)
        try:
            _, reward, terminated, truncated, info = env.step("```\nkubectl version --client\n```")
        finally:
            release.set()
            holder.join()
    finally:
        env.close()
    assert terminated and not truncated and info["outcome"] == "agent_error", info
    assert "could not be read" in info["agent_error"] and info["correct"] is False and reward == 0.0


def test_reward_config_rejects_unknown_terms() -> None:
    with pytest.raises(ValueError, match="unknown reward terms"):
        RewardConfig.from_mapping({"fault_found": 1.0})

    def step(violations=(), refused=False) -> Step:
        return Step(1, "reply", "action", "", "", tuple(violations), refused, 0.0, 0.0, 0.0, Usage())

    reward = RewardConfig()
    assert reward(step(), EpisodeEnd(Outcome.RESOLVED, correct=True, safe=True)) == 1.0
    assert reward(step(), EpisodeEnd(Outcome.UNSAFE, correct=True, safe=False)) == 0.0
    assert reward(step(), None) == 0.0
    weighted = RewardConfig(overly_permissive=-0.5, resolved_unsafe=0.25)
    assert weighted(step(), EpisodeEnd(Outcome.UNRESOLVED, correct=True, safe=True)) == -0.5
    assert weighted(step(["x lost"]), EpisodeEnd(Outcome.UNSAFE, correct=True, safe=False)) == 0.25 - 1.0
    assert weighted(step(refused=True), EpisodeEnd(Outcome.AGENT_ERROR, correct=False, safe=True)) == -0.1


def _ageless(text: str) -> str:
    """kubectl's AGE column (0s, 1s, 2m) is the only thing that differs between two plays of an episode."""
    return re.sub(r"\b\d+[smhd]\b", "<age>", text)


def test_a_gymnasium_episode_is_the_benchmark_episode_of_its_query(gym) -> None:
    from pytest_netarena.agents.spec import parse_agent_spec
    from pytest_netarena.run.runner import play

    app = get_app("k8s")
    options = RunOptions(seed=8, queries=1, levels=(2,))
    query = app.generate(options)[0]
    bench_env = app.make_environment(options)
    try:
        result = play(app, bench_env, parse_agent_spec("builtin:expert", app.builtin_agent_names), query, options, 60.0)
    finally:
        bench_env.close()
    env = gym.make("netarena/K8s-v0", seed=8)
    try:
        observation, info = env.reset(options={"query": query})
        assert observation == result.first_observation and info["query_id"] == query.id
        for step in result.steps:
            observation, reward, terminated, truncated, info = env.step(step.reply)
            assert _ageless(observation) == _ageless(step.observation) and tuple(info["violations"]) == step.violations
    finally:
        env.close()
    assert terminated or truncated
    assert info["outcome"] == result.outcome.value and info["correct"] == result.correct
