"""Reading the one shell action of a k8s reply the way a person would (docs/k8s.md, "How replies are read").

An action is one shell command line that runs kubectl (a pipeline through grep/jq/head, a heredoc,
backslash continuations and quotes spread over lines all belong to it). It runs with `bash -c` in a
sealed box, so nothing here is a security check: the reader only decides which text is the action.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...core import replies

#: the largest action accepted (bash -c takes one argument, and the kernel caps one at 128 KiB)
MAX_ACTION_BYTES = 64 * 1024
#: fence tags that hold shell commands (an untagged fence counts too); yaml/json/text fences are context
SHELL_TAGS = frozenset({"", "bash", "sh", "shell", "console", "zsh", "shell-session", "shellsession", "terminal",
                        "kubectl", "cmd", "command", "bash-session", "session", "sh-session"})
#: words a command line starts with (anything else, such as `apiVersion:` or `NAME`, is quoted text)
COMMAND_WORDS = frozenset({
    "kubectl", "k", "bash", "sh", "cat", "echo", "printf", "grep", "egrep", "jq", "head", "tail", "sed", "awk",
    "sort", "uniq", "wc", "cut", "tr", "tee", "xargs", "for", "while", "if", "export", "sudo", "curl", "ls",
    "watch", "diff", "base64", "yq", "helm", "env", "timeout", "column", "true", "false", "test", "sleep", "cd",
    "rm", "cp", "mv", "find", "ps", "kill", "id", "whoami", "hostname", "uname", "set", "{", "(",
})
LABELS = ("action", "command", "cmd", "run", "action input", "next command", "next action", "shell")
OBJECT_KEYS = ("command", "cmd", "action", "kubectl", "input", "action_input")
_RUNS_KUBECTL = re.compile(r"(?:^|[\s|;&({`$])kubectl(?:\s|$)")
_HEREDOC = re.compile(r"<<(-?)[ \t]*(['\"]?)([A-Za-z_][\w.-]*)\2")
_WORD = re.compile(r"^\s*(?:[A-Za-z_]\w*=\S*\s+)*([^\s]+)")

ACCEPTED = ("Reply with ONE kubectl command (pipes to grep/jq/head and heredocs are fine) in a code fence, "
            "for example:\n```bash\nkubectl get networkpolicy adservice -o yaml\n```")


@dataclass(frozen=True)
class Action:
    """The outcome of reading a reply: a bash script to run, or a refusal the agent can act on."""

    command: str = ""
    refusal: str | None = None
    #: a change the reply also held, not run: it came with a read-only inspection, which ran alone
    held: str | None = None

    @property
    def refused(self) -> bool:
        return self.refusal is not None


def _scan(line: str, quote: str) -> tuple[str, list[tuple[bool, str]], bool]:
    """Shell state after one line: the open quote ("", "'", '"' or "$'"), heredocs it opens, continued?"""
    heredocs: list[tuple[bool, str]] = []
    index, end = 0, len(line)
    code_end = end
    while index < end:
        char = line[index]
        if quote:
            if char == "\\" and quote != "'":
                index += 2
                continue
            if (quote == '"' and char == '"') or (quote in ("'", "$'") and char == "'"):
                quote = ""
            index += 1
            continue
        if char == "\\":
            if index == end - 1:
                return "", heredocs, True
            index += 2
            continue
        if char == "$" and line.startswith("$'", index):
            quote = "$'"
            index += 2
            continue
        if char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1] in " \t;|&("):
            code_end = index
            break
        elif char == "<" and line.startswith("<<", index) and not line.startswith("<<<", index):
            match = _HEREDOC.match(line, index)
            if match:
                heredocs.append((match.group(1) == "-", match.group(3)))
                index = match.end()
                continue
        index += 1
    code = line[:code_end].rstrip()
    continued = not quote and (code.endswith(("|", "&&", "||")) and not code.endswith("\\|"))
    return quote, heredocs, continued


def units(text: str) -> list[str]:
    """A script cut into logical command lines: continuations, multi-line quotes and heredoc bodies
    stay with the line that opened them. Blank and comment-only lines are dropped."""
    lines = text.split("\n")
    found: list[str] = []
    current: list[str] = []
    quote = ""
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        current.append(line)
        quote, heredocs, continued = _scan(line, quote)
        for strip_tabs, delimiter in heredocs if not quote else ():
            while index < len(lines):
                body = lines[index]
                index += 1
                current.append(body)
                if (body.lstrip("\t") if strip_tabs else body).rstrip() == delimiter:
                    break
        if quote or continued:
            continue
        unit = "\n".join(current).strip()
        current = []
        if unit and not unit.startswith("#"):
            found.append(unit)
    if current and "\n".join(current).strip():
        found.append("\n".join(current).strip())
    return found


def runs_kubectl(unit: str) -> bool:
    return bool(_RUNS_KUBECTL.search(unit))


def is_command(unit: str) -> bool:
    """Whether a logical line reads as a command (not YAML, a table of output or prose)."""
    if runs_kubectl(unit):
        return True
    match = _WORD.match(unit)
    return bool(match) and match.group(1) in COMMAND_WORDS


def _strip_prompts(block: str) -> tuple[str, bool]:
    """Block text without `$ ` prompts; True when it is a transcript (prompted commands and their output)."""
    lines = block.split("\n")
    if not any(replies.PROMPT.match(line) for line in lines):
        return block, False
    marked = [bool(replies.PROMPT.match(line)) for line in lines]
    stripped = "\n".join(replies.strip_prompt(line) for line in lines)
    # a unit that does not start on a prompted line is output shown under a command: a transcript
    starts = set()
    position = 0
    for unit in units(stripped):
        first = unit.split("\n", 1)[0]
        while position < len(lines) and replies.strip_prompt(lines[position]).strip() != first.strip():
            position += 1
        if position < len(lines):
            starts.add(position)
    transcript = any(not marked[line] for line in starts)
    return stripped, transcript


def fence_actions(reply: str) -> list[str]:
    """Command lines of the shell fences of a reply, in order (quoted YAML, output and transcripts skipped)."""
    found = []
    for block in replies.fenced_blocks(reply):
        if block.language not in SHELL_TAGS:
            continue
        text, transcript = _strip_prompts(block.text)
        if transcript:
            continue
        found.extend(unit for unit in units(text) if is_command(unit))
    return found


def _object_actions(reply: str) -> list[str]:
    found = []
    for _, value in replies.objects(reply):
        for key in OBJECT_KEYS:
            command = value.get(key)
            if isinstance(command, str) and command.strip() and is_command(command.strip()):
                found.append(command.strip())
                break
    return found


def _labelled_actions(reply: str) -> list[str]:
    found = []
    for value in replies.labelled(reply, LABELS):
        value = value.strip().strip("`").strip()
        value = replies.strip_prompt(value)
        if is_command(value):
            found.append(value)
    return found


def _prose_actions(reply: str) -> list[str]:
    """`kubectl ...` lines of the prose (with what continues them on the next lines)."""
    prose = replies.outside_fences(reply).split("\n")
    found = []
    index = 0
    while index < len(prose):
        line = replies.strip_prompt(prose[index].strip().strip("`"))
        index += 1
        if not line.startswith("kubectl ") and line != "kubectl":
            continue
        rest = "\n".join([line, *prose[index:]])
        first = units(rest)[0]
        found.append(first.strip("`").strip())
        index += first.count("\n")
    return found


def _inline_actions(reply: str) -> list[str]:
    return [code for code in replies.inline_code(reply) if code.startswith("kubectl ")]


def _same(command: str) -> str:
    return " ".join(command.split())


def read_reply(reply: str, cot: bool = False) -> Action:
    """The one action of a reply. In a chain-of-thought reply the last action wins (the prompt says
    the action comes last); otherwise two different actions are refused and nothing runs."""
    reply = replies.normalise(reply)
    for tier in (fence_actions, _object_actions, _labelled_actions, _prose_actions, _inline_actions):
        actions = list(dict.fromkeys(tier(reply)))
        distinct = list(dict.fromkeys(_same(a) for a in actions))
        if not actions:
            continue
        if len(distinct) > 1 and not cot:
            split = _inspection_and_change(actions)
            if split is not None:
                inspection, change = split
                return Action(inspection, held=change)
            listed = "; ".join(f"`{_short(a)}`" for a in actions[:4])
            return Action(actions[0], f"your reply holds {len(distinct)} different commands ({listed}) and only "
                                      f"one action runs per turn, so none was run. {ACCEPTED}")
        return check_command(actions[-1])
    return Action("", f"no command found in your reply. {ACCEPTED}")


def _inspection_and_change(actions: list[str]) -> tuple[str, str] | None:
    """(inspection, change) when a reply holds exactly two different commands, one read-only and one not
    ("check X; if it shows Y, the fix is Z"): the inspection may run alone, never a part of a change."""
    from .guard import read_only

    first = {}
    for action in actions:
        first.setdefault(_same(action), action)
    if len(first) != 2:
        return None
    one, other = first.values()
    if read_only(one) == read_only(other):
        return None
    inspection, change = (one, other) if read_only(one) else (other, one)
    if check_command(inspection).refused:
        return None
    return inspection, change


def check_command(command: str, accepted: str = ACCEPTED) -> Action:
    """A command as an action, or refused (not printable, too long, runs no kubectl) saying what is
    `accepted`: a reply's command and a tool call's are held to the same rules."""
    problem = replies.unprintable(command)
    if problem:
        return Action(_printable(command), f"the command cannot run: {problem}. {accepted}")
    if len(command.encode("utf-8", "replace")) > MAX_ACTION_BYTES:
        return Action(command[:200], f"the command is {len(command)} characters long, over the limit of "
                                     f"{MAX_ACTION_BYTES} bytes; send a shorter one. {accepted}")
    if not runs_kubectl(command):
        return Action(command, f"`{_short(command)}` does not run kubectl: every action is a kubectl command, "
                               f"optionally piped through text tools. {accepted}")
    return Action(command)


def held_note(change: str) -> str:
    """What the agent is told of the change its reply held beside the inspection that ran."""
    return (f"Not run: `{_short(change, 200)}`. Your reply held an inspection and a change; one action runs "
            "per turn, so only the read-only inspection ran and the change was not run. If the output above "
            "still calls for the change, send it alone.")
def _printable(command: str, keep: int = 200) -> str:
    """A refused command as the transcript keeps it: control characters and surrogates escaped."""
    return command[:keep].encode("unicode_escape").decode("ascii")


def _short(command: str, keep: int = 80) -> str:
    flat = " ".join(command.split())
    return flat if len(flat) <= keep else flat[:keep - 3] + "..."
