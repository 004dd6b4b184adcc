"""One attempt of a container's probe, as the kubelet makes it from the node: httpGet, tcpSocket, grpc or exec.

Network probes are made from the node's namespace (the kubelet's address), which NetworkPolicies do
not restrict, as on a real node. Each attempt returns (success, why) with the kubelet's wording for
the event a failure makes. A probe's `host` is the pod's spec, written by whoever wrote the pod: it is
used only as a literal IPv4 address or a name the cluster's own DNS answers, asked from the node's
namespace; nothing of it reaches the harness's resolver (no getaddrinfo: every connect is to an address).
"""

from __future__ import annotations

import asyncio
import ipaddress
import ssl

from ..sandbox import NetNamespace
from . import dns, grpc
from .loop import connect, reason

USER_AGENT = "kube-probe/1.37"


def port_of(container: dict, port) -> int | None:
    """A probe's port: a number, or the name of one of the container's ports."""
    if isinstance(port, int):
        return port
    if isinstance(port, str) and port.isdigit():
        return int(port)
    for declared in container.get("ports") or ():
        if declared.get("name") == port:
            return declared.get("containerPort")
    return None


def timeout_of(probe: dict) -> float:
    return float(probe.get("timeoutSeconds") or 1)


async def _open(node: NetNamespace, address: str, port: int, timeout: float, tls: bool = False):
    sock = await connect(node, address, port, timeout)
    context = None
    if tls:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE  # the kubelet does not verify probe certificates either
    return await asyncio.wait_for(asyncio.open_connection(sock=sock, ssl=context,
                                                          server_hostname=address if tls else None), timeout)


async def target(node: NetNamespace, host, pod_address: str, nameserver: str, timeout: float) -> tuple[str | None, str]:
    """(the address a probe connects to, "") or (None, why): the pod's own without a host, the host when it is an
    IPv4 address, else what the cluster DNS answers for it from the node (`dial tcp: lookup NAME ...: no such host`
    as the kubelet's event says when it has no answer)."""
    if not host:
        return pod_address, ""
    if isinstance(host, str):
        try:
            return str(ipaddress.IPv4Address(host)), ""
        except ValueError:
            pass
    found, why = await dns.lookup(node, nameserver, str(host), (), timeout)
    return (found, "") if found else (None, f"dial tcp: {why}")


async def network(node: NetNamespace, address: str, container: dict, probe: dict,
                  nameserver: str = "") -> tuple[bool, str]:
    """An httpGet, tcpSocket or grpc probe (exec probes are `kubelet`'s, run in a box); nameserver: the cluster DNS's
    address, which names in a probe's host are asked of."""
    timeout = timeout_of(probe)
    if "httpGet" in probe:
        spec = probe["httpGet"] or {}
        port = port_of(container, spec.get("port"))
        host, why = await target(node, spec.get("host"), address, nameserver, timeout)
        if host is None:
            return False, f'Get "{(spec.get("scheme") or "HTTP").lower()}://{spec.get("host")}:{port}' \
                          f'{spec.get("path") or "/"}": {why}'
        return await _http(node, host, port, spec, timeout)
    if "tcpSocket" in probe:
        spec = probe["tcpSocket"] or {}
        port = port_of(container, spec.get("port"))
        if port is None:
            return False, f"unknown port {spec.get('port')!r}"
        host, why = await target(node, spec.get("host"), address, nameserver, timeout)
        if host is None:
            return False, why
        try:
            sock = await connect(node, host, port, timeout)
        except TimeoutError:
            return False, f"dial tcp {host}:{port}: i/o timeout"
        except OSError as error:
            return False, f"dial tcp {host}:{port}: connect: {reason(error)}"
        sock.close()
        return True, ""
    spec = probe.get("grpc") or {}
    port = spec.get("port")
    if not isinstance(port, int):
        return False, f"invalid grpc port {port!r}"
    try:
        reader, writer = await _open(node, address, port, timeout)
    except TimeoutError:
        return False, f'timeout: failed to connect service "{address}:{port}" within {timeout:g}s'
    except OSError as error:
        return False, f'failed to connect service "{address}:{port}": {reason(error)}'
    try:
        status = await asyncio.wait_for(grpc.check(reader, writer, f"{address}:{port}", spec.get("service") or ""),
                                        timeout)
    except (TimeoutError, asyncio.IncompleteReadError, ValueError, OSError):
        status = None
    finally:
        writer.close()
    if status == grpc.SERVING:
        return True, ""
    if status is None:
        return False, f'timeout: health rpc did not complete within {timeout:g}s'
    return False, f"service unhealthy (responded with {'NOT_SERVING' if status == 2 else status})"


async def _http(node: NetNamespace, address: str, port: int | None, spec: dict, timeout: float) -> tuple[bool, str]:
    scheme = (spec.get("scheme") or "HTTP").lower()
    path = spec.get("path") or "/"
    url = f"{scheme}://{address}:{port}{path}"
    if port is None:
        return False, f"unknown port {spec.get('port')!r}"
    try:
        reader, writer = await _open(node, address, port, timeout, tls=scheme == "https")
    except TimeoutError:
        return False, f'Get "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
    except (OSError, ssl.SSLError) as error:
        return False, f'Get "{url}": dial tcp {address}:{port}: connect: {reason(error)}'
    headers = "".join(f"{h.get('name')}: {h.get('value')}\r\n" for h in spec.get("httpHeaders") or ()
                      if isinstance(h, dict))
    request = (f"GET {path} HTTP/1.1\r\nHost: {address}:{port}\r\nUser-Agent: {USER_AGENT}\r\nAccept: */*\r\n"
               f"Connection: close\r\n{headers}\r\n")
    try:
        writer.write(request.encode())
        line = await asyncio.wait_for(reader.readline(), timeout)
    except (TimeoutError, OSError, ValueError):
        return False, f'Get "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
    finally:
        writer.close()
    parts = line.decode("latin-1").split()
    if len(parts) < 2 or not parts[1].isdigit():
        return False, f'Get "{url}": EOF' if not line else f'Get "{url}": malformed HTTP response'
    code = int(parts[1])
    if 200 <= code < 400:
        return True, ""
    return False, f"HTTP probe failed with statuscode: {code}"
