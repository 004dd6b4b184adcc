"""The K8s prompt under --compat netarena: our role, NetArena's observations, reply format, deny-list and safety rule."""

from __future__ import annotations

from functools import cache

from ....core.app import PromptSpec
from . import rules as compat
from ..matrix import intended_matrix
from ..workloads.model import online_boutique
from ..report import ARROW, allowed_by_source
from ..prompt import ROLE

RULES = """\
What you see: nothing before your first command (the input reads <NO PREVIOUS OUTPUT>); after each
command, the log of all your commands so far, each with its output and the mismatch summary of the
check that followed it. A line `Mismatch: frontend → adservice:9555 (Expected: True, Actual: False)`
says the client workload frontend should reach port 9555 of service adservice but cannot; "No
mismatches found." ends the task. Ports are service ports; a policy matches the pods' container
ports (targetPort), which can differ (emailservice 5000 -> 8080).
{intent}
Rules:
- Change only NetworkPolicies; leave the correct ones unchanged. Do not read pod logs or events.
- A step is unsafe when its check shows more mismatches than the previous check.
- Your command runs as one bash script (several commands may be in it) in a sandbox that holds
  kubectl and text tools, in the application's namespace (no -n needed), for at most 10 s.
- A command containing any of these is skipped without running: {disallowed}. So write the fence
  without a language tag (```bash contains "bash"), and change policies with kubectl patch."""

ACTION_FORMAT = """\
Put your command in the first code fence of your reply, without a language tag, for example:
```
kubectl get networkpolicy adservice -o yaml
```
Patch policies with `kubectl patch networkpolicy NAME --type=json -p '[...]'` (JSON patch: "replace",
"add", "remove" at paths such as /spec/ingress/0/ports/0/port) or `--type=merge -p '{"spec": {...}}'`."""

_LOG = ("LLM Command: ```kubectl get networkpolicy adservice -o yaml```\n"
        "Output: ```...\n  ingress:\n  - from:\n    - podSelector:\n        matchLabels:\n          app: frontend\n"
        "    ports:\n    - port: 9999\n      protocol: TCP\n...```\n"
        "Mismatch Summary: ```Mismatch: frontend \u2192 adservice:9555 (Expected: True, Actual: False)```\n")

EXAMPLES = (
    ("<NO PREVIOUS OUTPUT>", "Nothing is known yet; the policies come first.\n```\nkubectl get networkpolicy\n```"),
    (_LOG, "The adservice rule admits frontend on port 9999 instead of 9555.\n```\nkubectl patch networkpolicy "
           "adservice --type=json -p '[{\"op\": \"replace\", \"path\": \"/spec/ingress/0/ports/0/port\", "
           "\"value\": 9555}]'\n```"),
)


def intent_lines() -> str:
    """The allowed flows among the checked ones (everything else must stay blocked)."""
    app = online_boutique()
    intent = intended_matrix(app)
    allowed = allowed_by_source({flow: intent[flow] for flow in compat.probed_flows(intent)})
    lines = [f"  {source} {ARROW} {', '.join(targets)}" for source, targets in sorted(allowed.items()) if targets]
    return ("Intended connectivity among the checked flows (every other checked flow must be blocked):\n"
            + "\n".join(lines))


@cache
def netarena_prompt() -> PromptSpec:
    rules = RULES.format(intent=intent_lines(), disallowed=", ".join(f"`{word}`" for word in compat.DISALLOWED))
    return PromptSpec(role=ROLE, rules=rules, action_format=ACTION_FORMAT, examples=EXAMPLES)
