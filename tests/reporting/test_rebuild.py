"""build_report over real toy episodes: records, summary.json with comparisons and pass@k, HTML, plots."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_netarena.reporting.properties import (
    episode_properties,
    record_from_properties,
)
from pytest_netarena.reporting.rebuild import (
    ReportError,
    build_report,
    load_episodes,
    records_from_episodes,
)
from pytest_netarena.reporting.summary import summarize


def test_records_from_episodes_equal_the_junit_property_records(make_run, tmp_path: Path) -> None:
    results = make_run(tmp_path / "run", agents=("oracle", "reckless"), trials=1, queries=2)
    from_lines = list(records_from_episodes(load_episodes(tmp_path / "run")))
    from_properties = [record_from_properties(episode_properties(result)) for result in results]
    assert from_lines == from_properties
    assert {r["outcome"] for r in from_lines} == {"resolved", "unsafe"}


def test_summary_json_has_the_plugin_summary_plus_comparisons_and_pass_k(built: Path, run_dir: Path) -> None:
    summary = json.loads((run_dir / "summary.json").read_text())
    records = list(records_from_episodes(load_episodes(run_dir)))
    assert summary["groups"] == summarize(records)["groups"]
    toy_groups = {g["agent"]: g for g in summary["groups"] if g["app"] == "toy"}
    assert toy_groups["oracle"]["avg_correctness"] == 1.0
    assert toy_groups["half"]["avg_correctness"] == 0.5  # indices 0..3: even ones solved
    assert toy_groups["reckless"]["avg_safety"] == 0.0

    by_pair = {(c["app"], c["agent_a"], c["agent_b"], c["metric"]): c for c in summary["comparisons"]}
    half_vs_oracle = by_pair[("toy", "half", "oracle", "correctness")]
    assert (half_vs_oracle["pairs"], half_vs_oracle["only_a"], half_vs_oracle["only_b"]) == (16, 0, 8)
    assert half_vs_oracle["mcnemar_p"] == pytest.approx(2 / 2**8)
    assert half_vs_oracle["difference"] == -0.5
    assert by_pair[("toy", "oracle", "reckless", "safety")]["only_a"] == 16

    pass_k = {(r["app"], r["agent"], r["level"], r["k"]): r for r in summary["pass_k"]}
    assert pass_k[("toy", "half", 1, 1)]["pass_at_k"] == 0.5
    assert pass_k[("toy", "half", 1, 2)] == {"app": "toy", "agent": "half", "level": 1, "k": 2, "queries": 4,
                                             "pass_at_k": 0.5, "pass_hat_k": 0.5}
    assert pass_k[("toy", "reckless", 2, 2)]["pass_at_k"] == 0.0


def test_build_report_writes_one_self_contained_page_and_plots(built: Path, run_dir: Path) -> None:
    assert built == run_dir / "report.html"
    page = built.read_text()
    assert "http://" not in page and "https://" not in page and "src=" not in page  # nothing to fetch
    assert page.count('class=episode ') == len(load_episodes(run_dir))
    assert page.count("first unsafe step</span>") == sum(1 for e in load_episodes(run_dir) if not e["safe"])
    assert "Correctness · demo L1" in page and "<polygon" in page
    plots = sorted(p.name for p in (run_dir / "plots").iterdir())
    for stem in ("rates_toy", "rates_demo", "radar_demo_L1", "radar_demo_L2", "latency_toy"):
        assert f"{stem}.png" in plots and f"{stem}.svg" in plots
        assert (run_dir / "plots" / f"{stem}.png").read_bytes().startswith(b"\x89PNG")
    assert 'href="plots/radar_demo_L1.svg"' in page and 'href="plots/radar_demo_L1.png"' in page


def test_rebuild_keeps_budget_and_gates_and_is_deterministic(make_run, tmp_path: Path) -> None:
    run = tmp_path / "run"
    make_run(run, agents=("oracle", "half"), trials=1, queries=2)
    gates = [{"app": "toy", "agent": "half", "metric": "correctness", "value": 0.5, "threshold": 0.9, "passed": False}]
    (run / "summary.json").write_text(json.dumps({"groups": [], "gates": gates, "budget": {"tokens": 3}}))
    build_report(run, plots=False)
    first = (run / "summary.json").read_text()
    assert json.loads(first)["gates"] == gates and json.loads(first)["budget"] == {"tokens": 3}
    page = (run / "report.html").read_text()
    assert "FAILED" in page
    build_report(run, plots=False)
    assert (run / "summary.json").read_text() == first
    assert (run / "report.html").read_text() == page


def test_single_agent_single_trial_has_no_comparisons_or_pass_k(make_run, tmp_path: Path) -> None:
    run = tmp_path / "run"
    make_run(run, agents=("oracle",), trials=1, queries=1)
    (run / "run.json").unlink()  # an interrupted run may lack it: the page says so
    build_report(run, plots=False)
    summary = json.loads((run / "summary.json").read_text())
    assert "comparisons" not in summary and "pass_k" not in summary
    assert "no run.json" in (run / "report.html").read_text()


@pytest.mark.parametrize("content, message", [
    ('{"query": {"id": "q"}}\n', "line 1: field query.app: missing"),
    ("GOOD\n\nnot json\n", "line 3 is not valid JSON"),
    ("GOOD\n[1, 2]\n", "line 2: expected an object, got a list"),
])
def test_malformed_lines_are_named(make_run, tmp_path: Path, content: str, message: str) -> None:
    run = tmp_path / "run"
    make_run(run, agents=("oracle",), trials=1, queries=1)
    good = (run / "episodes.jsonl").read_text().splitlines()[0]
    (run / "episodes.jsonl").write_text(content.replace("GOOD", good))
    with pytest.raises(ReportError, match=message):
        build_report(run)


def test_missing_folder_or_file(tmp_path: Path) -> None:
    with pytest.raises(ReportError, match="no such run folder"):
        build_report(tmp_path / "nope")
    with pytest.raises(ReportError, match="no episodes.jsonl"):
        build_report(tmp_path)


def test_a_rerun_after_an_infra_error_replaces_the_earlier_line(make_run, says, tmp_path: Path) -> None:
    import dataclasses

    from pytest_netarena.core.types import Outcome
    from pytest_netarena.reporting import artifacts

    run = tmp_path / "run"
    result = says("set 1", "plain")
    broken = dataclasses.replace(result, outcome=Outcome.INFRA_ERROR, correct=False, details="infrastructure: down")
    artifacts.append_episode(run, broken)  # the first attempt broke; --resume ran it again
    artifacts.append_episode(run, result)
    build_report(run, plots=False)
    [group] = json.loads((run / "summary.json").read_text())["groups"]
    assert (group["overall"]["episodes"], group["overall"]["infra_errors"]) == (1, 0)
    page = (run / "report.html").read_text()
    assert "1 earlier attempts replaced" in page and "infrastructure: down" not in page


def test_an_empty_run_still_gets_a_page(tmp_path: Path) -> None:
    (tmp_path / "episodes.jsonl").write_text("")
    page = build_report(tmp_path).read_text()
    assert json.loads((tmp_path / "summary.json").read_text())["groups"] == []
    assert "report · 0 episodes" in page


def test_without_matplotlib_the_page_says_how_to_get_plots(make_run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    run = tmp_path / "run"
    make_run(run, agents=("oracle",), trials=1, queries=1)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    page = build_report(run).read_text()
    assert "pip install matplotlib" in page and not (run / "plots").exists()
