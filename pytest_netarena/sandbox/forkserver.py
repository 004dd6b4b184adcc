"""Grader side of a forking Python box: starts the zygote in a sealed box, hands it each answer's code, reads results.

An app says what the box holds (BoxHolds: the packages, environment and hostname) and gives the
input, a graph as node-link JSON; answers are Python code defining process_graph(graph_data).
The zygote (zygote.py) runs in one long-lived box (box.py): its own empty network namespace, PID
namespace and /proc, a read-only view of only Python's standard library and those packages
(python_view.py), no file of the harness, no environment. As root it keeps uid 0 with only
CAP_SETUID, CAP_SETGID and CAP_KILL, and drops each forked child to a private uid of its own. The
answer's code goes in and its result comes out through pipes made here for that answer alone; the
result is read under a cap and decoded as plain JSON (plain_json.py); a returned DiGraph may come as its
changes to the input graph, rebuilt on the grader's own copy of it (graph_diff.py). Nothing the answer's
process could touch is trusted: its exit status and bytes are the whole report.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..core.errors import InfraError
from . import box, seccomp, views
from . import graph_diff
from .plain_json import MAX_DEPTH, Undecodable, nested_too_deep, notes, over_items, plain, too_deep
from .python_view import LIBRARIES, PREFIX, package_folder, python_view
from .support import support

ZYGOTE = Path(__file__).with_name("zygote.py")
BOX_ZYGOTE = "/opt/netarena/zygote.py"  #: where the box holds it
CLEAN_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
MAX_CODE = 1 << 20  #: the zygote reads at most this much code (a reply is capped far below it)
F_SETPIPE_SZ = 1031
#: folders bwrap creates as 0700 parents of the binds: the zygote opens them to the answers' uids
PARENTS = ("/opt", PREFIX, f"{PREFIX}/bin", f"{PREFIX}/lib", "/opt/netarena", LIBRARIES)
#: tmpfs mounts the box makes world-writable, and bwrap's 0700 parents: the zygote fixes both
CHMOD = (*PARENTS, "/tmp", "/run", "/dev/shm", box.HOME)
#: the first answer of every start: the box can run code on the graph
PROBE = "def process_graph(graph_data):\n    return graph_data.number_of_nodes()"
#: memory of the zygote's box beyond what one answer may add: the interpreter, its libraries, and the graph
#: (networkx holds a graph in about 16 bytes of memory per byte of its JSON)
ZYGOTE_MEMORY_BYTES = 512 << 20
GRAPH_MEMORY_PER_BYTE = 16


@dataclass(frozen=True)
class BoxHolds:
    """What an app's box holds beside Python's standard library; `label` names the box in messages."""

    packages: tuple[str, ...]  #: import names, networkx first (the zygote needs it); the others may be absent
    env: tuple[tuple[str, str], ...] = ()
    hostname: str = "box"
    label: str = "Python"


@dataclass(frozen=True)
class ChildLimits:
    """Resource limits of one answer's process (the zygote's forked child)."""

    cpu_s: float = 10.0
    wall_s: float = 20.0
    memory_mb: int = 1024  #: address space the code may add to the zygote's
    output_bytes: int | None = None  #: None: 3x the topology's JSON + 4 MiB
    fsize_bytes: int = 0  #: no answer writes files
    nproc: int = 1


@dataclass(frozen=True)
class RunResult:
    """What came back from one answer: a decoded plain JSON value, or the agent error to record.

    `kinds`: ((path, kind), ...) where the code returned a Python type JSON lacks (a tuple, a set, a
    numpy value, a networkx graph), written in `value` in its JSON form (zygote.scan).
    """

    ok: bool
    value: Any = None
    error: str = ""
    elapsed_s: float = 0.0
    cpu_s: float = 0.0  #: CPU time of the answer's process (its code, and writing its result)
    kinds: tuple[tuple[tuple[str | int, ...], str], ...] = ()


class _Gone(Exception):
    """The zygote was gone before it took the answer (nothing of the answer ran)."""


class ForkServer:
    """One boxed zygote per environment; `run(code)` is safe to call repeatedly, even after crashes."""

    def __init__(self, holds: BoxHolds, graph_json: bytes, limits: ChildLimits = ChildLimits(),
                 boxed: bool = True, diff: bool = False) -> None:
        self.holds = holds
        self.name = f"the {holds.label} box"
        self.graph_json = graph_json
        self.limits = limits
        self.boxed = boxed
        self.output_cap = limits.output_bytes or 3 * len(graph_json) + (4 << 20)
        items = graph_json.count(b",") + graph_json.count(b"[") + graph_json.count(b"{")
        self.item_cap = 3 * items + 200_000
        #: DiGraphs come back as changes to graph_json (graph_diff.py): the value then holds GraphDiff objects
        self.diff = diff
        self._base: graph_diff.GraphBase | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.launch: box.Launch | None = None
        self.control: socket.socket | None = None
        self.info: dict[str, Any] = {}
        self.lock = threading.Lock()

    # -- starting ---------------------------------------------------------------------------------
    def _launch(self) -> tuple[box.Launch, dict[str, str], str]:
        """(the launch, environment, libraries path) of the zygote, boxed or not."""
        holds = self.holds
        if not self.boxed:  # the first package's folder holds the others too (the lock installs all into one environment)
            return (box.Launch([sys.executable, "-I", "-S", str(ZYGOTE)], [], None), {**CLEAN_ENV, **dict(holds.env)},
                    str(package_folder(holds.packages[0]).parent))
        found = support()
        view = python_view(holds.packages, holds.env)
        memory = (self.limits.memory_mb << 20) + ZYGOTE_MEMORY_BYTES + GRAPH_MEMORY_PER_BYTE * len(self.graph_json)
        spec = box.BoxSpec(
            binds=view.binds,
            files={BOX_ZYGOTE: ZYGOTE.read_bytes()},
            caps=("SETUID", "SETGID", "KILL") if found.root else (),
            trusted_root=True,
            env=dict(view.env),
            limits=box.Limits(cpu_s=1 << 30, memory_bytes=1 << 40, box_memory_bytes=memory, file_bytes=1 << 20,
                              open_files=256, tmp_bytes=1 << 20),
            hostname=holds.hostname,
            unshare_allowed=seccomp.ANSWER_NAMESPACES,
        )
        try:
            launch = box.prepare(spec, [view.python, "-I", "-S", BOX_ZYGOTE], found)
        except OSError as error:
            raise InfraError(f"cannot prepare {self.name}: {error}") from error
        return launch, {"PATH": views.HOST_PATH}, LIBRARIES

    def _start(self) -> None:
        launch, env, libraries = self._launch()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        errors = tempfile.TemporaryFile()
        try:
            process = subprocess.Popen(launch.argv, stdin=theirs, stdout=subprocess.DEVNULL, stderr=errors, env=env,
                                       cwd="/", pass_fds=launch.fds, start_new_session=True)
        except OSError as error:
            ours.close()
            launch.ended()
            raise InfraError(f"cannot start {self.name}: {error}") from error
        finally:
            theirs.close()
            launch.close_fds()
        self.process, self.control, self.launch = process, ours, launch
        graph_r, graph_w = os.pipe()
        pipe = os.fdopen(graph_w, "wb")
        try:
            sealing = seccomp.answer_program().hex() if self.boxed and seccomp.supported() else ""
            init = {"op": "init", "libraries": libraries, "chmod": list(CHMOD) if self.boxed else [], "diff": self.diff,
                    "filter": sealing}
            socket.send_fds(ours, [json.dumps(init).encode()], [graph_r])
            os.close(graph_r)
            graph_r = -1
            with pipe:
                pipe.write(self.graph_json)
            ours.settimeout(120)
            ready = ours.recv(1 << 16)
        except OSError:
            ready = b""
        finally:
            if graph_r >= 0:
                os.close(graph_r)
            try:
                pipe.close()
            except OSError:
                pass
        if not ready:
            errors.seek(0)
            detail = errors.read(2000).decode(errors="replace").strip()
            self.close()
            raise InfraError(f"{self.name} exited during start-up: {detail or 'no message'}")
        errors.close()
        self.info = json.loads(ready)
        try:
            probe = self._run(PROBE)
        except _Gone as error:
            probe = RunResult(False, error=str(error))
        except InfraError:
            self.close()
            raise
        if not probe.ok:
            self.close()
            raise InfraError(f"{self.name} cannot run code: {probe.error}")

    # -- one answer -------------------------------------------------------------------------------
    def run(self, code: str) -> RunResult:
        data = code.encode("utf-8", "replace")
        if len(data) > MAX_CODE:
            return RunResult(False, error=f"the code is {len(data)} bytes, over the limit of {MAX_CODE}")
        with self.lock:
            for _ in range(2):
                if self.process is None or self.process.poll() is not None:
                    self.close()
                    self._start()
                try:
                    return self._run(code)
                except _Gone:
                    self.close()  # an earlier answer may have ended it (boxes without root): start anew
                except BaseException:
                    self.close()  # interrupted mid-exchange: the next answer must not read this one's status
                    raise
            raise InfraError(f"{self.name} could not be reached twice in a row")

    def _run(self, code: str) -> RunResult:
        assert self.control is not None
        limits = self.limits
        uid = None
        if self.boxed and self.info.get("uid") == 0:
            uid = box.private_uid()
        code_r, code_w = os.pipe()
        result_r, result_w = os.pipe()
        for fd in (code_w, result_w):  # a graph's megabyte passes in a few writes, not one per 64 KiB
            try:
                fcntl.fcntl(fd, F_SETPIPE_SZ, MAX_CODE)
            except OSError:
                pass
        message = {"op": "run", "uid": uid, "isolate": self.boxed,
                   "limits": {**asdict(limits), "output_bytes": self.output_cap, "output_items": self.item_cap}}
        try:
            socket.send_fds(self.control, [json.dumps(message).encode()], [code_r, result_w])
        except OSError as error:
            for fd in (code_r, code_w, result_r, result_w):
                os.close(fd)
            raise _Gone(str(error)) from error
        os.close(code_r)
        os.close(result_w)
        try:
            with os.fdopen(code_w, "wb") as pipe:
                pipe.write(code.encode("utf-8", "replace"))
        except OSError:
            pass  # the child ended before reading: its status says how
        output, over = self._read(result_r, time.perf_counter() + limits.wall_s + 5)
        if over:
            self._send({"op": "kill"})  # the zygote kills the child now, not at its wall-clock limit
        status = self._status(limits.wall_s + 30)
        if status is None:
            self.close()
            return RunResult(False, error="the box ended while the code ran (it restarts for the next answer)")
        return self._result(output, over, status)

    def _read(self, fd: int, deadline: float) -> tuple[bytes, bool]:
        """Read the result pipe until EOF, the cap or the deadline; never holds more than the cap."""
        chunks, size, cap = [], 0, self.output_cap + 1
        try:
            while True:
                left = deadline - time.perf_counter()
                if left <= 0:  # the zygote kills at wall_s: only a stuck zygote gets here
                    return b"", True
                ready, _, _ = select.select([fd], [], [], left)
                if not ready:
                    continue
                chunk = os.read(fd, min(1 << 20, cap + 1 - size))
                if not chunk:
                    return b"".join(chunks), False
                chunks.append(chunk)
                size += len(chunk)
                if size > cap:
                    return b"", True
        finally:
            os.close(fd)

    def _send(self, message: dict[str, Any]) -> None:
        try:
            assert self.control is not None
            self.control.send(json.dumps(message).encode())
        except OSError:
            pass

    def _status(self, timeout: float) -> dict[str, Any] | None:
        assert self.control is not None
        self.control.settimeout(timeout)
        try:
            data = self.control.recv(1 << 16)
        except TimeoutError as error:
            self.close()
            raise InfraError(f"{self.name} stopped answering") from error
        except OSError:
            return None
        return json.loads(data) if data else None

    def _result(self, output: bytes, over: bool, status: dict[str, Any]) -> RunResult:
        limits, elapsed = self.limits, status["elapsed_s"]
        if not status.get("sealed") and not status["timed_out"]:
            # before the answer's code was read: the box, not the answer, failed
            raise InfraError(f"{self.name} could not seal the answer's process (its uid, limits, an IPC namespace "
                             "of its own in a user namespace, a seccomp filter): are user namespaces disabled? "
                             f"(exit status {status['exit']}, signal {status['signal']})")

        def error(text: str) -> RunResult:
            return RunResult(False, error=text, elapsed_s=elapsed, cpu_s=status["cpu_s"])

        if over:
            return error(f"output larger than the limit of {self.output_cap} bytes")
        if status["timed_out"]:
            return error(f"wall-clock time limit of {limits.wall_s:g} s exceeded")
        tag, body = output[:1], output[1:]
        if tag == b"R" and status["exit"] == 0:
            value, _, noted = body.partition(b"\n")  # JSON text holds no raw newline
            try:
                if self.diff:
                    decoded, kinds = self._with_diffs(value, noted)
                    return RunResult(True, decoded, elapsed_s=elapsed, cpu_s=status["cpu_s"], kinds=kinds)
                return RunResult(True, plain(value, self.output_cap, self.item_cap), elapsed_s=elapsed,
                                 cpu_s=status["cpu_s"],
                                 kinds=notes(noted, self.output_cap, self.item_cap))
            except Undecodable as problem:
                return error(str(problem))
        if tag == b"E":
            return error(body[:4000].decode("utf-8", "replace"))
        code, sig = status["exit"], status["signal"]
        if sig == signal.SIGXCPU or (sig == signal.SIGKILL and status["cpu_s"] >= limits.cpu_s * 0.9):
            return error(f"CPU time limit of {limits.cpu_s:g} s exceeded")
        if sig is not None:
            return error(f"the code was killed by signal {signal.Signals(sig).name}")
        return error(f"the code ended the process (exit status {code}) without returning a result")

    def _with_diffs(self, data: bytes, noted: bytes) -> tuple[Any, tuple[tuple[tuple[str | int, ...], str], ...]]:
        """(value, kinds) of a result whose DiGraphs came as changes: each is read against the grader's own
        copy of the input graph into a GraphDiff, and the value is bounded as the JSON of the whole graphs
        would have been (same limits, same messages)."""
        cap, item_cap = self.output_cap, self.item_cap
        value = plain(data, cap, item_cap, check_depth=False)
        kinds = notes(noted, cap, item_cap)
        deep = nested_too_deep(data, value, MAX_DEPTH)
        size, count, deepest = len(data), data.count(b",") + data.count(b"[") + data.count(b"{"), 0
        root = [value]
        for path, kind in kinds:
            parent, key = root, 0
            try:
                for step in path:
                    parent, key = parent[key], step
                marker = parent[key]
            except (LookupError, TypeError):
                continue
            if kind != "networkx.DiGraph" or not isinstance(marker, dict) or graph_diff.MARKER not in marker:
                continue
            text = json.dumps(marker)
            found = graph_diff.read(marker, self.base)
            size += found.size - len(text)
            count += found.items - graph_diff.items(text)
            deepest = max(deepest, len(path) + 2 + found.kept_depth if found.kept_depth else 0)
            parent[key] = found
        if 2 + size + len(noted) > cap + 1:
            raise Undecodable(f"output larger than the limit of {cap} bytes")
        if count > item_cap:
            raise Undecodable(over_items(item_cap))
        if deep or deepest > MAX_DEPTH:
            raise Undecodable(too_deep(MAX_DEPTH))
        return root[0], kinds

    @property
    def base(self) -> graph_diff.GraphBase:
        """The input graph as the grader reads diffs against it (decoded once, from the bytes it sends)."""
        if self._base is None:
            self._base = graph_diff.GraphBase(self.graph_json)
        return self._base

    # -- stopping ---------------------------------------------------------------------------------
    def close(self) -> None:
        control, self.control = self.control, None
        process, self.process = self.process, None
        launch, self.launch = self.launch, None
        if control is not None:
            control.close()  # the zygote exits at end of file
        if process is not None:
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    process.kill()
                process.wait()
        if launch is not None:
            launch.ended()

    def __del__(self) -> None:  # a forgotten fork server must not outlive its grader
        try:
            self.close()
        except Exception:  # noqa: BLE001, S110 - interpreter shutdown: nothing left to report to
            pass


def node_link_json(graph: Any) -> bytes:
    """The node-link JSON of a graph, as the box receives it."""
    import networkx as nx

    return json.dumps(nx.node_link_data(graph, edges="edges")).encode()
