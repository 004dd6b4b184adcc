"""The green server listens on the network, unauthenticated: a request cannot make it read local
files (nor tell whether they exist), build oversized topologies, or hold a huge body in memory."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import httpx
import pytest

pytest.importorskip("a2a", reason="the a2a-sdk is not installed")

from pytest_netarena.agentbeats.agent import green_server  # noqa: E402


@pytest.fixture(scope="module")
def malt_green():
    with green_server("malt") as server:
        yield server.url


def send(url: str, config: dict) -> str:
    """One assessment request as A2A 0.3 JSON-RPC message/send; the raw response text."""
    request = {"participants": {"operator": "http://127.0.0.1:9/"}, "config": config}
    body = {"jsonrpc": "2.0", "id": 1, "method": "message/send",
            "params": {"message": {"role": "user", "messageId": "m1",
                                   "parts": [{"kind": "text", "text": json.dumps(request)}]}}}
    return httpx.post(url, json=body, timeout=60).text


def test_a_request_cannot_read_files_probe_paths_or_size_topologies(malt_green, tmp_path: Path):
    from pytest_netarena.apps.malt import app as malt_app

    secret = f"hunter2-{secrets.token_hex(8)}"
    canary = tmp_path / "canary.txt"
    canary.write_text(f'entity {{\n  password: "{secret}"\n}}\n{secret} {{{{\n')
    built = malt_app._index.cache_info().currsize
    here = send(malt_green, {"options": {"malt-topology": str(canary)}})
    missing = send(malt_green, {"options": {"malt-topology": str(tmp_path / "missing.txt")}})
    huge = send(malt_green, {"options": {"malt-topology": "synthetic:200000:1"}})
    assert secret not in here and "hunter2" not in here
    assert '"error"' in here and '"error"' in missing and '"error"' in huge
    assert here.replace(str(canary), "PATH") == missing.replace(str(tmp_path / "missing.txt"), "PATH")
    assert str(canary) not in here  # the refusal does not even echo the path
    assert malt_app._index.cache_info().currsize == built  # no topology was built for any of them


def test_a_huge_request_body_is_refused_before_it_is_read(malt_green):
    bomb = b'{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": "' + b"x" * (2 << 20) + b'"}'
    declared = httpx.post(malt_green, content=bomb, headers={"content-type": "application/json"}, timeout=60)
    assert declared.status_code == 413

    def chunked():
        for start in range(0, len(bomb), 64 << 10):
            yield bomb[start:start + (64 << 10)]

    streamed = httpx.post(malt_green, content=chunked(), headers={"content-type": "application/json"}, timeout=60)
    assert streamed.status_code == 413
    assert httpx.get(malt_green + ".well-known/agent-card.json", timeout=10).status_code == 200
