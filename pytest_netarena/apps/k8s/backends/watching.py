"""Per-write checks on a real cluster: `kubectl get --watch` streams of the episode's policies, pods and services.

kubectl watches one resource type per process, so three run side by side, started at the episode's
first agent action and kept until its end. Each first lists what exists. An action starts once the
streams hold every object of the last reading; during it every event is a write, and the policy
engine computes the matrix of the watched objects after it. After the action the streams are
drained until they hold what a fresh listing holds, so no write of one step is counted in the next.
Events of one type arrive in order; events of two types (a pod relabelled while a policy changes)
may interleave slightly differently than on the server.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from ..writes import write_label

PLURALS = {"networkpolicies": "NetworkPolicy", "pods": "Pod", "services": "Service"}
READY_TIMEOUT_S = 10.0
DRAIN_TIMEOUT_S = 5.0

OnWrite = Callable[[str, dict[str, dict[str, dict]]], None]


class ClusterWatch:
    """The watched objects of one namespace (plural -> name -> object), kept current from the streams;
    while an action is followed, on_write(label, objects) after each write, under the watch's lock."""

    def __init__(self, argv: list[str], env: Mapping[str, str], namespace: str) -> None:
        self.argv, self.env, self.namespace = argv, dict(env), namespace
        self.objects: dict[str, dict[str, dict]] = {plural: {} for plural in PLURALS}
        self.lock = threading.Lock()
        self.error: BaseException | None = None
        self._on_write: OnWrite | None = None  #: set while an action is followed: events are its writes
        self._stopping = False
        self._changed = threading.Condition(self.lock)
        self._processes: list[subprocess.Popen] = []
        self._threads: list[threading.Thread] = []

    def start(self) -> ClusterWatch:
        for plural in PLURALS:
            process = subprocess.Popen(
                [*self.argv, "get", plural, "-n", self.namespace, "--watch", "-o", "json", "--output-watch-events"],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=self.env)
            self._processes.append(process)
            thread = threading.Thread(target=self._read, args=(plural, process), daemon=True,
                                      name=f"netarena-watch-{plural}")
            thread.start()
            self._threads.append(thread)
        return self

    def follow(self, on_write: OnWrite, names: Mapping[str, set[str]],
               on_ready: Callable[[dict[str, dict[str, dict]]], None]) -> bool:
        """Wait until the streams hold every object named (plural -> names: the last reading), call
        on_ready(objects) (the state before the action), then report every event to on_write until
        unfollow(); False when the streams did not list them in time or failed (nothing is reported)."""
        ready = self._wait(lambda: all(set(names.get(p, ())) <= set(self.objects[p]) for p in PLURALS),
                           READY_TIMEOUT_S)
        if ready:
            with self.lock:
                on_ready(self.objects)
                self._on_write = on_write
        return ready

    def unfollow(self, versions: Mapping[str, dict[str, str]]) -> None:
        """Drain: wait until the streams hold exactly these objects (plural -> name -> resourceVersion, a
        listing made after the action), then stop reporting."""
        def caught_up() -> bool:
            return all({name: obj["metadata"].get("resourceVersion") for name, obj in self.objects[p].items()}
                       == dict(versions.get(p, {})) for p in PLURALS)

        self._wait(caught_up, DRAIN_TIMEOUT_S)
        with self.lock:
            self._on_write = None

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
            if self._on_write is not None:
                self._on_write(write_label(kind_type, PLURALS[plural], self.namespace, name), self.objects)
            self._changed.notify_all()
