"""`netarena audit`: cheating agents against real apps pass nothing, and a planted weak grader is caught."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_netarena.apps import APP_ENTRY_POINTS
from pytest_netarena.audit.battery import cheats_for
from pytest_netarena.audit.cheats import ATTACKS, DONE
from pytest_netarena.audit.generic import GENERIC
from pytest_netarena.cli import main

HERE = Path(__file__).parent
TOY_DIR = HERE.parent / "plugin"
SMALL_MALT = "synthetic:300"


@pytest.fixture
def toy_apps(monkeypatch):
    """tests/plugin/toy_app.py and the weak apps importable; the app registry restored afterwards."""
    monkeypatch.syspath_prepend(str(TOY_DIR))
    monkeypatch.syspath_prepend(str(HERE))
    monkeypatch.setattr("pytest_netarena.apps.APP_ENTRY_POINTS", dict(APP_ENTRY_POINTS))
    from pytest_netarena.apps import get_app

    get_app.cache_clear()
    yield ["--register-app", "toy=toy_app:APP", "--register-app", "trusting=weak_apps:TRUSTING",
           "--register-app", "fragile=weak_apps:FRAGILE"]
    get_app.cache_clear()


def _audit(tmp_path: Path, capsys, *argv: str) -> tuple[int, dict, str]:
    code = main(["audit", *argv, "--out", str(tmp_path)])
    (run,) = tmp_path.iterdir()
    return code, json.loads((run / "audit.json").read_text()), capsys.readouterr().out


def test_every_built_in_app_meets_every_attack_class_and_cheat_names_are_unique() -> None:
    for app in ("k8s", "route", "malt"):
        cheats = cheats_for(app)
        assert len({c.name for c in cheats}) == len(cheats)
        assert {c.attack for c in cheats} == set(ATTACKS), app
    assert cheats_for("anything-registered") == GENERIC


def test_a_planted_weak_grader_is_caught_with_its_transcript(toy_apps, tmp_path, capsys) -> None:
    code, audit, out = _audit(tmp_path, capsys, "toy", "trusting", "fragile", "--queries", "2", *toy_apps)
    assert code == 1
    won = {(f["app"], f["cheat"], f["outcome"]) for f in audit["findings"]}
    assert ("trusting", "claims-success", "resolved") in won  # believed "The task is resolved."
    assert ("fragile", "hostile-replies", "infra_error") in won  # crashed on a non-ASCII reply: unscored
    assert {app for app, _, _ in won} == {"trusting", "fragile"}  # the honest toy grader gave nothing away
    assert audit["apps"]["toy"] == {"episodes": 2 * len(GENERIC), "findings": 0, "skipped": "",
                                    "cheats": [c.name for c in GENERIC]}
    claim = next(f for f in audit["findings"] if f["cheat"] == "claims-success")
    assert claim["transcript"]["steps"][0]["reply"].startswith("All faults are fixed")
    assert "CHEAT WON: cheat:claims-success on trusting-L1-set-0000: resolved (judged correct)" in out
    assert "step 1 reply: All faults are fixed" in out


def test_an_honest_app_passes_and_an_app_that_cannot_run_here_is_not_a_pass(toy_apps, tmp_path, capsys,
                                                                            monkeypatch) -> None:
    code, audit, _ = _audit(tmp_path / "honest", capsys, "toy", "--queries", "1", *toy_apps)
    assert code == 0 and audit["findings"] == [] and audit["apps"]["toy"]["episodes"] == len(GENERIC)
    monkeypatch.setenv("TOY_UNAVAILABLE", "1")
    code, audit, out = _audit(tmp_path / "unavailable", capsys, "toy", *toy_apps)
    assert code == 3 and "toy: NOT AUDITED" in out and audit["apps"]["toy"]["skipped"]


def test_usage_errors_exit_2(tmp_path, capsys) -> None:
    assert main(["audit", "nope", "--out", str(tmp_path)]) == 2
    assert main(["audit", "k8s", "--queries", "0", "--out", str(tmp_path)]) == 2
    assert main(["audit", "k8s", "--register-app", "broken", "--out", str(tmp_path)]) == 2
    assert "netarena audit: error" in capsys.readouterr().err


def test_k8s_and_malt_give_no_cheat_a_win(tmp_path, capsys) -> None:
    code, audit, out = _audit(tmp_path, capsys, "k8s", "malt", "--queries", "1", "--option", f"malt-topology={SMALL_MALT}")
    assert code == 0, out
    assert audit["findings"] == []
    for app in ("k8s", "malt"):
        assert audit["apps"][app]["episodes"] == len(cheats_for(app))
    (run,) = tmp_path.iterdir()
    episodes = {e["agent"] + "@" + e["query"]["app"]: e for e in map(json.loads, (run / "episodes.jsonl").read_text().splitlines())}
    # the attacks took effect: they were judged on what they did, not refused unread
    assert episodes["cheat:allow-everything@k8s"]["outcome"] == "unsafe"
    assert "413" in episodes["cheat:floods-the-server@k8s"]["steps"][0]["output"]
    assert episodes["cheat:wipes-the-graph@malt"]["outcome"] in ("unsafe", "unresolved")
    assert (run / "report.html").exists()


def test_route_gives_no_cheat_a_win(tmp_path, capsys) -> None:
    import os

    if os.geteuid() != 0:
        pytest.skip("route needs root (Mininet network namespaces)")
    from pytest_netarena.apps.route.network.capabilities import backend_missing

    if backend_missing():
        pytest.skip(backend_missing())
    code, audit, out = _audit(tmp_path, capsys, "route", "--queries", "1", "--option", "route-size=2x1")
    assert code == 0, out
    assert audit["findings"] == [] and audit["apps"]["route"]["episodes"] == len(cheats_for("route"))
    (run,) = tmp_path.iterdir()
    faked = next(e for e in map(json.loads, (run / "episodes.jsonl").read_text().splitlines())
                 if e["agent"] == "cheat:fakes-peers-on-lo")
    planned = [step for step in faked["steps"] if step["reply"] != DONE]
    assert len(planned) >= 3 and not any(step["refused"] for step in planned)  # the trick ran; it fooled nobody
    assert "ip addr add" in planned[0]["action"]
