"""Fixtures of the K8s app tests: one embedded-backend environment per session."""

from __future__ import annotations

import pytest

from pytest_netarena.apps.k8s import APP
from pytest_netarena.core.app import RunOptions


@pytest.fixture(scope="session")
def k8s_env():
    env = APP.make_environment(RunOptions())
    yield env
    env.close()
