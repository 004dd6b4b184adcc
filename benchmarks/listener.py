"""Our one HTTP listener: its cost per request against plain uvicorn, and what the model relay holds under a flood.

    python benchmarks/listener.py [--requests 2000] [--flood 12] [--mib 30] [--small]

1. Cost per request: a two-byte ASGI app served by plain uvicorn (as the MCP listeners were before) and by
   `serving.Listener` (the guard's counting and deadlines, HttpOnly, no upgrades), each in a process of its own;
   this process sends requests on one kept-alive connection and on a new connection each, alternating between the
   two servers in batches so that the machine's load falls on both alike. Medians, and guarded / plain.
2. The relay under a flood: a CLI box's model relay (`mcp.relay.Relay`) in a process of its own forwards to an
   upstream in this process that reads and drops every body; after a warm-up request, FLOOD posts of MIB MiB are
   sent at once; the relay process's peak resident size grows by what it held. Beside it, the same flood through a
   relay that reads each body whole before forwarding it (the design before the streamed relay).
"""

from __future__ import annotations

import argparse
import http.client
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler

SERVER = r'''
import sys, time
from pathlib import Path
kind, upstream = sys.argv[1], sys.argv[2]

async def tiny(scope, receive, send):
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})

async def whole(scope, receive, send):
    """A relay reading the body whole before forwarding it (the design before)."""
    import httpx
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    async with httpx.AsyncClient(timeout=120) as client:
        answer = await client.post(upstream + "/v1/messages", content=b"".join(chunks))
    await send({"type": "http.response.start", "status": answer.status_code,
                "headers": [(b"content-length", str(len(answer.content)).encode())]})
    await send({"type": "http.response.body", "body": answer.content})

from pytest_netarena.serving import Listener, listening_socket, url_of
sock = listening_socket()
if kind == "plain":
    import threading, uvicorn
    server = uvicorn.Server(uvicorn.Config(tiny, log_level="critical", lifespan="off", access_log=False))
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
    while not server.started:
        time.sleep(0.01)
else:
    if kind == "relay":
        from pytest_netarena.mcp.relay import ModelCall, Relay
        app = Relay("/model", upstream, {"x-api-key": "k"}, 120, calls=[ModelCall("POST", "/v1/messages")])
    else:
        app = {"guarded": tiny, "whole": whole}[kind]
    Listener(app, [sock], log_level="critical").start()
print(url_of(sock), flush=True)

def kib(field):
    return next(int(line.split()[1]) for line in Path("/proc/self/status").read_text().splitlines()
                if line.startswith(field + ":"))

for line in sys.stdin:
    if line.strip() == "reset":
        Path("/proc/self/clear_refs").write_text("5")  # the peak resident size starts again from the current one
    print(kib("VmHWM"), flush=True)
'''


class Server:
    """One of SERVER's kinds in a process of its own."""

    def __init__(self, kind: str, upstream: str = "") -> None:
        self.process = subprocess.Popen([sys.executable, "-c", SERVER, kind, upstream], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)
        self.url = self.process.stdout.readline().strip()
        if not self.url:
            raise SystemExit(f"the {kind} server did not start")
        self.port = int(self.url.rsplit(":", 1)[1])

    def peak_kib(self, reset: bool = False) -> int:
        """Its peak resident size (after starting the peak again from the current size, when reset)."""
        self.process.stdin.write("reset\n" if reset else "peak\n")
        self.process.stdin.flush()
        return int(self.process.stdout.readline())

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


def timed(port: int, count: int, kept_alive: bool) -> list[float]:
    samples = []
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    for _ in range(count):
        started = time.perf_counter()
        if not kept_alive:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request("GET", "/")
        answer = connection.getresponse()
        assert answer.read() == b"ok"
        if not kept_alive:
            connection.close()
        samples.append(time.perf_counter() - started)
    connection.close()
    return samples


def cost_per_request(requests: int) -> None:
    servers = {"plain": Server("plain"), "guarded": Server("guarded")}
    try:
        print(f"cost per request, median of {requests} (us)   plain uvicorn   guarded listener   guarded / plain")
        for kept_alive, label in ((True, "kept-alive connection"), (False, "new connection each")):
            samples: dict[str, list[float]] = {name: [] for name in servers}
            batch = max(1, min(100, requests // 10))
            for name, server in servers.items():
                timed(server.port, min(batch, 20), kept_alive)  # warm up
            while len(samples["guarded"]) < requests:
                for name, server in servers.items():
                    samples[name] += timed(server.port, min(batch, requests - len(samples[name])), kept_alive)
            plain, guarded = (statistics.median(samples[name]) * 1e6 for name in ("plain", "guarded"))
            print(f"  {label:<40} {plain:>10.0f} {guarded:>18.0f} {guarded / plain:>17.2f}x")
    finally:
        for server in servers.values():
            server.close()


class Drop(BaseHTTPRequestHandler):
    """An upstream that reads and drops a request's body and answers 200."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def handle(self) -> None:
        try:
            super().handle()
        except ConnectionError:
            pass  # the relay reset a connection it no longer needed (past its cap): not a failure of the figures

    def do_POST(self) -> None:
        left = int(self.headers.get("Content-Length") or 0)
        while left:
            chunk = self.rfile.read(min(left, 1 << 16))
            if not chunk:
                return
            left -= len(chunk)
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")


def post(port: int, path: str, mib: int, statuses: list[str]) -> None:
    """One post of `mib` MiB on a fresh connection; its status joins `statuses` ("cut" when the server answered and
    closed before reading the body: 429 past the relay's requests in flight, which the sender sees as a reset)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=120) as sock:
            sock.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         f"Content-Length: {mib << 20}\r\nConnection: close\r\n\r\n".encode())
            block = b" " * (1 << 20)
            for _ in range(mib):
                sock.sendall(block)
            statuses.append(sock.recv(64).split(b" ")[1].decode())
    except (OSError, IndexError):
        statuses.append("cut")


def flood(flood_count: int, mib: int) -> None:
    from pytest_netarena.testing.local_http import BackgroundServer

    upstream = BackgroundServer(Drop, name="benchmark-upstream")
    grown = {}
    try:
        for kind, path in (("relay", "/model/v1/messages"), ("whole", "/model/v1/messages")):
            server = Server(kind, upstream.url)
            try:
                post(server.port, path, 1, [])  # warm up: what any relayed request loads
                before = server.peak_kib(reset=True)
                statuses: list[str] = []
                threads = [threading.Thread(target=post, args=(server.port, path, mib, statuses))
                           for _ in range(flood_count)]
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join()
                grown[kind] = (server.peak_kib() - before) / 1024
                counts = ", ".join(f"{statuses.count(status)}x {status}" for status in sorted(set(statuses)))
                name = "streamed relay" if kind == "relay" else "a relay reading each body whole"
                print(f"  {name} grew by {grown[kind]:.1f} MiB ({counts})")
            finally:
                server.close()
    finally:
        upstream.stop()
    print(f"  whole / streamed = {grown['whole'] / max(grown['relay'], 0.1):.1f}x")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000, help="requests timed per server and kind (default 2000)")
    parser.add_argument("--flood", type=int, default=12, help="posts sent at once to the relay (default 12)")
    parser.add_argument("--mib", type=int, default=30, help="MiB per post (default 30)")
    parser.add_argument("--small", action="store_true", help="the smallest sizes: 40 requests, 3 posts of 2 MiB")
    args = parser.parse_args()
    if args.small:
        args.requests, args.flood, args.mib = 40, 3, 2
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    cost_per_request(args.requests)
    print(f"relay under a flood of {args.flood} x {args.mib} MiB posts at once (peak resident growth of its process):")
    flood(args.flood, args.mib)
    return 0


if __name__ == "__main__":
    sys.exit(main())
