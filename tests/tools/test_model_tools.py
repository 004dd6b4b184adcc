"""A model that answers only with tool calls, through the default client and through litellm, against the stub
OpenAI-compatible server: it resolves episodes in every app; bad calls are refused steps whose message goes back;
several calls are several steps; --tool-calls never sends no tools; record then replay; SFT and ATIF exports."""

from __future__ import annotations

import json
import os
from dataclasses import replace

import pytest

from pytest_netarena.agents.spec import parse_agent_spec
from pytest_netarena.apps import get_app
from pytest_netarena.core.app import RunOptions
from pytest_netarena.core.types import EpisodeResult, Outcome
from pytest_netarena.reporting import artifacts
from pytest_netarena.run.runner import play
from pytest_netarena.testing.openai_server import OpenAIStubServer, StubReply

from .twin import as_call

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


class ToolModel:
    """A scripted 'model' acting only through tool calls: a built-in agent's next actions (per_turn of them),
    each sent as the app's tool call; `first` replaces its first answer (e.g. malformed calls)."""

    def __init__(self, app: str, inner, per_turn: int = 1, first: StubReply | None = None) -> None:
        self.app, self.inner, self.per_turn, self.first = app, inner, per_turn, first
        self.calls = 0

    def __call__(self, request: dict) -> StubReply:
        messages = request["messages"]
        if len(messages) == 2:  # a new episode: system prompt and first observation
            self.inner.reset(None)
            if self.first is not None:
                return self.first
        observation = messages[-1]["content"]
        calls = []
        for _ in range(self.per_turn):
            self.calls += 1
            reply = self.inner.act(observation)
            call = as_call(self.app, reply.text, self.calls)
            calls.append((call.name, json.loads(call.arguments)))
        return StubReply.calls(*calls)


def model_play(app_name, env, query, server, client="auto", tool_calls="auto", max_steps=None, **settings):
    spec = parse_agent_spec("openai:gpt-4o")
    base = server.url + "/v1" if server is not None else "http://127.0.0.1:9/v1"  # None: nothing listens
    spec = replace(spec, settings={"api_base": base, "api_key": "test", "client": client, "backoff_s": 0.01,
                                   **settings})
    options = RunOptions(max_steps=max_steps, tool_calls=tool_calls, extra=EXTRA.get(app_name, {}))
    return play(get_app(app_name), env, spec, query, options, agent_timeout_s=120)


EXTRA = {"malt": {"malt_topology": "synthetic:600"}, "route": {"route_size": "2x1"}}
CLIENTS = ["auto", "litellm"]  # the default (plain HTTP for openai:) and litellm, both against the stub


@pytest.fixture(scope="module")
def k8s_env():
    env = get_app("k8s").make_environment(RunOptions())
    yield env
    env.close()


@pytest.fixture(scope="module")
def k8s_query():
    queries = get_app("k8s").generate(RunOptions(seed=9, queries=1, levels=(2,)))
    return next(q for q in queries if len({f["policy"] for f in q.params["faults"]}) > 1)


def oracle(app_name, query, env):
    return get_app(app_name).builtin_agent("oracle", query, env)


@pytest.mark.parametrize("client", CLIENTS)
def test_a_tool_calling_model_resolves_k8s(k8s_env, k8s_query, client) -> None:
    model = ToolModel("k8s", oracle("k8s", k8s_query, k8s_env))
    with OpenAIStubServer(model) as server:
        result = model_play("k8s", k8s_env, k8s_query, server, client)
    assert result.outcome is Outcome.RESOLVED and result.interface == "tools", result.details
    assert all(step.tool_call and step.tool_call.name == "run_kubectl" for step in result.steps)
    first = server.requests[0]
    assert [tool["function"]["name"] for tool in first.tools] == ["run_kubectl", "finish"]
    assert "Act through the tools" in first.messages[0]["content"] and "```bash" not in first.messages[0]["content"]
    second = server.requests[1]
    assert second.messages[-2]["role"] == "assistant" and second.messages[-2]["tool_calls"]
    (answer,) = second.tool_messages
    assert answer["tool_call_id"] == second.messages[-2]["tool_calls"][0]["id"]
    assert answer["content"] == result.steps[0].observation  # the observation goes back as the tool's result
    assert result.usage.tokens > 0 and result.usage.cost_usd > 0  # gpt-4o is priced: tokens and cost are counted


@pytest.mark.parametrize("client", CLIENTS)
def test_a_tool_calling_model_resolves_malt(client) -> None:
    env = get_app("malt").make_environment(RunOptions(extra=EXTRA["malt"]))
    try:
        query = get_app("malt").generate(RunOptions(seed=4, queries=1, extra=EXTRA["malt"]))[0]
        with OpenAIStubServer(ToolModel("malt", oracle("malt", query, env))) as server:
            result = model_play("malt", env, query, server, client)
    finally:
        env.close()
    assert result.outcome is Outcome.RESOLVED and result.steps[0].tool_call.name == "run_process_graph"
    assert len(server.requests) == 1 and result.ended_by == "environment"


def route_missing() -> str | None:
    if os.geteuid() != 0:
        return "route needs root (Mininet network namespaces)"
    from pytest_netarena.apps.route.network.capabilities import backend_missing

    return backend_missing()


@pytest.mark.skipif(route_missing() is not None, reason=str(route_missing()))
@pytest.mark.parametrize("client", CLIENTS)
def test_a_tool_calling_model_resolves_route(client) -> None:
    options = RunOptions(seed=6, queries=1, levels=(1,), extra=EXTRA["route"])
    env = get_app("route").make_environment(options)
    try:
        query = get_app("route").generate(options)[0]
        with OpenAIStubServer(ToolModel("route", oracle("route", query, env))) as server:
            result = model_play("route", env, query, server, client, max_steps=6)
            nodes = list(env.topology.nodes)
    finally:
        env.close()
    assert result.outcome is Outcome.RESOLVED and result.steps[0].tool_call.name == "run_command", result.details
    machine = server.requests[0].tools[0]["function"]["parameters"]["properties"]["machine"]
    assert machine["enum"] == nodes  # the episode's own nodes


@pytest.mark.parametrize("client", CLIENTS)
def test_malformed_calls_are_refused_steps_whose_message_goes_back(k8s_env, k8s_query, client) -> None:
    bad = StubReply.calls(("run_kubectl", "{not json"), ("delete_everything", {}),
                          ("run_kubectl", {"command": "kubectl get pods", "namespace": "kube-system"}),
                          ("run_kubectl", {"command": "kubectl get pods\u0000"}))
    model = ToolModel("k8s", oracle("k8s", k8s_query, k8s_env), first=bad)
    with OpenAIStubServer(model) as server:
        result = model_play("k8s", k8s_env, k8s_query, server, client, max_steps=10)
    assert result.outcome is Outcome.RESOLVED and [s.refused for s in result.steps[:4]] == [True] * 4
    sent = server.requests[1]
    ids = [call["id"] for call in sent.messages[-5]["tool_calls"]]
    assert [m["tool_call_id"] for m in sent.tool_messages] == ids  # one tool message per call, in order
    contents = [m["content"] for m in sent.tool_messages]
    assert "run_kubectl: the arguments are not valid JSON" in contents[0]
    assert 'unknown tool "delete_everything"; the tools are: run_kubectl, finish' in contents[1]
    assert 'unknown argument "namespace"' in contents[2] and "a NUL character" in contents[3]
    assert json.loads(json.dumps(result.to_dict()))["steps"][0]["refused"]


def test_several_calls_in_one_turn_are_separate_steps(k8s_env, k8s_query) -> None:
    model = ToolModel("k8s", oracle("k8s", k8s_query, k8s_env), per_turn=2)
    with OpenAIStubServer(model) as server:
        result = model_play("k8s", k8s_env, k8s_query, server)
    assert result.outcome is Outcome.RESOLVED and len(result.steps) == 2 and len(server.requests) == 1
    assert result.steps[0].turn == result.steps[1].turn == 1
    assert result.steps[0].usage.tokens > 0 and result.steps[1].usage.tokens == 0  # one reply's usage, once


def test_tool_calls_never_sends_no_tools_and_reads_text(k8s_env, k8s_query) -> None:
    agent = oracle("k8s", k8s_query, k8s_env)

    def text_model(request):
        if len(request["messages"]) == 2:
            agent.reset(None)
        return agent.act(request["messages"][-1]["content"]).text

    with OpenAIStubServer(text_model) as server:
        result = model_play("k8s", k8s_env, k8s_query, server, tool_calls="never")
    assert result.outcome is Outcome.RESOLVED and result.interface == "text"
    assert all("tools" not in request.body for request in server.requests)
    assert "Act through the tools" not in server.requests[0].messages[0]["content"]
    assert all(step.tool_call is None for step in result.steps)


def test_a_tool_run_recorded_then_replayed_gives_the_same_verdicts(k8s_env, k8s_query, tmp_path) -> None:
    bad = StubReply.calls(("run_kubectl", "{oops"))
    with OpenAIStubServer(ToolModel("k8s", oracle("k8s", k8s_query, k8s_env), first=bad)) as server:
        recorded = model_play("k8s", k8s_env, k8s_query, server, record_dir=str(tmp_path / "rec"))
    replayed = model_play("k8s", k8s_env, k8s_query, None, replay_dir=str(tmp_path / "rec"))  # no server at all
    assert recorded.outcome is replayed.outcome is Outcome.RESOLVED
    assert [(s.tool_call, s.action, s.refused) for s in recorded.steps] == \
        [(s.tool_call, s.action, s.refused) for s in replayed.steps]
    assert recorded.usage == replayed.usage
    saved = [json.loads(path.read_text()) for path in (tmp_path / "rec").glob("*.json")]
    assert all(entry["request"]["tools"] for entry in saved) and any(entry["tool_calls"] for entry in saved)


def test_export_of_a_tool_run_holds_the_tool_calls(k8s_env, k8s_query, tmp_path) -> None:
    from pytest_netarena.training.atif import export_atif
    from pytest_netarena.training.export import Filters, export

    bad = StubReply.calls(("run_kubectl", "{oops"), content="Let me look.")
    with OpenAIStubServer(ToolModel("k8s", oracle("k8s", k8s_query, k8s_env), first=bad)) as server:
        result = model_play("k8s", k8s_env, k8s_query, server)
    run = tmp_path / "run"
    run.mkdir()
    artifacts.write_run_info(run, {"run_id": "r1", "seed": 9, "options": {"prompt_style": "zero-shot"}})
    artifacts.append_episode(run, result)
    assert EpisodeResult.from_dict(json.loads((run / "episodes.jsonl").read_text())) == result

    assert export([run], tmp_path / "sft", "openai") == 1
    row = json.loads((tmp_path / "sft" / "data.jsonl").read_text())
    assert [tool["function"]["name"] for tool in row["tools"]] == ["run_kubectl", "finish"]
    roles = [message["role"] for message in row["messages"]]
    assert roles[:5] == ["system", "user", "assistant", "tool", "assistant"] and roles[-1] == "assistant"
    first = row["messages"][2]
    assert first["content"] == "Let me look." and first["tool_calls"][0]["function"]["arguments"] == "{oops"
    assert row["messages"][3]["tool_call_id"] == first["tool_calls"][0]["id"]
    assert "run_kubectl: the arguments are not valid JSON" in row["messages"][3]["content"]
    assert "Act through the tools" in row["messages"][0]["content"]
    assert export([run], tmp_path / "sharegpt", "sharegpt") == 1
    turns = json.loads((tmp_path / "sharegpt" / "data.jsonl").read_text())["conversations"]
    assert [turn["from"] for turn in turns[:5]] == ["system", "human", "gpt", "function_call", "observation"]

    pytest.importorskip("atif", reason="the atif library is not installed")
    assert export_atif([run], tmp_path / "atif") == 1
    (document,) = [json.loads(p.read_text()) for p in (tmp_path / "atif").glob("*.json")]
    names = [tool["function"]["name"] for tool in document["agent"]["tool_definitions"]]
    assert names == ["run_kubectl", "finish"]
    agent_steps = [step for step in document["steps"] if step["source"] == "agent"]
    assert agent_steps[0]["tool_calls"][0]["function_name"] == "run_kubectl"
    assert agent_steps[0]["tool_calls"][0]["arguments"] == {"_raw": "{oops"}
    result_ = agent_steps[0]["observation"]["results"][0]
    assert result_["source_call_id"] == agent_steps[0]["tool_calls"][0]["tool_call_id"]
    assert agent_steps[1]["tool_calls"][0]["arguments"]["command"].startswith("kubectl ")


def test_a_text_reply_to_a_request_offering_tools_is_read_as_text(k8s_env, k8s_query) -> None:
    agent = oracle("k8s", k8s_query, k8s_env)

    def text_model(request):  # offered tools, answers in NetArena's text form all the same
        if len(request["messages"]) == 2:
            agent.reset(None)
        return agent.act(request["messages"][-1]["content"]).text

    with OpenAIStubServer(text_model) as server:
        result = model_play("k8s", k8s_env, k8s_query, server, tool_calls="auto")
    assert all(request.tools for request in server.requests)
    assert result.outcome is Outcome.RESOLVED and not any(step.refused for step in result.steps), result.details
    assert all(step.tool_call is None and step.action.startswith("kubectl") for step in result.steps)
