"""Grader side of the code sandbox: starts the zygote, sends it agent code, returns checked results.

The grader never unpickles or evaluates what the agent produced: results arrive as bytes and are
decoded with json.loads under a size cap. The ground truth never leaves the grader process: the
zygote only receives the topology (as node-link JSON) and the agent's code.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ...errors import InfraError

ZYGOTE = Path(__file__).with_name("zygote.py")
CLEAN_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}


@dataclass(frozen=True)
class Limits:
    """Resource limits of one run of agent code."""

    cpu_s: float = 10.0
    wall_s: float = 20.0
    memory_mb: int = 1024  #: address space the code may add to the zygote's
    output_bytes: int = 64 * 2**20
    fsize_bytes: int = 2**20
    nproc: int = 1


@dataclass(frozen=True)
class RunResult:
    """What came back from one run: a decoded JSON value, or the error to record."""

    ok: bool
    value: Any = None
    error: str = ""
    mutated_input: bool = False
    elapsed_s: float = 0.0


class Sandbox:
    """One zygote per worker; `run(code)` is safe to call repeatedly, even after crashes."""

    def __init__(self, graph_json: bytes, limits: Limits = Limits()) -> None:
        self.graph_json = graph_json
        self.limits = limits
        self.process: subprocess.Popen[bytes] | None = None
        self.isolation: dict[str, bool] = {}
        self.workdir: str | None = None
        self.lock = threading.Lock()

    def _start(self) -> None:
        try:
            process = subprocess.Popen(
                [sys.executable, "-I", str(ZYGOTE)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                cwd="/",
                env=CLEAN_ENV,  # never hand the grader's environment (API keys) to agent code
            )
            self._workdir()
            init = json.dumps({"limits": asdict(self.limits), "workdir": self.workdir}).encode()
            # splice the graph in without re-encoding it
            init = init[:-1] + b', "graph": ' + self.graph_json + b"}"
            self._send(process, init)
            ready = self._receive(process)
        except OSError as error:
            raise InfraError(f"cannot start the MALT sandbox: {error}") from error
        if ready is None:
            process.kill()
            process.wait()
            raise InfraError("the MALT sandbox exited during start-up")
        self.process = process
        #: what confinement this machine allows: {"netns": bool, "nobody": bool}
        self.isolation = json.loads(ready).get("isolation", {})

    def _workdir(self) -> None:
        """An empty directory the code runs in: readable and enterable, writable by nobody else."""
        if self.workdir is None or not os.path.isdir(self.workdir):
            self.workdir = tempfile.mkdtemp(prefix="malt-sandbox-")
            os.chmod(self.workdir, 0o711)

    @staticmethod
    def _send(process: subprocess.Popen[bytes], data: bytes) -> None:
        assert process.stdin is not None
        process.stdin.write(struct.pack(">Q", len(data)) + data)
        process.stdin.flush()

    @staticmethod
    def _receive(process: subprocess.Popen[bytes]) -> bytes | None:
        assert process.stdout is not None
        header = process.stdout.read(8)
        if len(header) < 8:
            return None
        (size,) = struct.unpack(">Q", header)
        data = process.stdout.read(size)
        return data if len(data) == size else None

    def run(self, code: str, readonly: bool = False) -> RunResult:
        with self.lock:
            if self.process is None or self.process.poll() is not None:
                self._start()
            process = self.process
            assert process is not None
            try:
                self._send(process, json.dumps({"code": code, "readonly": readonly}).encode())
                header = self._receive(process)
                payload = self._receive(process)
            except (OSError, ValueError):
                header = payload = None
            if header is None or payload is None:
                # the code runs in a child under another uid: it cannot kill the zygote
                self.close()
                raise InfraError("the MALT sandbox process died; it restarts for the next answer")
        info = json.loads(header)
        if info["status"] == "infra":
            raise InfraError(info["message"])
        if info["status"] != "ok":
            return RunResult(False, error=info["message"], elapsed_s=info["elapsed_s"])
        if len(payload) > self.limits.output_bytes:
            return RunResult(False, error=f"output larger than {self.limits.output_bytes} bytes")
        try:
            value = json.loads(payload)
        except (ValueError, RecursionError) as error:
            return RunResult(False, error=f"the return value is not valid JSON: {error}")
        return RunResult(True, value, mutated_input=info["mutated_input"], elapsed_s=info["elapsed_s"])

    def close(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        try:
            if process.stdin:
                process.stdin.close()
            process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()
        finally:
            if process.stdout:
                process.stdout.close()
            if self.workdir:
                shutil.rmtree(self.workdir, ignore_errors=True)
                self.workdir = None

    def __del__(self) -> None:  # a forgotten sandbox must not outlive its grader
        try:
            self.close()
        except Exception:  # noqa: BLE001, S110 - interpreter shutdown: nothing left to report to
            pass


def node_link_json(graph: Any) -> bytes:
    """The node-link JSON of a graph, as the sandbox receives it."""
    import networkx as nx

    return json.dumps(nx.node_link_data(graph, edges="edges")).encode()
