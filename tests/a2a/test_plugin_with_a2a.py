"""--agent=a2a:URL through the whole plugin: a local purple agent plays the toy suite."""

from __future__ import annotations

import pytest


def test_a2a_agent_resolves_the_toy_suite(toy: pytest.Pytester, purple, solve_toy) -> None:
    url = purple(solve_toy)
    result = toy.runpytest_subprocess(f"--agent=a2a:{url}", "--queries=1", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_an_unreachable_a2a_agent_is_one_usage_error_before_the_run(toy: pytest.Pytester, closed_port_url) -> None:
    """As the green agent fails an assessment it cannot reach: never a run of valid-looking zeros."""
    result = toy.runpytest_subprocess(f"--agent=a2a:{closed_port_url}", "--queries=1", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()[-2000:]
    errors = [line for line in result.stderr.lines if line.strip()]
    assert len(errors) == 1 and "cannot connect" in errors[0] and closed_port_url in errors[0], errors
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert not (toy.path / "reports").exists() or not list((toy.path / "reports").glob("*/episodes.jsonl"))


def test_malformed_a2a_spec_is_a_usage_error(toy: pytest.Pytester) -> None:
    result = toy.runpytest_subprocess("--agent=a2a:not-a-url")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*expected a2a:http://HOST:PORT*"])


class MethodLog:
    """ASGI middleware that notes the JSON-RPC method of every POST before passing it on untouched."""

    def __init__(self, app) -> None:
        self.app, self.methods = app, []

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            return await self.app(scope, receive, send)
        chunks, more = [], True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        self.methods.append(__import__("json").loads(body).get("method"))
        replayed = False

        async def replay():
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        return await self.app(scope, replay, send)


@pytest.mark.parametrize("flag, streamed", [((), True), (("--no-a2a-streaming",), False)])
def test_a2a_streaming_is_the_default_and_can_be_turned_off(toy: pytest.Pytester, solve_toy, flag, streamed) -> None:
    from pytest_netarena.agentbeats.purple import purple_app
    from pytest_netarena.agentbeats.server import RunningServer

    logs = []

    def build(url):
        logs.append(MethodLog(purple_app(solve_toy)(url)))
        return logs[-1]

    with RunningServer(build, "127.0.0.1", 0) as server:
        result = toy.runpytest_subprocess(f"--agent=a2a:{server.url}", "--queries=1", "-p", "no:cacheprovider", *flag)
    result.assert_outcomes(passed=2)
    methods = set(logs[0].methods)
    assert methods and all(("Stream" in m or "stream" in m) == streamed for m in methods), methods
