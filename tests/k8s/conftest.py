"""Fixtures of the K8s app tests: one embedded-backend environment per session."""

from __future__ import annotations

import pytest

from pytest_netarena.apps.k8s import APP
from pytest_netarena.core.app import RunOptions


@pytest.fixture(scope="session")
def k8s_env():
    """The API server alone (mode api-only) on any machine: the live mode has its own tests (test_live_backend)."""
    env = APP.make_environment(RunOptions(extra={"k8s_pods": "off"}))
    yield env
    env.close()
