"""The controller's hand-off to xdist workers: typed, sent as plain values, read back whole."""

from __future__ import annotations

from types import SimpleNamespace

import execnet
import pytest

from pytest_netarena.core.types import Query
from pytest_netarena.plugin.state import worker_input
from pytest_netarena.run.worker_input import WorkerInput

#: what xdist itself puts in a worker's workerinput
XDIST_KEYS = {"workerid": "gw3", "workercount": 4, "testrunuid": "abc", "mainargv": ["pytest"]}


def test_the_hand_off_survives_execnet_and_comes_back_equal():
    corpus = (Query("malt", 2, "add+count", 7, 2**63 + 5, {"node": "ju1.a1.m1.s2c1", "nested": {"k": [1, 2]}}),)
    run_info = {"seed": 11, "run_id": "r1", "options": {"queries": 2, "levels": [1, 2]}}
    handed = WorkerInput(seed=11, run_id="r1", shard="2/3", in_flight=4, corpus=corpus, run_info=run_info)
    sent = {**XDIST_KEYS, **handed.to_workerinput()}
    received = execnet.loads(execnet.dumps(sent))  # what the worker's config.workerinput holds
    assert WorkerInput.from_workerinput(received) == handed
    assert received["workerid"] == "gw3"  # ours sit beside xdist's keys, never over them
    assert all(key.startswith("netarena_") for key in handed.to_workerinput())


def test_a_run_without_corpus_or_resume_hands_off_none_for_both():
    received = execnet.loads(execnet.dumps(WorkerInput(seed=0, run_id="r0").to_workerinput()))
    back = WorkerInput.from_workerinput(received)
    assert (back.corpus, back.run_info, back.shard, back.in_flight) == (None, None, None, 1)


def test_the_plugin_reads_the_hand_off_once_and_refuses_a_controller_without_netarena():
    assert worker_input(SimpleNamespace(stash=pytest.Stash())) is None  # the controller, or no xdist
    config = SimpleNamespace(workerinput={**XDIST_KEYS, **WorkerInput(seed=5, run_id="r5").to_workerinput()},
                             stash=pytest.Stash())
    first = worker_input(config)
    assert first is not None and first.seed == 5 and worker_input(config) is first
    with pytest.raises(pytest.UsageError, match="controller must run pytest-netarena"):
        worker_input(SimpleNamespace(workerinput=dict(XDIST_KEYS), stash=pytest.Stash()))
