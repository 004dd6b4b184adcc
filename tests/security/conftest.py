"""Red-team fixtures: canary files and listeners the test makes, the boxed environments the attacks run in, and a
skip when boxes cannot be made here."""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_netarena import sandbox
from pytest_netarena.core.types import Query

if TYPE_CHECKING:
    from pytest_netarena.sandbox.forkserver import ForkServer


def box_reason() -> str | None:
    found = sandbox.support()
    return None if found.ok else found.reason


needs_boxes = pytest.mark.skipif(box_reason() is not None, reason=f"no sealed boxes here: {box_reason()}")
needs_root_boxes = pytest.mark.skipif(
    box_reason() is not None or os.geteuid() != 0, reason="needs sealed boxes made as root")


def python_box(**limits) -> tuple[sandbox.BoxSpec, list[str]]:
    """(a box holding the shell tools and this Python with its standard library only, the argv that starts that
    Python): attacks that need a programming language where an app's box offers none (a stand-in for a bug
    in one of its programs)."""
    from pytest_netarena.sandbox import views
    from pytest_netarena.sandbox.python_view import python_view

    view = python_view(())
    spec = sandbox.BoxSpec(programs=views.programs(views.SHELL_TOOLS), binds=view.binds, env=dict(view.env),
                           limits=sandbox.Limits(**{"wall_s": 20, **limits}))
    return spec, [view.python, "-I", "-S"]


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


FORWARD_OFF = {"type": "disable_routing", "method": "ip_forward_off"}


def route_query(fault: dict, hosts: int = 1) -> Query:
    """A route episode of two subnets of `hosts` hosts each, with one fault."""
    return Query("route", 1, fault["type"], 0, 0, {"subnets": 2, "hosts": hosts, "faults": [fault]})


@pytest.fixture
def forward_off(route_env):
    """The route environment reset to two one-host subnets whose router forwards nothing; its topology."""
    route_env.reset(route_query(FORWARD_OFF))
    return route_env.topology


CP_AD = {"type": "change_port", "policy": "adservice", "new_port": 1}


def k8s_query(index: int = 0) -> Query:
    """A k8s episode with one fault: adservice's policy opens the wrong port."""
    return Query("k8s", 1, "change_port", index, 1, {"app": "online-boutique", "faults": [CP_AD]})


@pytest.fixture(scope="module")
def k8s_env():
    """One boxed k8s environment per test module, its API server in a network namespace of its own."""
    from pytest_netarena.apps.k8s import APP
    from pytest_netarena.core.app import RunOptions

    environment = APP.make_environment(RunOptions())
    # these attacks are only harmless inside boxes: never let a change run them on the host
    assert environment.runner.sandboxed and environment.backend.network is not None
    # as root the namespace is made directly; otherwise through a user namespace the harness's uid owns
    expected = sandbox.NetNamespace if os.geteuid() == 0 else sandbox.UserNetNamespace
    assert isinstance(environment.backend.network, expected)
    yield environment
    environment.close()


@pytest.fixture
def k8s(k8s_env):
    """The k8s environment reset to a fresh k8s_query() episode."""
    k8s_env.reset(k8s_query())
    return k8s_env


def act(env, script: str):
    """One agent step whose reply is the script in a bash fence; it must be run, not refused."""
    outcome = env.step(f"```bash\n{script}\n```")
    assert not outcome.refused, outcome.output
    return outcome


def malt_box(**limits) -> ForkServer:
    """A box for MALT answers over the 200-node synthetic topology, 20 s of wall time unless limits say otherwise."""
    from pytest_netarena.apps.malt import runtime
    from pytest_netarena.apps.malt.topology import load_topology
    from pytest_netarena.sandbox.forkserver import ChildLimits

    return runtime.box(load_topology("synthetic:200"), ChildLimits(**{"wall_s": 20, **limits}))


@pytest.fixture(scope="module")
def box(request):
    """One MALT answer box per test module, with the module's BOX_LIMITS (cpu_s, memory_mb, ...) when it sets them."""
    sandbox = malt_box(**getattr(request.module, "BOX_LIMITS", {}))
    yield sandbox
    sandbox.close()


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
