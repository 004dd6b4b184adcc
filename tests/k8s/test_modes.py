"""The k8s suite's modes (live: the pods run and the agent may probe; api-only) and its operator story: what the
prompt and the observations say, that the intent is found in the live system and not handed over, that the verdict is
unchanged, and that reports label the rows with both."""

from __future__ import annotations

import dataclasses
import json
import time

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
    assert "frontend is its public entry point" in first and "Constraints:" in first
    assert "Service map (stale):" in first and "the running system is the source of truth" in first
    assert "\u2192" not in first  # no line of the intent as the mismatch story states it
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


def _stale_map(first: str) -> set[tuple[str, str]]:
    lines = first.split("Service map (stale):\n", 1)[1].split("\n\n", 1)[0].splitlines()
    return {(line.split()[0], target) for line in lines for target in line.split(" calls ", 1)[1].split(", ")}


def _intended(environment) -> set[tuple[str, str]]:
    """(client, service:port) of every intended flow, entry points left out (every workload may reach them)."""
    from pytest_netarena.apps.k8s.story import entry_points

    public = set(entry_points(environment.intent))
    return {(f.source, f"{f.service}:{f.port}") for f, wanted in environment.intent.items()
            if wanted and f.service not in public}


def test_the_intent_is_not_handed_over_and_the_service_map_is_stale(operator_env):
    """The map the operator is given misses flows the application needs and lists flows that must stay blocked, on
    every query (each draws its own staleness from its seed)."""
    environment, queries = operator_env
    maps = set()
    for query in queries[:4]:
        stale = _stale_map(environment.reset(query))
        intended = _intended(environment)
        assert intended - stale, "the map lists every needed flow"
        retired = {(source, t) for source, t in stale if not t.startswith("frontend:")} - intended
        assert retired and all(not environment.intent[next(f for f in environment.intent if (f.source, f"{f.service}:"
                                                                                              f"{f.port}") == flow)]
                               for flow in retired)
        maps.add(frozenset(stale))
    assert len(maps) > 1


def test_the_intent_is_found_in_the_live_system(operator_env):
    """What each workload's own configuration names (its Deployment's *_ADDR variables, some through a ConfigMap), read
    with kubectl as any agent reads it, is exactly what the application needs beyond its public entry point."""
    from pytest_netarena.apps.k8s.agents.expert import CONFIG_READ, MAPS_READ

    environment, queries = operator_env
    environment.reset(queries[0])
    calls = environment.step(f"```bash\n{CONFIG_READ}\n```").output
    maps = dict(line.split(" ", 1) for line in environment.step(f"```bash\n{MAPS_READ}\n```").output.splitlines())
    named = set()
    for line in calls.splitlines():
        workload, *targets = line.split()
        for target in targets:
            target = json.loads(maps[target.removeprefix("configmap:")]) if target.startswith("configmap:") else target
            if workload in environment.app.names and target.split(":")[0] in environment.app.servers:
                named.add((workload, target))
    assert any(t.startswith("configmap:") for t in calls.split())  # some workloads read theirs from a ConfigMap
    assert "opentelemetrycollector:4317" in calls  # and settings that name no Service of the application
    loadgen = {("loadgenerator", "frontend:80")}  # a client of the entry point names it too
    assert named - loadgen == _intended(environment) and loadgen <= named


def test_the_expert_solves_the_operator_story_from_what_it_reads(operator_env):
    environment, queries = operator_env
    results = [episode(environment, APP.builtin_agent("expert", dataclasses.replace(query, params={}), environment),
                       query, max_steps=15, name="builtin:expert") for query in queries[::2]]
    assert [(r.query.id, r.outcome.value, r.details) for r in results if r.outcome.value != "resolved"] == []
    assert all("jq" in r.steps[0].action and "_ADDR" in r.steps[0].action for r in results)  # the config, not the map


def test_an_agent_that_trusts_the_stale_map_is_judged_by_the_intent(operator_env):
    """Restoring a flow the stale map lists but the application no longer needs opens a flow that must stay blocked:
    unsafe at that step, and the episode is not resolved."""
    environment, queries = operator_env
    query = queries[0]
    stale = _stale_map(environment.reset(query))
    source, said = sorted(flow for flow in stale - _intended(environment) if not flow[1].startswith("frontend:"))[0]
    service, port = said.split(":")
    target = next(p.target_port for p in environment.app.workload(service).service_ports if p.port == int(port))
    rule = {"from": [{"podSelector": {"matchLabels": {"app": source}}}], "ports": [{"port": target, "protocol": "TCP"}]}
    operations = json.dumps([{"op": "add", "path": "/spec/ingress/-", "value": rule}])
    patch = f"kubectl patch networkpolicy {service} --type=json -p '{operations}'"
    result = episode(environment, Scripted([f"```bash\n{patch}\n```"]), query, max_steps=1, name="trusts the map")
    assert result.outcome.value == "unsafe" and not result.correct
    assert f"flow {source} \u2192 {service}:{port} newly allowed" in " ".join(result.steps[0].violations)


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


@pytest.mark.skipif(not live_support().ok, reason=f"pods cannot run here: {live_support().reason}")
def test_in_live_mode_a_workload_logs_the_calls_the_incident_breaks():
    """What the configuration names is what the workloads call: a flow the faults block shows up in its client's
    logs as a call that fails, as an SRE would find it."""
    from pytest_netarena.apps.k8s.matrix import mismatches

    options = RunOptions(seed=3, queries=1, extra={"k8s_pods": "live", "k8s_story": "operator"})
    environment = APP.make_environment(options)
    try:
        for query in APP.generate(options):
            environment.reset(query)
            broken = [f for f in mismatches(environment.intent, environment.current_state().matrix)
                      if environment.intent[f] and f.source != "loadgenerator" and f.service != "frontend"]
            if broken:
                break
        flow = broken[0]
        deadline, logs = time.monotonic() + 40, ""
        while f"could not reach {flow.service}:{flow.port}" not in logs and time.monotonic() < deadline:
            time.sleep(2)  # each service calls what it names every 10 s
            logs = environment.step(f"```bash\nkubectl logs deploy/{flow.source} --tail 50\n```").output
        assert f"could not reach {flow.service}:{flow.port}" in logs, logs[-2000:]
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
