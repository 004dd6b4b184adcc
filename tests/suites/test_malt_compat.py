"""The MALT suite under --compat netarena, as a user runs it: NetArena's query catalogue and verdicts, its real
topology (--netarena-data) and its question files (--corpus netarena-malt:FILE)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


ROOT = Path(__file__).parents[2]
NETARENA_L1_L2 = {"add", "rank", "remove", "list", "remove+list", "remove+rank", "remove+count"}


def test_oracle_passes_netarena_rules(pytester: pytest.Pytester, suite, episodes) -> None:
    """NetArena's default run (levels 1-2, one query per type: 7 queries); the oracle answers with
    NetArena's ground truth: always correct, unsafe exactly where that ground truth is (a removed
    switch leaves its ports isolated)."""
    suite("malt").runpytest_subprocess("--compat", "netarena", "--agent=builtin:oracle", "--queries=1",
                                         "--seed=11", "-n", "2", "-p", "no:cacheprovider")
    records = episodes()
    assert {r["query"]["category"] for r in records} == NETARENA_L1_L2 and len(records) == 7
    assert all(r["correct"] for r in records), [r["details"] for r in records if not r["correct"]]
    assert all(r["safe"] == r["metrics"]["netarena_truth_safe"] for r in records)
    for record in records:
        params = record["query"]["params"]
        assert params["rules"] == "netarena" and params["label"].startswith("capacity planning, level-")
    (summary,) = (pytester.path / "reports").glob("*/summary.json")
    assert json.loads(summary.read_text())["rules"] == "netarena"


def test_netarena_question_file_runs_and_lists_what_it_cannot_read(pytester: pytest.Pytester, suite, episodes) -> None:
    """Questions written in NetArena's file format and wording; one is not a form NetArena generates."""
    def line(question: str, label: str) -> str:
        return json.dumps({"messages": [{"question": question}, {"answer": "def ground_truth_process_graph(g): ..."},
                                        {"task_label": f"capacity planning, {label}"}]})

    questions = pytester.path / "questions.jsonl"
    questions.write_text("\n".join([
        line("Remove ju1.a1.m1.s2c1.p3 from the graph. Return a graph.", "level-1, remove"),
        line("List all the child nodes of ju1.a2.dom. Return a list of child node names.", "level-1, list"),
        line("Add new_EK_PACKET_SWITCH_4 to ju1.a1.m2. Count the EK_PACKET_SWITCH in ju1.a1.m2 in the updated "
             "graph. Return the count number as text.", "level-3, add-count"),
        line("Update the physical capacity value of ju1.a1.m1.s2c1.p1 to 7. Return a graph.", "level-1, remove"),
    ]) + "\n")
    suite("malt")
    refused = pytester.runpytest_subprocess("--corpus", f"netarena-malt:{questions}", "--agent=builtin:oracle",
                                            "-p", "no:cacheprovider")
    assert "add --compat netarena" in refused.stderr.str() + refused.stdout.str()
    result = pytester.runpytest_subprocess("--compat", "netarena", "--corpus", f"netarena-malt:{questions}",
                                           "--agent=builtin:oracle", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*questions.jsonl: 3 of 4 NetArena MALT questions read*",
                                 "*line 4: a update (disabled in NetArena's generator) question*"])
    records = episodes()
    assert sorted(r["query"]["id"] for r in records) == ["malt-L1-list-0000", "malt-L1-remove-0000",
                                                         "malt-L3-add+count-0000"]
    assert all(r["correct"] and r["safe"] for r in records)


def test_real_topology_from_a_netarena_checkout(pytester: pytest.Pytester, checkout: Path, suite, episodes) -> None:
    suite("malt").runpytest_subprocess("--compat", "netarena", f"--netarena-data={checkout}",
                                         "--agent=builtin:oracle", "--queries=1", "--levels=1", "--seed=3",
                                         "-n", "2", "-p", "no:cacheprovider")
    records = episodes()
    assert len(records) == 4 and all(r["correct"] for r in records)
    assert all(r["safe"] == r["metrics"]["netarena_truth_safe"] for r in records)
    run = json.loads(next((pytester.path / "reports").glob("*/run.json")).read_text())
    assert run["options"]["netarena_data"] == str(checkout)
