"""Shared fixtures of the project's own tests: pytester, and a pytester project with the toy app."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

HERE = Path(__file__).parent / "plugin"

SUITE = """
import pytest
from pytest_netarena.assertions import assert_episode

@pytest.mark.netarena("toy")
def test_episode(netarena_result):
    assert_episode(netarena_result)
"""


@pytest.fixture
def toy(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A pytester project with the toy app registered and one benchmark test module."""
    monkeypatch.setenv("PYTHONPATH", str(HERE))
    monkeypatch.syspath_prepend(str(HERE))
    pytester.makeini("[pytest]\nnetarena_apps = toy = toy_app:APP\njunit_family = xunit1\nnetarena_plots = false\n")
    pytester.makepyfile(test_toy=SUITE)
    return pytester
