"""Red-team fixtures: canary files and listeners the test makes, and a skip when boxes cannot be made here."""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_netarena import sandbox


def box_reason() -> str | None:
    found = sandbox.support()
    return None if found.ok else found.reason


needs_boxes = pytest.mark.skipif(box_reason() is not None, reason=f"no sealed boxes here: {box_reason()}")
needs_root_boxes = pytest.mark.skipif(
    box_reason() is not None or os.geteuid() != 0, reason="needs sealed boxes made as root")


def route_reason() -> str | None:
    """Why route attacks cannot run here (they need root, Mininet and boxes), or None."""
    if os.geteuid() != 0:
        return "route attacks need root (Mininet)"
    from pytest_netarena.apps.route.network.capabilities import backend_missing

    return backend_missing() or box_reason()


needs_route = pytest.mark.skipif(route_reason() is not None, reason=str(route_reason()))


@pytest.fixture(scope="module")
def route_env():
    """One boxed route environment per test module."""
    from pytest_netarena.apps.route import APP
    from pytest_netarena.core.app import RunOptions

    environment = APP.make_environment(RunOptions())
    yield environment
    environment.close()


@pytest.fixture
def canary(tmp_path: Path) -> Path:
    """A file holding a random secret; an attack that reads it shows the secret in its output."""
    path = tmp_path / "canary.txt"
    path.write_text(f"CANARY-{secrets.token_hex(8)}\n")
    path.chmod(0o644)
    tmp_path.chmod(0o755)
    return path


@pytest.fixture
def listener() -> Iterator[tuple[socket.socket, int]]:
    """A TCP listener on 127.0.0.1 in the harness's own network namespace."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.5)
    try:
        yield server, server.getsockname()[1]
    finally:
        server.close()


def accepted(server: socket.socket) -> bool:
    """Whether anything connected to the listener."""
    try:
        connection, _ = server.accept()
    except (TimeoutError, socket.timeout, BlockingIOError):
        return False
    connection.close()
    return True
