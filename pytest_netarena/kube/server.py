"""EmbeddedAPIServer: its HTTP(S) listeners and their threads, who sent each request, lifecycle, kubeconfigs."""

from __future__ import annotations

import os
import socket
import ssl
import sys
import tempfile
import threading
import time
import traceback
from contextlib import nullcontext
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from . import baseline, bodies, errors, handlers, limits, notices, podio, rbac, refusal_log, sessions
from .connections import TrackedConnections, hung_up
from .ops import Cluster
from .storeapi import StoreAPI
from .store import Store
from .watch import CONTENT_TYPES, stream

#: the largest request body accepted (a real API server's limit is 3 MiB too)
MAX_BODY = 3 * 1024 * 1024
#: how often a listener's loop looks for a stop request (the longest a stop waits for it)
POLL_INTERVAL_S = 0.05
#: seconds a connection may stay silent (between or inside requests) before it is closed
IDLE_TIMEOUT_S = 30.0
#: after refusing a body unread, how long the reply has to reach the client before the connection is
#: reset (Go's net/http rstAvoidanceDelay)
RST_AVOIDANCE_DELAY_S = 0.5


#: the HTTP methods that write (write_gate applies to them)
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

class _HTTPServer(TrackedConnections, ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address, handler, app, sock: socket.socket | None = None, scope: str | None = None,
                 tls: ssl.SSLContext | None = None):
        self.app = app
        self.scope = scope  #: None: full rights; else the one namespace requests on this listener act in
        self.tls = tls  #: https: credentials (token, client certificate) name the user; none is anonymous
        #: who a request without credentials is: a scoped listener's fixed identity (it ignores credentials),
        #: the admin on the plain harness listener, nobody (anonymous) on an https one
        self.identity = rbac.scoped(scope) if scope is not None else (None if tls is not None else rbac.ADMIN)
        self.track_connections()
        if sock is None:
            super().__init__(address, handler)
            return
        # a socket made elsewhere (e.g. inside a network namespace): adopt it instead of binding one
        super().__init__(sock.getsockname(), handler, bind_and_activate=False)
        self.socket.close()
        self.socket = sock
        self.server_address = sock.getsockname()
        sock.listen(self.request_queue_size)

    def get_request(self):
        conn, address = super().get_request()
        if self.tls is not None:  # the handshake happens in the connection's own thread (setup), not here
            conn = self.tls.wrap_socket(conn, server_side=True, do_handshake_on_connect=False)
        return conn, address

    def handle_error(self, request, client_address):
        kind = sys.exc_info()[0]
        if kind is not None and issubclass(kind, (ssl.SSLError, ConnectionResetError, BrokenPipeError, TimeoutError)):
            return  # a client that gave up the TLS handshake or the connection (an EOF mid-TLS): nothing to report
        super().handle_error(request, client_address)


class _APIHandler(BaseHTTPRequestHandler):
    server: _HTTPServer
    protocol_version = "HTTP/1.1"
    server_version = "netarena-kube"
    sys_version = ""
    # Headers and body go out in separate sends: with Nagle on, the body waits for the client's
    # delayed ACK (~40 ms per request, 5 s for a 35-object `kubectl apply`).
    disable_nagle_algorithm = True

    def setup(self):
        self.timeout = self.server.app.idle_timeout_s  # socket timeout: idle or slow clients are dropped
        if self.server.tls is not None:
            self.request.settimeout(self.timeout)
            self.request.do_handshake()
        super().setup()

    def log_message(self, format, *args):
        pass

    def handle_one_request(self):
        try:
            super().handle_one_request()
        finally:
            self.server.mark_waiting(self.request, True)  # answered: the next request on this connection is awaited

    def do_GET(self):
        self._serve("GET")

    def do_POST(self):
        self._serve("POST")

    def do_PUT(self):
        self._serve("PUT")

    def do_PATCH(self):
        self._serve("PATCH")

    def do_DELETE(self):
        self._serve("DELETE")

    def do_HEAD(self):
        self._serve("GET")

    def _read_body(self) -> bytes:
        """The request body, never more than MAX_BODY bytes read (chunked or not); ApiError otherwise."""
        limit = self.server.app.max_body
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks, total = [], 0
            while True:
                line = self.rfile.readline(80)
                try:
                    size = int(line.split(b";")[0].strip() or b"0", 16)
                except ValueError:
                    raise _unreadable("a chunk size is not a hexadecimal number") from None
                if size < 0:
                    raise _unreadable("a chunk size is negative")
                if size == 0:
                    while self.rfile.readline(8192).strip():  # trailers
                        pass
                    break
                total += size
                if total > limit:
                    raise _too_large(limit)
                chunks.append(self.rfile.read(size))
                self.rfile.readline(8)
            return b"".join(chunks)
        raw = self.headers.get("Content-Length")
        if raw is None:
            return b""
        try:
            length = int(raw)
        except ValueError:
            raise _unreadable("Content-Length is not a number") from None
        if length < 0 or length > limit:
            raise _too_large(limit)
        return self.rfile.read(length) if length else b""

    def _serve(self, method: str) -> None:
        app = self.server.app
        collecting = notices.begin()
        try:
            try:
                body = self._read_body()
            except errors.ApiError:
                self.close_connection = True  # the rest of the body is never read: the stream is lost
                self.refused_unread = True
                raise
            self.server.mark_waiting(self.request, False)  # the whole request is in: it is being served
            req = handlers.parse(method, self.path, dict(self.headers.items()), body)
            self._identify(app, req)
            if app.request_log is not None:
                app.request_log.append((method, self.path, req.headers.get("content-type", ""),
                                        req.headers.get("accept", "")))
            gate = app.write_gate if method in WRITE_METHODS else None
            with gate() if gate is not None else nullcontext(), limits.cpu_budget(app.request_cpu_s):
                result = app.router.handle(req)
        except errors.ApiError as error:
            result = handlers.Response(error.code, error.status())
            if isinstance(error, rbac.Denied):
                app.refusals.record(method, self.path, 403, error.message, error.user, error.attrs, error.why,
                                 self.client_address[0] if self.client_address else "")
            elif error.code == 401:
                app.refusals.record(method, self.path, 401, error.message,
                                 source=self.client_address[0] if self.client_address else "")
        except Exception as error:  # any bug becomes a 500 Status, never a dropped connection
            app.last_error = traceback.format_exc()
            result = handlers.Response(500, errors.internal(f"{type(error).__name__}: {error}").status())
        self.warnings = notices.end(collecting)
        try:
            if isinstance(result, handlers.WatchRequest):
                self._watch(app, result)
            elif isinstance(result, podio.ExecRequest):
                self.close_connection = True
                sessions.serve_exec(self, app, result)
            elif isinstance(result, podio.LogRequest):
                sessions.serve_logs(self, app, result)
            else:
                self._respond(result)
            if getattr(self, "refused_unread", False):
                self._close_write_and_wait()
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            self.close_connection = True

    def _identify(self, app, req: handlers.Request) -> None:
        """req.user: who sent it (token, client certificate or the listener), then whom it impersonates."""
        from . import identity

        peer = self.connection.getpeercert() if self.server.tls is not None else None
        user = identity.authenticate(app.store, req.headers, self.server.identity, peer)
        if self.headers.get("Impersonate-User") or self.headers.get("Impersonate-Group"):
            asked = dict(req.headers)
            asked["impersonate-group"] = ",".join(self.headers.get_all("Impersonate-Group") or [])
            user = identity.impersonate(app.store, user, asked)
        req.user = user

    def _close_write_and_wait(self) -> None:
        """After a reply to a body left unread: send a FIN and wait a moment before the close, which resets
        the connection (unread data) and would make the client's kernel drop a reply it has not read yet.
        Go's net/http, and so a real API server, does the same (closeWriteAndWait)."""
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_WR)
        except OSError:  # the client is gone already
            return
        time.sleep(RST_AVOIDANCE_DELAY_S)

    def _respond(self, result: handlers.Response) -> None:
        body = result.body
        if isinstance(body, (dict, list)):
            payload = handlers.dumps(body)
        elif isinstance(body, str):
            payload = body.encode()
        elif isinstance(body, bytes):
            payload = body
        else:  # None
            payload = b""
        self.send_response(result.code)
        self.send_header("Content-Type", result.content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Cache-Control", result.headers.pop("Cache-Control", "no-cache, private"))
        for key, value in result.headers.items():
            self.send_header(key, value)
        for warning in getattr(self, "warnings", ()):
            self.send_header("Warning", notices.header(warning))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    def _watch(self, app, watch: handlers.WatchRequest) -> None:
        header_sent = [False]

        def send_headers() -> None:
            if not header_sent[0]:
                self.send_response(200)
                self.send_header("Content-Type", CONTENT_TYPES[watch.table])
                self.send_header("Transfer-Encoding", "chunked")
                self.send_header("Cache-Control", "no-cache, private")
                self.end_headers()
                header_sent[0] = True

        def write_chunk(data: bytes) -> None:
            send_headers()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        try:  # the watch ends with the server, or when its client hung up
            stream(app, watch, write_chunk, send_headers,
                   alive=lambda: not self.server.closing and not hung_up(self.connection))
        except errors.ApiError as error:
            if not header_sent[0]:
                self._respond(handlers.Response(error.code, error.status()))
                return
            write_chunk(handlers.dumps({"type": "ERROR", "object": error.status()}) + b"\n")
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            self.close_connection = True
            return
        except Exception as error:
            app.last_error = traceback.format_exc()
            if not header_sent[0]:
                self._respond(handlers.Response(500, errors.internal(str(error)).status()))
                return
        send_headers()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        self.close_connection = True


def _too_large(limit: int) -> errors.ApiError:
    return errors.entity_too_large(f"limit is {limit}")


def _unreadable(why: str) -> errors.ApiError:
    return errors.bad_request(f"the request body cannot be read: {why}")


class EmbeddedAPIServer(StoreAPI):
    """An in-process Kubernetes API server that kubectl and the kubernetes client can talk to."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, controllers: bool = True,
                 minor: int | None = None, request_log: bool = False, sock: socket.socket | None = None,
                 scope: str | None = None, tls: bool = False, audit_log: str | None = None,
                 nodes: list | None = None, profile=None):
        """sock: a bound socket to listen on (e.g. made inside a network namespace) instead of host:port.

        scope: None serves every request with full rights (the harness's own server); a namespace name
        makes every request of this listener act as an identity bound to that namespace only (RBAC-like:
        403 Forbidden elsewhere). kubectl sends no bearer token over plain HTTP, so the identity is the
        listener itself: the episode's box can reach no other socket of the server.

        tls: the main listener speaks https with a certificate of this server's own CA; there requests are
        who their bearer token (a ServiceAccount's) or client certificate (the admin kubeconfig's) says,
        authorized by the stored RBAC objects, and anonymous without either (docs/kube.md, "Identities").
        audit_log: a file the refused requests are appended to (audit.k8s.io Events, one JSON per line).
        nodes: the cluster's nodes (kube.nodes.NodeSpec; one node when None); profile: a kube.k3s.Profile, whose
        bundled objects (traefik, the local-path StorageClass, ...) the cluster starts with."""
        from .pki import Authority

        self.scope = scope
        self.tls = tls
        self.authority = Authority.create()  #: the CA, certificates and token key (a few ms)
        self.refusals = refusal_log.RefusalLog(audit_log)
        self.host, self.port = host, port
        self._sock = sock
        if sock is not None:
            self.host, self.port = sock.getsockname()[:2]
        self.max_body = MAX_BODY
        self.idle_timeout_s = IDLE_TIMEOUT_S
        self.request_cpu_s = limits.REQUEST_CPU_S  #: CPU seconds one HTTP request may spend (None: unbounded)

        self.store = Store()
        self.store.authority = self.authority
        self.cluster = Cluster(self.store, controllers=controllers)
        self.router = handlers.Router(self)
        self._minor = minor
        self._listeners: list[tuple[_HTTPServer, threading.Thread]] = []  #: the main one first
        self._kubeconfig: str | None = None
        self._tmpdir: str | None = None
        self.stopping = False
        self.last_error: str | None = None
        self.request_log: list | None = [] if request_log else None
        #: when set, every HTTP write request (POST, PUT, PATCH, DELETE) is served inside write_gate(): the k8s
        #: app admits one at a time while it judges each write (an ApiError raised there is the answer)
        self.write_gate = None
        #: what runs the pods (podio.PodRuntime, e.g. pytest_netarena.cluster.LiveCluster); None: this server
        #: only stores them (`kubectl exec` and `logs` answer that it runs no pods)
        self.runtime = None
        self.profile = profile  #: the k3s profile (kube.k3s.Profile) it was started with, None: plain Kubernetes
        baseline.load(self.cluster, nodes, profile)
        self.store.snapshot()

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> EmbeddedAPIServer:
        if self._listeners:
            return self
        self.port = self._serve(_HTTPServer((self.host, self.port), _APIHandler, self, self._sock, self.scope,
                                            self._context() if self.tls else None))[1]
        return self

    def listen(self, host: str = "127.0.0.1", port: int = 0, sock: socket.socket | None = None,
               scope: str | None = None, tls: bool = False, small_clients: bool = False) -> str:
        """Serve on one more listener (e.g. the harness's own, unscoped, on the host while the main one is
        scoped inside a network namespace, or an https one beside a plain one); returns its URL. Stopped
        with the server. small_clients: TLS for clients as small as busybox's (pki.Authority.server_context)."""
        context = self.authority.server_context(small_clients) if tls else None
        address = self._serve(_HTTPServer((host, port), _APIHandler, self, sock, scope, context))
        return f"{'https' if tls else 'http'}://{address[0]}:{address[1]}"

    def close_listener(self, url: str, timeout: float = 10.0) -> bool:
        """Stop serving on the listener of this URL (one made by listen): it takes no new connection, every open one
        is shut down (a watch or log stream ends at its next write, an exec session's command is killed) and its
        requests are waited for. True when every one ended within timeout."""
        port = int(url.rsplit(":", 1)[1])
        # the newest first: listeners inside network namespaces may share an address with another (the main one)
        for index in reversed(range(1, len(self._listeners))):
            httpd, thread = self._listeners[index]
            if httpd.server_address[1] == port:
                break
        else:
            raise KeyError(f"no listener of this server at {url}")
        del self._listeners[index]
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
        return httpd.close_connections(timeout)

    def _context(self) -> ssl.SSLContext:
        return self.authority.server_context()

    def _serve(self, httpd: _HTTPServer) -> tuple:
        thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": POLL_INTERVAL_S},
                                  name=f"kube-apiserver:{httpd.server_address[1]}", daemon=True)
        thread.start()
        self._listeners.append((httpd, thread))
        return httpd.server_address

    def stop(self) -> None:
        self.stopping = True
        self.cluster.timers.stop()
        self.store.close()
        listeners, self._listeners = self._listeners, []
        # side by side: each shutdown waits for its loop's next poll
        stoppers = [threading.Thread(target=httpd.shutdown, daemon=True) for httpd, _ in listeners]
        for stopper in stoppers:
            stopper.start()
        for stopper in stoppers:
            stopper.join(timeout=5)
        for httpd, thread in listeners:
            httpd.server_close()
            thread.join(timeout=5)
        if self._tmpdir is not None:
            import shutil

            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None

    def __enter__(self) -> EmbeddedAPIServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def mode(self) -> str:
        """"live" when a runtime runs the pods (processes, a data plane, exec and logs), else "api-only"."""
        return "live" if self.runtime is not None else "api-only"

    @property
    def url(self) -> str:
        if not self._listeners:
            raise RuntimeError("the server is not started")
        return f"{'https' if self.tls else 'http'}://{self.host}:{self.port}"

    def wait_ready(self, timeout: float = 5.0) -> None:
        """Block until /healthz answers over TCP (over TLS on an https listener)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                with socket.create_connection((self.host, self.port), timeout=1) as raw:
                    sock = self._client_context().wrap_socket(raw, server_hostname=self.host) if self.tls else raw
                    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    if sock.recv(64).startswith(b"HTTP/1.1 200"):
                        return
            except OSError:
                if time.monotonic() > deadline:
                    raise
            if time.monotonic() > deadline:
                raise TimeoutError("the embedded API server did not become ready")
            time.sleep(0.01)

    def _client_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cadata=self.authority.ca_pem.decode())
        context.check_hostname = False
        return context

    # -- kubeconfig -------------------------------------------------------------------------------
    def kubeconfig(self, namespace: str = "default", token: str | None = None, server: str | None = None) -> dict:
        """A kubeconfig for this server (server: another of its listeners' URLs).

        Over plain HTTP it holds no credential: kubectl sends no bearer token over plain HTTP, so the
        identity is the listener's (see `scope`). Over https it trusts this server's CA and carries the
        admin client certificate (system:masters, full rights) or, given a token, that bearer token."""
        from .kubectl import kubeconfig_for

        url = server or self.url
        if not url.startswith("https:"):
            return kubeconfig_for(url, namespace, {}, {})
        user = {"token": token} if token else self.authority.admin_user()
        return kubeconfig_for(url, namespace, {"certificate-authority-data": self.authority.ca_data}, user)

    def token(self, namespace: str, account: str, seconds: int = 3600, pod: dict | None = None,
              audiences: list[str] | None = None) -> str:
        """A bound token of a ServiceAccount (what `kubectl create token` returns; bound to pod when given, as the
        kubelet's projected token is); KeyError if it is missing."""
        from . import tokens

        sa = self.store.get("serviceaccounts", namespace, account)
        if sa is None:
            raise KeyError(f"no ServiceAccount {namespace}/{account}")
        return tokens.sign(self.authority, tokens.bound_claims(namespace, sa, seconds, audiences, pod))

    def write_kubeconfig(self, path: str | os.PathLike, namespace: str = "default") -> str:
        from .kubectl import save_kubeconfig

        self._kubeconfig = save_kubeconfig(path, self.kubeconfig(namespace))
        return self._kubeconfig

    @property
    def kubeconfig_path(self) -> str:
        if self._kubeconfig is None:
            self._tmpdir = tempfile.mkdtemp(prefix="netarena-kube-")
            return self.write_kubeconfig(os.path.join(self._tmpdir, "kubeconfig"))
        return self._kubeconfig

    # -- version / bodies -------------------------------------------------------------------------
    def version_info(self) -> dict:
        from .kubectl import DEFAULT_MINOR, kubectl_minor_or_none, server_version

        if self._minor is None:
            self._minor = kubectl_minor_or_none() or DEFAULT_MINOR
        return server_version(self._minor)

    def decode_body(self, req, res):
        return bodies.decode(req.content_type, req.body)

    @staticmethod
    def decode_json(raw: bytes):
        return bodies.decode_json(raw)
