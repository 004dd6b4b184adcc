"""Stand-ins for images we cannot run: servers in the pod's network namespace, served by the cluster's loop.

A stand-in listens on its container's ports inside the pod's namespace (sockets the harness made
there), so every packet to it crosses the node's Service and NetworkPolicy rules like any other. On
each connection it reads what the client speaks first: HTTP (nginx's default server, Online
Boutique's frontend, a health answer), gRPC (HTTP/2: every call answered as a SERVING health check),
Redis (`PING`), or the harness's identity challenge (`NETARENA-PROBE nonce`), answered with an HMAC
only the harness's key makes, so no other process can pass for this pod. Online Boutique's services
also call the services they depend on, through the cluster's DNS and Services, and log each failure
as the real service would ("could not reach cartservice:7070: ...").
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import random
import socket
import time
from dataclasses import dataclass

from ..sandbox import NetNamespace
from . import dns, grpc, ingress, pages
from .images import BOUTIQUE_LANGUAGE, Image
from .logs import ContainerLog, rfc3339
from .loop import DatagramReplies, Loop, connect, listener, reason

PROBE = b"NETARENA-PROBE "
#: connections one stand-in serves at once, bytes read before the first answer, seconds a client may idle
MAX_CONNECTIONS = 64
MAX_REQUEST = 16 * 1024
IDLE_S = 10.0
#: how often a service calls its dependencies, and how long one call may take
CALL_PERIOD_S = 10.0
CALL_TIMEOUT_S = 1.0


class Identity:
    """The harness's key: answers to identity challenges that only the pod's own stand-in gives."""

    def __init__(self) -> None:
        self.key = random.SystemRandom().randbytes(32)

    def sign(self, nonce: bytes, pod: str, uid: str) -> str:
        return hmac.new(self.key, nonce + b"|" + f"{pod}|{uid}".encode(), hashlib.sha256).hexdigest()

    def answer(self, nonce: bytes, pod: str, uid: str) -> bytes:
        return f"NETARENA-POD {pod} {uid} {self.sign(nonce, pod, uid)}\n".encode()

    def verify(self, nonce: bytes, reply: bytes) -> tuple[str, str] | None:
        """(pod, uid) a reply proves it came from, or None for a reply no stand-in of ours made."""
        parts = reply.decode(errors="replace").split()
        if len(parts) != 4 or parts[0] != "NETARENA-POD":
            return None
        _, pod, uid, signature = parts
        return (pod, uid) if hmac.compare_digest(signature, self.sign(nonce, pod, uid)) else None


@dataclass(frozen=True)
class PodContext:
    """What a stand-in knows of its pod."""

    namespace: NetNamespace
    key: str  #: namespace/name
    uid: str
    nameserver: str
    search: tuple[str, ...]


def complaint(service: str, target: str, why: str) -> str:
    """How a service says it cannot reach a dependency, in its language's logging style."""
    text = f"could not reach {target}: {why}"
    language = BOUTIQUE_LANGUAGE.get(service, "go")
    if language == "go":
        return json.dumps({"message": text, "severity": "warning", "timestamp": rfc3339(time.time())})
    if language in ("node", "python"):
        return json.dumps({"timestamp": rfc3339(time.time()), "severity": "WARNING", "name": f"{service}-server",
                           "message": text})
    if language == "csharp":
        return f"warn: {service}[0]\n      {text}"
    return f"{time.strftime('%H:%M:%S')} WARN  [main] {service}: {text}"


class StandIn:
    """One stand-in container: its listeners, and for Online Boutique its calls to its dependencies."""

    def __init__(self, loop: Loop, pod: PodContext, container: dict, image: Image, log: ContainerLog,
                 identity: Identity, calls: tuple[str, ...] = (), resolver: dns.Responder | None = None,
                 files=None, routes=None) -> None:
        """files: the container's file system as nginx serves it (files.ContainerFiles); routes: an ingress
        controller's routing table, read per request (ingress.routes)."""
        self.loop, self.pod, self.container, self.image, self.log = loop, pod, container, image, log
        self.identity, self.calls, self.resolver, self.files, self.routes = identity, calls, resolver, files, routes
        self._servers: list = []
        self._sockets: list[tuple[socket.socket, int]] = []
        self._tasks: list[asyncio.Task] = []
        self._busy = 0

    def ports(self) -> list[tuple[int, str]]:
        declared = [(int(p["containerPort"]), p.get("protocol") or "TCP") for p in self.container.get("ports") or ()
                    if isinstance(p.get("containerPort"), int)]
        if self.image.kind == "nginx":
            return [(80, "TCP")]
        if self.image.kind == "coredns":
            return sorted({(53, "UDP"), (53, "TCP"), (8080, "TCP"), (8181, "TCP"), *declared})
        if self.image.kind == "redis" and not declared:
            return [(6379, "TCP")]
        if self.image.kind == "ingress" and not declared:
            return [(8000, "TCP"), (8443, "TCP")] if "traefik" in str(self.container.get("image")) else [(80, "TCP")]
        return declared

    def start(self) -> None:
        """Bind every port (OSError if one is taken) and start serving."""
        try:
            for port, protocol in self.ports():
                if protocol in ("TCP", "UDP"):
                    kind = socket.SOCK_STREAM if protocol == "TCP" else socket.SOCK_DGRAM
                    self._sockets.append((listener(self.pod.namespace, port, kind), port))
        except OSError:
            self.close_sockets()
            raise
        self.loop.run(self._serve(), timeout=10)
        for port, protocol in self.ports():
            self.log.line(self._started_line(port, protocol))

    def _started_line(self, port: int, protocol: str) -> str:
        kind = self.image.kind
        if kind == "nginx":
            return "/docker-entrypoint.sh: Configuration complete; ready for start up"
        if kind == "redis":
            return f"1:M {time.strftime('%d %b %Y %H:%M:%S')}.000 * Ready to accept connections tcp"
        if kind == "ingress":
            return json.dumps({"level": "info", "entryPointName": f":{port}", "message": "Starting provider "
                               "*ingress.Provider", "time": rfc3339(time.time())})
        if kind == "coredns":
            return f".:{port} ({protocol})" if port == 53 else f"[INFO] listening on :{port}"
        if kind == "boutique":
            what = "http" if self.image.service == "frontend" else "gRPC"
            return json.dumps({"message": f"starting {what} server at :{port}", "severity": "info",
                               "timestamp": rfc3339(time.time())})
        return f"listening on :{port}/{protocol}"

    async def _serve(self) -> None:
        loop = asyncio.get_running_loop()
        for sock, port in self._sockets:
            dns_port = port == 53 and self.resolver is not None
            if sock.type == socket.SOCK_STREAM:
                handler = self.resolver.serve_tcp if dns_port else self._connection
                self._servers.append(await asyncio.start_server(handler, sock=sock, limit=MAX_REQUEST))
            else:
                protocol = self.resolver.datagram_protocol if dns_port else self._datagram_protocol
                transport, _ = await loop.create_datagram_endpoint(protocol, sock=sock)
                self._servers.append(transport)
        if self.calls:
            self._tasks.append(loop.create_task(self._call_dependencies()))

    def _datagram_protocol(self) -> DatagramReplies:
        def reply(data: bytes) -> bytes | None:
            if not data.startswith(PROBE):
                return None
            return self.identity.answer(data[len(PROBE):].strip(), self.pod.key, self.pod.uid)

        return DatagramReplies(reply)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._busy >= MAX_CONNECTIONS:
            writer.close()
            return
        self._busy += 1
        try:
            await asyncio.wait_for(self._answer(reader, writer), IDLE_S * 3)
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, OSError, ValueError):
            pass
        finally:
            self._busy -= 1
            writer.close()

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        first = await asyncio.wait_for(reader.read(len(grpc.PREFACE)), IDLE_S)
        if first.startswith(PROBE[:len(first)]) and first:
            line = first + await asyncio.wait_for(reader.readline(), IDLE_S)
            writer.write(self.identity.answer(line[len(PROBE):].strip(), self.pod.key, self.pod.uid))
        elif first == grpc.PREFACE:
            if self.image.kind in ("boutique", "generic") and self.image.service != "frontend":
                await grpc.serve(reader, writer)
        elif first.startswith(pages.METHODS) and self.image.kind == "ingress" and self.routes is not None:
            peer = writer.get_extra_info("peername") or ("", 0)
            await ingress.proxy(reader, writer, first, self.pod.namespace, self.routes, str(peer[0]))
        elif first.startswith(pages.METHODS):
            head = first + await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), IDLE_S)
            method, _, rest = head.decode("latin-1").partition(" ")
            writer.write(self._http(method, rest.split(" ", 1)[0]))
        elif self.image.kind == "redis" and first[:1] in (b"*", b"P", b"p"):
            writer.write(b"+PONG\r\n")
        await writer.drain()

    def _http(self, method: str, path: str) -> bytes:
        kind = self.image.kind
        if kind == "nginx":
            return pages.nginx(method, path, self.files)
        if kind == "boutique" and self.image.service == "frontend":
            return pages.boutique_frontend(method, path)
        if kind == "boutique":
            return b""  # a gRPC server hangs up on HTTP/1
        return pages.health(method, path)

    # -- calls to dependencies ---------------------------------------------------------------------
    async def _call_dependencies(self) -> None:
        await asyncio.sleep(random.uniform(0.2, 1.0))
        while True:
            for target in self.calls:
                try:
                    why = await self._reach(target)
                except OSError:  # the pod's network namespace is closed: the pod is stopping
                    return
                if why:
                    self.log.line(complaint(self.image.service, target, why))
            await asyncio.sleep(CALL_PERIOD_S)

    async def _reach(self, target: str) -> str:
        """Why target (NAME:PORT) cannot be reached from this pod, or "" when a connection was made."""
        name, _, port_text = target.rpartition(":")
        try:
            port = int(port_text)
        except ValueError:
            return f"address {target}: invalid port"
        address, why = await self._resolve(name)
        if address is None:
            return why
        try:
            sock = await connect(self.pod.namespace, address, port, CALL_TIMEOUT_S)
        except TimeoutError:
            return f"dial tcp {address}:{port}: i/o timeout"
        except OSError as error:
            return f"dial tcp {address}:{port}: connect: {reason(error)}"
        sock.close()
        return ""

    async def _resolve(self, name: str) -> tuple[str | None, str]:
        return await dns.lookup(self.pod.namespace, self.pod.nameserver, name, self.pod.search, CALL_TIMEOUT_S)

    # -- the end -----------------------------------------------------------------------------------
    def stop(self) -> None:
        """Stop serving and close every socket (a socket would keep the pod's namespace alive)."""
        try:
            self.loop.run(self._stop(), timeout=5)
        except Exception:  # the loop is gone already
            pass
        self.close_sockets()
        self.log.close()

    async def _stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for server in self._servers:
            server.close()
        self._servers, self._tasks = [], []

    def close_sockets(self) -> None:
        for sock, _ in self._sockets:
            sock.close()
        self._sockets = []
