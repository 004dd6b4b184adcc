"""The malt benchmark: one test per generated query x agent x trial."""

import pytest

from pytest_netarena.plugin.assertions import assert_episode


@pytest.mark.netarena("malt")
def test_episode(netarena_result):
    assert_episode(netarena_result)
