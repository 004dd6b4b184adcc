"""Cluster DNS: the records Kubernetes' DNS spec gives Services and pods, answered over UDP and TCP.

It runs as the stand-in of the `coredns` image, in the kube-dns pods of kube-system, so a pod reaches
it through the kube-dns Service's ClusterIP like any Service, and NetworkPolicies decide whether it
may (a policy that isolates a pod's egress must admit UDP and TCP 53 to kube-dns). Records:
`SERVICE.NAMESPACE.svc.cluster.local` (the ClusterIP, or the ready pods' addresses of a headless
Service), `HOSTNAME.SERVICE.NAMESPACE.svc.cluster.local` (a headless Service's pod that names it as its
subdomain, a StatefulSet's), `A-B-C-D.NAMESPACE.pod.cluster.local`. Names outside the cluster domain get SERVFAIL
(there is no upstream resolver); AAAA and other types of known names answer with no records.
"""

from __future__ import annotations

import asyncio
import ipaddress
import random
import re
import struct
import time
from collections.abc import Iterable, Mapping, Sequence

from .loop import DatagramReplies

DOMAIN = "cluster.local"
TTL = 5
A, AAAA = 1, 28
NOERROR, SERVFAIL, NXDOMAIN, NOTIMP, FORMERR = 0, 2, 3, 4, 1
#: a name a resolver would ask for (letters, digits, '-' and '_' in labels, an optional final dot); others never are
NAME = re.compile(r"^(?=.{1,253}\.?$)[A-Za-z0-9_]([-A-Za-z0-9_]{0,61}[A-Za-z0-9_])?"
                  r"(\.[A-Za-z0-9_]([-A-Za-z0-9_]{0,61}[A-Za-z0-9_])?)*\.?$")
#: queries answered per second at most (beyond: dropped unread, so a flood costs the harness nothing)
RATE = 2000
MAX_QUERY = 512


def _ipv4(text) -> str | None:
    """An IPv4 address in its plain form, or None: nothing else is ever answered."""
    try:
        return str(ipaddress.IPv4Address(text)) if isinstance(text, str) else None
    except ValueError:
        return None


def records(services: Iterable[Mapping], slices: Iterable[Mapping], pods: Iterable[Mapping]) -> dict[str, tuple[str, ...]]:
    """name (lower case, no trailing dot) -> IPv4 addresses, from the store's Services, EndpointSlices and pods (a
    value that is no IPv4 address is left out)."""
    ready: dict[tuple[str, str], set[str]] = {}
    hosts: dict[str, tuple[str, ...]] = {}  #: HOSTNAME.SERVICE.NAMESPACE.svc.cluster.local of headless endpoints
    for item in slices:
        meta = item.get("metadata") or {}
        name = (meta.get("labels") or {}).get("kubernetes.io/service-name")
        if not name:
            continue
        for endpoint in item.get("endpoints") or []:
            if isinstance(endpoint, Mapping) and (endpoint.get("conditions") or {}).get("ready") is not False:
                found = [a for a in (_ipv4(text) for text in endpoint.get("addresses") or ()) if a]
                ready.setdefault((meta.get("namespace", ""), name), set()).update(found)
                hostname = endpoint.get("hostname")
                if isinstance(hostname, str) and hostname and found:
                    hosts[f"{hostname}.{name}.{meta.get('namespace', '')}.svc.{DOMAIN}".lower()] = tuple(found[:1])
    table: dict[str, tuple[str, ...]] = {}
    for svc in services:
        meta, spec = svc.get("metadata") or {}, svc.get("spec") or {}
        key = (meta.get("namespace", ""), meta.get("name", ""))
        name = f"{key[1]}.{key[0]}.svc.{DOMAIN}"
        cluster_ip = spec.get("clusterIP")
        if cluster_ip and cluster_ip != "None":
            if _ipv4(cluster_ip):
                table[name] = (_ipv4(cluster_ip),)
        elif cluster_ip == "None":
            table[name] = tuple(sorted(ready.get(key, ())))
            for host, found in hosts.items():
                if host.endswith(f".{name}"):
                    table[host] = found
    for pod in pods:
        address = _ipv4((pod.get("status") or {}).get("podIP"))
        if address:
            table[f"{address.replace('.', '-')}.{pod['metadata'].get('namespace', '')}.pod.{DOMAIN}"] = (address,)
    return table


def _question(query: bytes) -> tuple[str, int, int]:
    """(name, type, end offset of the question) of a query; ValueError when it is not one."""
    offset, labels = 12, []
    while True:
        if offset >= len(query):
            raise ValueError("truncated name")
        length = query[offset]
        offset += 1
        if length == 0:
            break
        if length > 63 or offset + length > len(query):
            raise ValueError("bad label")
        labels.append(query[offset:offset + length].decode("ascii", "replace"))
        offset += length
    if offset + 4 > len(query):
        raise ValueError("truncated question")
    kind, _ = struct.unpack_from("!HH", query, offset)
    return ".".join(labels).lower(), kind, offset + 4


def answer(query: bytes, table: Mapping[str, tuple[str, ...]]) -> bytes | None:
    """The response to one query message (None: not worth answering)."""
    if len(query) < 12 or len(query) > MAX_QUERY:
        return None
    ident, flags, questions = struct.unpack_from("!HHH", query)
    if flags & 0x8000:  # a response, not a query
        return None
    recursion = flags & 0x0100
    if questions != 1 or (flags >> 11) & 0xF:
        return struct.pack("!HHHHHH", ident, 0x8000 | recursion | 0x0080 | NOTIMP, 0, 0, 0, 0)
    try:
        name, kind, end = _question(query)
    except ValueError:
        return struct.pack("!HHHHHH", ident, 0x8000 | recursion | FORMERR, 0, 0, 0, 0)
    question = query[12:end]
    inside = name == DOMAIN or name.endswith("." + DOMAIN)
    known = name in table or any(key.endswith("." + name) for key in table) if inside else False
    if not inside:
        code, found = SERVFAIL, ()
    elif not known:
        code, found = NXDOMAIN, ()
    else:
        code, found = NOERROR, table.get(name, ()) if kind == A else ()
    header = struct.pack("!HHHHHH", ident, 0x8000 | 0x0400 * inside | recursion | 0x0080 | code, 1, len(found), 0, 0)
    body = b"".join(struct.pack("!HHHIH", 0xC00C, A, 1, TTL, 4) + ipaddress.IPv4Address(address).packed
                    for address in found)
    return header + question + body


class Responder:
    """The DNS server of one kube-dns pod: records come from `table()`, a call made per query."""

    def __init__(self, table) -> None:
        self.table = table
        self._window = (0.0, 0)

    def allow(self) -> bool:
        now = time.monotonic()
        start, count = self._window
        if now - start >= 1.0:
            self._window = (now, 1)
            return True
        if count >= RATE:
            return False
        self._window = (start, count + 1)
        return True

    def datagram_protocol(self) -> DatagramReplies:
        return DatagramReplies(lambda query: answer(query, self.table()) if self.allow() else None)

    async def serve_tcp(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            for _ in range(16):  # queries on one connection
                size = int.from_bytes(await asyncio.wait_for(reader.readexactly(2), 5), "big")
                query = await asyncio.wait_for(reader.readexactly(size), 5)
                if not self.allow():
                    return
                reply = answer(query, self.table())
                if reply is None:
                    return
                writer.write(len(reply).to_bytes(2, "big") + reply)
                await writer.drain()
        except (TimeoutError, asyncio.IncompleteReadError, OSError):
            pass
        finally:
            writer.close()


async def lookup(namespace, nameserver: str, name: str, search: Sequence[str] = (),
                 timeout: float = 2.0) -> tuple[str | None, str]:
    """(the first IPv4 address the cluster DNS gives for name, "") or (None, why as Go's resolver words it), asked
    from a socket in `namespace` (a pod's, or the node's); with search domains as a stub resolver with ndots:5 tries
    them. A string that is no name is never sent."""
    from .loop import udp_socket

    if not NAME.match(name):
        return None, f"lookup {name}: no such host"
    name = name.rstrip(".")
    candidates = [f"{name}.{domain}" for domain in search] if name.count(".") < 4 else []
    candidates.append(name)
    loop = asyncio.get_running_loop()
    for candidate in candidates:
        sock = udp_socket(namespace)
        try:
            await loop.sock_connect(sock, (nameserver, 53))
            await loop.sock_sendall(sock, query(candidate, random.randrange(1 << 16)))
            reply = await asyncio.wait_for(loop.sock_recv(sock, 1500), timeout)
            code, found = addresses(reply)
        except TimeoutError:
            return None, f"lookup {name} on {nameserver}:53: read udp: i/o timeout"
        except (OSError, ValueError, IndexError, struct.error) as error:
            return None, f"lookup {name} on {nameserver}:53: {error}"
        finally:
            sock.close()
        if found:
            return found[0], ""
        if code == SERVFAIL:
            return None, f"lookup {name} on {nameserver}:53: server misbehaving"
    return None, f"lookup {name} on {nameserver}:53: no such host"


def query(name: str, ident: int) -> bytes:
    """An A query for name, recursion desired (what a stub resolver sends)."""
    labels = b"".join(bytes([len(part)]) + part.encode() for part in name.strip(".").split(".") if part)
    return struct.pack("!HHHHHH", ident, 0x0100, 1, 0, 0, 0) + labels + b"\x00" + struct.pack("!HH", A, 1)


def addresses(reply: bytes) -> tuple[int, list[str]]:
    """(response code, IPv4 addresses of the A records) of a reply to query()."""
    if len(reply) < 12:
        raise ValueError("a truncated reply")
    _, flags, questions, count, _, _ = struct.unpack_from("!HHHHHH", reply)
    offset = _question(reply)[2] if questions == 1 else 12
    found = []
    for _ in range(count):
        if reply[offset] & 0xC0 == 0xC0:
            offset += 2
        else:
            while reply[offset]:
                offset += reply[offset] + 1
            offset += 1
        kind, _, _, length = struct.unpack_from("!HHIH", reply, offset)
        offset += 10
        if kind == A and length == 4:
            found.append(".".join(str(b) for b in reply[offset:offset + 4]))
        offset += length
    return flags & 0xF, found
