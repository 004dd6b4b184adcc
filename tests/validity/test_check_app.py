"""check_app: the three built-in apps keep every app's guarantees; toy apps that break one are caught, by name."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from pytest_netarena.cli import main
from pytest_netarena.validity import GUARANTEES, AppCheckError, check_app

HERE = Path(__file__).parent


@pytest.fixture(autouse=True)
def toy_apps(monkeypatch: pytest.MonkeyPatch) -> None:
    """The toy app (tests/plugin), its broken variants (here) and its weak graders (tests/audit) importable."""
    for folder in (HERE.parent / "plugin", HERE, HERE.parent / "audit"):
        monkeypatch.syspath_prepend(str(folder))


@pytest.mark.parametrize("app_name", ["k8s", "malt", "route"])
def test_the_built_in_apps_keep_every_guarantee(app_name: str) -> None:
    if app_name == "route" and (os.geteuid() != 0 or shutil.which("mn") is None):
        pytest.skip("the route app builds Mininet networks: it needs root and Mininet")
    # the audit battery on k8s and route is tests/audit/test_audit.py's (the same cheats on the same first query):
    # played again here it would only double the file's minute
    audit = app_name == "malt"
    check = check_app(app_name, episodes=2, audit=audit)  # raises AppCheckError, naming what broke, otherwise
    assert check.passed and len(check.queries) == 2
    assert set(check.figures) == set(GUARANTEES) - ({"grader-survives-audit"} if not audit else set())
    if audit:
        assert "cheats of the audit battery" in check.figures["grader-survives-audit"]


def test_the_honest_toy_app_keeps_every_guarantee() -> None:
    import toy_app

    check = check_app(toy_app.APP)
    assert check.passed and set(check.figures) == set(GUARANTEES) and check.queries == ["toy-L1-set-0000"]
    assert "two fresh processes (PYTHONHASHSEED 0 and 1) drew the same" in check.figures["seeded-generation"]


#: broken toy app -> the guarantees it must be caught breaking (a grader that takes a fault-free state as fixed
#: also lets the audit's do-nothing cheat win)
BROKEN = {
    "broken_apps:SEEDLESS": {"seeded-generation"},
    "broken_apps:UNSEEDED": {"seeded-generation"},
    "broken_apps:HASH_ORDER": {"seeded-generation"},  # the same in one process, not across xdist workers
    "broken_apps:UNSOLVABLE": {"solvable-by-oracle"},
    "broken_apps:HARMLESS": {"faults-break-something", "grader-survives-audit"},
    "broken_apps:TELLING": {"hidden-state-unseen"},
    "weak_apps:TRUSTING": {"grader-survives-audit"},
}


@pytest.mark.parametrize("target", sorted(BROKEN))
def test_a_broken_app_fails_the_guarantee_it_breaks(target: str) -> None:
    import importlib

    module, _, attr = target.partition(":")
    app = getattr(importlib.import_module(module), attr)
    with pytest.raises(AppCheckError) as raised:
        check_app(app, processes=target == "broken_apps:HASH_ORDER")  # fresh interpreters cost a second each
    check = raised.value.check
    assert check.broken() == BROKEN[target], str(raised.value)
    message = str(raised.value)
    assert f"app {app.name!r} breaks" in message
    for failure in check.failures:  # each line names the guarantee and the query (or the app as a whole)
        assert f"  {failure.guarantee}: {failure.query or 'the app'}: " in message


def test_failure_messages_say_what_was_seen() -> None:
    from broken_apps import HASH_ORDER, SEEDLESS, TELLING, UNSEEDED, UNSOLVABLE

    leaked = check_app(TELLING, raise_on_failure=False, processes=False).failures
    assert leaked and all(f.query == "telling-L1-set-0000" for f in leaked)
    assert any("is shown to the agent in the first observation" in f.message for f in leaked)
    assert any(f.message.startswith(("'stuck_counter'", "'sign_flip'")) for f in leaked)
    (unsolved,) = check_app(UNSOLVABLE, raise_on_failure=False, processes=False).failures
    assert unsolved.query == "unsolvable-L1-set-0000" and "builtin:oracle ended unresolved" in unsolved.message
    (drawn,) = check_app(UNSEEDED, raise_on_failure=False, audit=False).failures
    assert "drew it twice with different hidden params" in drawn.message
    (ordered,) = check_app(HASH_ORDER, raise_on_failure=False, audit=False).failures
    assert ordered.query == "hash-order-L1-set-0000" and "PYTHONHASHSEED 0 and 1" in ordered.message
    (same,) = check_app(SEEDLESS, raise_on_failure=False, audit=False, processes=False).failures
    assert same.query == "" and "seeds 0 to 4 all drew the same hidden params" in same.message


def test_an_app_without_an_oracle_or_queries_is_told_so() -> None:
    from toy_app import CounterApp

    class NoOracle(CounterApp):
        name = "no-oracle"
        builtin_agent_names = ("reckless",)

    class NoQueries(CounterApp):
        name = "no-queries"

        def categories(self, options):
            return []

    failures = check_app(NoOracle(), raise_on_failure=False, audit=False, processes=False).failures
    assert [str(f) for f in failures] == ["solvable-by-oracle: the app: the app offers no builtin:oracle "
                                          "(App.builtin_agent_names), so no task is shown solvable"]
    (empty,) = check_app(NoQueries(), raise_on_failure=False, processes=False).failures
    assert empty.guarantee == "seeded-generation" and "drew no query" in empty.message


def test_the_check_app_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-app", "toy_app:APP", "--no-audit"]) == 0
    out = capsys.readouterr().out
    assert "pass  solvable-by-oracle" in out and "check-app toy: every guarantee kept" in out
    assert "grader-survives-audit" not in out  # left out, not shown as passed
    assert main(["check-app", "broken_apps:UNSOLVABLE"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  solvable-by-oracle" in out and "1 broken: solvable-by-oracle" in out
    for argv, error in ((["nosuch"], "unknown app 'nosuch'"), (["toy_app:NOPE"], "cannot load toy_app:NOPE"),
                        (["toy_app:CounterApp"], "is a class, not an App instance"),
                        (["toy_app:APP", "--episodes", "0"], "--episodes must be at least 1")):
        assert main(["check-app", *argv]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and error in err, err
