"""The cluster's event loop: one thread serving every stand-in, the DNS, probes and timers, with sockets made in pod namespaces."""

from __future__ import annotations

import asyncio
import concurrent.futures
import errno
import ipaddress
import socket
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

from ..sandbox import NetNamespace

T = TypeVar("T")


class DatagramReplies(asyncio.DatagramProtocol):
    """A UDP listener that answers each datagram with reply(datagram), or not at all when that is None."""

    def __init__(self, reply: Callable[[bytes], bytes | None]) -> None:
        self.reply = reply
        self.transport: asyncio.DatagramTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # a datagram endpoint's transport, though Python 3.11's selector transport does not subclass DatagramTransport
        self.transport = cast(asyncio.DatagramTransport, transport)

    def datagram_received(self, data: bytes, address: tuple[str | Any, int]) -> None:
        answer = self.reply(data)
        if answer is not None and self.transport is not None:
            self.transport.sendto(answer, address)


class Loop:
    """An asyncio loop on a daemon thread; call `submit` from any thread, `stop` once."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="netarena-cluster-loop", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def submit(self, coroutine: Awaitable[T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop)

    def call(self, function: Callable[[], T]) -> None:
        """function() soon, in the loop's thread."""
        self.loop.call_soon_threadsafe(function)

    def run(self, coroutine: Awaitable[T], timeout: float | None = None) -> T:
        return self.submit(coroutine).result(timeout)

    def stop(self) -> None:
        if not self.loop.is_running():
            return

        async def cancel_all() -> None:
            tasks = [t for t in asyncio.all_tasks(self.loop) if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        try:
            self.submit(cancel_all()).result(5)
        except (concurrent.futures.TimeoutError, RuntimeError):
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)
        self.loop.close()


def tcp_socket(namespace: NetNamespace) -> socket.socket:
    sock = namespace.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setblocking(False)
    return sock


def udp_socket(namespace: NetNamespace) -> socket.socket:
    sock = namespace.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setblocking(False)
    return sock


def listener(namespace: NetNamespace, port: int, kind: int = socket.SOCK_STREAM) -> socket.socket:
    """A socket bound to 0.0.0.0:port inside the namespace (listening, for TCP)."""
    sock = namespace.socket(socket.AF_INET, kind)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("0.0.0.0", port))
        if kind == socket.SOCK_STREAM:
            sock.listen(64)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


async def connect(namespace: NetNamespace, address: str, port: int, timeout: float) -> socket.socket:
    """A TCP connection made from inside the namespace to an IPv4 address (raises OSError or TimeoutError).

    Never a name: asyncio would resolve it with getaddrinfo, in the harness's namespace with the host's resolver."""
    try:
        ipaddress.IPv4Address(address)
    except ValueError:
        raise OSError(errno.EINVAL, f"not an IPv4 address: {address!r}") from None
    loop = asyncio.get_running_loop()
    sock = tcp_socket(namespace)
    try:
        await asyncio.wait_for(loop.sock_connect(sock, (address, port)), timeout)
    except BaseException:
        sock.close()
        raise
    return sock


def reason(error: OSError) -> str:
    """An OSError as Go words it after `connect:` ("connection refused", "no route to host")."""
    import os

    if error.errno:
        return os.strerror(error.errno).lower()
    return (error.strerror or str(error)).lower()
