"""Route replies read into one action (a node and the shell command line it runs there), the way a person would.

Built on core.replies: a JSON or Python-dict object {"machine": ..., "command": ...} anywhere; a
fenced command (any tag, comments, `$ ` and `node#` prompts, console output, backslash
continuations) whose node is named by a Mininet-CLI prefix (`na0a01r0 ip route`), a prompt
(`root@na0a01r0:~#`), a `Machine:` line or the prose ("on na0a01r0"), or else by the interface
(or, in an address command, the address) it names when that exists on one node only; `Action: ...`
lines; inline backticks; and bare command lines. Parsing is for understanding only: the command runs
in a sealed box (nodebox.py) whatever it says.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ...core import replies

MACHINE_KEYS = ("machine", "node", "host")
COMMAND_KEYS = ("command", "cmd")
#: first words that make a line a command (networking programs, and shell tools operators start with)
PROGRAMS = frozenset({
    "ip", "ifconfig", "route", "iptables", "iptables-save", "iptables-legacy", "iptables-legacy-save", "iptables-nft",
    "iptables-nft-save", "ip6tables", "ip6tables-save", "sysctl", "tc", "arp", "ping", "ping6", "ss", "netstat",
    "bridge", "nstat", "cat", "grep", "sudo", "echo", "ls", "ps", "traceroute", "tracepath", "nft", "ethtool",
    "arping", "hostname", "for", "while", "if", "watch", "timeout", "bash", "sh",
})
#: the reader's own words for the accepted form, shown in every refusal
ACCEPTED = ('reply with one action: {{"machine": "<node>", "command": "<command line>"}}, e.g. '
            '{{"machine": "{router}", "command": "ip route"}} (a fenced command line starting with the node '
            'name, as in Mininet\'s CLI, also works: {router} ip route)')
_LABELS = ("action", "command", "cmd", "run", "action input")
_MACHINE_LABELS = ("machine", "node", "host", "target", "on")
#: a command segment that configures addresses, whose addresses are the node's own (`ip addr add ...`, `ifconfig ...`);
#: elsewhere an address is a destination or a gateway (ping, routes, rules) and says nothing about where to run
_ADDRESS_COMMAND = re.compile(r"^\s*(?:ifconfig\b|ip\s+(?:-\S+\s+)*a(?:d(?:d(?:r(?:e(?:s(?:s)?)?)?)?)?)?\b)")
_PROMPT = re.compile(r"^\s*(?:mininet>\s*|[\w.-]+@(?P<at>[\w.-]+)(?::[^#$\s]*)?\s*[#$]\s*|(?P<node>[\w.-]+)\s*[#$>]\s+|[$#]\s+)(?P<rest>.*)$")


@dataclass(frozen=True)
class Action:
    """A read reply: the node and the command line (`inferred`: why that node, when the reply named none)."""

    machine: str
    command: str
    inferred: str = field(default="", compare=False)

    @property
    def text(self) -> str:
        return f"{self.machine}: {self.command}"


class Refusal(Exception):
    """A reply that is not executed; its message says what was wrong and shows the accepted form."""


@dataclass(frozen=True)
class _Candidate:
    position: int
    machine: str | None
    command: str


class Reader:
    """Reads replies for one network: node names (full, or without the episode prefix), the router, and
    `owners`: the interface names and addresses that exist on one node only (Topology.owners)."""

    def __init__(self, nodes: Sequence[str], router: str, prefix: str = "",
                 owners: Mapping[str, str] | None = None, join: bool = True) -> None:
        self.nodes = tuple(nodes)
        #: several actions for one node (fences, lines, objects) run together as one, in order, as if joined
        #: by `;` on one command line (the prompt allows that); False: refused as several actions (NetArena's rules)
        self.join = join
        self.router = router
        self.owners = {name: node for name, node in (owners or {}).items() if node in self.nodes}
        self._interface = _words([name for name in self.owners if not _is_address(name)], r"(?<![\w.-])", r"(?![\w-])")
        self._address = _words([name for name in self.owners if _is_address(name)], r"(?<![\w.])", r"(?!\w|\.\d)")
        #: names shaped like this episode's interfaces (prefix, node, -ethN), known or not
        self._interface_like = (re.compile(r"(?<![\w.-])(" + re.escape(prefix) + r"[a-z]\d+-eth\d+)(?![\w-])")
                                if prefix else None)
        self.aliases = {node: node for node in self.nodes}
        if prefix:
            self.aliases.update({node.removeprefix(prefix): node for node in self.nodes})
        names = sorted(self.aliases, key=len, reverse=True)
        self._mention = re.compile(r"(?<![\w.-])(" + "|".join(map(re.escape, names)) + r")(?![\w-])")
        self._on = re.compile(r"\b(?:on|at|from|in|of)\s+(?:the\s+)?(?:router|host|node|machine)?\s*[`'\"*]*("
                              + "|".join(map(re.escape, names)) + r")(?![\w-])|\b(?:on|at|from|in)\s+the\s+(router)\b",
                              re.IGNORECASE)

    def accepted(self) -> str:
        return ACCEPTED.format(router=self.router)

    def node(self, name: str) -> str | None:
        return self.aliases.get(name.strip().strip("`'\"*"))

    # ---- reading -------------------------------------------------------------------------------
    def read(self, reply: str, last: bool = False) -> Action:
        """The one action in reply; with `last` (chain-of-thought), the last of several. Raises Refusal.

        Outside chain-of-thought, several actions that all run on one node (several fences, lines or
        objects naming it, or resolved to it) are one action: their commands joined by newlines, in the
        order the reply gives them. Actions for different nodes are refused: nothing runs."""
        text = replies.normalise(reply)
        explicit = self._objects(text) + self._fences(text) + self._labelled(text)
        tiers = (explicit, self._inline(text), self._bare(text))
        candidates = next((tier for tier in tiers if tier), [])
        if not candidates:
            raise Refusal(f"no action found: {self.accepted()}")
        actions: list[Action] = []
        for candidate in sorted(candidates, key=lambda c: c.position):
            named = candidate.machine
            found = Action(named, candidate.command) if named else self._unnamed(text, candidate)
            if found not in actions:
                actions.append(found)
        machines = list(dict.fromkeys(action.machine for action in actions))
        if len(actions) > 1 and not last and self.join and len(machines) == 1:
            inferred = next((action.inferred for action in actions if action.inferred), "")
            actions = [Action(machines[0], "\n".join(action.command for action in actions), inferred)]
        if len(actions) > 1 and not last:
            listed = "; ".join(f"`{_short(a.text)}`" for a in actions[:4])
            if not self.join:
                raise Refusal(f"{len(actions)} different actions found ({listed}): nothing was run; give exactly "
                              f"one action per reply: {self.accepted()}")
            raise Refusal(f"{len(actions)} different actions found, for {len(machines)} nodes ({listed}): nothing was "
                          f"run; commands for one node run together, but one reply acts on one node: {self.accepted()}")
        problem = replies.unprintable(actions[-1].command)
        if problem:
            raise Refusal(f"the command cannot run: {problem}: {self.accepted()}")
        return actions[-1]

    def _objects(self, text: str) -> list[_Candidate]:
        found = []
        for position, value in replies.objects(text):
            if isinstance(value.get("action"), dict):
                value = value["action"]
            machine = next((value[key] for key in MACHINE_KEYS if key in value), None)
            command = next((value[key] for key in COMMAND_KEYS if key in value), None)
            if command is None and machine is None:
                continue
            if not isinstance(command, str) or not command.strip():
                raise Refusal(f'the object has no "command" string: {self.accepted()}')
            if machine is not None and (not isinstance(machine, str) or not machine.strip()):
                raise Refusal(f'"machine" must be a node name: {self.accepted()}')
            found.append(_Candidate(position, self._known(machine) if machine else None, command.strip()))
        return found

    def _fences(self, text: str) -> list[_Candidate]:
        found = []
        for block in replies.fenced_blocks(text):
            if block.text.lstrip().startswith(("{", "[")):
                continue  # an object (read above) or data
            yaml = self._yaml_action(block.text)
            if yaml is not None:
                found.append(_Candidate(block.start, *yaml))
                continue
            script = self._script(block.text)
            if script is not None:
                found.extend(_Candidate(block.start + index, machine, command)
                             for index, (machine, command) in enumerate(script))
        return found

    def _yaml_action(self, body: str) -> tuple[str | None, str] | None:
        """`machine: X` and `command: Y` lines (YAML-like) in one block."""
        fields = {}
        for line in body.split("\n"):
            match = re.match(r"^\s*(\w+)\s*:\s*(.+?)\s*$", line)
            if match and match.group(1).lower() in (*MACHINE_KEYS, *COMMAND_KEYS):
                fields[match.group(1).lower()] = match.group(2).strip("'\"")
        command = next((fields[key] for key in COMMAND_KEYS if key in fields), None)
        if command is None:
            return None
        machine = next((fields[key] for key in MACHINE_KEYS if key in fields), None)
        return (self._known(machine) if machine else None), command

    def _script(self, body: str) -> list[tuple[str | None, str]] | None:
        """A fenced block as commands: [(machine or None, command lines)], one entry per node named; None
        when the block is not a command (output, a pingmesh, YAML)."""
        lines = _joined(body)
        prompted = [self._prompted(line) for line in lines]
        if any(p is not None for p in prompted):  # a console transcript: the prompted lines are the commands
            commands = [p for p in prompted if p is not None]
        else:
            commands = [(None, line) for line in lines]
        result: list[tuple[str | None, list[str]]] = []
        for machine, line in commands:
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
            named, command = self._split_node(stripped)
            machine = machine or named
            if not _looks_like_command(command):
                if not result:
                    return None
                result[-1][1].append(command)  # a continuation inside a multi-line construct
            elif result and (machine is None or result[-1][0] in (None, machine)):
                result[-1] = (result[-1][0] or machine, [*result[-1][1], command])
            else:
                result.append((machine, [command]))
        if not result:
            return None
        return [(machine, "\n".join(lines_)) for machine, lines_ in result]

    def _prompted(self, line: str) -> tuple[str | None, str] | None:
        """(node named by the prompt, command) for a console line with a prompt, else None."""
        match = _PROMPT.match(line)
        if match is None:
            return None
        named = match.group("at") or match.group("node")
        if match.group("node") and self.node(match.group("node")) is None:
            return None  # "word> ..." where word is no node: not a prompt
        rest = match.group("rest")
        if not _looks_like_command(self._split_node(rest.strip())[1]):
            return None  # "# a comment", "$ 5 per month": not a command after a prompt
        return (self.node(named) if named else None), rest

    def _split_node(self, line: str) -> tuple[str | None, str]:
        """Mininet CLI style: `na0a01r0 ip route` -> (na0a01r0, ip route); also `na0a01r0: ip route`."""
        match = re.match(r"^([\w.-]+):?\s+(.*)$", line, re.DOTALL)
        if match and self.node(match.group(1)) and _looks_like_command(match.group(2)):
            return self.node(match.group(1)), match.group(2).strip()
        return None, line

    def _labelled(self, text: str) -> list[_Candidate]:
        found = []
        prose = replies.outside_fences(text)
        for value in replies.labelled(prose, _LABELS):
            value = value.strip()
            if value.startswith("{"):
                continue  # an object, read above
            value = _unquoted(value)
            machine, command = self._split_node(value)
            if machine is None:
                on = re.match(r"^(.*?)\s+on\s+(?:the\s+)?(?:node\s+|host\s+|router\s+)?`?([\w.-]+)`?\s*\.?$", value)
                if on and self.node(on.group(2)):
                    machine, command = self.node(on.group(2)), _unquoted(on.group(1))
            if _looks_like_command(command):
                found.append(_Candidate(text.find(value), machine, command))
        return found

    def _inline(self, text: str) -> list[_Candidate]:
        found = []
        for code in replies.inline_code(text):
            machine, command = self._split_node(code)
            if _looks_like_command(command):
                found.append(_Candidate(text.find(code), machine, command))
        return found

    def _bare(self, text: str) -> list[_Candidate]:
        found = []
        offset = 0
        for line in text.split("\n"):
            prompted = self._prompted(line)
            machine, command = prompted if prompted else (None, line.strip())
            machine2, command = self._split_node(command)
            if _looks_like_command(command, strict=True):
                found.append(_Candidate(offset, machine or machine2, command))
            offset += len(line) + 1
        return found

    def _unnamed(self, text: str, candidate: _Candidate) -> Action:
        """The action of a command the reply put no node beside; raises Refusal when the node cannot be told."""
        prose = replies.outside_fences(text)
        labelled = {self.node(value) for value in replies.labelled(prose, _MACHINE_LABELS)} - {None}
        if len(labelled) == 1:
            return Action(labelled.pop(), candidate.command)
        before = replies.outside_fences(text[:candidate.position])
        phrases = list(self._on.finditer(before))
        if phrases:
            last = phrases[-1]
            return Action(self.router if last.group(2) else self.node(last.group(1)), candidate.command)
        owned = self._owned(candidate.command)
        if len(set(owned.values())) == 1:
            name, node = next(iter(owned.items()))
            kind = "address" if _is_address(name) else "interface"
            return Action(node, candidate.command, f"no node was named; {name} is an {kind} of {node} only")
        machine = self._mentioned(before, prose)
        if machine is not None:
            return Action(machine, candidate.command)
        raise Refusal(f"which node should run `{_short(candidate.command)}`? No node is named"
                      f"{self._why_not_owned(candidate.command, owned)}: {self.accepted()}")

    def _owned(self, command: str) -> dict[str, str]:
        """{interface or address named in command: the one node it exists on}; addresses only where they are
        configured (`ip addr ...`, `ifconfig ...`), not where they are destinations or gateways."""
        found = {name: self.owners[name] for name in self._interface.findall(command)} if self._interface else {}
        if self._address is not None:
            for segment in re.split(r"[;&|\n]+", command):
                if _ADDRESS_COMMAND.match(segment):
                    found.update((name, self.owners[name]) for name in self._address.findall(segment))
        return found

    def _why_not_owned(self, command: str, owned: dict[str, str]) -> str:
        """Why the command's interfaces did not tell its node (for the refusal), or ""."""
        if len(set(owned.values())) > 1:
            listed = ", ".join(f"{name} is on {node}" for name, node in sorted(owned.items())[:4])
            return f", and the interfaces or addresses it names are on different nodes ({listed})"
        unknown = sorted(set(self._interface_like.findall(command)) - set(self.owners)) if self._interface_like else []
        if unknown:
            return (f", and {', '.join(unknown[:3])} {'is' if len(unknown) == 1 else 'are'} no node's interface "
                    f"(switch ports belong to the Linux bridges, not to a node)")
        destinations = sorted(set(self._address.findall(command))) if self._address else []
        if destinations:
            what = ("is a destination or a gateway, which says" if len(destinations) == 1
                    else "are destinations or gateways, which say")
            return f" (in this command, {', '.join(destinations[:3])} {what} nothing about where it runs)"
        return ""

    def _mentioned(self, before: str, prose: str) -> str | None:
        """The only node the prose names (before the command first), or the router when the prose says "router"."""
        for scope in (before, prose):
            named = {self.aliases[name] for name in self._mention.findall(scope)}
            if named:
                return named.pop() if len(named) == 1 else None
        return self.router if re.search(r"\brouter\b", prose, re.IGNORECASE) else None

    def _known(self, name: str) -> str:
        node = self.node(name)
        if node is None:
            raise Refusal(f"unknown machine {name.strip()!r}: use one of {', '.join(self.nodes)} "
                          f"(switches are plain Linux bridges, not nodes); {self.accepted()}")
        return node


def _joined(body: str) -> list[str]:
    """Lines with backslash continuations joined."""
    lines: list[str] = []
    pending = ""
    for line in body.split("\n"):
        if line.rstrip().endswith("\\"):
            pending += (line.strip() if pending else line.rstrip())[:-1].rstrip() + " "
            continue
        lines.append(pending + (line.strip() if pending else line))
        pending = ""
    if pending:
        lines.append(pending.rstrip())
    return lines


#: what a bare line of prose must start with to be read as a command (no fence, no label, no backticks)
BARE_PROGRAMS = frozenset({"ip", "ifconfig", "route", "iptables", "iptables-save", "sysctl", "tc", "arp", "ping",
                           "ss", "netstat", "bridge"})


def _looks_like_command(command: str, strict: bool = False) -> bool:
    words = command.strip().split(None, 1)
    if not words:
        return False
    first = words[0]
    if first.startswith("/"):
        first = first.rsplit("/", 1)[-1]
    return first in (BARE_PROGRAMS if strict else PROGRAMS)


def _unquoted(value: str) -> str:
    value = value.strip()
    for quote in ("```", "``", "`", '"', "'"):
        if len(value) > 2 * len(quote) and value.startswith(quote) and value.endswith(quote):
            return value[len(quote):-len(quote)].strip()
    return value


def _short(text: str, keep: int = 80) -> str:
    line = " ".join(text.split())
    return line if len(line) <= keep else line[: keep - 3] + "..."


def _words(names: list[str], before: str, after: str) -> re.Pattern[str] | None:
    """A pattern finding any of names (longest first) between the given boundaries; None for no names."""
    if not names:
        return None
    return re.compile(before + "(" + "|".join(map(re.escape, sorted(names, key=len, reverse=True))) + ")" + after)


def _is_address(name: str) -> bool:
    return name[:1].isdigit()


def parse_reply(reply: str, nodes: Sequence[str], prefix: str = "", last: bool = False,
                owners: Mapping[str, str] | None = None) -> Action:
    """The one action in reply for a network of these nodes (the router last); raises Refusal."""
    return Reader(nodes, nodes[-1], prefix, owners).read(reply, last)
