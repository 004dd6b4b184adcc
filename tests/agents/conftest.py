"""Fixtures for the agent tests: a local OpenAI-compatible server and litellm imported once."""

from __future__ import annotations

import pytest

from pytest_netarena.agents.model_agent import ModelAgent, ModelSettings, import_litellm
from pytest_netarena.core.types import Task
from pytest_netarena.testing.openai_server import OpenAIStubServer

TASK = Task("tiny", "e1", "You repair tiny networks.", "zero-shot", 5)


@pytest.fixture(scope="session")
def litellm():
    """litellm takes seconds to import and its first completion ~1 s more: pay both once per session."""
    module = import_litellm()
    with OpenAIStubServer(["warm"]) as server:
        agent = ModelAgent("openai/gpt-4o", ModelSettings(api_base=server.url + "/v1", api_key="test"))
        agent.reset(TASK)
        agent.act("warm up")
    return module


@pytest.fixture
def serve():
    """Start stub servers for this test; all are stopped at its end."""
    servers: list[OpenAIStubServer] = []

    def start(replies=()) -> OpenAIStubServer:
        server = OpenAIStubServer(replies).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture(params=["litellm", "http"])
def client(request):
    """Each behaviour is checked through both ways to a model: litellm and plain HTTP (openai/ models)."""
    if request.param == "litellm":
        request.getfixturevalue("litellm")
    return request.param


@pytest.fixture
def agent_for(client):
    """A ModelAgent pointed at a stub server, with tiny backoff, through each client; reset with TASK."""

    def make(server: OpenAIStubServer, model: str = "openai/gpt-4o", **settings) -> ModelAgent:
        settings.setdefault("backoff_s", 0.01)
        settings.setdefault("client", client)
        agent = ModelAgent(model, ModelSettings(api_base=server.url + "/v1", api_key="test", **settings))
        agent.reset(TASK)
        return agent

    return make
