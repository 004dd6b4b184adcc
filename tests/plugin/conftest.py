"""Fixtures the plugin's whole-run tests share: the toy project set up for a model agent."""

from __future__ import annotations

import pytest


@pytest.fixture
def llm_toy(toy: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """The toy project with a fake key and litellm's local price table: model agents start offline."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    return toy
