"""Nothing is left behind: after close, after Ctrl-C, after a killed worker (then the start-up sweep), and the
sweep never touches a live owner's network (root only)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pytest_netarena.apps.route.network import leases
from pytest_netarena.apps.route.network.leases import (
    leftover_links,
    leftover_processes,
    sweep,
)

from .conftest import needs_mininet

pytestmark = needs_mininet

REPO = Path(__file__).resolve().parents[2]

WORKER = textwrap.dedent(
    """
    import signal, subprocess, sys, time
    # Ctrl-C as a terminal delivers it, whatever disposition or mask this process inherited from its parent
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    from pytest_netarena.apps.route import APP
    from pytest_netarena.core.app import RunOptions
    from pytest_netarena.core.types import Query

    env = APP.make_environment(RunOptions())
    params = {"subnets": 3, "hosts": 2, "faults": [{"type": "disable_routing", "method": "ip_forward_off"}]}
    env.reset(Query("route", 1, "disable_routing", 0, 0, params))
    # a long-running command inside a node's box, as an agent's hung command would be
    import threading
    marker = sys.argv[1]
    threading.Thread(target=env.boxes.run, args=(env.topology.router, f"sleep {marker}", 600.0), daemon=True).start()
    # the box's command, not this process's own argv (which holds the marker too): a first box takes a while
    while f"sleep {marker}" not in subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout:
        time.sleep(0.05)
    print("READY", env.topology.prefix, flush=True)
    time.sleep(300)
    """
)


MARKER = f"299.{os.getpid()}"  #: the hung command's sleep, unique to this test run


def _start_worker() -> tuple[subprocess.Popen, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTEST_XDIST_WORKER": "gw7", "NETARENA_LEASE_DIR": str(leases.LEASE_DIR)}
    process = subprocess.Popen([sys.executable, "-c", WORKER, MARKER], stdout=subprocess.PIPE, text=True, env=env,
                               cwd=REPO)
    line = process.stdout.readline().split()
    assert line[:1] == ["READY"], line
    return process, line[1]


def _traces(prefix: str) -> dict[str, object]:
    """Everything of ours that could survive: links, processes, named namespaces, the lease."""
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False).stdout
    ps = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True, check=False).stdout
    return {
        "links": leftover_links(prefix),
        "processes": leftover_processes(prefix),
        "netns": [line for line in netns.splitlines() if prefix in line],
        "ps": [line for line in ps.splitlines() if f"mininet:{prefix}" in line or f"sleep {MARKER}" in line],
        "lease": (leases.LEASE_DIR / f"{prefix}.pid").exists(),
    }


@pytest.fixture(autouse=True)
def own_leases(tmp_path, monkeypatch):
    """Leases of this test's own: another worker's start-up sweep would otherwise remove a dead owner's first."""
    monkeypatch.setattr(leases, "LEASE_DIR", tmp_path / "leases")


NOTHING = {"links": [], "processes": [], "netns": [], "ps": [], "lease": False}


def test_a_killed_worker_leaves_leftovers_that_the_start_up_sweep_removes():
    process, prefix = _start_worker()
    assert prefix.startswith("na") and len(prefix) == 6
    alive = _traces(prefix)
    assert alive["processes"] and alive["lease"] and any(MARKER in line for line in alive["ps"])
    assert alive["links"] == []  # the whole network, bridges included, lives in the episode's own namespaces
    process.kill()
    process.wait()
    time.sleep(0.2)
    dead = _traces(prefix)
    assert dead["lease"], "expected a killed worker to leave its lease for the sweep"
    removed = sweep()
    assert f"lease {prefix}" in removed
    assert _traces(prefix) == NOTHING


def test_ctrl_c_tears_the_network_down_at_exit():
    process, prefix = _start_worker()
    process.send_signal(signal.SIGINT)
    # a bound for a hang, not a speed target: on a machine under load the teardown may take a while
    assert process.wait(timeout=120) != 0
    assert _traces(prefix) == NOTHING


def test_close_leaves_nothing(route_env):
    from .conftest import fault, make_query

    route_env.reset(make_query([fault("remove_ip", "flush", 2)], subnets=2, hosts=2))
    prefix = route_env.topology.prefix
    alive = _traces(prefix)
    assert alive["processes"] and alive["lease"] and alive["links"] == []
    route_env.teardown()
    assert _traces(prefix) == NOTHING


def test_the_sweep_spares_live_owners_and_foreign_names():
    live = leases.claim(900)  # owned by this (live) process
    dead_prefix = "na" + "zz" + "y0"
    dead = leases.LEASE_DIR / f"{dead_prefix}.pid"
    dead.write_text("999999999 1 gw99 0\n")  # no such process
    foreign = "nazzy1x"  # our style of name but no lease: not ours to remove
    names = [f"{live.prefix}s1", f"{dead_prefix}s1", foreign]
    try:
        for name in names:
            subprocess.run(["ip", "link", "add", "name", name, "type", "bridge"], check=True)
        removed = sweep()
        assert f"link {dead_prefix}s1" in removed and f"lease {dead_prefix}" in removed
        assert leftover_links(live.prefix) == [f"{live.prefix}s1"] and live.path.exists()
        assert leftover_links(foreign) == [foreign]
        assert not dead.exists() and leftover_links(dead_prefix) == []
    finally:
        for name in names:
            subprocess.run(["ip", "link", "del", name], capture_output=True, check=False)
        live.release()
        dead.unlink(missing_ok=True)


def test_a_claim_racing_a_sweep_is_never_read_as_dead():
    """Episodes in flight claim leases on threads while another environment sweeps: a lease is never seen
    half-written (an owner file without its record would read as a dead owner's and be swept)."""
    import threading

    stop, swept, mine = threading.Event(), [], set()

    def sweeping() -> None:
        while not stop.is_set():
            swept.extend(item for item in sweep() if item.startswith("lease "))

    def claiming(base: int) -> None:
        for number in range(150):
            lease = leases.claim(base + number)
            mine.add(f"lease {lease.prefix}")
            try:
                assert leases.owner_alive(lease.path)
            finally:
                lease.release()

    sweeper = threading.Thread(target=sweeping)
    claimers = [threading.Thread(target=claiming, args=(1000 + 200 * k,)) for k in range(3)]
    sweeper.start()
    for thread in claimers:
        thread.start()
    for thread in claimers:
        thread.join()
    stop.set()
    sweeper.join()
    assert len(mine) > 150 and not mine & set(swept)  # other workers' dead leases may be swept meanwhile
    assert not list(leases.LEASE_DIR.glob(f".claim-{os.getpid()}-*"))


def test_a_draft_left_by_a_killed_claim_is_swept():
    leases.LEASE_DIR.mkdir(parents=True, exist_ok=True)
    draft = leases.LEASE_DIR / ".claim-999999999-1"
    draft.write_text("999999999 1 gw99 0\n")
    mine = leases.LEASE_DIR / f".claim-{os.getpid()}-1"
    mine.write_text("in progress\n")
    try:
        sweep()
        assert not draft.exists() and mine.exists()
    finally:
        draft.unlink(missing_ok=True)
        mine.unlink(missing_ok=True)
