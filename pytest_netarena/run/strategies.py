"""Hypothesis strategies over each app's query catalogue (the same description the seeded sampler uses)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.app import App, RunOptions
from ..core.catalogue import Category, HypothesisChooser
from ..core.types import Query


def categories(app: App, options: RunOptions | None = None) -> Any:
    """Strategy over the app's categories within the run's levels, simplest (lowest level) first."""
    from hypothesis import strategies as st

    options = options or RunOptions()
    choices = sorted(c for c in app.categories(options) if c.level in options.levels)
    return st.sampled_from(choices)


def queries(app: App, options: RunOptions | None = None, only: Sequence[Category] | None = None) -> Any:
    """Strategy of Query objects drawn through app.draw_params, so Hypothesis can shrink them."""
    from hypothesis import strategies as st

    options = options or RunOptions()

    @st.composite
    def draw_query(draw: Any) -> Query:
        category = draw(st.sampled_from(sorted(only)) if only else categories(app, options))
        params = app.draw_params(category, HypothesisChooser(draw), options)
        return Query(app.name, category.level, category.name, 0, 0, params)

    return draw_query()
