"""Fixtures of the suite tests: a pytester project holding one app's real suite, and the episodes its run wrote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


@pytest.fixture
def suite(pytester: pytest.Pytester):
    """suite(app): pytester as a project with that app's real suite (suites/APP/test_APP.py), no plots."""

    def make(app: str) -> pytest.Pytester:
        pytester.makeini("[pytest]\nnetarena_plots = false\n")
        pytester.makepyfile(**{f"test_{app}": (ROOT / "suites" / app / f"test_{app}.py").read_text()})
        return pytester

    return make


@pytest.fixture
def episodes(pytester: pytest.Pytester):
    """episodes(): the records of the run's episodes.jsonl (the project holds one run)."""

    def read() -> list[dict]:
        (path,) = (pytester.path / "reports").glob("*/episodes.jsonl")
        return [json.loads(line) for line in path.read_text().splitlines()]

    return read
