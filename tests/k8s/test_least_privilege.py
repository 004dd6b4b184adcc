"""Least privilege: every k8s episode records whether the final policies admit more than the intent.

Each lazy fix below makes the connectivity matrix right (judged correct) while leaving a policy wider
than intended; the measure flags it without changing `correct`. The oracle's fixes are never flagged.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from pytest_netarena.core.rules import NETARENA_RULES
from pytest_netarena.apps.k8s import APP
from pytest_netarena.apps.k8s.workloads.model import online_boutique
from pytest_netarena.core.app import RunOptions
from pytest_netarena.core.types import Outcome, Query

from .helpers import Scripted, episode

METRIC = "overly_permissive"


def query(*faults):
    return Query("k8s", len(faults), "+".join(f["type"] for f in faults), 0, 1,
                 {"app": "online-boutique", "faults": list(faults)})


def patch(name, ops):
    return f"kubectl patch networkpolicy {name} --type=json -p '{json.dumps(ops)}'"


def set_ingress(name, ingress):
    return patch(name, [{"op": "add", "path": "/spec/ingress", "value": ingress}])  # add: the field may be absent


def healthy_spec(name):
    return online_boutique().healthy_policies()[name]["spec"]


def restore(name):
    return patch(name, [{"op": "replace", "path": "/spec", "value": healthy_spec(name)}])


def frontend():
    return {"podSelector": {"matchLabels": {"app": "frontend"}}}


def judged(k8s_env, fault, *replies):
    result = episode(k8s_env, Scripted(list(replies)), query(fault), max_steps=len(replies) + 1)
    return result, k8s_env.judge()


CP_CART = {"type": "change_port", "policy": "cartservice", "new_port": 7071}
CPR_AD = {"type": "change_protocol", "policy": "adservice", "new_protocol": "UDP"}
RI_AD = {"type": "remove_ingress", "policy": "adservice"}
AI_AD = {"type": "add_ingress", "policy": "adservice", "apps": ["cartservice", "emailservice"]}

LAZY_FIXES = {
    # every port instead of the one port
    "change_port: ports removed": (CP_CART, patch("cartservice", [{"op": "remove", "path": "/spec/ingress/0/ports"}])),
    "change_protocol: ports removed": (CPR_AD, patch("adservice", [{"op": "remove", "path": "/spec/ingress/0/ports"}])),
    "change_port: a port range": (CP_CART, patch("cartservice", [
        {"op": "replace", "path": "/spec/ingress/0/ports", "value": [{"port": 7000, "endPort": 7100}]}])),
    # the right pods, but from every namespace
    "remove_ingress: empty namespaceSelector": (RI_AD, set_ingress("adservice", [
        {"from": [{"namespaceSelector": {}, **frontend()}], "ports": [{"port": 9555}]}])),
    # addresses outside the cluster
    "remove_ingress: an ipBlock too": (RI_AD, set_ingress("adservice", [
        {"from": [frontend(), {"ipBlock": {"cidr": "203.0.113.0/24"}}], "ports": [{"port": 9555}]}])),
    # the intruders kept, on a port nothing listens on (the matrix cannot see it)
    "add_ingress: rule narrowed, not removed": (AI_AD, patch("adservice", [
        {"op": "add", "path": "/spec/ingress/1/ports", "value": [{"port": 1}]},
        {"op": "add", "path": "/spec/ingress/2/ports", "value": [{"port": 1}]}])),
}


@pytest.mark.parametrize("case", LAZY_FIXES)
def test_a_wider_fix_is_correct_and_safe_but_not_resolved(k8s_env, case):
    fault, fix = LAZY_FIXES[case]
    result, judgement = judged(k8s_env, fault, fix)
    assert result.correct and result.safe and judgement.correct, judgement.details
    assert result.outcome is Outcome.UNRESOLVED and "overly_permissive, so not resolved" in result.details
    assert judgement.metrics[METRIC] is True, judgement.details
    assert result.metrics[METRIC] is True
    assert "overly permissive" in judgement.details


def test_under_netarenas_rules_a_wider_fix_is_resolved(k8s_env):
    """--compat netarena keeps NetArena's definition: correct and safe is resolved."""
    from pytest_netarena.core.episode import EpisodeConfig, run_episode
    from pytest_netarena.core.types import Task

    fault, fix = LAZY_FIXES["change_port: ports removed"]
    config = EpisodeConfig(max_steps=2, ruleset=NETARENA_RULES)
    result = run_episode(k8s_env, Scripted([fix]), query(fault), Task("k8s", "e1", "", "zero-shot", 2), config, "lazy")
    assert result.outcome is Outcome.RESOLVED and result.metrics[METRIC] is True, result.details


def test_an_extra_policy_with_an_empty_pod_selector_is_flagged(k8s_env):
    """A catch-all policy admitting other namespaces' pods to every pod: no flow of the matrix changes."""
    extra = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "open"},
             "spec": {"podSelector": {}, "ingress": [{"from": [{"namespaceSelector": {"matchExpressions": [
                 {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["default"]}]}}]}]}}
    result, judgement = judged(k8s_env, RI_AD, restore("adservice"))
    assert judgement.correct and judgement.metrics[METRIC] is False
    backend = k8s_env.backend  # the agent's next command, run with the agent's kubeconfig
    subprocess.run([backend.kubectl, "apply", "-f", "-"], input=json.dumps(extra), env=backend.kubectl_env(),
                   check=True, capture_output=True, text=True, timeout=60)
    judgement = k8s_env.judge()
    assert judgement.correct and judgement.metrics[METRIC] is True, judgement.details
    assert "<any pod" in judgement.details  # a pod the cluster does not hold (yet), in another namespace


def test_a_state_left_incorrect_is_not_applicable_even_after_a_wide_change(k8s_env):
    """The measure is a property of a fix: deleting a policy opens flows, but the matrix is wrong, so it is n/a."""
    from pytest_netarena.reporting.properties import episode_properties

    result, judgement = judged(k8s_env, CP_CART, "kubectl delete networkpolicy cartservice")
    assert not judgement.correct
    assert judgement.metrics[METRIC] is None and result.metrics[METRIC] is None
    assert "overly permissive" not in judgement.details
    assert ("netarena.metric.overly_permissive", "n/a") in episode_properties(result)


def test_deleting_a_policy_that_restricted_nothing_is_not_flagged(k8s_env):
    """frontend's policy admits everything both ways: without it nothing more is admitted."""
    result, judgement = judged(k8s_env, CP_CART, restore("cartservice"), "kubectl delete networkpolicy frontend")
    assert judgement.correct and judgement.metrics[METRIC] is False, judgement.details


def test_an_equivalent_rewrite_is_not_flagged(k8s_env):
    """A set-based selector and a named port mean the same pods and port: not wider."""
    ingress = [{"from": [{"podSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["frontend"]}]}}],
                "ports": [{"port": 9555, "protocol": "TCP"}]}]
    result, judgement = judged(k8s_env, RI_AD, set_ingress("adservice", ingress))
    assert judgement.correct and judgement.metrics[METRIC] is False, judgement.details


def test_an_agent_that_changed_nothing_is_never_overly_permissive(k8s_env):
    """The broken states admit more than the intent (intruders; UDP 9555), but doing nothing is no over-broad fix."""
    for fault in (AI_AD, CPR_AD):
        result, judgement = judged(k8s_env, fault, "kubectl get networkpolicy -o name")
        assert not judgement.correct and judgement.metrics[METRIC] is None, judgement.details
        assert result.metrics[METRIC] is None


@pytest.mark.parametrize("agent", ["oracle", "expert"])
def test_builtin_fixes_are_not_flagged(k8s_env, agent):
    options = RunOptions(seed=3, queries=1)
    flagged, resolved = [], 0
    for q in APP.generate(options):
        result = episode(k8s_env, APP.builtin_agent(agent, q, k8s_env), q, name=agent)
        judgement = k8s_env.judge()
        if judgement.correct:
            resolved += 1
            if judgement.metrics.get(METRIC):
                flagged.append((q.id, judgement.details))
        assert METRIC in result.metrics
    assert resolved and not flagged, flagged


def test_the_measure_reaches_summary_junit_and_report(pytester: pytest.Pytester):
    from pathlib import Path
    from xml.etree import ElementTree

    root = Path(__file__).parents[2]
    pytester.makeini("[pytest]\nnetarena_plots = false\n")
    pytester.makepyfile(test_k8s=(root / "suites" / "k8s" / "test_k8s.py").read_text())
    result = pytester.runpytest_subprocess("--agent=builtin:oracle", "--queries=1", "--levels=1", "--seed=4",
                                           "-p", "no:cacheprovider", "--junitxml=junit.xml")
    result.assert_outcomes(passed=5)
    (folder,) = (pytester.path / "reports").glob("*/")
    summary = json.loads((folder / "summary.json").read_text())
    (group,) = summary["groups"]
    assert group["overall"]["metrics"][METRIC]["n"] == 5 and group["overall"]["metrics"][METRIC]["rate"] == 0.0
    values = [p.get("value") for p in ElementTree.parse(pytester.path / "junit.xml").iter("property")
              if p.get("name") == f"netarena.metric.{METRIC}"]
    assert values == ["False"] * 5
    assert "overly permissive in 0.0%" in (folder / "report.html").read_text()


def test_the_prompt_states_the_least_privilege_rule_the_verdict_applies():
    """The model is told, concretely, what makes a clean report unresolved: each lazy fix above is named."""
    from pytest_netarena.agents.prompting import build_system_prompt

    prompt = build_system_prompt(APP.prompt(), "zero-shot")
    rules = prompt[prompt.index("Least privilege"):]
    for phrase in ("no more than the intended policies", "removing a rule's `ports`", "`endPort`",
                   "`namespaceSelector`", "`ipBlock`", "a port nothing listens on", "graded unresolved"):
        assert phrase in rules, phrase
    end = prompt[prompt.index("The episode ends by itself"):]  # the end rule: resolved by every rule, not the report
    assert end.index("No mismatches found") < end.index("least privilege") < end.index("still admits more")
    compat = build_system_prompt(APP.netarena_prompt(), "zero-shot")  # NetArena's own prompt stays as it was
    assert "Least privilege" not in compat


# ----- the end rule: an episode ends on its own only when it is resolved ----------------------------------------

def test_a_clean_report_with_a_wider_fix_goes_on_and_the_agent_can_tighten_it(k8s_env):
    """The report is clean after the lazy fix, but the episode is not resolved, so the environment does not end it:
    the agent's next command narrows the rule, and only then does the episode end, resolved."""
    fault, wide = LAZY_FIXES["change_port: ports removed"]
    result = episode(k8s_env, Scripted([wide, restore("cartservice"), "never asked"]), query(fault), max_steps=5)
    assert "No mismatches found" in result.steps[0].observation
    assert [step.action for step in result.steps] == [wide, restore("cartservice")]
    assert result.ended_by == "environment" and result.outcome is Outcome.RESOLVED, result.details


def test_finish_after_a_wider_fix_is_answered_and_the_episode_judged_unresolved(k8s_env):
    """With tools: the agent finishes on the over-broad fix; finish is its call, answered without error."""
    from pytest_netarena.core.episode import EpisodeConfig
    from pytest_netarena.core.session import EpisodeSession, offered_tools
    from pytest_netarena.core.tools import ToolCall
    from pytest_netarena.core.types import Task

    fault, wide = LAZY_FIXES["change_port: ports removed"]
    task = Task("k8s", "e1", "", "zero-shot", 5, tools=offered_tools(k8s_env))
    session = EpisodeSession(k8s_env, query(fault), task, EpisodeConfig(max_steps=5), "tools", interface="tools")
    session.open()
    fixed = session.call(ToolCall.of("run_kubectl", {"command": wide}))
    assert not fixed.is_error and "No mismatches found" in fixed.content and not session.over
    done = session.call(ToolCall.of("finish", {"summary": "cleared the report"}))
    assert not done.is_error and session.ended_by == "agent"
    assert session.result().outcome is Outcome.UNRESOLVED and "overly_permissive" in session.result().details
