"""`netarena generate` and `netarena export sft`: real runs, exported, re-read by `datasets`, with nothing hidden leaking."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from pytest_netarena.apps.malt.topology import load_topology
from pytest_netarena.cli import main
from pytest_netarena.reporting.rebuild import load_episodes
from pytest_netarena.training.export import episode_key, max_steps_of, system_prompt

SMALL_MALT = "synthetic:300"


def _route_ok() -> bool:
    if os.geteuid() != 0:
        return False
    from pytest_netarena.apps.route.network.capabilities import backend_missing

    return backend_missing() is None


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> list[Path]:
    """Three real run folders: the expert on every app, reckless (unsafe) and noop (unresolved) agents."""
    out = tmp_path_factory.mktemp("reports")
    apps = ["k8s", "malt"] + (["route"] if _route_ok() else [])
    plans = [("builtin:expert", apps, 4, 1), ("builtin:reckless", ["malt", "k8s"], 3, 2), ("builtin:noop", ["k8s"], 2, 3)]
    folders = []
    for agent, names, episodes, seed in plans:
        before = set(out.iterdir())
        argv = ["generate", "--agent", agent, "--episodes", str(episodes), "--out", str(out), "--seed", str(seed),
                "--option", f"malt-topology={SMALL_MALT}", "--option", "route-size=2x1", "--max-steps", "6"]
        for name in names:
            argv += ["--app", name]
        assert main(argv) == 0
        (folder,) = set(out.iterdir()) - before
        folders.append(folder)
    return folders


def _all_episodes(runs: list[Path]) -> list[tuple[str, dict]]:
    found = []
    for run in runs:
        run_id = json.loads((run / "run.json").read_text())["run_id"]
        found.extend((run_id, episode) for episode in load_episodes(run))
    return found


def test_generate_writes_run_folders_with_the_runs_seeds_and_ids(runs) -> None:
    from pytest_netarena.apps import get_app
    from pytest_netarena.core.app import RunOptions

    expert = load_episodes(runs[0])
    run = json.loads((runs[0] / "run.json").read_text())
    assert run["seed"] == 1 and run["agents"] == ["builtin:expert"] and (runs[0] / "summary.json").exists()
    generated = {q.id: q for q in get_app("k8s").generate(RunOptions(seed=1, queries=1, extra={"k8s_app": None}))}
    k8s = [e for e in expert if e["query"]["app"] == "k8s"]
    assert len(k8s) == 4 and len({e["query"]["category"] for e in k8s}) == 4  # round-robin over categories
    for episode in k8s:
        assert episode["query"]["params"] == generated[episode["query"]["id"]].params
    assert sum(e["outcome"] == "resolved" for e in expert) >= len(expert) - 1
    assert any(e["outcome"] == "unsafe" for e in load_episodes(runs[1]))
    assert all(e["outcome"] == "unresolved" for e in load_episodes(runs[2]))


def _expected_messages(episode: dict, run: dict) -> list[dict[str, str]]:
    """What the model saw and said, rebuilt here from the transcript (not by the exporter)."""
    style = episode["prompt_style"]
    messages = [{"role": "system", "content": system_prompt(episode["query"]["app"], style, max_steps_of(episode, run))},
                {"role": "user", "content": episode["first_observation"]}]
    shown = [step["observation"] for step in episode["steps"][:-1]]
    for step, observation in zip(episode["steps"], shown + [None]):
        messages.append({"role": "assistant", "content": step["reply"]})
        if observation is not None:
            messages.append({"role": "user", "content": observation})
    return messages


@pytest.mark.parametrize("selection", [
    [],
    ["--resolved", "--safe"],
    ["--safe", "--app", "malt"],
    ["--level", "1", "--app", "k8s", "--app", "route"],
])
def test_export_round_trips_through_datasets_with_exactly_the_selected_episodes(runs, selection, tmp_path,
                                                                                 hf_datasets) -> None:
    def wanted(episode: dict) -> bool:
        apps = [selection[i + 1] for i, a in enumerate(selection) if a == "--app"]
        levels = [int(selection[i + 1]) for i, a in enumerate(selection) if a == "--level"]
        return (episode["outcome"] != "infra_error" and bool(episode["steps"])
                and ("--resolved" not in selection or episode["outcome"] == "resolved")
                and ("--safe" not in selection or episode["safe"])
                and (not apps or episode["query"]["app"] in apps)
                and (not levels or episode["query"]["level"] in levels))

    expected = {episode_key(run_id, e): (run_id, e) for run_id, e in _all_episodes(runs) if wanted(e)}
    assert expected, "the selection holds episodes"
    runs_by_id = {json.loads((r / "run.json").read_text())["run_id"]: json.loads((r / "run.json").read_text())
                  for r in runs}
    for form in ("openai", "sharegpt", "hf"):
        out = tmp_path / form
        assert main(["export", "sft", *map(str, runs), "--format", form, "--out", str(out), *selection]) == 0
        if form == "hf":
            rows = list(hf_datasets.load_from_disk(str(out / "hf")))
        else:
            rows = list(hf_datasets.load_dataset("json", data_files=str(out / "data.jsonl"), split="train"))
        sources = [json.loads(line) for line in (out / "sources.jsonl").read_text().splitlines()]
        assert [s["id"] for s in sources] and len(rows) == len(sources) == len(expected)
        assert {s["id"] for s in sources} == set(expected)
        for row, source in zip(rows, sources):
            run_id, episode = expected[source["id"]]
            assert source["query_id"] == episode["query"]["id"] and source["run_id"] == run_id
            if form == "sharegpt":
                roles = {"system": "system", "human": "user", "gpt": "assistant"}
                messages = [{"role": roles[t["from"]], "content": t["value"]} for t in row["conversations"]]
            else:
                messages = [{"role": m["role"], "content": m["content"]} for m in row["messages"]]
            assert messages == _expected_messages(episode, runs_by_id[run_id])
            if form != "openai":
                assert (row["app"], row["level"], row["resolved"], row["correct"], row["safe"]) == (
                    episode["query"]["app"], episode["query"]["level"], episode["outcome"] == "resolved",
                    episode["correct"], episode["safe"])


def test_no_hidden_parameter_or_grader_detail_reaches_the_exported_data(runs, tmp_path, hf_datasets,
                                                                          hidden_values) -> None:
    graph = load_topology(SMALL_MALT)
    out = tmp_path / "sharegpt"
    assert main(["export", "sft", *map(str, runs), "--format", "sharegpt", "--out", str(out)]) == 0
    rows = [json.loads(line) for line in (out / "data.jsonl").read_text().splitlines()]
    episodes = {episode_key(run_id, e): e for run_id, e in _all_episodes(runs)}
    checked = 0
    for row in rows:
        episode = episodes[row["id"]]
        seen = "\n".join([episode["first_observation"], *(s["observation"] for s in episode["steps"][:-1])])
        said = "\n".join(step["reply"] for step in episode["steps"])
        facts = json.dumps({key: value for key, value in row.items() if key != "conversations"})
        for value in hidden_values(episode, graph):
            assert value not in facts, f"{value!r} is in the exported facts of {episode['query']['id']}"
            for turn in row["conversations"]:
                source = said if turn["from"] == "gpt" else seen + "\n" + turn["value"] * (turn["from"] == "system")
                if value in turn["value"]:
                    assert value in source, f"{value!r} leaks into a {turn['from']} turn of {episode['query']['id']}"
            checked += 1
    assert checked > 50
    text = (out / "data.jsonl").read_text()
    assert "answer correct" not in text and "answer incorrect" not in text  # MALT's grader verdicts
    for fault_type in ("remove_ingress", "add_egress", "change_port", "disable_routing", "wrong_routing_table"):
        assert fault_type not in text
    assert not re.search(r"(k8s|malt|route)-L\d-", text)  # no query id, so no category


def test_export_usage_errors_exit_2(tmp_path, capsys) -> None:
    assert main(["export", "sft", str(tmp_path / "missing"), "--format", "openai"]) == 2
    assert "no such run folder" in capsys.readouterr().err
    assert main(["generate", "--episodes", "1", "--out", str(tmp_path), "--app", "nope"]) == 2
    assert main(["generate", "--episodes", "1", "--out", str(tmp_path), "--split", "validation"]) == 2


def test_a_benchmark_run_folder_exports_like_a_generated_one(pytester: pytest.Pytester, monkeypatch, hf_datasets) -> None:
    root = Path(__file__).resolve().parents[2]
    monkeypatch.setenv("PYTHONPATH", str(root))
    result = pytester.runpytest_subprocess(str(root / "suites" / "malt"), "--agent=builtin:expert", "--queries=1",
                                           "--levels=1", f"--malt-topology={SMALL_MALT}", "--seed=4",
                                           "--no-plots", "--reports-dir", str(pytester.path / "reports"))
    assert result.ret == 0, result.stdout.str()[-2000:]
    (run,) = (pytester.path / "reports").iterdir()
    out = pytester.path / "sft"
    assert main(["export", "sft", str(run), "--format", "openai", "--out", str(out)]) == 0
    rows = list(hf_datasets.load_dataset("json", data_files=str(out / "data.jsonl"), split="train"))
    assert len(rows) == 4  # the four level-1 MALT categories
    for row in rows:
        roles = [m["role"] for m in row["messages"]]
        assert roles == ["system", "user", "assistant"]
        assert "You have at most 3 steps" in row["messages"][0]["content"]  # MALT's default budget
        assert row["messages"][1]["content"].startswith("[Step 1 of 3")
        assert "```python" in row["messages"][2]["content"]


def test_generate_on_several_jobs_plays_the_same_queries(tmp_path) -> None:
    def played(jobs: int) -> dict[str, str]:
        out = tmp_path / f"jobs{jobs}"
        assert main(["generate", "--episodes", "6", "--out", str(out), "--app", "malt", "--seed", "2",
                     "--jobs", str(jobs), "--option", f"malt-topology={SMALL_MALT}"]) == 0
        (run,) = out.iterdir()
        return {e["query"]["id"]: e["outcome"] for e in load_episodes(run)}

    one, two = played(1), played(2)
    assert len(one) == 6 and one == two
