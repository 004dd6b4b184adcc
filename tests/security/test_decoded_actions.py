"""Escapes decoded from a reply's JSON are agent text too: a NUL, a control character or a lone
surrogate that only the decoded action holds is a refused step in every app, never an infra error."""

from __future__ import annotations

import pytest

from .conftest import needs_boxes, needs_route

SMALL_MALT = {"malt-topology": "synthetic:200"}
#: JSON escapes the raw reply never holds as characters
ESCAPES = {"nul": "\\u0000", "escape": "\\u001b[2J", "surrogate": "\\udc80"}


def _step(env_id: str, reply_for, app_options: dict | None = None) -> list[tuple[str, dict]]:
    gymnasium = pytest.importorskip("gymnasium")
    import pytest_netarena.training  # noqa: F401  (registers the environments)

    env = gymnasium.make(env_id, app_options=app_options or {})
    seen = []
    try:
        for name, escape in ESCAPES.items():
            env.reset(seed=1)
            observation, _, _, _, info = env.step(reply_for(env.unwrapped, escape))
            seen.append((name, observation, info))
    finally:
        env.close()
    return seen


def _check(seen) -> None:
    for name, observation, info in seen:
        assert info["refused"], (name, observation)
        assert info["outcome"] in ("", "agent_error", "unresolved"), (name, info)
        assert "cannot run" in observation and ("U+0000" in observation or "U+001B" in observation
                                                or "U+DC80" in observation), (name, observation)


@needs_boxes
def test_a_decoded_nul_in_a_k8s_command_is_a_refused_step():
    _check(_step("netarena/K8s-v0", lambda env, escape: f'{{"command": "kubectl get networkpolicy {escape} -o name"}}'))


@needs_boxes
def test_a_decoded_nul_in_malt_code_is_a_refused_step():
    code = f"def process_graph(graph_data):\\n    return {{'type': 'text', 'data': '{{}}'}} # {{}}\\n"
    _check(_step("netarena/Malt-v0", lambda env, escape: '{"code": "' + code.replace("{}", escape) + '"}',
                 SMALL_MALT))


@needs_route
def test_a_decoded_nul_in_a_route_command_is_a_refused_step():
    def reply(env, escape: str) -> str:
        return f'{{"machine": "{env._environment().topology.router}", "command": "iptables -L {escape}"}}'

    _check(_step("netarena/Route-v0", reply, {"route-size": "2x1"}))
