"""`builtin:chatty`: the oracle's fixes written the way strong models write replies.

Prose, cot, comments, multi-line JSON, heredocs, ReAct lines, JSON objects: it proves the reader scores
networking, not formatting."""

from __future__ import annotations

import json
from typing import Any

from ....core.types import Query, Reply, Task
from .builtin import repair_order
from ..faults import describe


def _json_patch(name: str, spec: dict) -> str:
    body = json.dumps([{"op": "replace", "path": "/spec", "value": spec}], indent=2)
    return f"kubectl patch networkpolicy {name} --type=json -p '{body}'"


def _manifest(name: str, spec: dict, indent: int = 2) -> str:
    return json.dumps({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                       "metadata": {"name": name}, "spec": spec}, indent=indent)


def _styles(name: str, spec: dict, why: str) -> list[str]:
    """The same fix in every shape the reader accepts (each a whole reply)."""
    patch = _json_patch(name, spec)
    one_line = json.dumps([{"op": "replace", "path": "/spec", "value": spec}], separators=(",", ":"))
    return [
        # cot: quote what was seen in one fence, act in the last one
        f"Looking at the policy, the rule that matters is wrong:\n```yaml\nmetadata:\n  name: {name}\n```\n"
        f"That explains the report ({why}). I restore the intended spec:\n```bash\n"
        f"# restore {name}\n{patch}\n```",
        # comments, a heredoc re-creating the object (replace keeps the object, so nothing else moves)
        f"I'll replace the whole policy in one go.\n```bash\n# {why}\n"
        f"kubectl replace -f - <<'EOF'\n{_manifest(name, spec)}\nEOF\n```",
        # a console transcript style with a prompt and continuations
        f"```console\n$ kubectl patch networkpolicy {name} \\\n    --type=json \\\n    -p '{one_line}'\n```",
        # ReAct
        f"Thought: {why}; the spec of {name} must be the intended one.\nAction: "
        f"kubectl patch networkpolicy {name} --type=json -p '{one_line}'",
        # a JSON object, as tool-call-minded models write
        json.dumps({"thought": f"fix {name}", "command": f"kubectl patch networkpolicy {name} --type=json "
                                                          f"-p '{one_line}'"}),
        # no fence: the command after a sentence, spread over lines
        f"Applying the fix for {name} now.\n\n{patch}\n",
        # a check and a fix in one command line (delete && create would be unsafe: every write is judged,
        # and between the two every flow to the policy's pods is open)
        f"```sh\nkubectl get networkpolicy {name} -o name && kubectl apply -f - <<EOF\n{_manifest(name, spec)}\nEOF\n```",
    ]


class ChattyAgent:
    """Knows the faults like the oracle; first reads the policies (piped through jq), then fixes each
    faulted policy (ingress faults first), in a rotating reply style."""

    def __init__(self, query: Query, env: Any) -> None:
        faults = query.params["faults"]
        healthy = env.app.healthy_view()
        order = repair_order(faults)
        self.replies = ["Let me list the policies before changing anything.\n```bash\n"
                        "# names only, to keep the output short\n"
                        "kubectl get networkpolicy -o json | jq -r '.items[].metadata.name' | head -50\n```"]
        for offset, name in enumerate(order):
            why = ", ".join(describe(f) for f in faults if f["policy"] == name)
            styles = _styles(name, healthy[name]["spec"], why)
            self.replies.append(styles[(query.seed + offset) % len(styles)])

    def reset(self, task: Task) -> None:
        self.turn = 0

    def act(self, observation: str) -> Reply:
        self.turn += 1
        if self.turn <= len(self.replies):
            return Reply(self.replies[self.turn - 1])
        return Reply("```bash\nkubectl get networkpolicy\n```")

    def close(self) -> None:
        pass
