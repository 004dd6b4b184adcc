"""Per-write checks on a real cluster: `kubectl get --watch` streams of the episode's policies, pods and services.

kubectl watches one resource type per process, so three run side by side for the length of one agent
action. Each first lists what exists (ADDED events: the state before the action); once every object
of the last reading has been seen, the action may start, and every later event is a write: the
policy engine computes the matrix of the watched objects after it. At the end the streams are drained
until they hold what a fresh listing holds. Events of one type arrive in order; events of two types
(a pod relabelled while a policy changes) may interleave slightly differently than on the server.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from .writes import write_label

PLURALS = {"networkpolicies": "NetworkPolicy", "pods": "Pod", "services": "Service"}
READY_TIMEOUT_S = 10.0
DRAIN_TIMEOUT_S = 5.0

Key = tuple[str, str]  #: (plural, name)


class ClusterWatch:
    """The watched objects of one namespace, kept current from the streams; on_write(label, objects) after
    each write (objects: plural -> name -> object, read under the watch's lock during the call)."""

    def __init__(self, argv: list[str], env: Mapping[str, str], namespace: str,
                 on_write: Callable[[str, dict[str, dict[str, dict]]], None]) -> None:
        self.argv, self.env, self.namespace = argv, dict(env), namespace
        self.on_write = on_write
        self.objects: dict[str, dict[str, dict]] = {plural: {} for plural in PLURALS}
        self.lock = threading.Lock()
        self.live = False  #: past the initial listing: events are writes
        self.error: BaseException | None = None
        self._stopping = False
        self._changed = threading.Condition(self.lock)
        self._processes: list[subprocess.Popen] = []
        self._threads: list[threading.Thread] = []

    def start(self, expected: Mapping[str, set[str]]) -> bool:
        """Start the streams and wait until each listed every name of expected (plural -> names); False when
        they did not in time. Later events are writes."""
        for plural in PLURALS:
            process = subprocess.Popen(
                [*self.argv, "get", plural, "-n", self.namespace, "--watch", "-o", "json", "--output-watch-events"],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=self.env)
            self._processes.append(process)
            thread = threading.Thread(target=self._read, args=(plural, process), daemon=True,
                                      name=f"netarena-watch-{plural}")
            thread.start()
            self._threads.append(thread)
        ready = self._wait(lambda: all(set(expected.get(p, ())) <= set(self.objects[p]) for p in PLURALS),
                           READY_TIMEOUT_S)
        with self.lock:
            self.live = True
        return ready

    def drain(self, versions: Mapping[str, dict[str, str]]) -> None:
        """Wait until the streams hold exactly these objects (plural -> name -> resourceVersion)."""
        def caught_up() -> bool:
            return all({name: obj["metadata"].get("resourceVersion") for name, obj in self.objects[p].items()}
                       == dict(versions.get(p, {})) for p in PLURALS)

        self._wait(caught_up, DRAIN_TIMEOUT_S)

    def stop(self) -> None:
        self._stopping = True
        for process in self._processes:
            if process.poll() is None:
                process.terminate()
        for process in self._processes:
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for thread in self._threads:
            thread.join(timeout=5)

    def _wait(self, done: Callable[[], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._changed:
            while not done():
                left = deadline - time.monotonic()
                if left <= 0 or self.error is not None:
                    return False
                self._changed.wait(min(left, 0.1))
            return True

    def _read(self, plural: str, process: subprocess.Popen) -> None:
        decoder = json.JSONDecoder()
        buffer = ""
        try:
            for chunk in iter(lambda: process.stdout.read1(65536), b""):
                buffer += chunk.decode("utf-8", "replace")
                while True:
                    text = buffer.lstrip()
                    if not text:
                        buffer = ""
                        break
                    try:
                        event, end = decoder.raw_decode(text)
                    except ValueError:
                        buffer = text  # an event cut between two reads: wait for the rest
                        break
                    buffer = text[end:]
                    self._apply(plural, event)
            if not self._stopping:
                raise RuntimeError(f"the watch of {plural} ended early (kubectl exited with {process.wait()})")
        except Exception as error:  # noqa: BLE001 - reported by the backend as an infrastructure error
            with self._changed:
                self.error = self.error or error
                self._changed.notify_all()

    def _apply(self, plural: str, event: Any) -> None:
        kind_type, obj = event.get("type"), event.get("object") or {}
        name = (obj.get("metadata") or {}).get("name")
        if kind_type not in ("ADDED", "MODIFIED", "DELETED") or not name:
            return
        with self._changed:
            if kind_type == "DELETED":
                self.objects[plural].pop(name, None)
            else:
                self.objects[plural][name] = obj
            if self.live:
                self.on_write(write_label(kind_type, PLURALS[plural], self.namespace, name), self.objects)
            self._changed.notify_all()
