"""The agent's commands on a node: a bash command line run in a fresh sealed box inside the node's network namespace.

The box (pytest_netarena.sandbox) joins the node's network namespace and nothing else of it: `/`
is a read-only view of the networking tools and a shell, `/proc/sys` is read-only except the
node's own `net` tree, the only capabilities are NET_ADMIN and NET_RAW (in the node's namespace: its
kernel filter lets it make no namespace of its own), `/tmp`, the home folder and `/run` (where iptables
keeps its lock) are private tmpfs, its processes share 256 MiB and one CPU (its control group), and every
process the command starts dies with it. So the command may be any shell command line: containment comes from the box, not
from reading the command.

At its time limit the command is interrupted as by Ctrl-C (sandbox/interrupt.py): ping prints its
summary and the output so far comes back; what is still running a grace period later is killed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from subprocess import Popen

from ... import sandbox
from ...sandbox import interrupt, views
from .network.build import COMMAND_TIMEOUT_S, OUTPUT_LIMIT, CommandResult

#: networking programs on top of the shell tools (missing ones are left out of the box)
NET_TOOLS = (
    "ip", "ifconfig", "route", "iptables", "iptables-save", "iptables-legacy", "iptables-legacy-save",
    "iptables-nft", "iptables-nft-save", "ip6tables", "ip6tables-save", "sysctl", "tc", "arp", "ping",
    "ping6", "ss", "netstat", "bridge", "nstat", "mkfifo",
)
CAPS = ("CAP_NET_ADMIN", "CAP_NET_RAW")


def programs() -> dict[str, str]:
    """{name: host file} of everything a node box holds."""
    return views.programs((*NET_TOOLS, *views.SHELL_TOOLS))


def limits(timeout_s: float = COMMAND_TIMEOUT_S) -> sandbox.Limits:
    return sandbox.Limits(wall_s=interrupt.wall_s(timeout_s), cpu_s=max(1, int(timeout_s) + 1),
                          memory_bytes=256 << 20, box_memory_bytes=256 << 20, processes=32, file_bytes=4 << 20,
                          output_bytes=OUTPUT_LIMIT + 1, tmp_bytes=8 << 20)


class NodeBoxes:
    """One box spec per node (its namespace held open by file descriptor); each command gets a fresh box."""

    def __init__(self, pids: Mapping[str, int], sandboxed: bool = True) -> None:
        self.sandboxed = sandboxed
        self._programs = programs()
        self.namespaces = {node: sandbox.NetNamespace.of_process(pid) for node, pid in pids.items()}

    def spec(self, node: str, timeout_s: float = COMMAND_TIMEOUT_S) -> sandbox.BoxSpec:
        return sandbox.BoxSpec(programs=self._programs, network=self.namespaces[node], caps=CAPS,
                               writable_net_sysctl=True, env={"LC_ALL": "C"}, limits=limits(timeout_s),
                               hostname=node)

    def run(self, node: str, command: str, timeout_s: float = COMMAND_TIMEOUT_S,
            on_start: Callable[[Popen], None] | None = None) -> CommandResult:
        """Run `bash -c command` on node (in a box unless --unsandboxed) with a timeout and an output cap; on_start
        gets the box's process (to stop it early)."""
        spec = self.spec(node, timeout_s)
        argv = interrupt.argv(["bash", "-c", command], timeout_s)
        try:
            finished = (sandbox.run(spec, argv, on_start=on_start) if self.sandboxed
                        else sandbox.run_unboxed(spec, argv, on_start=on_start))
        except OSError as error:
            return CommandResult(tuple(argv), 127, f"cannot run the command: {error}")
        text = finished.text
        truncated = finished.truncated or len(text) > OUTPUT_LIMIT
        code = finished.returncode
        timed_out = interrupt.timed_out(finished, timeout_s)
        if truncated:
            text = text[:OUTPUT_LIMIT] + f"\n[output truncated to {OUTPUT_LIMIT} characters; the command was stopped there]"
            code = None if finished.truncated else code
        elif timed_out:
            code = None
            text += (f"\n[command killed after {timeout_s:g} s timeout: interrupted as by Ctrl-C, then killed "
                     f"{interrupt.GRACE_S:g} s later if still running; the output above is what it printed until then]")
        return CommandResult(tuple(argv), code, text, truncated)

    def close(self) -> None:
        for namespace in self.namespaces.values():
            namespace.close()
        self.namespaces = {}
