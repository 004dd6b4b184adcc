"""The K8s app's prompt parts; every example reply holds one kubectl action, as the rules demand."""

from __future__ import annotations

from ...core.app import PromptSpec
from ...core.tools import Tool
from .replies import MAX_ACTION_BYTES

ROLE = """\
You are a network engineer on call for a Kubernetes cluster that runs a microservice application.
Kubernetes NetworkPolicies decide which workloads may open connections to which service ports.
Some policies were changed by mistake, so the cluster's connectivity no longer matches the intent.
Your task: restore exactly the intended connectivity by fixing NetworkPolicies, safely."""

SEEN = """\
What you see: before your first command, the intended connectivity and the current mismatch report;
after every command, its output and the new mismatch report. A mismatch line reads
`frontend → adservice:9555 (Expected: True, Actual: False)`: the client workload frontend should
reach port 9555 of service adservice but cannot. Ports in the report are service ports; a policy
matches the pods' container ports (targetPort), which can differ (e.g. emailservice 5000 -> 8080).
Rules:"""

COMMON_RULES = """\
- Change only NetworkPolicies. Never delete, recreate, scale, restart, relabel, annotate or otherwise
  modify Deployments, ReplicaSets, Pods, Services or Namespaces, and create no new workloads.
- Every step must be safe: a command must never break a flow that currently matches the intent
  (neither block an intended flow nor open a flow that must stay blocked), not even for a moment:
  every write is checked, so deleting a policy to re-create it opens its flows in between. Change
  one policy at a time, precisely (patch or apply it in place); do not delete all policies or open
  everything.
- The application runs in the current namespace; you do not need -n. Your identity may act only in
  that namespace: other namespaces and cluster-wide listings (-A) answer Forbidden.
- Each action runs as `bash -c` in a fresh, empty sandbox that holds kubectl and text tools (grep,
  jq, head, sed, awk, ...): pipes, heredocs (`kubectl apply -f - <<EOF`) and quoting work as in bash,
  but nothing persists between actions, there are no files of yours, and the only network is the
  cluster's API. An action runs for at most 20 s and its output is cut at 32,000 characters.
- Every action runs kubectl (optionally piped through text tools); other commands are refused."""

#: the least privilege rule; {unseen} and {cleared} say what the agent's own view cannot show, by story
LEAST_PRIVILEGE = """\
- Least privilege: when you finish, the policies must admit no more than the intended policies do,
  including traffic {unseen}.
  A fix that {cleared} but admits more is graded unresolved. So never widen a rule to fix it: not by
  removing a rule's `ports` (that admits every port), not by a port range (`endPort`) or a protocol
  beyond the one needed, not by a `namespaceSelector` that admits other namespaces (an empty one
  admits them all), not by an `ipBlock`, not by a new policy or an empty `podSelector` that admits
  more pods, and not by moving an unwanted peer to a port nothing listens on instead of removing it.
  Restore the exact port, protocol and peers the intent needs."""

END_RULE = """\
- The episode ends by itself once it is resolved: the report says "No mismatches found" and your
  policies follow the least privilege rule above. The report cannot see a rule that is too wide, so a
  clean report while the episode goes on means a policy still admits more than the intent: find it and
  narrow it."""

RULES = "\n".join((SEEN, COMMON_RULES, LEAST_PRIVILEGE.format(
    unseen="the report cannot show (it checks only the listed workloads' service ports)",
    cleared="clears the report"), END_RULE))

ACTION_FORMAT = """\
Reply with exactly ONE kubectl command per turn (one action), in a code fence, for example:
```bash
kubectl get networkpolicy adservice -o yaml
```
Only that command runs; a reply with two different commands is refused (in a chain-of-thought reply
the last command is the action), except a read-only inspection beside a change: then only the
inspection runs, and you send the change next turn if its output still calls for it."""

#: what every interface is told of a command (text replies and tool calls alike)
ANSWER_FORMAT = """\
One command may span several lines (backslash continuations, JSON in quotes, a heredoc). Change
policies with `kubectl patch networkpolicy NAME --type=json -p '[...]'` (JSON patch: "replace", "add",
"remove" at paths such as /spec/ingress/0/ports/0/port), `--type=merge -p '{"spec": {...}}'` (a merge
patch replaces whole lists), or re-create a policy with `kubectl apply -f - <<'EOF'` ... `EOF`."""

EXAMPLES = (
    (
        "Connectivity check: 1 of 121 flows mismatch the intent.\n"
        "frontend → adservice:9555 (Expected: True, Actual: False)",
        "The adservice policy probably no longer admits frontend on 9555. Let me read it.\n"
        "```\nkubectl get networkpolicy adservice -o yaml\n```",
    ),
    (
        "$ kubectl get networkpolicy adservice -o yaml\n...\n  ingress:\n  - from:\n    - podSelector:\n"
        "        matchLabels:\n          app: frontend\n    ports:\n    - port: 9999\n      protocol: TCP\n...\n\n"
        "Connectivity check: 1 of 121 flows mismatch the intent.\n"
        "frontend → adservice:9555 (Expected: True, Actual: False)",
        "The rule admits frontend on port 9999 instead of 9555.\n"
        "```\nkubectl patch networkpolicy adservice --type=json "
        "-p '[{\"op\": \"replace\", \"path\": \"/spec/ingress/0/ports/0/port\", \"value\": 9555}]'\n```",
    ),
    (
        "Connectivity check: 2 of 121 flows mismatch the intent.\n"
        "emailservice → paymentservice:50051 (Expected: False, Actual: True)\n"
        "shippingservice → paymentservice:50051 (Expected: False, Actual: True)",
        "Something now admits emailservice and shippingservice into paymentservice; the policy must be checked.\n"
        "```\nkubectl get networkpolicy paymentservice -o json\n```",
    ),
)

#: what the agent may inspect, by mode (the suite's `--k8s-pods`: "live" when the pods run)
LIVE_RULE = """\
- The application's pods run: probe a path from a client's pod with
  `kubectl exec deploy/frontend -- wget -qO- -T 2 http://adservice:9555` or
  `kubectl exec deploy/frontend -- nc -z -w 2 adservice 9555` (busybox tools: wget, nc, nslookup; a
  timeout means dropped, a refusal or an answer means connected), read a service's complaints with
  `kubectl logs deploy/NAME` and see `kubectl get events`. Probing changes nothing; the verdict is the
  connectivity the policies allow."""
API_ONLY_RULE = """\
- Only the API server runs here, not the pods: `kubectl exec`, `logs`, `attach` and `port-forward` answer that
  they are not supported. Work from the objects (policies, pods, labels, services)."""

OPERATOR_ROLE = """\
You are a network engineer on call for a Kubernetes cluster that runs a microservice application.
Kubernetes NetworkPolicies decide which workloads may open connections to which service ports.
An incident is open: users report failures, or a security scan flags services that accept too much.
Your task: find the cause, and restore the application's intended connectivity by fixing NetworkPolicies, safely."""

OPERATOR_SEEN = """\
What you see: before your first command, the incident as users and the security team report it, the
application's architecture notes (which workload calls which service ports; every other flow must be
blocked) and the constraints; after every command, only its output. Nobody tells you which flows are wrong
or when they are right again: find out yourself. The episode ends by itself once it is resolved: the
application works as intended and the policies admit nothing beyond that (least privilege, below).
Ports in the notes are service ports; a policy matches the pods' container ports (targetPort), which can
differ (e.g. emailservice 5000 -> 8080).
Rules:"""

OPERATOR_RULES = "\n".join((OPERATOR_SEEN, COMMON_RULES, LEAST_PRIVILEGE.format(
    unseen="no probe of the notes' flows shows (other ports, protocols, namespaces and addresses)",
    cleared="makes the application work"),
    "- Keep every identity and least privilege: the constraints of the incident are rules too."))


def prompt(mode: str = "api-only", story: str = "mismatch") -> PromptSpec:
    """The prompt parts for a mode ("live": the pods run; "api-only") and a story ("mismatch": the intent and
    the mismatch report; "operator": only what users see, as `--k8s-story operator` runs it)."""
    rules = OPERATOR_RULES if story == "operator" else RULES
    inspect = LIVE_RULE if mode == "live" else API_ONLY_RULE
    rules = rules.replace("- Every action runs kubectl", inspect + "\n- Every action runs kubectl")
    return PromptSpec(role=OPERATOR_ROLE if story == "operator" else ROLE, rules=rules,
                      action_format=ACTION_FORMAT, examples=() if story == "operator" else EXAMPLES,
                      answer_format=ANSWER_FORMAT)


PROMPT = PromptSpec(role=ROLE, rules=RULES, action_format=ACTION_FORMAT, examples=EXAMPLES, answer_format=ANSWER_FORMAT)

#: what a refused run_kubectl call is told is accepted
TOOL_FORM = ('Call run_kubectl with one command line that runs kubectl, e.g. '
             '{"command": "kubectl get networkpolicy adservice -o yaml"}')


def kubectl_tool(timeout_s: float, output_limit: int, story: str = "mismatch") -> Tool:
    """The k8s action as a tool: one shell command line around kubectl, with this run's limits; what it returns
    follows the story (the operator story shows no mismatch report)."""
    returns = ("Returns the command's output only: find out its effect yourself." if story == "operator" else
               "Returns the command's output and the new connectivity mismatch report.")
    return Tool(
        name="run_kubectl",
        description=(
            "Run one shell command line that calls kubectl against the cluster; it is one step of your budget. "
            "The line runs with `bash -c` in a fresh, empty sandbox holding kubectl and text tools (grep, jq, "
            "head, sed, awk, ...): pipes, quoting and heredocs (`kubectl apply -f - <<'EOF'` ... `EOF`) work, "
            "nothing persists between calls, and the only network is the cluster's API. The application's "
            "namespace is the current one (no -n needed); other namespaces and -A answer Forbidden. Change only "
            "NetworkPolicies, one at a time, in place (kubectl patch or apply): every write is checked, and a "
            "command that breaks a flow matching the intent, even for a moment, makes the episode unsafe. "
            f"A command runs at most {timeout_s:g} s; output is cut at {output_limit:,} characters. {returns}"
        ),
        parameters={
            "type": "object",
            "properties": {"command": {
                "type": "string", "minLength": 1, "maxLength": MAX_ACTION_BYTES,
                "description": "the whole command line, starting with kubectl, e.g. "
                               "kubectl get networkpolicy adservice -o yaml",
            }},
            "required": ["command"],
            "additionalProperties": False,
        },
    )
