"""Agent replies turned into one guarded argv: JSON extraction, shlex parsing, an allow-list with argument checks.

Agent text is untrusted. Nothing here runs a shell: a command becomes an argv list for one
allow-listed program, or a Refusal whose message tells the agent why (recorded as a refused step).
"""

from __future__ import annotations

import json
import posixpath
import shlex
from dataclasses import dataclass

ALLOWED = ("ip", "ifconfig", "route", "iptables", "iptables-save", "sysctl", "tc", "arp", "cat")
_SYSTEM_DIRS = ("/sbin/", "/usr/sbin/", "/bin/", "/usr/bin/", "/usr/local/sbin/", "/usr/local/bin/")
_REFUSED_CLASSES: tuple[tuple[frozenset[str], str], ...] = (
    (frozenset({"sudo", "su", "doas"}), "{prog} is not needed and not allowed: commands already run as root on the node"),
    (frozenset({"ping", "ping6", "fping", "arping", "traceroute", "tracepath", "mtr", "nc", "curl", "wget", "tcpdump"}),
     "{prog} is refused: do not send traffic yourself, the pingmesh is measured for you after every command"),
    (frozenset({"sh", "bash", "dash", "zsh", "ksh", "csh", "tcsh", "fish", "busybox", "python", "python3", "perl",
                "ruby", "env", "xargs", "nohup", "timeout", "watch", "nsenter", "mnexec", "ip-netns", "unshare",
                "chroot", "setsid", "exec", "eval", "source", "."}),
     "{prog} is refused: shells, interpreters and wrappers cannot run here; give one allowed program with its arguments"),
    (frozenset({"vi", "vim", "nvim", "nano", "emacs", "ed", "pico", "sed", "tee", "dd", "cp", "mv", "rm", "touch",
                "echo", "printf", "truncate", "install", "mkdir", "ln", "chmod", "chown", "iptables-restore",
                "ip6tables-restore"}),
     "{prog} is refused: editors and anything that writes files are not allowed"),
    (frozenset({"vtysh", "zebra", "frr", "bird", "birdc", "ospfd", "bgpd", "quagga", "systemctl", "service",
                "dhclient", "dnsmasq", "sshd", "nginx", "sleep", "top", "less", "more", "kill", "pkill", "killall",
                "modprobe", "insmod", "rmmod", "reboot", "shutdown", "ethtool"}),
     "{prog} is refused: daemons, services, interactive tools and system administration are not allowed"),
)
_SHELL_CHARS = ("|", ";", "&", ">", "<", "`", "$(", "\n")


@dataclass(frozen=True)
class Action:
    """A parsed reply: the node and the command text."""

    machine: str
    command: str

    @property
    def text(self) -> str:
        return f"{self.machine}: {self.command}"


class Refusal(Exception):
    """A reply or command that is not executed; its message is shown to the agent."""


def parse_reply(reply: str) -> Action:
    """The single {"machine": ..., "command": ...} object in reply (prose and code fences tolerated)."""
    decoder = json.JSONDecoder()
    found: list[dict] = []
    position = reply.find("{")
    while position != -1:
        try:
            value, end = decoder.raw_decode(reply, position)
        except json.JSONDecodeError:
            position = reply.find("{", position + 1)
            continue
        if isinstance(value, dict) and "machine" in value and "command" in value:
            found.append(value)
        position = reply.find("{", end)
    distinct = {json.dumps(value, sort_keys=True) for value in found}
    if not found:
        raise Refusal(
            'no action found: reply with one JSON object {"machine": "<node name>", "command": "<one command>"}'
        )
    if len(distinct) > 1:
        raise Refusal(f"{len(distinct)} actions found: give exactly one JSON object per reply (one command at a time)")
    value = found[0]
    machine, command = value["machine"], value["command"]
    if not isinstance(machine, str) or not isinstance(command, str) or not machine.strip() or not command.strip():
        raise Refusal('"machine" and "command" must be non-empty strings')
    return Action(machine.strip(), command.strip())


def guard(command: str) -> list[str]:
    """The argv to run for command, or Refusal explaining why it is not allowed."""
    if any(mark in command for mark in _SHELL_CHARS):
        raise Refusal("shell syntax (pipes, redirections, ';', '&&', '$(...)', backticks) is not supported: "
                      "commands run without a shell, give one program and its arguments")
    try:
        argv = shlex.split(command)
    except ValueError as error:
        raise Refusal(f"cannot parse the command: {error}") from None
    if not argv:
        raise Refusal("empty command")
    prog = argv[0]
    if prog.startswith("/"):
        directory = prog.rsplit("/", 1)[0] + "/"
        if directory not in _SYSTEM_DIRS:
            raise Refusal(f"{prog} is refused: run allowed programs by name ({', '.join(ALLOWED)})")
        prog = prog.rsplit("/", 1)[1]
    for names, message in _REFUSED_CLASSES:
        if prog in names:
            raise Refusal(message.format(prog=prog))
    if prog not in ALLOWED:
        raise Refusal(f"{prog} is not an allowed program; allowed: {', '.join(ALLOWED)}")
    args = argv[1:]
    _CHECKS[prog](args)
    return [prog, *args]


def _options(args: list[str]) -> list[str]:
    """Leading options, normalised to one dash (ip and tc accept --opt as -opt)."""
    return ["-" + arg.lstrip("-") for arg in args if arg.startswith("-")]


def _matches(option: str, full: str, minimum: int = 2) -> bool:
    """iproute2-style abbreviation: option is a prefix of full at least `minimum` characters long."""
    return len(option) >= minimum and full.startswith(option)


def _check_iproute(prog: str, args: list[str]) -> None:
    for option in _options(args):
        if _matches(option, "-netns") or _matches(option, "-batch") or option == "-force" or _matches(option, "-all", 3):
            raise Refusal(f"{prog} {option} is refused: stay in this node's namespace and give one command")
    lowered = [arg.lower() for arg in args]
    words = [arg for arg in lowered if not arg.startswith("-")]
    if words and prog == "ip" and _matches(words[0], "netns", 2):
        raise Refusal("ip netns is refused: each node already is its own network namespace")
    for word in ("exec", "netns", "bpf", "obj", "object-file", "xdp", "xdpgeneric", "xdpdrv", "xdpoffload", "monitor"):
        if word in lowered:
            raise Refusal(f"{prog} ... {word} is refused (it runs programs, loads code, leaves the namespace or never ends)")


def _check_ip(args: list[str]) -> None:
    _check_iproute("ip", args)


def _check_tc(args: list[str]) -> None:
    _check_iproute("tc", args)


def _check_iptables(args: list[str]) -> None:
    for arg in args:
        if arg.startswith("--modprobe") or arg == "-M":
            raise Refusal("iptables --modprobe is refused: it runs a program")


def _check_iptables_save(args: list[str]) -> None:
    for arg in args:
        if arg in ("-f", "--file", "-M") or arg.startswith(("--file=", "--modprobe")):
            raise Refusal("iptables-save may only print the rules (no --file, no --modprobe)")


def _check_sysctl(args: list[str]) -> None:
    for arg in args:
        if arg.startswith("--"):
            if arg.startswith(("--load", "--system")):
                raise Refusal("sysctl may not load settings files (-p, -f, --load, --system)")
            continue
        if arg.startswith("-"):
            if "p" in arg or "f" in arg:
                raise Refusal("sysctl may not load settings files (-p, -f, --load, --system)")
            continue
        key = arg.split("=", 1)[0].replace("/", ".").strip(".")
        if key != "net" and not key.startswith("net."):
            raise Refusal(f"sysctl {key} is refused: only net.* settings of this node may be read or written")


def _check_arp(args: list[str]) -> None:
    for arg in args:
        if arg in ("-f", "--file") or arg.startswith("--file"):
            raise Refusal("arp -f is refused: it reads a file")


def _check_cat(args: list[str]) -> None:
    paths = [arg for arg in args if not arg.startswith("-")]
    if not paths:
        raise Refusal("cat needs a path under /proc/sys/net or /proc/net")
    for path in paths:
        normal = posixpath.normpath(path)
        inside = normal.startswith(("/proc/sys/net/", "/proc/net/")) or normal in ("/proc/sys/net", "/proc/net")
        if ".." in path.split("/") or not inside:
            raise Refusal(f"cat {path} is refused: only files under /proc/sys/net and /proc/net may be read")


def _no_check(args: list[str]) -> None:
    return None


_CHECKS = {
    "ip": _check_ip,
    "tc": _check_tc,
    "iptables": _check_iptables,
    "iptables-save": _check_iptables_save,
    "sysctl": _check_sysctl,
    "arp": _check_arp,
    "cat": _check_cat,
    "ifconfig": _no_check,
    "route": _no_check,
}
