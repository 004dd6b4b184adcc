"""`netarena validity`: the card of the three apps measures its figures and passes; a planted flaw fails it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
TOY_DIR = HERE.parent / "plugin"


def _validity(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(TOY_DIR), str(HERE), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "pytest_netarena.cli", "validity", *argv, "--out", str(tmp_path)],
                          capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)


def _items(card: dict) -> dict[tuple[str, str], dict]:
    return {(item["app"], item["id"]): item for item in card["items"]}


@pytest.mark.skipif(os.geteuid() != 0, reason="the route app builds Mininet networks, which needs root")
def test_the_three_apps_card_passes_with_measured_figures(tmp_path) -> None:
    done = _validity(tmp_path, "k8s", "route", "malt", "--max-steps", "4", "--option", "malt-topology=synthetic:200")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    card = json.loads((tmp_path / "validity.json").read_text())
    items = _items(card)
    assert card["passed"] and card["settings"]["max_steps"] == 4
    for app in ("k8s", "route", "malt"):
        rates = card["apps"][app]["rates"]
        queries = len(card["apps"][app]["queries"])
        assert queries >= 4  # one per level-1 category
        assert rates["oracle"]["resolved"] == rates["oracle"]["scored"] == queries  # every task solvable
        assert rates["noop"]["resolved"] == 0 and rates["noop"]["scored"] == queries
        assert rates["random"]["resolved"] == 0 and rates["random"]["scored"] == queries
        assert items[(app, "task-solvable")]["status"] == "pass"
        assert items[(app, "task-solvable")]["interval"][1] == 1.0 and items[(app, "task-solvable")]["n"] == queries
        assert items[(app, "noop-scores-zero")]["interval"][0] == 0.0
        audit = items[(app, "grader-not-exploitable")]
        assert audit["status"] == "pass" and audit["n"] >= 10 and ": 0 won" in audit["figure"]
        assert items[(app, "isolated-from-ground-truth")]["status"] == "pass"
        residual = items[(app, "residual-state-cleared")]
        assert residual["status"] == "pass" and "same first observation" in residual["figure"]
    assert items[("", "contamination")]["status"] == "not measured"  # visible, never a fake pass
    assert items[("", "confidence-intervals")]["status"] == "pass"
    markdown = (tmp_path / "validity.md").read_text()
    assert "**Card: PASSED**" in markdown and "| route | task-solvable" in markdown
    assert "not controlled yet" in markdown


def test_an_app_whose_oracle_cannot_solve_fails_the_card(tmp_path) -> None:
    done = _validity(tmp_path, "toy", "unsolvable", "--register-app", "toy=toy_app:APP",
                     "--register-app", "unsolvable=broken_apps:UNSOLVABLE")
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    card = json.loads((tmp_path / "validity.json").read_text())
    items = _items(card)
    assert not card["passed"]
    assert items[("unsolvable", "task-solvable")]["status"] == "FAIL"
    assert "resolved 0 of 1" in items[("unsolvable", "task-solvable")]["figure"]
    assert items[("toy", "task-solvable")]["status"] == "pass"  # the honest toy app is not blamed
    assert items[("toy", "random-scores-zero")]["status"] == "not measured"  # the toy offers no builtin:random
    assert "**Card: FAILED**" in (tmp_path / "validity.md").read_text()


def test_an_unknown_app_is_one_line_usage_error(tmp_path) -> None:
    done = _validity(tmp_path, "nosuch")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "unknown app nosuch" in done.stderr
    assert not (tmp_path / "validity.json").exists()
