"""The netarena link: an execnet channel beside xdist's own, from the controller to each worker.

The controller opens it in `pytest_configure_node`, before xdist starts its worker code on the
same gateway, so it works for local (`-n`) and remote (`--tx ssh=...`) workers alike and needs
no shared disk. Workers call the controller (`call`: budget, resume, found cases, the Hypothesis
database) and tell it things (`tell`: host facts, collection); the controller pushes work ahead
(`push`: items a worker will run, so it can start several episodes at once).

Messages are tuples of execnet-serializable values:
worker -> controller ("call", id, op, args) | ("tell", 0, op, args);
controller -> worker ("reply", id, ok, value) | ("push", 0, op, args).
"""

from __future__ import annotations

import itertools
import sys
import threading
from collections.abc import Callable
from typing import Any

#: where the worker side parks the channel until the plugin picks it up
LINK_MODULE = "netarena_controller_link"

# Runs in the worker's interpreter before xdist's remote code. xdist's main_thread_only execmodel
# runs one remote_exec at a time, so this must return at once; and execnet closes a remote_exec's
# channel when its code returns, so it hands the controller a new channel and parks that one.
REMOTE_SOURCE = f"""
import sys, types
module = sys.modules.setdefault({LINK_MODULE!r}, types.ModuleType({LINK_MODULE!r}))
module.channel = channel.gateway.newchannel()
channel.send(module.channel)
"""

CALL_TIMEOUT_S = 300.0


class LinkError(RuntimeError):
    """The controller refused a call, or the link is gone."""


def open_link(gateway: Any, handle: Callable[[str, str, tuple], Any]) -> Any:
    """Controller side: open the link on a worker's gateway; `handle(kind, op, args)` answers calls.

    The handler runs in execnet's receiver thread of that gateway: it must be quick and thread-safe.
    """
    channel = gateway.remote_exec(REMOTE_SOURCE).receive(timeout=60)

    def receive(message: Any) -> None:
        try:
            kind, ident, op, args = message
        except (TypeError, ValueError):
            return
        try:
            value = handle(kind, op, tuple(args))
            if kind == "call":
                channel.send(("reply", ident, True, value))
        except Exception as error:  # the worker raises it as a LinkError; the controller goes on
            if kind == "call":
                channel.send(("reply", ident, False, f"{type(error).__name__}: {error}"))

    channel.setcallback(receive, endmarker=None)
    return channel


def push(channel: Any, op: str, *args: Any) -> None:
    """Controller side: send work ahead to a worker (never raises: a dead worker is xdist's business)."""
    try:
        channel.send(("push", 0, op, args))
    except Exception:
        pass


class LinkClient:
    """Worker side: calls into the controller from any thread; pushes go to registered handlers."""

    def __init__(self, channel: Any) -> None:
        self.channel = channel
        self._ids = itertools.count(1)
        self._waiting: dict[int, list[Any]] = {}
        self._lock = threading.Lock()
        self._closed = False
        self.on_push: dict[str, Callable[..., None]] = {}
        self._early: list[tuple[str, tuple]] = []  # pushes that came before their handler
        channel.setcallback(self._receive, endmarker=None)

    def call(self, op: str, *args: Any, timeout: float = CALL_TIMEOUT_S) -> Any:
        ident = next(self._ids)
        slot: list[Any] = [threading.Event(), None, None]
        with self._lock:
            if self._closed:
                raise LinkError("the link to the netarena controller is closed")
            self._waiting[ident] = slot
        self.channel.send(("call", ident, op, args))
        if not slot[0].wait(timeout):
            with self._lock:
                self._waiting.pop(ident, None)
            raise LinkError(f"the netarena controller did not answer {op!r} within {timeout:g} s")
        ok, value = slot[1], slot[2]
        if not ok:
            raise LinkError(f"the netarena controller refused {op!r}: {value}")
        return value

    def tell(self, op: str, *args: Any) -> None:
        self.channel.send(("tell", 0, op, args))

    def handle_pushes(self, op: str, handler: Callable[..., None]) -> None:
        with self._lock:
            self.on_push[op] = handler
            early = [args for name, args in self._early if name == op]
            self._early = [(name, args) for name, args in self._early if name != op]
        for args in early:
            handler(*args)

    def _receive(self, message: Any) -> None:
        if message is None:  # the channel closed: nobody will answer any more
            with self._lock:
                self._closed = True
                waiting, self._waiting = self._waiting, {}
            for slot in waiting.values():
                slot[1], slot[2] = False, "the link closed"
                slot[0].set()
            return
        kind, ident, first, rest = message
        if kind == "reply":
            with self._lock:
                answered = self._waiting.pop(ident, None)
            if answered is not None:
                answered[1], answered[2] = first, rest
                answered[0].set()
        elif kind == "push":
            with self._lock:
                handler = self.on_push.get(first)
                if handler is None:
                    self._early.append((first, tuple(rest)))
                    return
            handler(*rest)


def worker_link() -> LinkClient | None:
    """The link this worker process was given by its controller, or None (not an xdist worker of ours)."""
    module = sys.modules.get(LINK_MODULE)
    if module is None:
        return None
    client = getattr(module, "client", None)
    if client is None and getattr(module, "channel", None) is not None:
        client = LinkClient(module.channel)
        setattr(module, "client", client)  # noqa: B010 (the execnet module is made at run time: mypy sees no such field)
    return client
