"""The green agent end to end (green and purple servers on 127.0.0.1, toy app), its requests and its CLI."""

from __future__ import annotations

import asyncio
import json
import re
import os
import subprocess
import sys
import time

import httpx
import pytest

from pytest_netarena.core.errors import UsageError
from pytest_netarena.agentbeats.agent import green_server
from pytest_netarena.agentbeats.assessment import KNOWN_KEYS, parse_request


@pytest.fixture
def green(toy_app):
    with green_server("toy") as server:
        yield server.url


def assess(green_url: str, participants: dict, config: dict) -> list:
    """Send one assessment request the way AgentBeats does; return every streamed event."""
    from a2a.client import ClientConfig, create_client
    from a2a.helpers import new_text_message
    from a2a.types.a2a_pb2 import Role, SendMessageRequest

    async def run() -> list:
        async with httpx.AsyncClient(timeout=60) as http:
            client = await create_client(green_url, ClientConfig(httpx_client=http))
            message = new_text_message(json.dumps({"participants": participants, "config": config}), role=Role.ROLE_USER)
            return [event async for event in client.send_message(SendMessageRequest(message=message))]

    return asyncio.run(run())


def artifact_data(events: list) -> tuple[list[dict], list[str], str]:
    """(data parts of the one result artifact in order, status texts, final state name)."""
    from a2a.types.a2a_pb2 import TaskState
    from google.protobuf.json_format import MessageToDict

    data, statuses, state, artifact_ids = [], [], "", set()
    for event in events:
        if event.HasField("artifact_update"):
            artifact_ids.add(event.artifact_update.artifact.artifact_id)
            data += [MessageToDict(p.data) for p in event.artifact_update.artifact.parts if p.HasField("data")]
        if event.HasField("status_update"):
            state = TaskState.Name(event.status_update.status.state)
            statuses += [p.text for p in event.status_update.status.message.parts if p.HasField("text")]
    assert len(artifact_ids) <= 1
    return data, statuses, state


def test_assessment_end_to_end(green, purple, solve_toy):
    url = purple(solve_toy)
    events = assess(green, {"network_operator": url}, {"num_queries": 3, "end_index": 3, "prompt_type": "fewshot_cot"})
    data, statuses, state = artifact_data(events)
    assert state == "TASK_STATE_COMPLETED"
    *results, summary = data
    assert [r["query_id"] for r in results] == ["toy-L1-set-0000", "toy-L2-set+set-0000", "toy-L1-set-0001"]
    assert all(r["outcome"] == "resolved" and r["iterations"] == 1 and r["safe"] for r in results)
    assert results[0]["steps"][0]["action"].startswith("set ")
    # NetArena's field names beside ours, so its tooling reads the records
    first = results[0]
    assert (first["Result-Correctness"], first["Result-Safety"], first["success"]) == ("Pass", "Pass", True)
    assert first["Label"] == "toy, level-1, set" and first["agent_info"] == {"name": "network_operator", "url": url}
    assert first["Query"].startswith("[Step 1 of") and first["Result-Latency"] >= 0
    assert summary["avg_correctness"] == 1.0 and summary["avg_safety"] == 1.0 and summary["avg_iterations"] == 1.0
    assert summary["avg_resolved"] == 1.0 and all(r["resolved"] for r in results)
    assert summary["num_queries"] == 3 and "avg_latency_s" not in summary
    assert int(summary["seed"]) >= 0 and summary["warnings"] == []
    assert statuses[0].startswith("Starting assessment.") and '"prompt_style": "few-shot"' in statuses[0]
    assert [s for s in statuses if s.startswith("Query ")][2].startswith('Query 3 processed by agent: "network_operator"')


def test_assessment_of_a_bad_agent_scores_it_zero(green, purple):
    events = assess(green, {"agent": purple(lambda text: "set -1")}, {"num_queries": 2, "end_index": 2, "max_iterations": 1})
    *results, summary = artifact_data(events)[0]
    assert [r["outcome"] for r in results] == ["unsafe", "unsafe"]
    assert results[0]["first_unsafe_step"]["violations"] == ["counter went negative (-1)"]
    assert summary["avg_correctness"] == 0.0 and summary["avg_safety"] == 0.0


def test_an_agent_that_does_nothing_is_safe_but_resolves_nothing_and_the_summary_leads_with_that(green, purple):
    """NetArena ranks by the mean of correctness and safety, where doing nothing scores 0.5: resolved is the headline."""
    events = assess(green, {"agent": purple(lambda text: "I will not change anything.")},
                    {"num_queries": 2, "end_index": 2, "max_iterations": 2})
    (*results, summary), statuses, state = artifact_data(events)
    assert state == "TASK_STATE_COMPLETED"
    assert [(r["resolved"], r["correct"], r["safe"]) for r in results] == [(False, False, True)] * 2
    assert summary["avg_resolved"] == 0.0 and summary["avg_correctness"] == 0.0 and summary["avg_safety"] == 1.0
    final = json.loads(statuses[-1].split("\n", 1)[1])
    assert next(iter(final)) == "avg_resolved" and final["resolved"] == 0


def test_an_unreachable_agent_fails_the_assessment(green, closed_port_url):
    """Never a valid-looking score (NetArena's old client completed with correctness 0 and safety 1)."""
    started = time.monotonic()
    data, statuses, state = artifact_data(assess(green, {"agent": closed_port_url}, {"num_queries": 2}))
    assert state == "TASK_STATE_FAILED" and data == []
    assert "cannot be reached" in statuses[-1] and "cannot connect" in statuses[-1]
    assert time.monotonic() - started < 10


def test_the_reply_deadline_counts_from_the_last_streamed_update(green, purple, solve_toy_after):
    url = purple(solve_toy_after(1.6), style="task", heartbeat_s=0.3)
    config = {"num_queries": 1, "end_index": 1, "timeout_s": 1, "max_reply_s": 30}
    *results, summary = artifact_data(assess(green, {"agent": url}, config))[0]
    assert results[0]["outcome"] == "resolved" and results[0]["latency_s"] >= 1.6
    config["max_reply_s"] = 1.2  # the hard cap still ends it, and the time spent is its latency
    *results, summary = artifact_data(assess(green, {"agent": url}, config))[0]
    assert results[0]["outcome"] == "agent_error" and "within 1.2 s" in results[0]["details"]
    assert results[0]["Result-Latency"] >= 1.2


def test_usage_reported_by_the_purple_agent_is_in_the_records(green, purple, solve_toy):
    url = purple(solve_toy, usage={"input_tokens": 50, "output_tokens": 7, "cost": 0.01})
    *results, summary = artifact_data(assess(green, {"agent": url}, {"num_queries": 1, "end_index": 2}))[0]
    assert [(r["tokens_in"], r["tokens_out"]) for r in results] == [(50, 7), (50, 7)]
    assert summary["tokens"] == 114 and summary["cost_usd"] == pytest.approx(0.02)


def test_an_agentbeats_0_3_client_reads_the_assessment(green, purple, solve_toy):
    """A raw A2A 0.3 `message/send`, as NetArena's and AgentBeats' a2a-sdk 0.3 clients send it, with a
    leaderboard-style config whose numbers arrived as doubles (protobuf Struct) and an unknown key."""
    config = {"num_queries": 1.0, "end_index": 2.0, "max_iterations": 3.0, "seed": "7", "prompt_type": "zeroshot_base",
              "agent_client_configs": {}, "leaderboard_note": "x"}
    text = json.dumps({"participants": {"k8s_operator": purple(solve_toy)}, "config": config})
    body = {"jsonrpc": "2.0", "id": 1, "method": "message/send",
            "params": {"message": {"role": "user", "messageId": "m1", "parts": [{"kind": "text", "text": text}]},
                       "configuration": {"blocking": True}}}
    task = httpx.post(green, json=body, timeout=60).json()["result"]
    assert task["status"]["state"] == "completed", task["status"]
    parts = [part["data"] for artifact in task["artifacts"] for part in artifact["parts"] if part.get("kind") == "data"]
    *results, summary = parts
    # config numbers that arrived as doubles acted as integers (a Struct sends every number back as a double)
    assert [(r["iterations"], r["level"]) for r in results] == [(1, 1), (1, 2)]
    assert summary["seed"] == "7" and summary["num_queries"] == 2
    assert summary["warnings"] and "leaderboard_note" in summary["warnings"][0]


def test_invalid_request_is_invalid_params_over_a2a_0_3(green):
    """A raw A2A 0.3 `message/send` (what AgentBeats clients send) with two participants."""
    text = json.dumps({"participants": {"a": "http://127.0.0.1:1", "b": "http://127.0.0.1:2"}, "config": {}})
    body = {"jsonrpc": "2.0", "id": 1, "method": "message/send",
            "params": {"message": {"role": "user", "messageId": "m1", "parts": [{"kind": "text", "text": text}]}}}
    answer = httpx.post(green, json=body, timeout=10).json()
    assert answer["error"]["code"] == -32602
    assert "exactly one participant" in answer["error"]["message"]


def test_parse_request_maps_netarena_configs(toy_app):
    url = "http://127.0.0.1:9009"
    request = json.dumps({"participants": {"op": url}, "config": {
        "num_queries": 3, "prompt_type": "zeroshot_cot", "max_iterations": 2, "complexity_level": ["level2"],
        "output_dir": "results", "seed": 5}})
    assessment = parse_request(request, toy_app)
    assert assessment.role == "op" and assessment.url == url
    assert [q.id for q in assessment.queries] == ["toy-L2-set+set-0000", "toy-L2-set+set-0001", "toy-L2-set+set-0002"]
    assert assessment.options.prompt_style == "cot" and assessment.max_steps == 2 and assessment.options.seed == 5
    assert assessment.ignored == ("output_dir",) and assessment.warnings == ()
    default = parse_request(json.dumps({"participants": {"op": url}}), toy_app)
    types = {(q.level, q.category) for q in default.queries}
    assert len(default.queries) == 10 * len(types) and default.timeout_s == 60  # num_queries per query type
    again = parse_request(json.dumps({"participants": {"op": url}}), toy_app)
    assert default.options.seed != again.options.seed  # new queries every assessment unless a seed is given


@pytest.mark.parametrize("config, style", [
    ({"prompt_style": "react"}, "react"),
    ({"strategy": "react"}, "react"),  # its old name
    ({"prompt_type": "fewshot_base"}, "few-shot"),  # NetArena's
    ({"prompt_style": "cot", "strategy": "react", "prompt_type": "fewshot_base"}, "cot"),
    ({"strategy": "react", "prompt_type": "fewshot_base"}, "react"),
    ({}, "zero-shot"),
])
def test_the_prompt_style_is_taken_by_our_name_its_old_one_and_netarenas(toy_app, config, style):
    request = json.dumps({"participants": {"op": "http://127.0.0.1:9"}, "config": {"num_queries": 1, **config}})
    assessment = parse_request(request, toy_app)
    assert assessment.options.prompt_style == style and assessment.warnings == ()
    assert assessment.describe()["prompt_style"] == style


def test_numbers_arrive_as_doubles_or_strings_and_unknown_keys_are_warnings(toy_app):
    config = {"num_queries": 2.0, "max_iterations": 7.0, "seed": "42", "start_index": 1, "end_index": 3.0,
              "shiny_new_key": True}
    assessment = parse_request(json.dumps({"participants": {"op": "http://127.0.0.1:9"}, "config": config}), toy_app)
    assert assessment.max_steps == 7 and assessment.options.seed == 42 and len(assessment.queries) == 2
    full = parse_request(json.dumps({"participants": {"op": "http://127.0.0.1:9"},
                                     "config": {**config, "start_index": 0, "end_index": None}}), toy_app)
    assert assessment.queries == full.queries[1:3]
    assert assessment.warnings == (f"unknown config key 'shiny_new_key' ignored; accepted: {', '.join(KNOWN_KEYS)}",)


@pytest.mark.parametrize("request_text, message", [
    ("not json", "must be JSON"),
    ('{"participants": {"a": "ftp://x"}}', "http(s) URL"),
    ('{"participants": {"a": "http://x"}, "config": {"num_queries": 2.5}}', "num_queries must be an integer >= 1"),
    ('{"participants": {"a": "http://x"}, "config": {"start_index": 999}}', "leave no query"),
    ('{"participants": {"a": "http://x"}, "config": {"max_reply_s": "soon"}}', "max_reply_s must be a number"),
    ('{"participants": {"a": "http://x"}, "config": {"num_queries": 0}}', "num_queries must be an integer >= 1"),
    ('{"participants": {"a": "http://x"}, "config": {"prompt_type": "magic"}}', "config.prompt_type 'magic' is not one of"),
    ('{"participants": {"a": "http://x"}, "config": {"prompt_style": ["cot"]}}', "config.prompt_style"),
    ('{"participants": {"a": "http://x"}, "config": {"levels": [7]}}', "no query at levels"),
])
def test_parse_request_rejects(toy_app, request_text, message):
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_request(request_text, toy_app)


def test_serve_green_cli(tmp_path):
    plugin_tests = os.path.join(os.path.dirname(__file__), "..", "plugin")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([plugin_tests, os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "pytest_netarena.cli", "serve-green", "--port", "0", "--app", "toy",
               "--register-app", "toy=toy_app:APP"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = process.stdout.readline()
        assert line.startswith("netarena green agent (toy) listening on http://127.0.0.1:"), process.stderr.read()
        url = line.split()[-1]
        card = httpx.get(url + ".well-known/agent-card.json", timeout=10).json()
        assert card["name"] == "NetArena toy Evaluation Agent" and card["url"] == url
        assert card["skills"][0]["id"] == "toy_eval" and card["capabilities"]["streaming"] is True
    finally:
        process.terminate()
        process.wait(10)
    unknown = subprocess.run([sys.executable, "-m", "pytest_netarena.cli", "serve-green", "--app", "nope"],
                             check=False, capture_output=True, text=True, timeout=60)
    assert unknown.returncode == 2 and "unknown app 'nope'" in unknown.stderr


def test_few_queries_alternate_levels_and_categories():
    from pytest_netarena.apps import get_app

    request = json.dumps({"participants": {"p": "http://127.0.0.1:9"}, "config": {"num_queries": 1}})
    queries = parse_request(request, get_app("malt")).queries
    assert [q.level for q in queries[:4]] == [1, 2, 3, 1]
    assert len({q.category for q in queries}) == len(queries)  # one query of every type


@pytest.fixture
def model():
    """An OpenAI-compatible 'model' on 127.0.0.1 that answers the last 'make it N' of its prompt with 'set N'."""
    from pytest_netarena.testing.openai_server import OpenAIStubServer

    def answer(request: dict) -> str:
        return "set " + re.findall(r"make it (\d+)", request["messages"][-1]["content"])[-1]

    with OpenAIStubServer(answer) as server:
        yield server


def serve_purple(*args: str) -> subprocess.Popen:
    env = {**os.environ, "OPENAI_API_KEY": "test-key", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.Popen([sys.executable, "-m", "pytest_netarena.cli", "serve-purple", "--port", "0", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def test_serve_purple_puts_a_model_agent_behind_a2a(green, model):
    process = serve_purple("--agent", "openai:gpt-4o", "--llm-api-base", model.url + "/v1")
    try:
        line = process.stdout.readline()
        assert line.startswith("netarena purple agent (openai:gpt-4o) listening on http://127.0.0.1:"), process.stderr.read()
        url = line.split()[-1]
        *results, summary = artifact_data(assess(green, {"agent": url}, {"num_queries": 1, "end_index": 2}))[0]
    finally:
        process.terminate()
        process.wait(10)
    assert [r["outcome"] for r in results] == ["resolved", "resolved"]
    assert len(model.requests) == 2 and model.requests[0].model == "gpt-4o"
    assert "make it" in model.requests[0].messages[-1]["content"]  # the green agent's whole prompt, as one message
    assert summary["tokens"] > 0  # the model's usage travelled back through the purple agent's metadata


def test_serve_purple_refuses_agents_that_need_the_episode():
    done = subprocess.run([sys.executable, "-m", "pytest_netarena.cli", "serve-purple", "--agent", "builtin:oracle"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and "not 'builtin:oracle'" in done.stderr


def test_the_netarena_profile_is_a_config_key_and_a_server_default(toy_app, purple, solve_toy):
    url = purple(solve_toy)
    with green_server("toy", compat="netarena") as server:
        *results, summary = artifact_data(assess(server.url, {"agent": url}, {"num_queries": 1, "end_index": 1}))[0]
        assert summary["rules"] == "netarena" and "[Step" not in results[0]["Query"]
        *results, summary = artifact_data(assess(server.url, {"agent": url},
                                                 {"num_queries": 1, "end_index": 1, "compat": "none"}))[0]
        assert summary["rules"] == "default" and results[0]["Query"].startswith("[Step 1 of")
    with pytest.raises(UsageError, match="config.compat"):
        parse_request(json.dumps({"participants": {"a": url}, "config": {"compat": "paper"}}), toy_app)


@pytest.mark.parametrize("compat, safety", [("none", 1.0), ("netarena", 0.0)])
def test_a_failed_purple_task_is_scored_as_netarena_scores_it_under_its_rules(green, purple, compat, safety):
    def broken(text):
        raise RuntimeError("model crashed")

    url = purple(broken, style="task")
    config = {"num_queries": 1, "end_index": 1, "compat": compat}
    (result, summary), _, state = artifact_data(assess(green, {"agent": url}, config))
    assert state == "TASK_STATE_COMPLETED" and result["outcome"] == "agent_error"
    assert result["Result-Correctness"] == "Fail" and summary["avg_correctness"] == 0.0
    assert summary["avg_safety"] == safety  # NetArena: Fail/Fail; ours: a failure changed nothing
    assert result["Result-Safety"] == ("Pass" if safety else "Fail")
