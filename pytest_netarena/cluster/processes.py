"""Running a pod's programs in boxes: a container's main process (output to its log) and exec sessions.

Each box is started from a thread that first enters the pod's network namespace and stays until the
box ends (bubblewrap's parent-death signal follows the starting thread), through a shim that puts it
into the pod's cgroups before it becomes the box. Killing a box's outer process ends its PID
namespace and so everything it started, daemons included.
"""

from __future__ import annotations

import os
import select
import subprocess
import threading
import time
from collections.abc import Callable

from ..core.process import kill_group
from ..sandbox import BoxSpec, command, views
from .cgroups import SHIM
from .logs import ContainerLog, Throttle

_EXIT_TIMEOUT = 5.0


def _launch_argv(spec: BoxSpec, argv: list[str] | tuple[str, ...]) -> tuple[list[str], list[int]]:
    full, fds = command(spec, list(argv))
    return ["/bin/sh", "-c", SHIM, "shim", *full], fds


def _env(groups: list[str]) -> dict[str, str]:
    return {"PATH": views.HOST_PATH, "NETARENA_CGROUPS": " ".join(groups)}


class ContainerProcess:
    """A container's main process: started in a box, its stdout and stderr lines in `log`, its end reported."""

    def __init__(self, spec: BoxSpec, argv: tuple[str, ...], groups: list[str], log: ContainerLog,
                 ended: Callable[[int], None], throttles: tuple[Throttle, ...] = ()) -> None:
        """throttles: the rates its output is read at (its own, the cluster's): past them its writes wait."""
        self.spec, self.argv, self.groups, self.log, self.ended = spec, argv, groups, log, ended
        self.throttles = throttles
        self.process: subprocess.Popen | None = None
        self._started = threading.Event()
        self._error: BaseException | None = None
        self.stopped = False

    def start(self) -> None:
        """Start the box; OSError if it cannot (bubblewrap missing...)."""
        threading.Thread(target=self._run, name="netarena-container", daemon=True).start()
        self._started.wait()
        if self._error is not None:
            raise self._error

    def _run(self) -> None:
        fds: list[int] = []
        try:
            full, fds = _launch_argv(self.spec, self.argv)
            self.spec.network.enter_current_thread()
            self.process = subprocess.Popen(full, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                            stderr=subprocess.STDOUT, env=_env(self.groups), pass_fds=fds,
                                            start_new_session=True)
        except BaseException as error:  # noqa: BLE001  (raised in the starting thread)
            self._error = error
            self._started.set()
            return
        finally:
            for fd in fds:
                os.close(fd)
        self._started.set()
        stream = self.process.stdout
        while True:
            chunk = stream.read1(65536)
            if not chunk:
                break
            self.log.write(chunk)
            wait = max((throttle.take(len(chunk)) for throttle in self.throttles), default=0.0)
            if wait and not self.stopped:
                time.sleep(wait)
        stream.close()
        code = self.process.wait()
        self.log.close()
        self.ended(code if code >= 0 else 128 - code)

    def stop(self) -> None:
        """Kill the box (and its PID namespace with everything in it)."""
        self.stopped = True
        if self.process is not None:
            kill_group(self.process)


def _hung_up(fd: int) -> bool:
    poller = select.poll()
    poller.register(fd, select.POLLRDHUP)
    return bool(poller.poll(0))


class ExecSession:
    """One command run in a fresh box of the container: stdin from the client, stdout and stderr to it.

    The command ends with its client: when the client's connection hangs up (or is shut down by the server),
    the box is killed, so no session outlives the kubectl that opened it."""

    def __init__(self, spec: BoxSpec, argv: tuple[str, ...], groups: list[str], stdin: bool,
                 wall_s: float, output_bytes: int) -> None:
        self.spec, self.argv, self.groups, self.stdin = spec, argv, groups, stdin
        self.wall_s, self.output_bytes = wall_s, output_bytes
        self.timed_out = self.truncated = self.abandoned = False

    def run(self, send: Callable[[int, bytes], None], receive: Callable[[], tuple[int, bytes]] | None,
            client: int | None = None) -> int | None:
        """Run to the end; send(channel, data) for output; receive() gives the client's stdin messages; client is
        the file descriptor of the client's connection (its hang-up ends the session).

        Returns the exit status (None when the session's limits or its client's going away stopped it)."""
        result: dict = {}
        thread = threading.Thread(target=self._inside, args=(send, receive, client, result), name="netarena-exec",
                                  daemon=True)
        thread.start()
        thread.join()
        if "error" in result:
            raise result["error"]
        return result.get("code")

    def _inside(self, send, receive, client, result: dict) -> None:
        if client is not None and _hung_up(client):  # its client went away before it started: nothing runs
            self.abandoned = True
            return
        fds: list[int] = []
        try:
            full, fds = _launch_argv(self.spec, self.argv)
            self.spec.network.enter_current_thread()
            process = subprocess.Popen(full, stdin=subprocess.PIPE if self.stdin else subprocess.DEVNULL,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(self.groups),
                                       pass_fds=fds, start_new_session=True)
        except BaseException as error:  # noqa: BLE001
            result["error"] = error
            return
        finally:
            for fd in fds:
                os.close(fd)
        if self.stdin and receive is not None:
            threading.Thread(target=self._feed, args=(process, receive), name="netarena-exec-stdin",
                             daemon=True).start()
        result["code"] = self._pump(process, send, client)

    def _feed(self, process: subprocess.Popen, receive) -> None:
        from ..kube.websocket import CLOSE, STDIN, Closed

        try:
            while process.poll() is None:
                channel, data = receive()
                if channel == STDIN and data:
                    process.stdin.write(data)
                    process.stdin.flush()
                elif channel == CLOSE and data[:1] == bytes([STDIN]):
                    break
        except (Closed, OSError, ValueError):
            pass
        finally:
            try:
                process.stdin.close()
            except OSError:
                pass

    def _pump(self, process: subprocess.Popen, send, client: int | None) -> int | None:
        streams = {process.stdout.fileno(): 1, process.stderr.fileno(): 2}
        poller = select.poll()
        for fd in streams:
            poller.register(fd, select.POLLIN)
        if client is not None:  # only its hang-up: what the client sends is the stdin feeder's to read
            poller.register(client, select.POLLRDHUP)
        deadline = time.monotonic() + self.wall_s
        sent = 0
        while streams and not self.truncated:
            left = deadline - time.monotonic()
            if left <= 0:
                self.timed_out = True
                break
            for fd, events in poller.poll(left * 1000):
                if fd == client:
                    self.abandoned = True
                    break
                data = os.read(fd, 65536) if events & (select.POLLIN | select.POLLHUP) else b""
                if not data:
                    del streams[fd]
                    poller.unregister(fd)
                    continue
                sent += len(data)
                if sent > self.output_bytes:
                    self.truncated = True
                    break
                try:
                    send(streams[fd], data)
                except Exception:  # the client went away: nobody reads the rest
                    self.truncated = True
                    break
            if self.abandoned:
                break
        stopped = self.timed_out or self.truncated or self.abandoned
        if stopped:
            kill_group(process)
        try:
            code = process.wait(timeout=_EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            kill_group(process)
            code = process.wait()
        process.stdout.close()
        process.stderr.close()
        if stopped:
            return None
        return code if code >= 0 else 128 - code
