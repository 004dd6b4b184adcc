"""The controller's hand-off to xdist workers: typed, sent as plain values, read back whole."""

from __future__ import annotations

from types import SimpleNamespace

import execnet
import pytest

from pytest_netarena.core.types import Query
from pytest_netarena.plugin.state import worker_input
from pytest_netarena.run.worker_input import WorkerInput

#: what xdist itself puts in a worker's workerinput
XDIST_KEYS = {"workerid": "gw3", "workercount": 4, "testrunuid": "abc", "mainargv": ["pytest"]}


def test_the_hand_off_survives_execnet_and_comes_back_equal():
    corpus = (Query("malt", 2, "add+count", 7, 2**63 + 5, {"node": "ju1.a1.m1.s2c1", "nested": {"k": [1, 2]}}),)
    run_info = {"seed": 11, "run_id": "r1", "options": {"queries": 2, "levels": [1, 2]}}
    handed = WorkerInput(seed=11, run_id="r1", shard="2/3", in_flight=4, corpus=corpus, run_info=run_info)
    sent = {**XDIST_KEYS, **handed.to_workerinput()}
    received = execnet.loads(execnet.dumps(sent))  # what the worker's config.workerinput holds
    assert WorkerInput.from_workerinput(received) == handed
    assert received["workerid"] == "gw3"  # ours sit beside xdist's keys, never over them
    assert all(key.startswith("netarena_") for key in handed.to_workerinput())


def test_a_run_without_corpus_or_resume_hands_off_none_for_both():
    received = execnet.loads(execnet.dumps(WorkerInput(seed=0, run_id="r0").to_workerinput()))
    back = WorkerInput.from_workerinput(received)
    assert (back.corpus, back.run_info, back.shard, back.in_flight) == (None, None, None, None)


def test_the_plugin_reads_the_hand_off_once_and_refuses_a_controller_without_netarena():
    assert worker_input(SimpleNamespace(stash=pytest.Stash())) is None  # the controller, or no xdist
    config = SimpleNamespace(workerinput={**XDIST_KEYS, **WorkerInput(seed=5, run_id="r5").to_workerinput()},
                             stash=pytest.Stash())
    first = worker_input(config)
    assert first is not None and first.seed == 5 and worker_input(config) is first
    with pytest.raises(pytest.UsageError, match="controller must run pytest-netarena"):
        worker_input(SimpleNamespace(workerinput=dict(XDIST_KEYS), stash=pytest.Stash()))


def _lookup(**given):
    """An option lookup as the plugin's: the value given, else the ini default."""
    from pytest_netarena.apps.options import BUILTIN_OPTIONS
    from pytest_netarena.plugin.options import _OPTIONS

    values = {name: default for _, name, _, _, _, default in _OPTIONS}
    values.update({spec.name: spec.default for specs in BUILTIN_OPTIONS.values() for spec in specs})
    values.update({"a2a-streaming": "true", "unsandboxed": "false"})
    values.update({name.replace("_", "-"): value for name, value in given.items()})
    return values.get


def test_a_worker_takes_the_controllers_seed_run_and_corpus_and_checks_no_controller_path(tmp_path):
    from pytest_netarena.core.errors import UsageError
    from pytest_netarena.run.settings import build_settings

    query = Query("malt", 1, "list", 0, 99, {"question": "q"})
    option = _lookup(corpus=str(tmp_path / "only-on-the-controller.jsonl"), seed="1", reports_dir=str(tmp_path))
    worker = WorkerInput(seed=7, run_id="r7", corpus=(query,))
    settings = build_settings(option, agents=["builtin:oracle"], adversarial=False, worker=worker, resumed=None,
                              rootpath=tmp_path)
    assert (settings.seed, settings.run_id, settings.corpus, settings.run_options.seed) == (7, "r7", [query], 7)
    with pytest.raises(UsageError, match="only-on-the-controller.jsonl: no such file"):
        build_settings(option, agents=["builtin:oracle"], adversarial=False, worker=None, resumed=None,
                       rootpath=tmp_path)


# a run folder written before the prompt style was renamed says "strategy" and "profile"; it resumes the same
@pytest.mark.parametrize(("style_key", "rules_key"), [("prompt_style", "rules"), ("strategy", "profile")])
def test_a_resumed_runs_own_options_win_over_the_command_line(tmp_path, style_key, rules_key):
    import json

    from pytest_netarena.reporting.artifacts import read_run_info
    from pytest_netarena.run.settings import build_settings

    run = tmp_path / "run-1"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({
        "run_id": "run-1", "seed": 42, rules_key: "netarena", "agents": ["builtin:oracle"],
        "options": {"queries": 2, "levels": [1, 3], "levels_given": False, style_key: "cot", "trials": 3,
                    "max_steps": 4, "split": "test", "unsandboxed": True},
    }))
    option = _lookup(resume=str(run), queries="5", levels="2", prompt_style="few-shot", trials="1", max_steps="9",
                     seed="3", reports_dir=str(tmp_path / "elsewhere"))
    settings = build_settings(option, agents=["builtin:oracle"], adversarial=False, worker=None,
                              resumed=read_run_info(run), rootpath=tmp_path)
    options = settings.run_options
    assert (settings.seed, settings.run_id, settings.trials, settings.run_dir) == (42, "run-1", 3, run.resolve())
    assert (options.queries, options.levels, options.levels_given, options.prompt_style, options.max_steps) == \
        (2, (1, 3), False, "cot", 4)
    assert (options.split, options.sandboxed, options.rules) == ("test", False, "netarena")
