"""Built-in agents over generated suites: oracle 100%, expert on a sample, reckless flagged, litellm end to end."""

from __future__ import annotations

import os

import pytest

from pytest_netarena.apps.k8s import APP
from pytest_netarena.apps.k8s.agents.builtin import RECKLESS_PLAYS
from pytest_netarena.apps.k8s.agents.expert import ExpertAgent
from pytest_netarena.core.app import RunOptions
from pytest_netarena.core.types import Outcome, Task

from .helpers import episode


def run(env, name, queries):
    return [episode(env, APP.builtin_agent(name, q, env), q, name=name) for q in queries]


def test_oracle_resolves_every_query_of_a_default_suite_safely(k8s_env):
    queries = APP.generate(RunOptions(seed=11, queries=3))
    assert len(queries) == 45
    results = run(k8s_env, "oracle", queries)
    failed = [(r.query.id, r.outcome, r.details) for r in results if r.outcome is not Outcome.RESOLVED]
    assert not failed


def test_expert_resolves_a_sample_of_every_category_safely(k8s_env):
    queries = APP.generate(RunOptions(seed=5, queries=1))
    assert queries
    results = run(k8s_env, "expert", queries)
    failed = [(r.query.id, r.outcome, r.details) for r in results if r.outcome is not Outcome.RESOLVED]
    assert not failed
    assert all(r.safe for r in results)


def test_expert_reads_before_it_writes_and_never_sees_the_faults(k8s_env):
    query = APP.generate(RunOptions(seed=5, queries=1, levels=(3,)))[0]
    result = episode(k8s_env, ExpertAgent(), query)
    assert result.outcome is Outcome.RESOLVED
    assert [s.action.split()[1] for s in result.steps[:3]] == ["get", "get", "get"]
    assert all(s.action.startswith("kubectl patch networkpolicy") for s in result.steps[3:])


def test_reckless_plays_are_all_flagged_unsafe(k8s_env):
    queries = APP.generate(RunOptions(seed=2, queries=2, levels=(1,)))
    plays = {}
    for result in run(k8s_env, "reckless", queries):
        plays.setdefault(result.query.seed % len(RECKLESS_PLAYS), result)
        assert result.outcome is Outcome.UNSAFE and result.first_unsafe_step.index == 2
    assert len(plays) >= 3


def test_synthetic_app_oracle_and_expert(tmp_path):
    options = RunOptions(seed=3, queries=1, levels=(1, 2, 3), extra={"k8s_app": "synthetic:40"})
    env = APP.make_environment(options)
    try:
        queries = APP.generate(options)[::3]
        for name in ("oracle", "expert"):
            results = run(env, name, queries)
            assert all(r.outcome is Outcome.RESOLVED for r in results), [(r.query.id, r.details) for r in results]
    finally:
        env.close()


def test_litellm_agent_completes_an_episode_against_a_local_openai_server(k8s_env):
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from pytest_netarena.agents.model_agent import ModelAgent, ModelSettings
    from pytest_netarena.agents.prompting import build_system_prompt
    from pytest_netarena.testing.openai_server import OpenAIStubServer

    brain = ExpertAgent()
    brain.reset(None)

    def model(request):  # a "model" that answers the latest observation like the expert would
        return brain.act(request["messages"][-1]["content"]).text

    query = APP.generate(RunOptions(seed=8, queries=1, levels=(2,)))[0]
    with OpenAIStubServer(model) as server:
        agent = ModelAgent("openai/gpt-4o", ModelSettings(api_base=server.url + "/v1", api_key="test", backoff_s=0.01))
        task = Task("k8s", "e1", build_system_prompt(APP.prompt(), "react"),
                    "react", 10)
        from pytest_netarena.core.episode import EpisodeConfig, run_episode

        result = run_episode(k8s_env, agent, query, task, EpisodeConfig(10), "openai:gpt-4o")
        assert server.requests[0].messages[0]["content"] == task.system_prompt
        assert "Expected: True" in server.requests[0].messages[-1]["content"] or \
            "Expected: False" in server.requests[0].messages[-1]["content"]
    assert result.outcome is Outcome.RESOLVED, result.details
    assert result.usage.tokens > 0


@pytest.mark.parametrize("prompt_style", ["zero-shot", "cot", "few-shot", "react"])
def test_prompts_for_every_prompt_style(prompt_style):
    from pytest_netarena.agents.prompting import build_system_prompt

    text = build_system_prompt(APP.prompt(), prompt_style)
    assert "exactly ONE kubectl command" in text and "Expected: True, Actual: False" in text


def test_expert_reads_output_under_the_step_budget_line():
    # regression: the budget line was taken for output, and with a real shell its ';' split the next command
    from pytest_netarena.apps.k8s.agents.expert import _split_observation

    output, report = _split_observation("[Step 5 of 10; 6 replies left.]\n$ kubectl get networkpolicy -o name\n"
                                        "a b\n\nConnectivity check: 1 of 2 flows mismatch the intent.\nx")
    assert output == "a b" and report[-1] == "x"


def test_expert_reads_pods_services_and_then_policies_in_batches_when_one_read_is_cut():
    from pytest_netarena.apps.k8s.agents import expert

    agent = ExpertAgent()
    agent.reset(Task("k8s", "e1", "", "zero-shot", 10))
    report = "\n\nConnectivity check: 1 of 2 flows mismatch the intent.\nfrontend \u2192 cart:80 (Expected: True, Actual: False)"

    def answer(output: str) -> str:
        """The command the expert asks next, given the output of the one it asked last."""
        agent.act(f"$ {agent.last}\n{output}{report}")
        return agent.last

    agent.act("Intent in namespace 'shop':\n  frontend \u2192 cart:80\n  cart \u2192 (nothing)" + report)
    assert agent.last == expert.POD_READ
    asked = answer("NAME READY STATUS RESTARTS AGE LABELS\n"
                   "frontend-7d9-abc 1/1 Running 0 1m app=frontend,pod-template-hash=7d9\n"
                   "cart-5f-xyz 1/1 Running 0 1m app=cart\nother-1 1/1 Running 0 1m app=other\n"
                   "cart-5f-old 1/1 Running 0 1m <none>")
    assert agent.pods == {"frontend": {"app": "frontend"}, "cart": {"app": "cart"}} and asked == expert.SERVICE_READ
    asked = answer('cart {"app":"cart"} [{"port":80,"protocol":"TCP","targetPort":8080}]\n'
                   'kubernetes  [{"name":"https","port":443}]\nbroken {nope')  # no selector; not JSON
    assert agent.services == {"cart": ({"app": "cart"}, [{"port": 80, "protocol": "TCP", "targetPort": 8080}])}
    assert asked == f"kubectl get networkpolicy {expert.POLICY_JSONPATH}"
    asked = answer('np0 {"podSelector":{}}\n[output truncated: 20000 more bytes]')
    assert agent.policies is None and asked == expert.POLICY_NAMES
    names = [f"np{i}" for i in range(expert.POLICY_BATCH + 5)]
    asked = answer(" ".join(names))
    assert asked == f"kubectl get networkpolicy {' '.join(names[:expert.POLICY_BATCH])} {expert.POLICY_JSONPATH}"
    asked = answer('np0 {"podSelector":{}}\nnp1 {bad\nnp2 not-json')
    assert agent.policies == {"np0": {"podSelector": {}}}
    assert asked == f"kubectl get networkpolicy {' '.join(names[expert.POLICY_BATCH:])} {expert.POLICY_JSONPATH}"
    answer('np80 {"podSelector":{"matchLabels":{"app":"cart"}},"policyTypes":["Ingress"]}')
    assert sorted(agent.policies) == ["np0", "np80"]  # the batches add up
