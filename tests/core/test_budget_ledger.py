"""The run ledger that xdist workers share: concurrent additions from several processes are all counted."""

from __future__ import annotations

import multiprocessing

from pytest_netarena.budget import Budget, RunLedger
from pytest_netarena.core.types import Usage


def _add_many(folder: str, times: int) -> None:
    ledger = RunLedger(__import__("pathlib").Path(folder), Budget())
    for _ in range(times):
        ledger.add(Usage(1, 2, 0.5))


def test_concurrent_workers_never_lose_or_corrupt_an_addition(tmp_path) -> None:
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_add_many, args=(str(tmp_path), 150)) for _ in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    spent = RunLedger(tmp_path, Budget()).spent()
    assert spent == Usage(450, 900, 225.0)


def test_exhausted_names_the_cap_that_was_reached(tmp_path) -> None:
    ledger = RunLedger(tmp_path, Budget(max_tokens=10))
    assert ledger.exhausted() == ""
    ledger.add(Usage(6, 4))
    assert ledger.exhausted() == "run token budget of 10 spent (10 tokens)"
    assert RunLedger(tmp_path, Budget()).exhausted() == ""  # no cap, never exhausted
