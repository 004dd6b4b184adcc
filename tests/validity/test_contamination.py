"""Contamination controls: a run secret keys the hidden parameters, the canary marks prompts and exports, held-out
runs keep counts and rates only; each proved on real runs of the MALT suite (fast, no root)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_netarena.apps import get_app
from pytest_netarena.core.app import RunOptions
from pytest_netarena.core.canary import CANARY, GUID
from pytest_netarena.core.splits import HELDOUT_SEEDS
from pytest_netarena.validity.conformance import SMALL

ROOT = Path(__file__).resolve().parents[2]
#: a python: agent that writes down everything the harness shows it (task and observations) and answers nothing
SPY = '''
import json, os

class Spy:
    def reset(self, task):
        self.log = open(os.environ["SPY_LOG"], "a", encoding="utf-8")
        self.log.write(json.dumps({"task": vars(task)}, default=str) + "\\n")
    def act(self, observation):
        self.log.write(json.dumps({"observation": str(observation)}) + "\\n")
        self.log.flush()
        return "I cannot answer."
    def close(self):
        self.log.close()
'''


def _params(app_name: str, options: RunOptions) -> list[tuple[str, str]]:
    return [(query.id, json.dumps(query.params, sort_keys=True, default=str)) for query in
            get_app(app_name).generate(options)]


@pytest.mark.parametrize("app_name", ["k8s", "route", "malt"])
def test_the_same_seed_with_two_secrets_gives_other_hidden_parameters(app_name) -> None:
    options = RunOptions(seed=5, queries=2, levels=(1,), extra=dict(SMALL))
    public, alpha, beta = (_params(app_name, replace(options, secret=secret)) for secret in ("", "alpha", "beta"))
    assert [i for i, _ in public] == [i for i, _ in alpha] == [i for i, _ in beta]  # the public query ids stay
    assert alpha == _params(app_name, replace(options, secret="alpha"))  # same seed, same secret: same episodes
    for other in (public, beta):  # the seed alone (or another secret) gives most queries other hidden parameters
        differing = sum(a != b for (_, a), (_, b) in zip(alpha, other))
        assert differing >= len(alpha) // 2, (differing, len(alpha))


def _pytest(where: Path, *argv: str, spy_log: Path | None = None) -> subprocess.CompletedProcess:
    (where / "spy_agent.py").write_text(SPY)
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "PYTHONPATH": os.pathsep.join([str(where), os.environ.get("PYTHONPATH", "")]),
           "SPY_LOG": str(spy_log or where / "spy.jsonl")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", str(ROOT / "suites" / "malt"), "--queries=1", "--levels=1",
         "--malt-topology=synthetic:300", "-p", "no:randomly", "-p", "no:xdist", f"--reports-dir={where / 'reports'}",
         "-q", "-o", "netarena_plots=false", *argv],
        cwd=where, env=env, capture_output=True, text=True, timeout=600, check=False)


def _run_dir(where: Path) -> Path:
    (run_dir,) = (where / "reports").iterdir()
    return run_dir


@pytest.fixture(scope="module")
def secret_run(tmp_path_factory) -> Path:
    """A run given neither --seed nor --secret: both are drawn; the spy and the oracle play it."""
    where = tmp_path_factory.mktemp("secret-run")
    done = _pytest(where, "--agent=python:spy_agent:Spy", "--agent=builtin:oracle")
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-2000:]
    return _run_dir(where)


def test_a_run_without_seed_draws_a_secret_that_only_the_run_folder_keeps(secret_run: Path) -> None:
    run = json.loads((secret_run / "run.json").read_text())
    secret = run["private"]["secret"]
    assert run["secret_in_use"] is True and len(secret) == 32 and run["canary"] == CANARY
    episodes = [json.loads(line) for line in (secret_run / "episodes.jsonl").read_text().splitlines()]
    played = {(e["query"]["id"], json.dumps(e["query"]["params"], sort_keys=True)) for e in episodes}
    options = RunOptions(seed=run["seed"], queries=1, levels=(1,), extra={"malt_topology": "synthetic:300"})
    # whoever holds the run folder regenerates its episodes; the public seed alone does not
    assert played == set(_params("malt", replace(options, secret=secret)))
    assert played != set(_params("malt", options))
    for path in secret_run.rglob("*"):
        if path.is_file() and path.name != "run.json":
            assert secret not in path.read_text(errors="replace"), path


def test_the_agent_sees_the_canary_and_never_the_secret(secret_run: Path) -> None:
    secret = json.loads((secret_run / "run.json").read_text())["private"]["secret"]
    view = (secret_run.parents[1] / "spy.jsonl").read_text()
    seen = [json.loads(line) for line in view.splitlines()]
    tasks = [line["task"] for line in seen if "task" in line]
    assert tasks and len(seen) > len(tasks)  # the spy saw its tasks and observations
    assert all(GUID in task["system_prompt"] for task in tasks)
    assert secret not in view


def test_every_export_carries_the_canary_and_not_the_secret(secret_run: Path, tmp_path: Path) -> None:
    from pytest_netarena.cli import main

    secret = json.loads((secret_run / "run.json").read_text())["private"]["secret"]
    for argv, out in ((["export", "sft", "--format", "sharegpt"], tmp_path / "sharegpt"),
                      (["export", "sft"], tmp_path / "openai"), (["export", "atif"], tmp_path / "atif")):
        assert main([*argv, str(secret_run), "--out", str(out)]) == 0
        files = [path for path in out.rglob("*") if path.is_file() and path.name != "sources.jsonl"]
        assert files
        for path in files:
            text = path.read_text()
            rows = text.splitlines() if path.suffix == ".jsonl" else [text]
            assert all(GUID in row for row in rows), path
            assert secret not in text
    lines = (secret_run / "episodes.jsonl").read_text().splitlines()
    assert lines and all(json.loads(line)["canary"] == CANARY for line in lines)  # the run's transcripts too
    page = (secret_run / "report.html").read_text()
    assert GUID in page and "from the seed and a run secret" in page and secret not in page


def test_a_seeded_run_without_secret_is_reproduced_by_its_seed_alone(tmp_path: Path) -> None:
    done = _pytest(tmp_path, "--agent=builtin:noop", "--seed=77")
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-2000:]
    run_dir = _run_dir(tmp_path)
    run = json.loads((run_dir / "run.json").read_text())
    assert run["secret_in_use"] is False and run["private"]["secret"] == ""
    episodes = [json.loads(line) for line in (run_dir / "episodes.jsonl").read_text().splitlines()]
    options = RunOptions(seed=77, queries=1, levels=(1,), extra={"malt_topology": "synthetic:300"})
    assert {(e["query"]["id"], json.dumps(e["query"]["params"], sort_keys=True)) for e in episodes} == \
        set(_params("malt", options))
    assert "from the seed alone" in (run_dir / "report.html").read_text()


def test_a_held_out_run_keeps_counts_and_rates_only(tmp_path: Path) -> None:
    done = _pytest(tmp_path, "--agent=builtin:oracle", "--agent=python:spy_agent:Spy", "--split=heldout")
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-2000:]
    run_dir = _run_dir(tmp_path)
    run = json.loads((run_dir / "run.json").read_text())
    assert run["seed"] in HELDOUT_SEEDS and run["secret_in_use"] and run["options"]["split"] == "heldout"
    episodes = [json.loads(line) for line in (run_dir / "episodes.jsonl").read_text().splitlines()]
    oracle = [e for e in episodes if e["agent"] == "builtin:oracle"]
    assert oracle and all(e["outcome"] == "resolved" for e in oracle)  # the counts are real
    for episode in episodes:
        assert episode["query"]["params"] == {} and episode["query"]["seed"] == 0 and not episode["first_observation"]
        assert all(not (s["reply"] or s["observation"] or s["output"] or s["action"]) for s in episode["steps"])
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["groups"] and sum(g["overall"]["episodes"] for g in summary["groups"]) == len(episodes)
    assert {g["agent"]: g["overall"]["resolved"]["k"] for g in summary["groups"]}["builtin:oracle"] == len(oracle)
    view = (tmp_path / "spy.jsonl").read_text()
    seen = [json.loads(line) for line in view.splitlines()]
    observations = [line["observation"] for line in seen if "observation" in line]
    assert observations
    for path in run_dir.rglob("*"):  # neither the question asked nor the oracle's program left a trace
        if path.is_file() and path.suffix in (".jsonl", ".json", ".html", ".xml"):
            text = path.read_text()
            assert "def process_graph" not in text and not any(o[:80] in text for o in observations), path
    assert "def process_graph" not in done.stdout
    from pytest_netarena.cli import main

    assert main(["export", "sft", str(run_dir), "--out", str(tmp_path / "sft")]) == 2  # nothing to export


@pytest.mark.parametrize("argv", [["--split=heldout", "--seed=5"], [f"--seed={HELDOUT_SEEDS.start}"],
                                  ["--split=heldout", "--secret=none"],
                                  ["--split=heldout", f"--seed={HELDOUT_SEEDS.start}", "--shard=1/2"]])
def test_held_out_seeds_belong_to_held_out_runs_only(tmp_path: Path, argv: list[str]) -> None:
    done = _pytest(tmp_path, "--agent=builtin:noop", *argv)
    assert done.returncode == 4 and "held-out" in done.stderr + done.stdout, done.stdout[-2000:] + done.stderr[-2000:]


def test_training_data_never_comes_from_the_held_out_range(tmp_path: Path) -> None:
    from pytest_netarena.cli import main

    common = ["generate", "--app", "malt", "--episodes", "1", "--out", str(tmp_path), "--agent", "builtin:noop"]
    assert main([*common, "--split", "heldout"]) == 2
    assert main([*common, "--seed", str(HELDOUT_SEEDS.start + 1)]) == 2
    assert not list(tmp_path.iterdir())


def test_resume_reruns_a_missing_episode_with_the_runs_secret(tmp_path: Path) -> None:
    done = _pytest(tmp_path, "--agent=builtin:oracle", "--seed=5", "--secret=alpha")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    run_dir = _run_dir(tmp_path)
    assert json.loads((run_dir / "run.json").read_text())["private"]["secret"] == "alpha"
    lines = (run_dir / "episodes.jsonl").read_text().splitlines()
    public = dict(_params("malt", RunOptions(seed=5, queries=1, levels=(1,), extra={"malt_topology": "synthetic:300"})))
    # an episode whose hidden parameters the seed alone would draw otherwise: only the secret brings it back
    line = next(line for line in lines if json.dumps(json.loads(line)["query"]["params"], sort_keys=True)
                != public[json.loads(line)["query"]["id"]])
    dropped = json.loads(line)
    (run_dir / "episodes.jsonl").write_text("\n".join(kept for kept in lines if kept != line) + "\n")
    done = _pytest(tmp_path, f"--resume={run_dir}")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    rerun = [json.loads(line) for line in (run_dir / "episodes.jsonl").read_text().splitlines()]
    again = [e for e in rerun if e["query"]["id"] == dropped["query"]["id"]]
    assert len(again) == 1 and again[0]["query"] == dropped["query"]  # the same hidden parameters, from run.json
    assert again[0]["outcome"] == "resolved" and len(rerun) == len(lines)


def test_shards_drawn_with_other_secrets_are_not_merged_and_the_error_shows_neither(tmp_path: Path) -> None:
    from pytest_netarena.reporting import artifacts
    from pytest_netarena.reporting.merge import check_shards
    from pytest_netarena.reporting.rebuild import ReportError

    folders = []
    for index, secret in ((1, "first-secret"), (2, "other-secret")):
        folder = tmp_path / f"shard{index}"
        artifacts.write_run_info(folder, {"run_id": f"r{index}", "seed": 3, "shard": f"{index}/2", "agents": ["a"],
                                          "options": {}, "secret_in_use": True, "private": {"secret": secret}})
        folders.append(folder)
    with pytest.raises(ReportError, match="run secret differs") as caught:
        check_shards(folders)
    assert "first-secret" not in str(caught.value) and "other-secret" not in str(caught.value)
    artifacts.write_run_info(folders[1], {**json.loads((folders[1] / "run.json").read_text()),
                                          "private": {"secret": "first-secret"}})
    assert len(check_shards(folders)) == 2  # the same secret: slices of one run


def test_generate_and_mcp_take_a_secret_and_keep_it_private(tmp_path: Path) -> None:
    from pytest_netarena.cli import main
    from pytest_netarena.mcp.episode import ServeConfig, pick_query

    argv = ["generate", "--app", "malt", "--episodes", "4", "--agent", "builtin:noop", "--seed", "5",
            "--option", "malt-topology=synthetic:300", "--levels", "1"]
    assert main([*argv, "--out", str(tmp_path / "keyed"), "--secret", "alpha"]) == 0
    (run_dir,) = (tmp_path / "keyed").iterdir()
    run = json.loads((run_dir / "run.json").read_text())
    assert run["private"] == {"secret": "alpha"} and run["secret_in_use"] and run["canary"] == CANARY
    played = {(e["query"]["id"], json.dumps(e["query"]["params"], sort_keys=True))
              for e in map(json.loads, (run_dir / "episodes.jsonl").read_text().splitlines())}
    options = RunOptions(seed=5, queries=1, levels=(1,), extra={"malt_topology": "synthetic:300"})
    assert played == set(_params("malt", replace(options, secret="alpha"))) != set(_params("malt", options))
    assert "alpha" not in (run_dir / "report.html").read_text() + (run_dir / "episodes.jsonl").read_text()
    extra = {"malt_topology": "synthetic:300"}
    served = {secret: pick_query(get_app("malt"), ServeConfig("malt", seed=5, secret=secret, levels=(1,),
                                                              extra=extra).run_options())
              for secret in ("", "alpha")}
    assert served["alpha"].id == served[""].id and served["alpha"].params != served[""].params
