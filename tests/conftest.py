"""Shared fixtures of the project's own tests: pytester, and a pytester project with the toy app."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# pytester puts sys.modules back as it found them after each test; cryptography's Rust core cannot be loaded
# twice in a process, so its Python side re-imported in a later test would no longer match it ("curve must be
# an EllipticCurve instance" in the embedded API server's certificates). Imported once here, it stays.
import cryptography.hazmat.primitives.asymmetric.ec  # noqa: F401
import pytest_netarena
from pytest_netarena.testing.netarena_checkout import CHECKOUT_ENV, malt_checkout

pytest_plugins = ["pytester"]

# Every pytest the tests start (pytester subprocesses, xdist workers, documented commands) rewrites the asserts of
# the plugins' packages (hypothesis, anyio, xdist: about 200 modules) unless it may cache them: with
# PYTHONDONTWRITEBYTECODE set, each start cost 3.5 s of CPU instead of 1.8 s
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--netarena-checkout", metavar="PATH", default=None,
                     help=f"a NetArena checkout (or a bare git mirror of it) for the tests that compare with NetArena; "
                          f"default ${CHECKOUT_ENV} or $NETARENA_MIRROR; without one those tests skip")


def pytest_configure(config: pytest.Config) -> None:
    given = config.getoption("--netarena-checkout")
    if given:  # through the environment, so pytester's runs and subprocesses find it too
        os.environ[CHECKOUT_ENV] = str(Path(given).expanduser().resolve())


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


@pytest.fixture
def suite(pytester: pytest.Pytester):
    """suite(app, ini=""): pytester as a project with that app's real suite (suites/APP/test_APP.py), no plots."""

    def make(app: str, ini: str = "") -> pytest.Pytester:
        pytester.makeini(f"[pytest]\nnetarena_plots = false\n{ini}")
        pytester.makepyfile(**{f"test_{app}": (PACKAGE_ROOT / "suites" / app / f"test_{app}.py").read_text()})
        return pytester

    return make


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    """A NetArena checkout holding its MALT data (--netarena-checkout, or a checkout or mirror the environment names);
    skips, saying how to give one, without."""
    root, why = malt_checkout(tmp_path_factory.mktemp("netarena"))
    if root is None:
        pytest.skip(why)
    return root
