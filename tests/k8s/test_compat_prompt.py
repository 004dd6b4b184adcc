"""The K8s system prompt under --compat netarena states NetArena's rules, and its examples pass them."""

from __future__ import annotations

from pytest_netarena.apps.k8s import APP
from pytest_netarena.apps.k8s.netarena import rules as compat
from pytest_netarena.apps.k8s.netarena.prompt import netarena_prompt
from pytest_netarena.core.app import RunOptions


def test_the_compat_run_gets_the_compat_prompt():
    """NetArena's prompt whatever our modes: its rule against exec stands even where the pods run."""
    for extra in ({}, {"k8s_pods": "live"}, {"k8s_pods": "off"}):
        compat_prompt = APP.prompt_for(RunOptions(rules="netarena", extra=extra))
        assert compat_prompt == netarena_prompt()
        assert "`kubectl exec`" in compat_prompt.rules and "Do not read pod logs or events" in compat_prompt.rules
    ours = APP.prompt_for(RunOptions(extra={"k8s_pods": "off"}))
    assert ours != netarena_prompt() and ours.role == APP.prompt().role
    assert "not supported" in ours.rules and "kubectl exec deploy/" not in ours.rules


def test_netarena_prompt_states_its_rules_and_its_examples_pass_them():
    prompt = netarena_prompt()
    assert "<NO PREVIOUS OUTPUT>" in prompt.rules and "`kubectl apply`" in prompt.rules
    assert "```bash" not in prompt.action_format  # its deny-list skips a command fenced so
    assert "frontend \u2192 adservice:9555" in prompt.rules  # the intent: NetArena's blind start hides it
    assert "paymentservice" not in prompt.rules.split("frontend \u2192", 1)[1].splitlines()[0]
    for _observation, reply in prompt.examples:
        command = compat.extract_command(reply)
        assert command.startswith("kubectl ") and compat.disallowed(command) is None
