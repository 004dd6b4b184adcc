"""The box a CLI agent runs in, attacked from inside with bash: it reaches only the harness's relay and MCP listener.

Each test runs bash in a CLI box (the namespace, binds, home and limits a CLI gets) in place of the CLI, so
an attacker's whole toolbox (a shell with /dev/tcp) is judged against the walls, not a CLI's manners.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_netarena.mcp.asgi import Routes
from pytest_netarena.mcp.clibox import cli_box, run_cli
from pytest_netarena.mcp.clis import MESSAGES_CALLS
from pytest_netarena.mcp.relay import Relay
from pytest_netarena.sandbox import Limits, NetNamespace
from pytest_netarena.serving import Listener, listening_socket, url_of
from pytest_netarena.testing.messages_stub import MessagesStub
from pytest_netarena.testing.scripted_models import Say

from .conftest import accepted, needs_root_boxes

pytestmark = needs_root_boxes

BASH = shutil.which("bash")


def bash_box(namespace: NetNamespace, program_dir: Path, **limits):
    spec = cli_box(str(program_dir), namespace, {"LANG": "C.UTF-8"})
    return replace(spec, programs={"bash": BASH, "cat": shutil.which("cat"), "ls": shutil.which("ls"),
                                   "touch": shutil.which("touch"), "yes": shutil.which("yes"),
                                   "sleep": shutil.which("sleep")},
                   limits=replace(spec.limits, **limits) if limits else spec.limits)


def run_bash(spec, script: str, should_stop=lambda: ""):
    return run_cli(spec, ["bash", "-c", script], should_stop)


@pytest.fixture
def namespace():
    made = NetNamespace.create()
    yield made
    made.close()


def test_the_box_reaches_no_listener_of_the_host(namespace, listener, tmp_path):
    server, port = listener
    ended = run_bash(bash_box(namespace, tmp_path),
                     f"(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo REACHED || echo REFUSED")
    assert "REFUSED" in ended.output and "REACHED" not in ended.output
    assert not accepted(server)


def test_the_box_sees_no_harness_file_and_cannot_write_its_program(namespace, canary, tmp_path):
    (tmp_path / "program").write_text("the CLI\n")
    script = (f"cat {canary} 2>&1; ls / ; touch /usr/share/cli-agent/planted 2>&1 || echo READONLY; "
              "touch $HOME/mine && echo HOME-WRITABLE; cat /usr/share/cli-agent/program")
    ended = run_bash(bash_box(namespace, tmp_path), script)
    assert canary.read_text().strip() not in ended.output
    assert "No such file" in ended.output
    assert "READONLY" in ended.output and not (tmp_path / "planted").exists()
    assert "HOME-WRITABLE" in ended.output and "the CLI" in ended.output
    for harness in ("work", "root", "reports"):
        assert f"\n{harness}\n" not in f"\n{ended.output}"


def test_the_relay_is_the_only_way_out_and_carries_the_real_key(namespace, tmp_path):
    with MessagesStub([[Say("hello from upstream")]]) as upstream:
        sock = listening_socket(make=namespace.socket)
        relay = Relay("/model", upstream.url, {"x-api-key": "sk-real-secret"}, 30, calls=MESSAGES_CALLS)
        with Listener(Routes({"/model": relay}), [sock], lifespan=True):
            port = sock.getsockname()[1]
            body = json.dumps({"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]})
            request = (f"POST /model/v1/messages HTTP/1.1\\r\\nHost: 127.0.0.1:{port}\\r\\nx-api-key: placeholder\\r\\n"
                       f"content-type: application/json\\r\\nContent-Length: {len(body)}\\r\\nConnection: close\\r\\n\\r\\n")
            script = (f"exec 3<>/dev/tcp/127.0.0.1/{port}; printf '{request}' >&3; printf '%s' '{body}' >&3; "
                      "cat <&3; env")
            ended = run_bash(bash_box(namespace, tmp_path), script)
    assert "hello from upstream" in ended.output
    assert upstream.requests and upstream.requests[0].headers.get("x-api-key") == "sk-real-secret"
    assert "sk-real-secret" not in ended.output  # neither in the answer nor in the box's environment
    assert relay.failures == []


def test_an_unreachable_endpoint_is_recorded_as_the_relays_failure(namespace, tmp_path):
    probe = listening_socket()
    dead = url_of(probe)
    probe.close()  # nothing listens there now
    sock = listening_socket(make=namespace.socket)
    relay = Relay("/model", dead, {}, 5, calls=MESSAGES_CALLS)
    with Listener(Routes({"/model": relay}), [sock], lifespan=True):
        port = sock.getsockname()[1]
        request = f"GET /model/v1/models HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n"
        ended = run_bash(bash_box(namespace, tmp_path),
                         f"exec 3<>/dev/tcp/127.0.0.1/{port}; printf '{request}' >&3; cat <&3")
    assert "502" in ended.output
    assert relay.failures and "Connect" in relay.failures[0]


def test_a_key_the_provider_refuses_is_recorded_as_the_relays_refusal(namespace, tmp_path):
    """A 401 is recorded apart from the endpoint's failures: whether the operator's key was refused, the harness asks
    the endpoint itself (tests/agents/test_cli_failures.py), since a box could provoke a refusal of its own."""
    with MessagesStub([[Say("never served")]], api_key="sk-right") as upstream:
        sock = listening_socket(make=namespace.socket)
        relay = Relay("/model", upstream.url, {"x-api-key": "sk-revoked"}, 30, calls=MESSAGES_CALLS)
        with Listener(Routes({"/model": relay}), [sock], lifespan=True):
            port = sock.getsockname()[1]
            request = f"GET /model/v1/models HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n"
            ended = run_bash(bash_box(namespace, tmp_path),
                             f"exec 3<>/dev/tcp/127.0.0.1/{port}; printf '{request}' >&3; cat <&3")
    assert "401" in ended.output and "invalid x-api-key" in ended.output
    assert relay.refusals == ["HTTP 401 from the model endpoint"] and relay.failures == []


def test_a_run_the_harness_stops_is_killed_with_its_output_kept(namespace, tmp_path):
    started = time.monotonic()
    ended = run_bash(bash_box(namespace, tmp_path), "echo started; sleep 300",
                     should_stop=lambda: "told to stop" if time.monotonic() - started > 1 else "")
    assert ended.why_stopped == "told to stop" and ended.returncode is None
    assert "started" in ended.output
    assert ended.elapsed_s < 60


def test_output_past_the_cap_stops_the_run(namespace, tmp_path):
    spec = bash_box(namespace, tmp_path)
    spec = replace(spec, limits=Limits(**{**spec.limits.__dict__, "output_bytes": 1 << 16}))
    ended = run_bash(spec, "yes flood")
    assert "output passed" in ended.why_stopped and len(ended.output) <= 1 << 16


#: run as a plain user: bash in a CLI box joined to a network namespace owned by a user namespace (no root)
PLAIN_USER_BOX = """
import shutil, sys
from dataclasses import replace
from pytest_netarena.mcp.clibox import cli_box, run_cli
from pytest_netarena.sandbox.userns import UserNetNamespace, new_network_namespace

namespace = new_network_namespace()
assert isinstance(namespace, UserNetNamespace)
spec = cli_box(sys.argv[1], namespace, {"LANG": "C.UTF-8"})
spec = replace(spec, programs={name: shutil.which(name) for name in ("bash", "cat", "touch")})
print(run_cli(spec, ["bash", "-c", sys.argv[2]], lambda: "").output)
"""


def test_a_plain_users_cli_box_reaches_no_host_listener_and_no_file_of_the_user(listener, tmp_path):
    """Without root the CLI's box joins a namespace owned by a user namespace: the same walls hold (a listener the
    test made on the host's loopback is never connected; a file the user can read is not in the box)."""
    import os

    from pytest_netarena.testing import unprivileged

    if unprivileged.unavailable():
        pytest.skip(str(unprivileged.unavailable()))
    server, port = listener
    with unprivileged.unprivileged_home() as home:
        canary = home / "canary.txt"
        canary.write_text("CANARY-of-the-plain-user\n")
        program = home / "program"
        program.mkdir()
        for path in (canary, program):
            os.chown(path, unprivileged.UID, unprivileged.UID)
        script = (f"(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo REACHED || echo REFUSED; "
                  f"cat {canary} || echo NO-CANARY; touch /usr/share/cli-agent/planted 2>/dev/null || echo READONLY")
        done = unprivileged.run_python(["-c", PLAIN_USER_BOX, str(program), script], home, timeout=120)
        planted = (program / "planted").exists()
    assert done.returncode == 0, done.stderr[-2000:]
    assert "REFUSED" in done.stdout and "REACHED" not in done.stdout and not accepted(server)
    assert "NO-CANARY" in done.stdout and "CANARY-of-the-plain-user" not in done.stdout
    assert "READONLY" in done.stdout and not planted
