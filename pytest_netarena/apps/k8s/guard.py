"""Understanding an action (which kubectl verbs it runs, whether it may change the cluster); never a security check.

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
#: flags whose value is the next word (so that word is not taken for the verb)
_VALUE_FLAGS = frozenset({"-n", "--namespace", "-o", "--output", "-l", "--selector", "--context", "--kubeconfig",
                          "--request-timeout", "-s", "--server", "--user", "--cluster", "--as", "-v", "--v"})
_SEPARATORS = re.compile(r"\|\|?|&&|;|\n|`|\$\(")


def kubectl_verbs(script: str) -> list[str]:
    """The verb of every kubectl invocation in a script, in order (best effort: quoting may hide some)."""
    verbs = []
    for piece in _SEPARATORS.split(script):
        try:
            words = shlex.split(piece, comments=True)
        except ValueError:
            words = piece.split()
        while words and "=" in words[0] and not words[0].startswith("-"):
            words = words[1:]  # VAR=value prefixes
        if not words or words[0] != "kubectl":
            continue
        skip = False
        for word in words[1:]:
            if skip:
                skip = False
                continue
            if word.startswith("-"):
                skip = word.replace("_", "-") in _VALUE_FLAGS
                continue
            verbs.append(word)
            break
    return verbs


def mutates(script: str) -> bool:
    """Whether the script may write to the cluster (a mutating kubectl verb appears in it)."""
    return any(verb in MUTATING_VERBS for verb in kubectl_verbs(script))
