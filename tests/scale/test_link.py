"""The netarena link over a real execnet gateway: calls from several threads, pushes, the example database."""

from __future__ import annotations

from pathlib import Path

import execnet
import pytest

import pytest_netarena
from pytest_netarena.core.app import RunOptions
from pytest_netarena.scale.link import open_link, push
from pytest_netarena.scale.service import RunService
from pytest_netarena.run.search import SearchConfig
from pytest_netarena.run.settings import Settings
from pytest_netarena.run.budget import Budget

PACKAGE_ROOT = str(Path(pytest_netarena.__file__).resolve().parent.parent)

WORKER = """
import sys, threading
sys.path.insert(0, ROOT)
from pytest_netarena.core.types import Usage
from pytest_netarena.scale.link import LinkError, worker_link
from pytest_netarena.scale.service import make_linked_database
client = worker_link()
pushed = []
client.handle_pushes("upcoming", lambda indices: pushed.append(indices))
answers = []
def spend():
    for _ in range(50):
        answers.append(client.call("spend", 1, 1, 0.001))
threads = [threading.Thread(target=spend) for _ in range(4)]
[t.start() for t in threads]
[t.join() for t in threads]
database = make_linked_database(client)
database.save(b"toy|agent", b"\\x01\\x02")
database.save(b"toy|agent", b"\\x03")
try:
    client.call("no-such-request")
    refused = ""
except LinkError as error:
    refused = str(error)
channel.send((answers[-1], sorted(database.fetch(b"toy|agent")), refused))
channel.send(channel.receive() and pushed)
"""


@pytest.fixture
def gateway():
    group = execnet.Group()
    gateway = group.makegateway("popen")
    yield gateway
    group.terminate(5)


def test_worker_calls_from_threads_pushes_and_the_database_reach_the_controller(gateway, tmp_path) -> None:
    settings = Settings(seed=1, run_id="run", agents=[], run_options=RunOptions(), trials=1, agent_timeout_s=10,
                        reports_dir=tmp_path, run_budget=Budget(max_cost_usd=0.1),
                        search=SearchConfig(database_dir=tmp_path / "hypothesis-db"))
    service = RunService(settings)
    link = open_link(gateway, lambda kind, op, args: service.handle("gw0", kind, op, args))
    channel = gateway.remote_exec(WORKER.replace("ROOT", repr(PACKAGE_ROOT)))
    push(link, "upcoming", [3, 4])
    last_answer, stored, refused = channel.receive(timeout=60)
    assert service.ledger.spent().tokens == 400  # 4 threads x 50 calls x 2 tokens, none lost
    assert last_answer.startswith("run cost budget of $0.1 spent")  # 200 x $0.001 > $0.1: the controller says stop
    assert stored == [b"\x01\x02", b"\x03"]
    assert any((tmp_path / "hypothesis-db").rglob("*"))  # the database lives on the controller's disk
    assert "refused 'no-such-request'" in refused
    channel.send(True)
    assert channel.receive(timeout=60) == [[3, 4]]
    assert (tmp_path / "run" / "usage.json").exists()
