"""Turning an agent's reply into one kubectl argv, or refusing it with a message the agent can act on.

Agent text is untrusted. The command is split with shlex and later run without a shell, so pipes,
redirections and substitutions do nothing; they are refused to say so plainly. kubectl itself must
stay on the episode's cluster and the episode's namespace, must not read or write files on the
harness machine, and must not start plugins (`kubectl foo` runs a `kubectl-foo` program).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

#: flags that point kubectl at other clusters, credentials or identities
RETARGETING_FLAGS = frozenset({
    "kubeconfig", "server", "context", "cluster", "user", "token", "as", "as-group", "as-uid",
    "as-user-extra", "certificate-authority", "client-certificate", "client-key", "username",
    "password", "insecure-skip-tls-verify", "tls-server-name", "proxy-url", "auth-provider",
    "auth-provider-arg", "exec-command", "exec-api-version", "exec-arg", "exec-env",
})
#: flags that make kubectl read or write files on the machine running the benchmark
FILE_FLAGS = frozenset({
    "filename", "kustomize", "from-file", "from-env-file", "env-file", "cache-dir", "log-file", "log-dir",
    "output-directory", "profile-output", "template", "save-config-file", "local-path",
})
REFUSED_SHORT = {"s": "server", "f": "filename", "k": "kustomize"}
VALUE_SHORT = frozenset("onlLcpvisfkrxe")  # short flags that take a value: the rest of the token is the value
REFUSED_VERBS = {
    "exec": "kubectl exec is not available: the pods are not yours to enter",
    "port-forward": "kubectl port-forward is not available",
    "proxy": "kubectl proxy is not available",
    "cp": "kubectl cp is not available",
    "debug": "kubectl debug is not available",
    "attach": "kubectl attach is not available",
    "config": "kubectl config is not available: the cluster and credentials are fixed for this episode",
    "plugin": "kubectl plugins are not available",
    "krew": "kubectl plugins are not available",
    "edit": "kubectl edit needs an interactive editor; use kubectl patch instead",
    "kustomize": "kubectl kustomize reads local files; use kubectl patch instead",
    "drain": "kubectl drain is not available", "cordon": "kubectl cordon is not available",
    "uncordon": "kubectl uncordon is not available", "taint": "kubectl taint is not available",
    "certificate": "kubectl certificate is not available", "alpha": "kubectl alpha is not available",
}
KNOWN_VERBS = frozenset({
    "get", "describe", "explain", "patch", "label", "annotate", "delete", "apply", "create", "replace",
    "scale", "rollout", "set", "api-resources", "api-versions", "version", "cluster-info", "wait", "auth",
    "logs", "top", "events", "diff", "autoscale", "expose", "run", "completion", "options", "help",
})
SHELL_OPERATORS = frozenset({"|", "||", "&&", "&", ";", ">", ">>", "<", "<<", "2>", "2>&1", "&>", "|&"})
PROMPT_PREFIX = re.compile(r"^\s*(?:\$|#|>|Action:|Command:)\s*", re.IGNORECASE)
FENCE = re.compile(r"```(.*?)```", re.DOTALL)
LANGUAGE_TAG = re.compile(r"^[A-Za-z0-9_+-]*$")


@dataclass(frozen=True)
class Parsed:
    """The outcome of reading one reply: an argv to run, or a refusal message."""

    command: str  #: the command text found ("" when none)
    argv: tuple[str, ...] = ()
    refusal: str | None = None

    @property
    def refused(self) -> bool:
        return self.refusal is not None


def _join_continuations(text: str) -> list[str]:
    lines, current = [], ""
    for raw in text.splitlines():
        line = raw.rstrip()
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        current += line
        if current.strip():
            lines.append(current.strip())
        current = ""
    if current.strip():
        lines.append(current.strip())
    return lines


def _commands_in(block: str) -> list[str]:
    commands = []
    for line in _join_continuations(block):
        line = PROMPT_PREFIX.sub("", line, count=1).strip()
        if line and not line.startswith("#"):
            commands.append(line)
    return commands


def extract_command(reply: str) -> tuple[str, str | None]:
    """The single command in a reply (fenced, or a line starting with kubectl), or a refusal."""
    for match in FENCE.finditer(reply):
        body = match.group(1)
        first, newline, rest = body.partition("\n")
        if newline and LANGUAGE_TAG.match(first.strip()) and first.strip() != "kubectl":
            body = rest  # "```bash" opens the block; on one line, "```kubectl get x```" is all command
        commands = _commands_in(body)
        if not commands:
            continue
        if len(commands) > 1:
            return commands[0], ("one command per turn: your reply holds several "
                                 f"({len(commands)} lines); send only the next kubectl command")
        return commands[0], None
    candidates = [line for line in _commands_in(reply) if re.match(r"^`?kubectl(\s|`|$)", line)]
    if candidates:
        return candidates[0].strip("`").strip(), None
    return "", "no command found: reply with exactly one kubectl command (for example in a ``` code fence)"


def _flag_name(token: str) -> tuple[str, str | None]:
    name, sep, value = token[2:].partition("=")
    return name, value if sep else None


def check_argv(argv: list[str], namespace: str, allow_all_namespaces: bool = True) -> str | None:
    """None if argv may run, else the reason it may not."""
    if not argv:
        return "empty command: reply with one kubectl command"
    if argv[0] != "kubectl":
        return (f"only kubectl commands are allowed here, not {argv[0]!r}: "
                "reply with exactly one kubectl command")
    for token in argv[1:]:
        if token in SHELL_OPERATORS or token.startswith(("|", ">", "2>")) or token.endswith(("|", "&&")):
            return (f"no shell here: {token!r} is not allowed (pipes, redirections and chaining do nothing); "
                    "send a single kubectl command and use -o jsonpath or -l selectors to filter")
    verb = None
    index = 1
    expect_value_for: str | None = None
    for position, token in enumerate(argv[1:], 1):
        if expect_value_for is not None:
            problem = _check_value(expect_value_for, token, namespace)
            if problem:
                return problem
            expect_value_for = None
            continue
        if token == "--":
            break
        if token.startswith("--"):
            name, value = _flag_name(token)
            problem = _check_long(name, value, namespace, allow_all_namespaces)
            if problem:
                return problem
            if value is None and name in ("namespace", "output", "filename", "kustomize"):
                expect_value_for = name
        elif token.startswith("-") and len(token) > 1 and not token[1].isdigit():
            problem, expects = _check_short(token, namespace, allow_all_namespaces)
            if problem:
                return problem
            expect_value_for = expects
        elif verb is None:
            verb, index = token, position
    if expect_value_for is not None:
        problem = _check_value(expect_value_for, "", namespace)
        if problem:
            return problem
    if verb is None:
        return None  # `kubectl` or `kubectl --help`: prints usage
    if verb in REFUSED_VERBS:
        return REFUSED_VERBS[verb]
    if verb not in KNOWN_VERBS:
        return f"unknown or unavailable kubectl command {verb!r} (plugins are not available)"
    rest = argv[index + 1:]
    if verb == "apply" and rest[:1] in (["edit-last-applied"], ["view-last-applied"], ["set-last-applied"]):
        return "kubectl apply edit-last-applied/view-last-applied/set-last-applied are not available"
    if verb == "cluster-info" and "dump" in rest:
        return "kubectl cluster-info dump is not available"
    return None


def _check_value(flag: str, value: str, namespace: str) -> str | None:
    if flag in RETARGETING_FLAGS:
        return f"--{flag} is not allowed: kubectl must stay on this episode's cluster"
    if flag == "namespace":
        if value != namespace:
            return (f"the application lives in namespace {namespace!r}; other namespaces are off limits "
                    f"(you may omit -n: it is the default)")
        return None
    if flag == "output":
        if "file" in value:
            return "output templates read from files are not available; use -o jsonpath=... inline"
        return None
    if flag in ("filename", "kustomize"):
        return _file_refusal(value)
    return None


def _file_refusal(value: str | None) -> str:
    if value == "-":
        return ("-f - reads standard input, and a reply has none: use kubectl patch (for example "
                "--type=json -p '[...]') or kubectl create/delete with arguments instead")
    return ("-f/--filename and -k are not available: files and URLs on the harness are off limits; "
            "use kubectl patch (for example --type=json -p '[...]') to change objects")


def _check_long(name: str, value: str | None, namespace: str, allow_all: bool) -> str | None:
    if name in RETARGETING_FLAGS:
        return f"--{name} is not allowed: kubectl must stay on this episode's cluster"
    if name in ("filename", "kustomize"):
        return _file_refusal(value)
    if name in FILE_FLAGS:
        return f"--{name} is not allowed: it reads or writes files on the harness machine"
    if name == "namespace" and value is not None:
        return _check_value("namespace", value, namespace)
    if name == "output" and value is not None:
        return _check_value("output", value, namespace)
    if name == "all-namespaces" and not allow_all and value not in ("false",):
        return "--all-namespaces is not available on this cluster; the application lives in one namespace"
    return None


def _check_short(token: str, namespace: str, allow_all: bool) -> tuple[str | None, str | None]:
    """Check a -abc cluster like pflag reads it: booleans until a value-taking letter."""
    letters = token[1:]
    for position, letter in enumerate(letters):
        if letter == "=":
            break
        if letter in REFUSED_SHORT:
            name = REFUSED_SHORT[letter]
            rest = letters[position + 1:].lstrip("=")
            if not rest:
                return None, name  # the value is the next token
            if name == "filename":
                return _file_refusal(rest), None
            return _check_long(name, rest, namespace, allow_all), None
        if letter == "A" and not allow_all:
            return "-A is not available on this cluster; the application lives in one namespace", None
        if letter in VALUE_SHORT:
            value = letters[position + 1:]
            if value.startswith("="):
                value = value[1:]
            flag = {"n": "namespace", "o": "output"}.get(letter)
            if flag is None:
                return None, None if value else "other"
            if value:
                return _check_value(flag, value, namespace), None
            return None, flag
    return None, None


def parse_reply(reply: str, namespace: str, allow_all_namespaces: bool = True) -> Parsed:
    """Find, split and guard the one kubectl command of a reply."""
    command, problem = extract_command(reply)
    if problem:
        return Parsed(command, (), problem)
    try:
        argv = shlex.split(command)
    except ValueError as error:
        return Parsed(command, (), f"cannot parse the command ({error}); check the quoting")
    problem = check_argv(argv, namespace, allow_all_namespaces)
    return Parsed(command, tuple(argv), problem)
