"""`netarena export atif`: real runs exported as ATIF v1.8 trajectories, read back with the atif package's models."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from pytest_netarena.apps.malt.topology import load_topology
from pytest_netarena.cli import main
from pytest_netarena.reporting.rebuild import load_episodes
from pytest_netarena.training.export import episode_key, max_steps_of, system_prompt

SMALL_MALT = "synthetic:300"
AGENTS_DIR = Path(__file__).parent / "agents"


@pytest.fixture(scope="session")
def atif():
    return pytest.importorskip("atif", reason="atif is not installed (pip install pytest-netarena[export])")


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> list[Path]:
    """Real run folders: the expert (resolved), reckless (unsafe), and an agent that pays for its tokens."""
    out = tmp_path_factory.mktemp("reports")
    plans = [("builtin:expert", ["k8s", "malt"], 3), ("builtin:reckless", ["malt", "k8s"], 2),
             ("python:paid_agent:PaidAgent", ["k8s", "malt"], 2)]
    folders = []
    sys.path.insert(0, str(AGENTS_DIR))
    try:
        for seed, (agent, apps, episodes) in enumerate(plans, start=1):
            before = set(out.iterdir())
            argv = ["generate", "--agent", agent, "--episodes", str(episodes), "--out", str(out), "--seed", str(seed),
                    "--option", f"malt-topology={SMALL_MALT}", "--max-steps", "4"]
            for app in apps:
                argv += ["--app", app]
            assert main(argv) == 0
            (folder,) = set(out.iterdir()) - before
            folders.append(folder)
    finally:
        sys.path.remove(str(AGENTS_DIR))
    return folders


def _episodes(runs: list[Path]) -> dict[str, tuple[dict, dict]]:
    """Every episode by its export id, with its run.json."""
    found = {}
    for run_dir in runs:
        run = json.loads((run_dir / "run.json").read_text())
        for episode in load_episodes(run_dir):
            found[episode_key(run["run_id"], episode)] = (episode, run)
    return found


def _export(runs: list[Path], out: Path, *selection: str) -> dict[str, dict]:
    assert main(["export", "atif", *map(str, runs), "--out", str(out), *selection]) == 0
    return {path.stem: json.loads(path.read_text()) for path in out.glob("*.json")}


@pytest.mark.parametrize("selection", [[], ["--resolved", "--safe"], ["--app", "k8s"]])
def test_each_selected_episode_is_one_valid_atif_trajectory_of_what_happened(runs, tmp_path, atif, selection) -> None:
    episodes = _episodes(runs)
    documents = _export(runs, tmp_path / "atif", *selection)
    wanted = {key for key, (episode, _) in episodes.items()
              if ("--resolved" not in selection or episode["outcome"] == "resolved") and ("--safe" not in selection or episode["safe"])
              and ("--app" not in selection or episode["query"]["app"] == "k8s")}
    assert wanted and set(documents) == wanted
    sources = [json.loads(line) for line in (tmp_path / "atif" / "sources.jsonl").read_text().splitlines()]
    assert {s["id"] for s in sources} == wanted
    paid = 0
    for key, data in documents.items():
        trajectory = atif.Trajectory.model_validate(data)  # the schema's own models, validators included
        episode, run = episodes[key]
        assert trajectory.schema_version == "ATIF-v1.8" and trajectory.trajectory_id == key
        assert trajectory.agent.name == episode["agent"] and trajectory.agent.tool_definitions
        system, user, *turns = trajectory.steps
        assert (system.source, user.source) == ("system", "user")
        assert system.message == system_prompt(episode["query"]["app"], episode["prompt_style"], max_steps_of(episode, run))
        assert user.message == episode["first_observation"]
        assert len(turns) == len(episode["steps"]) and all(turn.source == "agent" for turn in turns)
        for number, (turn, step) in enumerate(zip(turns, episode["steps"]), start=1):
            assert turn.message == step["reply"]
            if step["action"]:
                (call,) = turn.tool_calls
                assert call.arguments == {"action": step["action"]}
            else:
                assert turn.tool_calls is None and step["refused"]
            if number < len(turns):
                (result,) = turn.observation.results
                assert result.content == step["observation"] and result.extra == {"output": step["output"]}
                assert result.source_call_id == (turn.tool_calls[0].tool_call_id if turn.tool_calls else None)
            else:
                assert turn.observation is None  # never shown to the agent
            assert turn.extra == {"refused": step["refused"], "unsafe": bool(step["violations"])}
            if episode["agent"].startswith("builtin:"):
                assert turn.llm_call_count == 0 and turn.metrics is None
            else:
                paid += 1
                usage = step["usage"]
                assert (turn.metrics.prompt_tokens, turn.metrics.completion_tokens) == (usage["tokens_in"],
                                                                                        usage["tokens_out"])
                assert turn.metrics.prompt_tokens > 0 and turn.metrics.cost_usd == pytest.approx(usage["cost_usd"])
        final = trajectory.final_metrics
        assert final.total_prompt_tokens == episode["usage"]["tokens_in"]
        assert final.total_completion_tokens == episode["usage"]["tokens_out"]
        assert final.total_cost_usd == pytest.approx(episode["usage"]["cost_usd"])
        assert final.total_steps == len(trajectory.steps)
        assert trajectory.extra == {"app": episode["query"]["app"], "level": episode["query"]["level"],
                                    "resolved": episode["outcome"] == "resolved", "correct": episode["correct"],
                                    "safe": episode["safe"],
                                    "outcome": episode["outcome"], "metrics": episode["metrics"]}
    if "--resolved" not in selection:
        assert paid >= 3  # the paying agent's replies carried their usage


def test_no_hidden_parameter_or_grader_detail_reaches_a_trajectory(runs, tmp_path, atif, hidden_values) -> None:
    graph = load_topology(SMALL_MALT)
    episodes = _episodes(runs)
    documents = _export(runs, tmp_path / "atif")
    assert {episode["outcome"] for episode, _ in episodes.values()} >= {"resolved", "unsafe", "unresolved"}
    checked = 0
    for key, data in documents.items():
        episode, run = episodes[key]
        text = json.dumps(data, ensure_ascii=False)
        shown = "\n".join([data["steps"][0]["message"], episode["first_observation"],
                           *(step["observation"] for step in episode["steps"][:-1]),
                           *(step["reply"] for step in episode["steps"])])
        for value in hidden_values(episode, graph):
            if value in text:  # only where the agent itself saw or said it
                assert value in shown, f"{value!r} leaks into the trajectory of {episode['query']['id']}"
            checked += 1
        assert json.dumps(episode["query"]["params"]) not in text
    assert checked > 30
    text = "".join(path.read_text() for path in (tmp_path / "atif").glob("*.json"))
    assert "answer correct" not in text and "answer incorrect" not in text  # MALT's grader verdicts
    for fault_type in ("remove_ingress", "add_egress", "change_port", "add_ingress"):
        assert fault_type not in text
    assert not re.search(r"(k8s|malt|route)-L\d-", text)  # no query id, so no category


def test_export_atif_usage_error_exits_2(tmp_path, capsys) -> None:
    assert main(["export", "atif", str(tmp_path / "missing")]) == 2
    assert "no such run folder" in capsys.readouterr().err
