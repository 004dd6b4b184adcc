"""Fixtures of the action-layer tests: the toy counter app (it offers a set_counter tool) and its first query."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_netarena.core.app import RunOptions


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parents[1] / "plugin"))
    import toy_app

    return toy_app


@pytest.fixture
def query(toy):
    return toy.APP.generate(RunOptions(seed=1, queries=1, levels=(1,)))[0]
