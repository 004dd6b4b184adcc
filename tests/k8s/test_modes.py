"""The k8s suite's modes (live: the pods run and the agent may probe; api-only) and its operator story: what the
prompt and the observations say, that the verdict is unchanged, and that reports label the rows with both."""

from __future__ import annotations

import pytest

from pytest_netarena.apps.k8s import APP
from pytest_netarena.apps.k8s.app import k8s_mode, k8s_setting
from pytest_netarena.cluster import live_support
from pytest_netarena.core.app import RunOptions
from pytest_netarena.core.errors import UsageError
from pytest_netarena.reporting.rebuild import records_from_episodes
from pytest_netarena.reporting.summary import settings_of, summarize

from .helpers import Scripted, episode


def test_the_mode_follows_the_options_and_the_machine():
    assert k8s_mode(RunOptions(extra={"k8s_pods": "off"})) == "api-only"
    assert k8s_mode(RunOptions(extra={"k8s_pods": "live"})) == "live"
    assert k8s_mode(RunOptions(extra={"k8s_pods": "auto"})) == ("live" if live_support().ok else "api-only")
    assert k8s_mode(RunOptions(extra={"k8s_backend": "kubeconfig:kind", "k8s_pods": "off"})) == "live"
    compat = RunOptions(rules="netarena", extra={"k8s_pods": "live"})
    assert k8s_mode(compat) == "api-only" and k8s_setting(compat) == ""  # NetArena's rows stay as NetArena's
    assert k8s_setting(RunOptions(extra={"k8s_pods": "off", "k8s_story": "operator"})) == "api-only+operator"
    with pytest.raises(UsageError):
        APP.preflight(RunOptions(rules="netarena", extra={"k8s_story": "operator"}))


def test_the_prompt_says_what_the_agent_may_inspect():
    live = APP.prompt_for(RunOptions(extra={"k8s_pods": "live"}))
    assert "kubectl exec deploy/frontend -- wget" in live.rules and "kubectl logs deploy/NAME" in live.rules
    api = APP.prompt_for(RunOptions(extra={"k8s_pods": "off"}))
    assert "kubectl exec deploy/" not in api.rules and "answer that\n  they are not supported" in api.rules
    operator = APP.prompt_for(RunOptions(extra={"k8s_pods": "off", "k8s_story": "operator"}))
    assert "Expected: True" not in operator.rules and "No mismatches found" not in operator.rules
    assert "users report" in operator.role and operator.examples == ()
    header = APP.header_notes(RunOptions(extra={"k8s_pods": "off", "k8s_story": "operator"}))
    assert header == ["mode api-only (the API server alone: no exec or logs, as --k8s-pods off asks); story operator; "
                      "reports label its rows [api-only+operator]"]
    assert APP.header_notes(RunOptions(rules="netarena", extra={"k8s_pods": "live"})) == [
        "mode api-only (--compat netarena: NetArena's rules forbid kubectl exec; rows unlabelled)"]


@pytest.fixture(scope="module")
def operator_env():
    options = RunOptions(seed=3, queries=1, extra={"k8s_pods": "off", "k8s_story": "operator"})
    environment = APP.make_environment(options)
    yield environment, APP.generate(options)
    environment.close()


def test_the_operator_story_shows_what_users_see_and_never_the_mismatch_report(operator_env):
    environment, queries = operator_env
    blocked = next(q for q in queries if q.category == "remove_ingress")
    first = environment.reset(blocked)
    assert first.startswith("Incident in namespace 'default'") and "Users report:" in first
    assert "Expected:" not in first and "mismatch" not in first.lower()
    assert "Architecture notes" in first and "frontend \u2192 adservice:9555" in first and "Constraints:" in first
    step = environment.step("```bash\nkubectl get deployments,events\n```")
    assert "nightly-report" in step.observation and "legacy-exporter" in step.observation  # the distractors
    assert "BackOff" in step.observation and "Connectivity check" not in step.observation
    opened = next(q for q in queries if q.category == "add_ingress")
    scan = environment.reset(opened)
    assert "security team's nightly scan flags" in scan and "Expected:" not in scan


def test_the_operator_story_never_speaks_of_a_report_it_does_not_show(operator_env):
    """Its system prompt, in every style on the text and the tool path, and its tool's description speak only of
    what the agent sees there (commands' output), never of the mismatch report of the other story."""
    from pytest_netarena.agents.prompting import PROMPT_STYLES, build_system_prompt
    from pytest_netarena.apps.k8s.prompt import kubectl_tool

    environment, _ = operator_env
    spec = APP.prompt_for(RunOptions(extra={"k8s_pods": "live", "k8s_story": "operator"}))
    texts = [build_system_prompt(spec, style, 10, tools) for style in PROMPT_STYLES for tools in (False, True)]
    texts += [tool.description for tool in environment.tools()]
    assert len(texts) == 9
    for text in texts:
        for phrase in ("the report", "mismatch report", "report says", "report cannot", "No mismatches"):
            assert phrase not in text, (phrase, text)
    assert "mismatch report" in kubectl_tool(20, 32_000).description  # the default story's tool says it


def test_the_operator_story_keeps_the_verdict_and_labels_the_episode(operator_env):
    environment, queries = operator_env
    result = episode(environment, APP.builtin_agent("oracle", queries[0], environment), queries[0],
                     name="builtin:oracle")
    assert result.outcome.value == "resolved" and result.correct
    assert result.setting == "api-only+operator" and result.label == "builtin:oracle [api-only+operator]"
    step = result.steps[-1]
    assert "Connectivity check" not in step.observation and "Protected objects" not in step.observation


def test_reports_never_pool_two_settings_into_one_row():
    def episode(setting: str, outcome: str) -> dict:
        return {"query": {"id": "k8s-L1-add_egress-0000", "app": "k8s", "level": 1, "category": "add_egress"},
                "agent": "openai:gpt-4o", "trial": 0, "outcome": outcome, "correct": outcome == "resolved",
                "safe": True, "steps": [], "setting": setting}

    records = list(records_from_episodes([episode("live", "resolved"), episode("api-only", "unresolved")]))
    groups = summarize(records)["groups"]
    assert [(g["agent"], g["setting"], g["avg_resolved"]) for g in groups] == [
        ("openai:gpt-4o [api-only]", "api-only", 0.0), ("openai:gpt-4o [live]", "live", 1.0)]
    assert settings_of(records) == {"k8s": ["api-only", "live"]}
    plain = list(records_from_episodes([{**episode("", "resolved"), "query": {
        "id": "malt-L1-count-0000", "app": "malt", "level": 1, "category": "count"}}]))
    assert summarize(plain)["groups"][0]["agent"] == "openai:gpt-4o" and settings_of(plain) == {}


def test_the_story_changes_what_the_agent_reads_never_the_verdict(operator_env):
    """The same actions on the same seed's queries get the same verdict whichever story the agent was told."""
    operator, queries = operator_env
    mismatch = APP.make_environment(RunOptions(seed=3, queries=1, extra={"k8s_pods": "off"}))
    try:
        def verdicts(environment) -> list[tuple]:
            found = []
            for query in queries[::3]:  # every level, a few categories
                agents = {"oracle": APP.builtin_agent("oracle", query, environment),
                          "reckless": APP.builtin_agent("reckless", query, environment),
                          "looks only": Scripted(["```bash\nkubectl get networkpolicies\n```"])}
                for name, agent in agents.items():
                    result = episode(environment, agent, query, max_steps=3, name=name)
                    found.append((query.id, name, result.outcome.value, result.correct, result.safe,
                                  result.metrics, len(result.steps)))
            return found

        told, untold = verdicts(mismatch), verdicts(operator)
    finally:
        mismatch.close()
    assert told == untold
    outcomes = {(name, outcome) for _, name, outcome, *_ in told}
    assert ("oracle", "resolved") in outcomes and ("looks only", "unresolved") in outcomes
    assert any(name == "reckless" and outcome != "resolved" for name, outcome in outcomes)


@pytest.mark.skipif(not live_support().ok, reason=f"pods cannot run here: {live_support().reason}")
def test_the_distractors_run_healthy_beside_the_app_in_live_mode():
    """The unrelated workloads really run, and their own policy really holds: healthy, and not the incident."""
    options = RunOptions(seed=3, queries=1, extra={"k8s_pods": "live", "k8s_story": "operator"})
    environment = APP.make_environment(options)
    try:
        environment.reset(APP.generate(options)[0])
        pods = environment.step("```bash\nkubectl get pods\n```").output
        assert all(any(line.startswith(name) and "Running" in line for line in pods.splitlines())
                   for name in ("nightly-report-", "legacy-exporter-"))
        allowed = environment.step("```bash\nkubectl exec deploy/nightly-report -- wget -qO- -T 2 "
                                   "http://legacy-exporter:9100/metrics\n```")
        assert "# HELP up 1" in allowed.output
        denied = environment.step("```bash\nkubectl exec deploy/frontend -- wget -qO- -T 1 "
                                  "http://legacy-exporter:9100/metrics\n```")
        assert "timed out" in denied.output and "exit code 1" in denied.output
    finally:
        environment.close()


def test_bad_mode_options_are_usage_errors(monkeypatch):
    from pytest_netarena.apps.k8s.app import check_pods, check_story
    import pytest_netarena.cluster as cluster

    with pytest.raises(UsageError, match="unknown --k8s-pods 'on'"):
        check_pods("on")
    with pytest.raises(UsageError, match="unknown --k8s-story 'ops'"):
        check_story("ops")
    monkeypatch.setattr(cluster, "live_support", lambda: cluster.LiveSupport(False, "no root here"))
    with pytest.raises(UsageError, match="--k8s-pods live: pods cannot run here: no root here"):
        APP.preflight(RunOptions(extra={"k8s_pods": "live"}))
    APP.preflight(RunOptions(extra={"k8s_pods": "auto"}))  # auto falls back to api-only instead
    assert k8s_mode(RunOptions(extra={"k8s_pods": "auto"})) == "api-only"
