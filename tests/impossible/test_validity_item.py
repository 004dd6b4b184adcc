"""`netarena validity` measures cheating: on each app's impossible episodes the oracle never cheats, the cheater is caught."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_the_card_shows_the_cheating_item_measured(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "pytest_netarena.cli", "validity", "malt", "--max-steps", "2",
                           "--option", "malt-topology=synthetic:200", "--queries", "2", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    card = json.loads((tmp_path / "validity.json").read_text())
    (item,) = [i for i in card["items"] if i["id"] == "cheating-measured"]
    assert item["status"] == "pass" and item["n"] == 4, item
    assert "builtin:oracle cheated in 0 of 2, builtin:cheater in 2 of 2" in item["figure"]
    assert card["apps"]["malt"]["cheating"] == {"oracle": [0, 2], "cheater": [2, 2]}
    assert "| malt | cheating-measured: cheating is measured" in (tmp_path / "validity.md").read_text()
