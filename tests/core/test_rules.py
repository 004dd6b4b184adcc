"""Whose rules score a run: parsed from --compat, and read back from run folders old and new."""

from __future__ import annotations

import pytest

from pytest_netarena.core.app import NETARENA, RunOptions, parse_rules, rules_of
from pytest_netarena.core.errors import UsageError


def test_compat_values_name_the_rules() -> None:
    assert [parse_rules(value) for value in (None, "", "none", "Default", " NetArena ")] == \
        ["default", "default", "default", "default", NETARENA]
    with pytest.raises(UsageError, match="--compat takes netarena"):
        parse_rules("strict")
    assert RunOptions(rules=NETARENA).netarena_compat and not RunOptions().netarena_compat


def test_run_folders_say_rules_and_older_ones_profile() -> None:
    assert rules_of({"rules": NETARENA}) == NETARENA
    assert rules_of({"profile": NETARENA}) == NETARENA  # written before the key was renamed
    assert rules_of({"rules": "default", "profile": NETARENA}) == "default"
    assert rules_of({}) == "default"
