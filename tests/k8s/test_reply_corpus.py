"""The k8s reply corpus: replies in the shapes strong models write, and the one action each must produce."""

from __future__ import annotations

import pytest

from pytest_netarena.apps.k8s import APP
from pytest_netarena.apps.k8s.replies import read_reply

GET = "kubectl get networkpolicy adservice -o yaml"
PATCH = ("kubectl patch networkpolicy adservice --type=json "
         "-p '[{\"op\": \"replace\", \"path\": \"/spec/ingress/0/ports/0/port\", \"value\": 9555}]'")
MULTILINE_PATCH = """kubectl patch networkpolicy adservice --type=json -p '[
  {
    "op": "replace",
    "path": "/spec/ingress/0/ports/0/port",
    "value": 9555
  }
]'"""
MERGE_CONTINUED = """kubectl patch networkpolicy cartservice \\
  --type=merge \\
  -p '{"spec": {"ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "frontend"}}}]}]}}'"""
HEREDOC = """kubectl apply -f - <<'EOF'
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: adservice
spec:
  podSelector:
    matchLabels:
      app: adservice
  ingress:
  - from:
    - podSelector:
        matchLabels:
          app: frontend  # the only client
    ports:
    - port: 9555
EOF"""
PIPED_CREATE = """cat <<EOF | kubectl create -f -
{"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
 "metadata": {"name": "adservice"}, "spec": {"podSelector": {}}}
EOF"""
ANSI_C = "kubectl patch networkpolicy adservice --type=merge -p $'{\"spec\":\\n {\"policyTypes\": [\"Ingress\"]}}'"
PIPE = "kubectl get networkpolicy -o json | jq '.items[] | .metadata.name'"
YAML_QUOTE = """apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: adservice
spec:
  ingress:
  - ports:
    - port: 9999"""
OUTPUT_QUOTE = """$ kubectl get networkpolicy
NAME          POD-SELECTOR      AGE
adservice     app=adservice     5m"""

#: (reply, the action it must produce)
ACCEPTED = [
    (f"```\n{GET}\n```", GET),
    (f"```bash\n{GET}\n```", GET),
    (f"```sh\n{GET}\n```", GET),
    (f"```shell\n{GET}\n```", GET),
    (f"```console\n$ {GET}\n```", GET),
    (f"```zsh\n{GET}\n```", GET),
    (f"~~~\n{GET}\n~~~", GET),
    (f"```bash\n# look at the policy first\n{GET}\n```", GET),
    (f"```bash\n{GET}  # the suspect\n```", f"{GET}  # the suspect"),
    (f"```bash\n\n\n{GET}\n\n```", GET),
    (f"```bash\r\n{GET}\r\n```\r\n", GET),
    (f"```bash\n$ {GET}\n```", GET),
    (f"I will read the policy.\n\n```bash\n{GET}\n```\n\nThen I will decide.", GET),
    (f"```bash\n{PATCH}\n```", PATCH),
    (f"```bash\n{MULTILINE_PATCH}\n```", MULTILINE_PATCH),
    (f"```bash\n{MERGE_CONTINUED}\n```", MERGE_CONTINUED),
    (f"```bash\n{HEREDOC}\n```", HEREDOC),
    (f"Re-creating it:\n```\n{PIPED_CREATE}\n```", PIPED_CREATE),
    (f"```bash\n{ANSI_C}\n```", ANSI_C),
    (f"```bash\n{PIPE}\n```", PIPE),
    ("```bash\nkubectl get networkpolicy -o yaml | grep -n -A3 'port:' | head -40\n```",
     "kubectl get networkpolicy -o yaml | grep -n -A3 'port:' | head -40"),
    ("```bash\nkubectl get networkpolicy -o json |\n  jq '.items[].metadata.name'\n```",
     "kubectl get networkpolicy -o json |\n  jq '.items[].metadata.name'"),
    # chain of thought: the quoted YAML and output are context, the command is the action
    (f"The policy reads:\n```yaml\n{YAML_QUOTE}\n```\nPort 9999 is wrong.\n```bash\n{PATCH}\n```", PATCH),
    (f"Earlier output:\n```\n{OUTPUT_QUOTE}\n```\nNow:\n```bash\n{GET}\n```", GET),
    (f"```\n{YAML_QUOTE}\n```\n\n```\n{GET}\n```", GET),
    (f"```json\n{{\"spec\": {{\"ingress\": []}}}}\n```\nSo I will run\n```\n{GET}\n```", GET),
    # no fence
    (GET, GET),
    (f"Let me check.\n{GET}", GET),
    (f"$ {GET}", GET),
    (f"Thought: the port is wrong.\nAction: {GET}", GET),
    (f"Thought: the port is wrong.\nAction: `{GET}`", GET),
    (f"**Action:** {GET}", GET),
    (f"Command: {PATCH}", PATCH),
    (f"I will run `{GET}` to see the rule.", GET),
    (f'{{"command": "{GET}"}}', GET),
    (f'{{"thought": "read it", "command": "{GET}"}}', GET),
    (f'```json\n{{"action": "{GET}"}}\n```', GET),
    (f"{MERGE_CONTINUED}", MERGE_CONTINUED),
    (f"Fixing now:\n{HEREDOC}", HEREDOC),
    # the same command twice is one action
    (f"```\n{GET}\n```\nThat is:\n```\n{GET}\n```", GET),
    (f"```\n{GET}\n", GET),  # a reply cut off inside its fence
    (f"```shell-session\n$ {GET}\n```", GET),
    ("```bash\nkubectl get networkpolicy \\\n  adservice -o yaml\n```", "kubectl get networkpolicy \\\n  adservice -o yaml"),
    ("Thought: list them.\nAction: shell\nAction Input: kubectl get networkpolicy", "kubectl get networkpolicy"),
    (f"```bash\nNS=default kubectl get networkpolicy -n $NS\n```", "NS=default kubectl get networkpolicy -n $NS"),
]

#: replies refused, and a word the refusal must say
REFUSED = [
    ("nothing to do here", "no command found"),
    (f"```bash\n{GET}\nkubectl get pods\n```", "2 different commands"),
    (f"```\n{GET}\n```\nor perhaps\n```\nkubectl get pods\n```", "2 different commands"),
    (f"```bash\n{PATCH}\nkubectl delete networkpolicy adservice\n```", "2 different commands"),
    ("```bash\nrm -rf /\n```", "does not run kubectl"),
    ("Action: cat /etc/passwd", "does not run kubectl"),
    ("```yaml\napiVersion: v1\n```", "no command found"),
]


@pytest.mark.parametrize("reply,action", ACCEPTED, ids=[f"accepted-{n}" for n in range(len(ACCEPTED))])
def test_each_reply_yields_its_action(reply, action):
    read = read_reply(reply)
    assert read.refusal is None, read.refusal
    assert read.command == action


@pytest.mark.parametrize("reply,why", REFUSED, ids=[f"refused-{n}" for n in range(len(REFUSED))])
def test_refusals_name_the_problem_and_show_the_accepted_form(reply, why):
    read = read_reply(reply)
    assert read.refused and why in read.refusal
    assert "```bash\nkubectl get networkpolicy adservice -o yaml\n```" in read.refusal


def test_chain_of_thought_runs_the_last_command():
    reply = f"First I looked:\n```\n{GET}\n```\nand now I fix it:\n```bash\n{PATCH}\n```"
    # otherwise an inspection and a change: only the read-only inspection runs, the change is held
    assert read_reply(reply).command == GET and read_reply(reply).held == PATCH
    assert read_reply(reply, cot=True).command == PATCH


def test_the_corpus_is_big_enough():
    assert len(ACCEPTED) + len(REFUSED) >= 40


def test_every_prompt_example_is_accepted():
    prompt = APP.prompt()
    for _, reply in prompt.examples:
        assert not read_reply(reply).refused, reply
    assert read_reply(prompt.action_format).command == GET
