"""The green agent end to end (green and purple servers on 127.0.0.1, toy app), its requests and its CLI."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time

import httpx
import pytest

from pytest_netarena.errors import UsageError
from pytest_netarena.green.agent import green_server
from pytest_netarena.green.assessment import parse_request


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
    events = assess(green, {"network_operator": purple(solve_toy)}, {"num_queries": 3, "prompt_type": "fewshot_cot"})
    data, statuses, state = artifact_data(events)
    assert state == "TASK_STATE_COMPLETED"
    *results, summary = data
    assert [r["query_id"] for r in results] == ["toy-L1-set-0000", "toy-L2-set+set-0000", "toy-L1-set-0001"]
    assert all(r["outcome"] == "resolved" and r["iterations"] == 1 and r["safe"] for r in results)
    assert results[0]["steps"][0]["action"].startswith("set ")
    assert summary["avg_correctness"] == 1.0 and summary["avg_safety"] == 1.0 and summary["avg_iterations"] == 1.0
    assert summary["num_queries"] == 3 and "avg_latency_s" not in summary
    assert statuses[0].startswith("Starting assessment.") and '"strategy": "few-shot"' in statuses[0]
    assert [s for s in statuses if s.startswith("Query ")][2].startswith('Query 3 processed by agent: "network_operator"')


def test_assessment_of_a_bad_agent_scores_it_zero(green, purple):
    events = assess(green, {"agent": purple(lambda text: "set -1")}, {"num_queries": 2, "max_iterations": 1})
    *results, summary = artifact_data(events)[0]
    assert [r["outcome"] for r in results] == ["unsafe", "unsafe"]
    assert results[0]["first_unsafe_step"]["violations"] == ["counter went negative (-1)"]
    assert summary["avg_correctness"] == 0.0 and summary["avg_safety"] == 0.0


def test_assessment_of_an_unreachable_agent_completes_with_agent_errors(green, closed_port_url):
    started = time.monotonic()
    *results, summary = artifact_data(assess(green, {"agent": closed_port_url}, {"num_queries": 2}))[0]
    assert [r["outcome"] for r in results] == ["agent_error", "agent_error"]
    assert "cannot connect" in results[0]["details"]
    assert summary["agent_errors"] == 2 and summary["avg_correctness"] == 0.0
    assert time.monotonic() - started < 10


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
    assert assessment.options.strategy == "cot" and assessment.max_steps == 2 and assessment.options.seed == 5
    assert assessment.ignored == ("output_dir",)
    default = parse_request(json.dumps({"participants": {"op": url}}), toy_app)
    assert len(default.queries) == 10 and default.options.seed == 0 and default.timeout_s == 60


@pytest.mark.parametrize("request_text, message", [
    ("not json", "must be JSON"),
    ('{"participants": {"a": "ftp://x"}}', "http(s) URL"),
    ('{"participants": {"a": "http://x"}, "config": {"num_query": 3}}', "unknown config keys num_query"),
    ('{"participants": {"a": "http://x"}, "config": {"num_queries": 0}}', "num_queries must be an integer >= 1"),
    ('{"participants": {"a": "http://x"}, "config": {"prompt_type": "magic"}}', "is not one of"),
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

    request = json.dumps({"participants": {"p": "http://127.0.0.1:9"}, "config": {"num_queries": 4}})
    queries = parse_request(request, get_app("malt")).queries
    assert [q.level for q in queries] == [1, 2, 3, 1]
    assert len({q.category for q in queries}) == 4
