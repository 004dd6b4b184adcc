"""The ingress controller: an HTTP proxy in its pod routing each request by host and path to a Service, as traefik does.

It runs as the stand-in of an ingress controller image (k3s's traefik, ingress-nginx) in its pod, so a
request reaches it through its Service (k3s's `traefik` in kube-system, port 80 to the `web` entry point)
and it reaches the backends from its pod: through the Services' ClusterIPs and the NetworkPolicies, like
any pod. It serves the Ingresses of its class (`spec.ingressClassName`, the legacy
`kubernetes.io/ingress.class` annotation, or none when its class is the default): a rule's host exactly or by
wildcard (`*.example.com`, one label), then the longest path that matches (Exact, or Prefix by path
elements; ImplementationSpecific as Prefix), else the Ingress's defaultBackend. A backend Service or port
that does not exist drops the route (404, "404 page not found" as traefik says it); a backend that does not
answer is 502 Bad Gateway. The request is forwarded with its headers and body, and X-Forwarded-* added.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from .loop import connect

LEGACY_CLASS = "kubernetes.io/ingress.class"
DEFAULT_CLASS = "ingressclass.kubernetes.io/is-default-class"
#: the largest request head and body forwarded, and how long a backend may take
MAX_HEAD, MAX_BODY = 16 * 1024, 1 << 20
BACKEND_S = 10.0
NOT_FOUND = b"HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 19\r\n" \
            b"Connection: close\r\n\r\n404 page not found\n"
BAD_GATEWAY = b"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 11\r\n" \
              b"Connection: close\r\n\r\nBad Gateway"


@dataclass(frozen=True)
class Route:
    host: str  #: "" for any host
    path: str
    exact: bool
    address: str  #: the Service's ClusterIP
    port: int


def controller_class(image: str) -> tuple[str, str]:
    """(IngressClass name, spec.controller) of an ingress controller image."""
    if "ingress-nginx" in image or "nginx-ingress" in image:
        return "nginx", "k8s.io/ingress-nginx"
    return "traefik", "traefik.io/ingress-controller"


def _serves(ingress: dict, name: str, classes: list[dict]) -> bool:
    spec = ingress.get("spec") or {}
    wanted = spec.get("ingressClassName") or (ingress["metadata"].get("annotations") or {}).get(LEGACY_CLASS)
    if wanted:
        return wanted == name
    return any(c["metadata"]["name"] == name and (c["metadata"].get("annotations") or {}).get(DEFAULT_CLASS) == "true"
               for c in classes)


def _service_port(services: dict, namespace: str, backend: dict) -> tuple[str, int] | None:
    service = (backend or {}).get("service") or {}
    svc = services.get((namespace, service.get("name", "")))
    if svc is None:
        return None
    spec = svc.get("spec") or {}
    if not spec.get("clusterIP") or spec.get("clusterIP") == "None":
        return None
    wanted = service.get("port") or {}
    for port in spec.get("ports") or []:
        if (wanted.get("number") and port.get("port") == wanted["number"]) or \
                (wanted.get("name") and port.get("name") == wanted["name"]):
            return spec["clusterIP"], int(port["port"])
    return None


def routes(ingresses: list[dict], services: list[dict], classes: list[dict], name: str) -> list[Route]:
    """The routes of every Ingress this class serves (broken backends left out), most specific first."""
    by_key = {(s["metadata"]["namespace"], s["metadata"]["name"]): s for s in services}
    found = []
    for ingress in ingresses:
        if not _serves(ingress, name, classes):
            continue
        namespace, spec = ingress["metadata"]["namespace"], ingress.get("spec") or {}
        for rule in spec.get("rules") or []:
            for path in ((rule.get("http") or {}).get("paths")) or []:
                target = _service_port(by_key, namespace, path.get("backend"))
                if target is not None:
                    found.append(Route(rule.get("host") or "", path.get("path") or "/",
                                       path.get("pathType") == "Exact", *target))
        default = _service_port(by_key, namespace, spec.get("defaultBackend") or {})
        if default is not None:
            found.append(Route("", "/", False, *default))
    return sorted(found, key=lambda r: (not r.host, r.host.startswith("*"), -len(r.path), r.exact is False))


def _host_matches(pattern: str, host: str) -> bool:
    if not pattern:
        return True
    if pattern.startswith("*."):
        head, _, rest = host.partition(".")
        return bool(head) and rest == pattern[2:]
    return pattern == host


def _path_matches(route: Route, path: str) -> bool:
    if route.exact:
        return path == route.path
    prefix = route.path.rstrip("/")
    return not prefix or path == prefix or path.startswith(prefix + "/")


def choose(table: list[Route], host: str, path: str) -> Route | None:
    host = host.split(":", 1)[0].lower()
    path = path.split("?", 1)[0] or "/"
    candidates = [r for r in table if _host_matches(r.host, host) and _path_matches(r, path)]
    if not candidates:
        return None
    # a host rule beats none; then the longest path; Exact before Prefix of the same path
    return min(candidates, key=lambda r: (not r.host, -len(r.path.rstrip("/")), not r.exact))


async def proxy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, first: bytes, namespace,
                table: Callable[[], list[Route]], client: str) -> None:
    """Answer one HTTP request that began with `first`: route it, forward it from the pod, copy the answer back."""
    head = first + await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), BACKEND_S)
    if len(head) > MAX_HEAD:
        writer.write(b"HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        return
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = (lines[0].split(" ") + ["", ""])[:3]
    headers = [line.split(":", 1) for line in lines[1:] if ":" in line]
    values = {k.strip().lower(): v.strip() for k, v in headers}
    length = int(values.get("content-length", "0") or 0) if values.get("content-length", "0").isdigit() else 0
    body = await asyncio.wait_for(reader.readexactly(min(length, MAX_BODY)), BACKEND_S) if length else b""
    route = choose(table(), values.get("host", ""), target)
    if route is None:
        writer.write(NOT_FOUND)
        return
    kept = [(k.strip(), v.strip()) for k, v in headers if k.strip().lower() not in ("connection", "keep-alive")]
    kept += [("X-Forwarded-For", client), ("X-Forwarded-Host", values.get("host", "")), ("X-Forwarded-Proto", "http"),
             ("Connection", "close")]
    request = f"{method} {target} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in kept) + "\r\n"
    try:
        sock = await connect(namespace, route.address, route.port, BACKEND_S / 2)
    except (TimeoutError, OSError):
        writer.write(BAD_GATEWAY)
        return
    try:
        upstream_reader, upstream_writer = await asyncio.open_connection(sock=sock)
        upstream_writer.write(request.encode("latin-1") + body)
        await upstream_writer.drain()
        total = 0
        while total < 16 * MAX_BODY:
            chunk = await asyncio.wait_for(upstream_reader.read(65536), BACKEND_S)
            if not chunk:
                break
            total += len(chunk)
            writer.write(chunk)
            await writer.drain()
        if total == 0:
            writer.write(BAD_GATEWAY)
        upstream_writer.close()
    except (TimeoutError, OSError, asyncio.IncompleteReadError):
        writer.write(BAD_GATEWAY)
