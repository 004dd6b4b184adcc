"""Shared fixtures of the project's own tests: pytester, and a pytester project with the toy app."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import pytest_netarena
from pytest_netarena.testing.netarena_checkout import malt_checkout

pytest_plugins = ["pytester"]

# Every pytest the tests start (pytester subprocesses, xdist workers, documented commands) rewrites the asserts of
# the plugins' packages (hypothesis, anyio, xdist: about 200 modules) unless it may cache them: with
# PYTHONDONTWRITEBYTECODE set, each start cost 3.5 s of CPU instead of 1.8 s
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

HERE = Path(__file__).parent / "plugin"
PACKAGE_ROOT = Path(pytest_netarena.__file__).resolve().parent.parent

SUITE = """
import pytest
from pytest_netarena.plugin.assertions import assert_episode

@pytest.mark.netarena("toy")
def test_episode(netarena_result):
    assert_episode(netarena_result)
"""


@pytest.fixture
def toy(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A pytester project with the toy app registered and one benchmark test module."""
    # the package under test first: subprocesses must not import another checkout's editable install
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(HERE), str(PACKAGE_ROOT)]))
    monkeypatch.syspath_prepend(str(HERE))
    pytester.makeini("[pytest]\nnetarena_apps = toy = toy_app:APP\njunit_family = xunit1\nnetarena_plots = false\n")
    pytester.makepyfile(test_toy=SUITE)
    return pytester


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    """A NetArena checkout holding its MALT data (from ../shared or the git mirror); skips without one."""
    root, why = malt_checkout(tmp_path_factory.mktemp("netarena"))
    if root is None:
        pytest.skip(why)
    return root
