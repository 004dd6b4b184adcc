"""The k8s benchmark: one test per generated query x agent x trial."""

import pytest

from pytest_netarena.plugin.assertions import assert_episode


@pytest.mark.netarena("k8s")
def test_episode(netarena_result):
    assert_episode(netarena_result)
