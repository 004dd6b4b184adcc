"""Fixtures of the K8s app tests: one embedded-backend environment per session."""

from __future__ import annotations

import pytest

from pytest_netarena.apps.k8s import APP
from pytest_netarena.core.app import RunOptions


@pytest.fixture(scope="session")
def k8s_env():
    """The default mode: pods running where they can (live runs reproduce, test_live_reproducible), else api-only."""
    env = APP.make_environment(RunOptions())
    yield env
    env.close()
