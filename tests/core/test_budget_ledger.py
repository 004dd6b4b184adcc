"""The controller's run ledger: additions from many link threads are all counted, and a resumed run carries them on."""

from __future__ import annotations

import json
import threading

from pytest_netarena.run.budget import Budget, RunLedger
from pytest_netarena.core.types import Usage


def test_concurrent_additions_are_all_counted_and_mirrored_in_usage_json(tmp_path) -> None:
    ledger = RunLedger(tmp_path / "run", Budget())

    def add_many() -> None:
        for _ in range(150):
            ledger.add(Usage(1, 2, 0.5))

    threads = [threading.Thread(target=add_many) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert ledger.spent() == Usage(450, 900, 225.0)
    assert json.loads((tmp_path / "run" / "usage.json").read_text()) == {"tokens_in": 450, "tokens_out": 900,
                                                                          "cost_usd": 225.0}
    assert RunLedger(tmp_path / "run", Budget()).spent() == Usage(450, 900, 225.0)  # what --resume starts from


def test_exhausted_names_the_cap_that_was_reached(tmp_path) -> None:
    ledger = RunLedger(tmp_path, Budget(max_tokens=10))
    assert ledger.exhausted() == ""
    ledger.add(Usage(6, 4))
    assert ledger.exhausted() == "run token budget of 10 spent (10 tokens)"
    assert RunLedger(tmp_path, Budget()).exhausted() == ""  # no cap, never exhausted
    assert RunLedger(tmp_path, Budget(max_cost_usd=1.0)).exhausted() == ""
