"""A slow link for tests: a TCP proxy on 127.0.0.1 that hands the server's bytes to the client in small pieces, slowly.

Used to show what transport must not move (the agent's measured time): the client's bytes go to the server
as they come; the server's bytes go back `piece` bytes at a time, `pause_s` apart, so a large answer takes
long to arrive while its first byte arrives as soon as the server sends it.

    with SlowLink(piece=16_384, pause_s=0.05) as link:
        link.target = ("127.0.0.1", server_port)   # may be set after the link is listening
        ...  # point the client at link.url
"""

from __future__ import annotations

import socket
import threading
import time


class SlowLink:
    """Forwards every connection to `target`; server-to-client bytes go `piece` at a time, `pause_s` apart."""

    def __init__(self, target: tuple[str, int] | None = None, piece: int = 16_384, pause_s: float = 0.05) -> None:
        self.target = target
        self.piece = piece
        self.pause_s = pause_s
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._stopping = threading.Event()
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, name="slow-link", daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if self.target is None:
                client.close()
                continue
            try:
                server = socket.create_connection(self.target, timeout=10)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets += [client, server]
            threading.Thread(target=self._pump, args=(client, server, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, True), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, slow: bool) -> None:
        try:
            source.settimeout(None)
            sink.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # each piece leaves as it is written
            last_sent = 0.0
            while not self._stopping.is_set():
                data = source.recv(1 << 20)
                if not data:
                    break
                if not slow:
                    sink.sendall(data)
                    continue
                for start in range(0, len(data), self.piece):
                    # a piece waits for the link only while the one before is still on it: the first byte of a
                    # new answer, after a pause, leaves at once
                    time.sleep(max(0.0, last_sent + self.pause_s - time.monotonic()))
                    sink.sendall(data[start:start + self.piece])
                    last_sent = time.monotonic()
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def stop(self) -> None:
        self._stopping.set()
        self._listener.close()
        with self._lock:
            for sock in self._sockets:
                sock.close()

    def __enter__(self) -> SlowLink:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
