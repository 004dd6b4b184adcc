"""Workers on "another host" (ssh to 127.0.0.1, the reports folder hidden on their side) and workers that cannot run an app."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

PAID_AGENT = """
import os, signal
from pathlib import Path
from pytest_netarena.core.types import Reply, Usage
from toy_app import ToyAgent

class Agent(ToyAgent):
    '''Solves the toy task for 150 tokens ($0.01) a reply. With a file crash-armed in its folder, the first
    episode with an odd target kills its own worker (once: it leaves crashed beside it).'''
    def answer(self, target):
        if Path("crash-armed").exists() and target % 2:
            try:  # exclusive: when two workers get here at once, one of them dies
                os.close(os.open("crashed", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                pass
            else:
                os.kill(os.getpid(), signal.SIGKILL)
        return Reply(f"set {target}", Usage(100, 50, 0.01))
"""
AGENTS = ("--agent=builtin:oracle", "--agent=builtin:reckless")


@pytest.fixture
def paid(toy: pytest.Pytester) -> pytest.Pytester:
    toy.makepyfile(paid_agent=PAID_AGENT)
    return toy


def run_folder(project: Path) -> Path:
    (run,) = [path.parent for path in (project / "reports").glob("*/run.json")]
    return run


def episode_keys(run: Path) -> list[tuple[str, str, int]]:
    lines = (run / "episodes.jsonl").read_text().splitlines()
    return [(e["query"]["id"], e["agent"], e["trial"]) for e in map(json.loads, lines)]


def test_remote_workers_send_every_episode_to_the_controller_and_write_nothing_on_their_side(toy, remote) -> None:
    (remote.project / "reports" / "canary").write_text("the controller's side")
    seen = remote.server.run(f"{remote.wrapper} -c 'import os; print(os.listdir(\"{remote.project / 'reports'}\"))'")
    assert seen.stdout.strip() == "[]", seen  # the worker side really cannot see the reports folder

    result = toy.runpytest_subprocess(*AGENTS, "--seed=3", "--queries=3", *remote.tx(2))
    result.assert_outcomes(passed=6, failed=6)
    for worker in ("gw0", "gw1"):
        assert re.search(rf"^\[{worker}\] netarena on .*: root, .*; runs toy$", result.stdout.str(), flags=re.MULTILINE)
    run = run_folder(remote.project)
    keys = episode_keys(run)
    assert len(keys) == 12 and len(set(keys)) == 12
    summary = json.loads((run / "summary.json").read_text())
    assert sum(group["overall"]["episodes"] for group in summary["groups"]) == 12
    page = (run / "report.html").read_text()
    assert all(query in page for query, _, _ in keys)
    assert remote.leaks.exists() and remote.written_on_worker_side() == []


def test_the_controller_stops_the_run_across_remote_workers_when_the_budget_is_spent(paid, remote) -> None:
    result = paid.runpytest_subprocess("--agent=python:paid_agent:Agent", "--seed=3", "--queries=5",
                                       "--max-cost-usd=0.03", *remote.tx(2))
    outcomes = result.parseoutcomes()
    ran = outcomes.get("passed", 0)
    # 3 episodes spend the budget; the other worker may have started one more before it learnt so.
    # Budgets per worker would have let every one of the 10 run.
    assert 3 <= ran <= 4 and outcomes.get("skipped", 0) == 10 - ran, outcomes
    run = run_folder(remote.project)
    assert len(episode_keys(run)) == ran
    budget = json.loads((run / "summary.json").read_text())["budget"]
    assert budget["stopped"] and budget["episodes_not_run"] == 10 - ran
    assert budget["cost_usd"] == pytest.approx(0.01 * ran)
    assert json.loads((run / "usage.json").read_text())["cost_usd"] == pytest.approx(0.01 * ran)
    assert remote.written_on_worker_side() == []


def test_a_killed_remote_worker_loses_one_episode_and_resume_runs_each_exactly_once(paid, remote) -> None:
    (paid.path / "crash-armed").write_text("")
    first = paid.runpytest_subprocess("--agent=python:paid_agent:Agent", "--seed=4", "--queries=3", *remote.tx(2))
    assert (paid.path / "crashed").exists()
    first.stdout.fnmatch_lines(["*worker*crashed*"])
    run = run_folder(remote.project)
    before = (run / "episodes.jsonl").read_text().splitlines()
    assert len(before) == 5  # only the episode in flight on the killed worker is lost
    second = paid.runpytest_subprocess("--agent=python:paid_agent:Agent", f"--resume={run}", *remote.tx(2))
    second.assert_outcomes(passed=6)
    keys = episode_keys(run)
    assert len(keys) == 6 and len(set(keys)) == 6
    assert (run / "episodes.jsonl").read_text().splitlines()[:5] == before
    assert json.loads((run / "summary.json").read_text())["groups"][0]["overall"]["episodes"] == 6
    assert remote.written_on_worker_side() == []


def test_a_worker_that_cannot_run_an_app_leaves_its_episodes_to_the_others(toy: pytest.Pytester) -> None:
    result = toy.runpytest_subprocess("--agent=builtin:oracle", "--queries=3", "-v", "-d",
                                      "--tx", "popen//env:TOY_UNAVAILABLE=1", "--tx", "popen")
    result.assert_outcomes(passed=6)  # none skipped: the worker that can run toy ran them all
    out = result.stdout.str()  # the workers' lines come in the order they finished collecting
    assert re.search(r"^\[gw0\] netarena on .*; cannot run toy here, its episodes go to other workers or skip \(the toy backend is not installed on this host\)$",
                     out, flags=re.MULTILINE), out
    assert re.search(r"^\[gw1\] netarena on .*; runs toy$", out, flags=re.MULTILINE), out
    ran_on = re.findall(r"^\[(gw\d)\] .*PASSED", result.stdout.str(), flags=re.MULTILINE)
    assert ran_on == ["gw1"] * 6


def test_a_remote_adversarial_search_keeps_its_finds_on_the_controller(toy, remote) -> None:
    result = toy.runpytest_subprocess("--agent=builtin:reckless", "--adversarial", "--adversarial-examples=5",
                                      "--seed=1", *remote.tx(1))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*adversarial search of toy found a failure of builtin:reckless*",
                                 "*reproduce: pytest test_toy.py --agent=builtin:reckless --corpus=*found.jsonl -k*"])
    (found,) = (remote.project / "reports").glob("*/found.jsonl")
    assert json.loads(found.read_text().splitlines()[0])["outcome"] == "unsafe"
    assert remote.written_on_worker_side() == []


def test_the_corpus_of_a_remote_run_is_saved_by_the_controller(toy, remote) -> None:
    result = toy.runpytest_subprocess("--agent=builtin:oracle", "--seed=3", "--queries=2",
                                      f"--save-corpus={remote.project / 'reports' / 'release.jsonl'}", *remote.tx(2))
    result.assert_outcomes(passed=4)
    lines = (remote.project / "reports" / "release.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["id"] for line in lines) == ["toy-L1-set-0000", "toy-L1-set-0001",
                                                               "toy-L2-set+set-0000", "toy-L2-set+set-0001"]
    assert remote.written_on_worker_side() == []


def test_an_app_no_worker_can_run_skips_with_the_reason(toy: pytest.Pytester) -> None:
    result = toy.runpytest_subprocess("--agent=builtin:oracle", "--queries=2", "-d",
                                      "--tx", "2*popen//env:TOY_UNAVAILABLE=1", "-rs")
    result.assert_outcomes(skipped=4)
    result.stdout.fnmatch_lines(["*toy cannot run here: the toy backend is not installed on this host*"])
