"""Fixtures of the suite tests: a pytester project holding one app's real suite, and the episodes its run wrote."""

from __future__ import annotations

import json

import pytest



@pytest.fixture
def episodes(pytester: pytest.Pytester):
    """episodes(): the records of the run's episodes.jsonl (the project holds one run)."""

    def read() -> list[dict]:
        (path,) = (pytester.path / "reports").glob("*/episodes.jsonl")
        return [json.loads(line) for line in path.read_text().splitlines()]

    return read
