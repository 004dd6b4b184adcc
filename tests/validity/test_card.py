"""`netarena validity`: the card of the three apps measures its figures and passes; a planted flaw fails it."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
TOY_DIR = HERE.parent / "plugin"


def _validity(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(TOY_DIR), str(HERE), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "pytest_netarena.cli", "validity", *argv, "--out", str(tmp_path)],
                          capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)


def _items(card: dict) -> dict[tuple[str, str], dict]:
    return {(item["app"], item["id"]): item for item in card["items"]}


@pytest.mark.skipif(os.geteuid() != 0, reason="the route app builds Mininet networks, which needs root")
def test_the_three_apps_card_passes_with_measured_figures(tmp_path) -> None:
    # a given secret: the same queries every run (with a fresh one, route's disable_interface query is now and then
    # the too-small-MTU method, which builtin:random can undo by chance: docs/validity.md)
    done = _validity(tmp_path, "k8s", "route", "malt", "--max-steps", "4", "--option", "malt-topology=synthetic:200",
                     "--secret", "ci-validity")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    card = json.loads((tmp_path / "validity.json").read_text())
    items = _items(card)
    assert card["passed"] and card["settings"]["max_steps"] == 4
    for app in ("k8s", "route", "malt"):
        rates = card["apps"][app]["rates"]
        queries = len(card["apps"][app]["queries"])
        assert queries >= 4  # one per level-1 category
        assert rates["oracle"]["resolved"] == rates["oracle"]["scored"] == queries  # every task solvable
        assert rates["noop"]["resolved"] == 0 and rates["noop"]["scored"] == queries
        assert rates["random"]["resolved"] == 0 and rates["random"]["scored"] == queries
        assert items[(app, "task-solvable")]["status"] == "pass"
        assert items[(app, "task-solvable")]["interval"][1] == 1.0 and items[(app, "task-solvable")]["n"] == queries
        assert items[(app, "noop-scores-zero")]["interval"][0] == 0.0
        ceiling = items[(app, "non-ai-ceiling")]  # the best program with no model, beside noop and random
        assert ceiling["status"] == "pass" and ceiling["n"] == queries and ceiling["interval"] is not None
        assert "beside builtin:noop 0 of" in ceiling["figure"] and "within the card's 4 steps" in ceiling["figure"]
        audit = items[(app, "grader-not-exploitable")]
        assert audit["status"] == "pass" and audit["n"] >= 10 and ": 0 won" in audit["figure"]
        assert items[(app, "isolated-from-ground-truth")]["status"] == "pass"
        residual = items[(app, "residual-state-cleared")]
        assert residual["status"] == "pass" and "same first observation" in residual["figure"]
        contamination = items[(app, "contamination")]  # a secret keys the draw: the controls at work
        assert contamination["status"] == "pass" and contamination["n"] == 3 * queries
        assert "the secret in 0 of" in contamination["figure"] and ", 0 won" in contamination["figure"]
        interfaces = items[(app, "interface-invariance")]  # the oracle's actions through text, tools and MCP
        assert interfaces["status"] == "pass" and ": 0 differences" in interfaces["figure"]
        assert interfaces["n"] == 3 * (queries + 1) and "text, tools, mcp" in interfaces["figure"]
    assert card["settings"]["secret"] == "given"
    malt = items[("malt", "non-ai-ceiling")]["figure"]  # the template compiler that topped NetArena's leaderboard
    assert "builtin:parser (a template compiler of the question text" in malt and "they do;" in malt
    assert "under --compat netarena builtin:parser answered 4 of 4 correctly" in malt
    assert card["apps"]["malt"]["ceiling"]["counts"][0]["agent"] == "parser"
    assert items[("", "confidence-intervals")]["status"] == "pass"
    markdown = (tmp_path / "validity.md").read_text()
    assert "**Card: PASSED**" in markdown and "| route | task-solvable" in markdown
    assert "| k8s | contamination" in markdown


def test_an_app_whose_oracle_cannot_solve_fails_the_card(tmp_path) -> None:
    done = _validity(tmp_path, "toy", "unsolvable", "--register-app", "toy=toy_app:APP",
                     "--register-app", "unsolvable=broken_apps:UNSOLVABLE")
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    card = json.loads((tmp_path / "validity.json").read_text())
    items = _items(card)
    assert not card["passed"]
    assert items[("unsolvable", "task-solvable")]["status"] == "FAIL"
    assert "resolved 0 of 1" in items[("unsolvable", "task-solvable")]["figure"]
    assert items[("toy", "task-solvable")]["status"] == "pass"  # the honest toy app is not blamed
    assert items[("toy", "random-scores-zero")]["status"] == "not measured"  # the toy offers no builtin:random
    assert items[("toy", "non-ai-ceiling")]["status"] == "not measured"  # nor a program with no model
    assert "**Card: FAILED**" in (tmp_path / "validity.md").read_text()


def test_a_random_agent_lucky_once_passes_and_one_that_always_wins_fails(tmp_path) -> None:
    """The card never fails by chance on a correct benchmark: 1 of 5 by luck is what chance gives (route's random MTU
    undoing a too-small one); 5 of 5 is no chance."""
    done = _validity(tmp_path, "lucky", "rigged", "--queries", "5", "--register-app", "lucky=broken_apps:LUCKY",
                     "--register-app", "rigged=broken_apps:RIGGED")
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    items = _items(json.loads((tmp_path / "validity.json").read_text()))
    lucky, rigged = items[("lucky", "random-scores-zero")], items[("rigged", "random-scores-zero")]
    assert lucky["status"] == "pass" and "resolved 1 of 5" in lucky["figure"], lucky
    assert "P(at least 1 of 5 | a rate of 5%) = 0.226, fails below 0.001" in lucky["figure"]
    assert rigged["status"] == "FAIL" and "resolved 5 of 5" in rigged["figure"], rigged


def test_the_chance_rule_fails_a_correct_benchmark_at_most_once_in_a_thousand() -> None:
    """The error rate the card states: with a random agent resolving CHANCE_BOUND of episodes (or less), the item
    fails with probability at most CHANCE_ALPHA, at every n; and it does fail what chance cannot explain."""
    from pytest_netarena.core.stats import binomial_tail
    from pytest_netarena.validity.card import CHANCE_ALPHA, CHANCE_BOUND

    for n in range(1, 301):
        failing = [k for k in range(n + 1) if binomial_tail(k, n, CHANCE_BOUND) < CHANCE_ALPHA]
        error = sum(math.comb(n, k) * CHANCE_BOUND ** k * (1 - CHANCE_BOUND) ** (n - k) for k in failing)
        assert error <= CHANCE_ALPHA, (n, error)
    assert binomial_tail(1, 5, CHANCE_BOUND) >= CHANCE_ALPHA and binomial_tail(4, 5, CHANCE_BOUND) < CHANCE_ALPHA
    assert binomial_tail(10, 60, CHANCE_BOUND) < CHANCE_ALPHA  # a sixth of 60 episodes is no chance at 5%


def test_an_app_this_host_cannot_run_is_not_measured_here_and_fails_nothing(tmp_path, monkeypatch) -> None:
    """As route for a plain user: the card says why it was not measured, and does not fail for it (exit 3)."""
    monkeypatch.setenv("TOY_UNAVAILABLE", "1")
    done = _validity(tmp_path, "toy", "malt", "--register-app", "toy=toy_app:APP",
                     "--option", "malt-topology=synthetic:200")
    assert done.returncode == 3, done.stdout[-3000:] + done.stderr[-3000:]
    card = json.loads((tmp_path / "validity.json").read_text())
    item = _items(card)[("toy", "measured")]
    assert item["status"] == "not measured" and card["passed"]
    assert item["figure"] == "not measured here, because the toy backend is not installed on this host"
    assert not [i for i in card["items"] if i["status"] == "FAIL"]
    markdown = (tmp_path / "validity.md").read_text()
    assert "**Card: PASSED** (toy not measured here, because the toy backend is not installed on this host)" in markdown
    assert "validity card: PASSED; toy not measured here, because the toy backend" in done.stdout


def test_without_a_secret_the_contamination_item_is_shown_unmeasured(tmp_path) -> None:
    done = _validity(tmp_path, "malt", "--secret", "none", "--option", "malt-topology=synthetic:200")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    item = _items(json.loads((tmp_path / "validity.json").read_text()))[("malt", "contamination")]
    assert item["status"] == "not measured" and "the public seed alone" in item["figure"]  # visible, never a pass


def test_a_card_written_into_a_run_folder_is_linked_from_its_report(tmp_path) -> None:
    from pytest_netarena.cli import main

    assert main(["generate", "--app", "malt", "--episodes", "1", "--agent", "builtin:noop", "--out", str(tmp_path),
                 "--option", "malt-topology=synthetic:200"]) == 0
    (run_dir,) = tmp_path.iterdir()
    assert 'href="validity.md"' not in (run_dir / "report.html").read_text()
    done = _validity(run_dir, "malt", "--option", "malt-topology=synthetic:200")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    page = (run_dir / "report.html").read_text()
    assert 'href="validity.md"' in page and 'href="validity.json"' in page and (run_dir / "validity.md").is_file()


def test_an_unknown_app_is_one_line_usage_error(tmp_path) -> None:
    done = _validity(tmp_path, "nosuch")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "unknown app nosuch" in done.stderr
    assert not (tmp_path / "validity.json").exists()


def test_an_environment_that_keeps_state_across_resets_fails_the_residual_item(tmp_path) -> None:
    done = _validity(tmp_path, "toy", "leaky", "--queries", "2", "--register-app", "toy=toy_app:APP",
                     "--register-app", "leaky=broken_apps:LEAKY")
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    items = _items(json.loads((tmp_path / "validity.json").read_text()))
    assert items[("leaky", "residual-state-cleared")]["status"] == "FAIL"
    figure = items[("leaky", "residual-state-cleared")]["figure"]
    assert "different first observation" in figure and "vs 'counter is 0; make it" in figure  # a counter stayed
    assert items[("toy", "residual-state-cleared")]["status"] == "pass"


@pytest.mark.parametrize("app_name", ["k8s", "route", "malt"])
def test_the_random_agent_knows_no_hidden_parameter(app_name) -> None:
    """Two queries with the same seed and different hidden parameters get the same random replies."""
    from pytest_netarena.apps import get_app
    from pytest_netarena.core.app import RunOptions
    from pytest_netarena.core.types import Query, Task

    app = get_app(app_name)
    first, second = app.generate(RunOptions(seed=3, queries=2, levels=(1,), extra={"route_size": "2x1"}))[:2]
    assert first.params != second.params
    observation = ("Router r0 (IP forwarding router)\nSubnet 192.168.1.0/24: switch s1, router interface r0-eth1 "
                   "(gateway 192.168.1.1), hosts h1\nh1 -> X r0\nr0 -> h1\n")
    replies = []
    for params in (first.params, second.params):
        agent = app.builtin_agent("random", Query(app_name, 1, first.category, 0, first.seed, params), None)
        agent.reset(Task(app=app_name, episode_id="e", system_prompt="", prompt_style="zero-shot", max_steps=5))
        replies.append([str(agent.act(observation)) for _ in range(5)])
    assert replies[0] == replies[1]
    other = app.builtin_agent("random", Query(app_name, 1, first.category, 0, first.seed + 1, first.params), None)
    other.reset(Task(app=app_name, episode_id="e", system_prompt="", prompt_style="zero-shot", max_steps=5))
    assert [str(other.act(observation)) for _ in range(5)] != replies[0]  # it is random: another seed, other replies
