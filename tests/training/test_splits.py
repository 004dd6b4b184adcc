"""Held-out splits: a deterministic partition of each app's query catalogue, used by runs, resets and generate."""

from __future__ import annotations

import json
import re

import pytest

from pytest_netarena.apps import get_app
from pytest_netarena.core.app import RunOptions
from pytest_netarena.core.splits import signature, split_of

APPS = ("k8s", "malt", "route")


@pytest.mark.parametrize("app_name", APPS)
def test_a_split_keeps_the_ids_and_params_of_the_unsplit_run(app_name: str) -> None:
    app = get_app(app_name)
    options = RunOptions(seed=5, levels=(1,))
    level_one = [c for c in app.categories(options) if c.level == 1]
    halves = {split: app.generate(RunOptions(seed=5, queries=2, levels=(1,), split=split)) for split in ("train", "test")}
    for split, queries in halves.items():
        assert len(queries) == 2 * len(level_one)
        for query in queries:
            assert split_of(app_name, query.params) == split
            category = next(c for c in level_one if c.name == query.category)
            unsplit = app.query(category, query.index, options)  # what an unsplit run draws at that index
            assert (unsplit.id, unsplit.seed, unsplit.params) == (query.id, query.seed, query.params)
        assert any(query.index >= 2 for query in queries)  # indices of the other split were skipped
    assert not {q.id for q in halves["train"]} & {q.id for q in halves["test"]}


@pytest.mark.parametrize("app_name", APPS)
def test_no_test_problem_is_ever_drawn_for_train_whatever_the_seed(app_name: str) -> None:
    app = get_app(app_name)
    train = {signature(app_name, q.params) for seed in (1, 2, 3)
             for q in app.generate(RunOptions(seed=seed, queries=4, split="train"))}
    test = {signature(app_name, q.params) for q in app.generate(RunOptions(seed=9, queries=4, split="test"))}
    assert train and test and not train & test


def test_the_signature_is_the_fault_sequence_not_the_network_size() -> None:
    fault = {"type": "disable_routing", "method": "ip_forward_off"}
    small = {"subnets": 2, "hosts": 1, "faults": [fault]}
    large = {"subnets": 8, "hosts": 4, "faults": [fault]}
    assert signature("route", small) == signature("route", large)
    assert split_of("route", small) == split_of("route", large)
    # pinned: a change of the hash would silently move problems between train and test across versions
    assert [t for t in range(1, 41) if split_of("toy", {"target": t}) == "test"] == [7, 12, 14, 15, 33, 35, 36, 39]


def _collected(toy: pytest.Pytester, *args: str) -> list[str]:
    result = toy.runpytest("--agent=builtin:oracle", "--seed=3", "--queries=10", "--collect-only", "-q", *args)
    assert result.ret == 0, result.stdout.str()[-2000:]
    return [line for line in result.stdout.lines if "::test_episode[" in line]


def test_runs_take_split_and_collect_only_that_split(toy: pytest.Pytester) -> None:
    from toy_app import APP  # type: ignore[import-not-found]  (tests/plugin/toy_app.py, on the path via `toy`)

    queries = {q.id: q for q in APP.generate(RunOptions(seed=3, queries=200))}
    collected = {}
    for split in ("train", "test"):
        ids = [re.search(r"\[(.*)\]", line).group(1) for line in _collected(toy, f"--split={split}")]
        assert len(ids) == 20  # 10 per category, both categories
        assert all(split_of("toy", queries[i].params) == split for i in ids)
        collected[split] = set(ids)
    assert not collected["train"] & collected["test"]
    assert len(_collected(toy)) == 20  # default: the whole space, as before


def test_a_run_records_its_split_and_a_bad_split_is_a_usage_error(toy: pytest.Pytester) -> None:
    result = toy.runpytest("--agent=builtin:oracle", "--seed=3", "--queries=2", "--split=test", "-p", "no:randomly")
    assert result.ret == 0, result.stdout.str()[-2000:]
    result.stdout.fnmatch_lines(["*split=test*"])
    (run_json,) = toy.path.glob("reports/*/run.json")
    assert json.loads(run_json.read_text())["options"]["split"] == "test"
    bad = toy.runpytest("--agent=builtin:oracle", "--split=validation")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    assert "--split" in bad.stderr.str() and "Traceback" not in bad.stderr.str() + bad.stdout.str()
