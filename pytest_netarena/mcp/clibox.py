"""A CLI agent's box: its program bound read-only, a private home, only loopback, and a run the harness can stop.

The CLI is untrusted code driven by an untrusted model. Its own shell, file and web tools are switched
off by its flags, and, whatever it does anyway, it runs in a sealed box (`sandbox.command`): its own
PID, IPC, UTS and network namespaces, where the network holds only loopback and the harness's two
listeners (the model relay and the episode's MCP server, `asgi.py`); a read-only view of its own
program folder and the shared libraries; a private writable home and /tmp on size-capped tmpfs; no
capabilities, a private uid, rlimits and a control group capping its memory, processes and CPU together;
a kernel filter refusing new namespaces and mounts; the libraries its program needs and no other program;
output read through a bounded pipe. Nothing of the host, the harness, the run folder or the episode's
hidden state is in it, and its mount table names no host path (its install is bound from a copy).
"""

from __future__ import annotations

import os
import select
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..core.process import kill_group
from ..sandbox import BoxSpec, Limits, NetNamespace, prepare
from ..sandbox.userns import UserNetNamespace
from ..sandbox.views import HOST_PATH

#: what a CLI agent's box may use: CLIs are large programs (a JIT runtime reserves tens of GiB of address space),
#: but hold little (Claude Code peaked at 123 MB, Codex at 24 MB through a k8s episode here; their programs'
#: pages are the store's, not the box's): all its processes share 1 GiB
CLI_LIMITS = Limits(wall_s=3600.0, cpu_s=3600, memory_bytes=64 << 30, box_memory_bytes=1 << 30, cpus=1.0,
                    processes=256, file_bytes=64 << 20, open_files=1024, output_bytes=16 << 20,
                    tmp_bytes=256 << 20)


@dataclass(frozen=True)
class Ended:
    """How a CLI's run ended."""

    output: str  #: stdout and stderr, merged, at most the output cap (kept for the transcript)
    returncode: int | None  #: None when the harness stopped it
    why_stopped: str = ""  #: "" when it exited on its own; else why the harness stopped it
    elapsed_s: float = 0.0


def cli_box(program_dir: str, network: NetNamespace | UserNetNamespace, env: Mapping[str, str],
            files: Mapping[str, bytes] = {},
            limits: Limits = CLI_LIMITS, mount: str = "/usr/share/cli-agent") -> BoxSpec:
    """The box of one CLI run: `program_dir` read-only at `mount`, the given namespace, no other program."""
    return BoxSpec(binds=((program_dir, mount),), network=network, env=dict(env), files=dict(files), limits=limits,
                   hostname="agent")


def run_cli(spec: BoxSpec, argv: Sequence[str], should_stop: Callable[[], str]) -> Ended:
    """Run argv in a fresh box until it exits, its wall-clock limit or output cap, or should_stop() says why to stop
    (asked about every 0.2 s; "" to go on). The whole box is killed when stopped."""
    box = prepare(spec, argv)
    assert spec.network is not None

    def launch(argv: list[str], passed: list[int]) -> Ended:
        # the thread that starts bwrap must wait for it (its parent-death signal follows the thread)
        started = time.perf_counter()
        try:
            process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                       env={"PATH": HOST_PATH}, start_new_session=True, pass_fds=passed)
        finally:
            box.close_fds()
        return _watch(process, spec.limits, should_stop, started)

    try:  # as root the namespace is entered by a thread of ours; in a user namespace, through nsenter
        if box.enters_network:
            return launch(box.argv, box.fds)
        return spec.network.run_in(launch, box.argv, box.fds)
    finally:
        box.ended()


def _watch(process: subprocess.Popen, limits: Limits, should_stop: Callable[[], str], started: float) -> Ended:
    assert process.stdout is not None
    fd = process.stdout.fileno()
    chunks: list[bytes] = []
    size = 0
    why = ""
    while True:
        if time.perf_counter() - started > limits.wall_s:
            why = f"it ran past its {limits.wall_s:g} s limit"
            break
        why = should_stop()
        if why:
            break
        ready, _, _ = select.select([fd], [], [], 0.2)
        if not ready:
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if size > limits.output_bytes:
            why = f"its output passed {limits.output_bytes:,} bytes"
            break
    if why:
        kill_group(process)
    process.stdout.close()
    try:
        code: int | None = process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        kill_group(process)
        code = process.wait()
    output = b"".join(chunks)[: limits.output_bytes].decode("utf-8", "replace")
    return Ended(output, None if why else code, why, time.perf_counter() - started)
