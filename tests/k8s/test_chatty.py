"""builtin:chatty writes its fixes in the corpus styles and still resolves the default suite, with no refused step."""

from __future__ import annotations

from pytest_netarena.apps.k8s import APP
from pytest_netarena.apps.k8s.agents.chatty import ChattyAgent, _styles
from pytest_netarena.apps.k8s.replies import read_reply
from pytest_netarena.core.app import RunOptions
from pytest_netarena.core.types import Outcome

from .helpers import episode


def test_chatty_resolves_the_default_suite_without_a_refused_step(k8s_env):
    queries = APP.generate(RunOptions())
    styles_seen = set()
    for query in queries:
        agent = APP.builtin_agent("chatty", query, k8s_env)
        assert isinstance(agent, ChattyAgent)
        styles_seen.update((query.seed + n) % 7 for n in range(len(agent.replies) - 1))
        result = episode(k8s_env, agent, query)
        assert result.outcome is Outcome.RESOLVED and result.safe, (query.id, result.details)
        assert not any(step.refused for step in result.steps), [s.output for s in result.steps if s.refused]
    assert styles_seen == set(range(7))  # every style was exercised


def test_every_style_reads_as_one_action_that_runs_kubectl():
    spec = {"podSelector": {"matchLabels": {"app": "x"}}, "policyTypes": ["Ingress"]}
    for style in _styles("x", spec, "a reason"):
        read = read_reply(style)
        assert not read.refused, (style, read.refusal)
        assert "networkpolicy" in read.command or "NetworkPolicy" in read.command
