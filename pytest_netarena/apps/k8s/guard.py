"""Understanding an action: which kubectl verbs it runs, whether it may change the cluster or only reads; not security.

Actions run with `bash -c` in a sealed box (actions.py) whose only reach is the episode's
namespace-scoped identity, so nothing here decides what may run. The verbs are for transcripts,
safety analysis and agents that reason about what a command does.
"""

from __future__ import annotations

import re
import shlex

#: kubectl verbs that write to the cluster
MUTATING_VERBS = frozenset({
    "apply", "create", "replace", "patch", "delete", "edit", "label", "annotate", "scale", "autoscale", "set",
    "rollout", "expose", "run", "taint", "drain", "cordon", "uncordon",
})
#: kubectl verbs that only read the cluster
READ_ONLY_VERBS = frozenset({
    "get", "describe", "explain", "logs", "api-resources", "api-versions", "version", "cluster-info", "top",
    "events", "wait", "diff", "kustomize", "completion", "options", "help",
})
#: verbs whose sub-verb decides (`auth can-i` reads, `auth reconcile` writes)
READ_ONLY_SUBVERBS = {
    "auth": frozenset({"can-i", "whoami"}),
    "config": frozenset({"view", "get-contexts", "current-context", "get-clusters", "get-users"}),
    "rollout": frozenset({"status", "history"}),
    "plugin": frozenset({"list"}),
}
#: programs a read-only pipeline may hold beside kubectl: they read their input and print
TEXT_TOOLS = frozenset({
    "grep", "egrep", "fgrep", "jq", "yq", "head", "tail", "sed", "awk", "sort", "uniq", "wc", "cut", "tr",
    "column", "cat", "echo", "printf", "base64", "nl", "fold", "fmt", "paste", "rev", "tac", "less", "more",
    "true", "false", "test", "diff", "comm", "join", "expr",
})
#: flags whose value is the next word (so that word is not taken for the verb)
_VALUE_FLAGS = frozenset({"-n", "--namespace", "-o", "--output", "-l", "--selector", "--context", "--kubeconfig",
                          "--request-timeout", "-s", "--server", "--user", "--cluster", "--as", "-v", "--v"})
_SEPARATORS = re.compile(r"\|\|?|&&|;|\n|`|\$\(")


def _commands(script: str) -> list[list[str]]:
    """The words of each simple command of a script (pipelines, lists and substitutions split apart),
    without VAR=value prefixes; empty pieces are dropped."""
    commands = []
    for piece in _SEPARATORS.split(script):
        try:
            words = shlex.split(piece, comments=True)
        except ValueError:
            words = piece.split()
        while words and "=" in words[0] and not words[0].startswith("-"):
            words = words[1:]  # VAR=value prefixes
        if words:
            commands.append(words)
    return commands


def _positionals(words: list[str], count: int = 2) -> list[str]:
    """The first words of a kubectl command line after its flags (the verb, then its sub-verb)."""
    found: list[str] = []
    skip = False
    for word in words[1:]:
        if skip:
            skip = False
            continue
        if word.startswith("-"):
            skip = word.replace("_", "-") in _VALUE_FLAGS
            continue
        found.append(word)
        if len(found) == count:
            break
    return found


def kubectl_verbs(script: str) -> list[str]:
    """The verb of every kubectl invocation in a script, in order (best effort: quoting may hide some)."""
    return [positionals[0] for words in _commands(script) if words[0] == "kubectl"
            for positionals in [_positionals(words, 1)] if positionals]


def read_only(script: str) -> bool:
    """Whether the script only reads the cluster: every command in it is kubectl with a reading verb
    (get, describe, logs, `auth can-i`, ...) or a text tool (grep, jq, head, ...), and kubectl runs.
    Anything this cannot tell (a loop, a heredoc body, xargs, a shell) counts as a change."""
    commands = _commands(script)
    if not any(words[0] == "kubectl" for words in commands):
        return False
    for words in commands:
        if words[0] in TEXT_TOOLS:
            continue
        if words[0] != "kubectl":
            return False
        positionals = _positionals(words)
        verb = positionals[0] if positionals else ""
        if verb in READ_ONLY_VERBS:
            continue
        if verb not in READ_ONLY_SUBVERBS or len(positionals) < 2 or positionals[1] not in READ_ONLY_SUBVERBS[verb]:
            return False
    return True


def mutates(script: str) -> bool:
    """Whether the script may write to the cluster (a mutating kubectl verb appears in it)."""
    return any(verb in MUTATING_VERBS for verb in kubectl_verbs(script))
