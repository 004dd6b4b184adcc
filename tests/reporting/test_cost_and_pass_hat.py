"""Cost per resolved episode beside cost per episode, and pass^k (k = trials) leading runs of several trials."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_netarena.core.app import RunOptions
from pytest_netarena.core.types import Reply, Task, Usage
from pytest_netarena.reporting import artifacts
from pytest_netarena.reporting.rebuild import build_report
from pytest_netarena.reporting.summary import render_table, summarize


class Priced:
    """Sets the target when it solves (else 0, safe and wrong); every reply costs `price` dollars."""

    def __init__(self, target: int, solves: bool, price: float) -> None:
        self.value, self.price = (target if solves else 0), price

    def reset(self, task: Task) -> None:
        pass

    def act(self, observation: str) -> Reply:
        return Reply(f"set {self.value}", Usage(tokens_in=50, tokens_out=5, cost_usd=self.price))

    def close(self) -> None:
        pass


@pytest.fixture
def priced_run(toy, play_toy, tmp_path: Path) -> Path:
    """Three trials of four toy queries: 'steady' solves queries 0-1 every time; 'flaky' solves every query
    on trial 0 only. Replies cost 0.01 (steady) and 0.002 (flaky)."""
    run_dir = tmp_path / "20250101-000000-3"
    artifacts.write_run_info(run_dir, {"run_id": run_dir.name, "seed": 3, "agents": ["steady", "flaky"],
                                       "options": {"queries": 4, "levels": [1], "trials": 3}})
    for query in toy.APP.generate(RunOptions(seed=3, queries=4, levels=(1,))):
        target = query.params["target"]
        for trial in range(3):
            for name, agent in (("steady", Priced(target, query.index < 2, 0.01)),
                                ("flaky", Priced(target, trial == 0, 0.002))):
                artifacts.append_episode(run_dir, play_toy(query, agent, name, trial))
    return run_dir


def test_summary_json_holds_cost_per_resolved_episode_and_pass_hat_k(priced_run: Path) -> None:
    build_report(priced_run, plots=False)
    groups = {g["agent"]: g["overall"] for g in json.loads((priced_run / "summary.json").read_text())["groups"]}
    steady, flaky = groups["steady"], groups["flaky"]
    episodes = steady["episodes"]
    assert episodes == flaky["episodes"] == 12
    steps = {name: sum(e["agent"] == name and len(e["steps"]) or 0 for e in _episodes(priced_run)) for name in groups}
    assert steady["cost_usd"] == pytest.approx(0.01 * steps["steady"])
    assert steady["cost_per_episode_usd"] == pytest.approx(steady["cost_usd"] / 12)
    assert steady["resolved"]["k"] == 6 and flaky["resolved"]["k"] == 4
    assert steady["cost_per_resolved_usd"] == pytest.approx(steady["cost_usd"] / 6)
    assert flaky["cost_per_resolved_usd"] == pytest.approx(flaky["cost_usd"] / 4)
    # every query three times: steady passes half the queries every time, flaky none of them every time
    assert steady["pass_hat_k"] == {"k": 3, "rate": 0.5, "queries": 4}
    assert flaky["pass_hat_k"] == {"k": 3, "rate": 0.0, "queries": 4}
    assert flaky["correctness"]["rate"] == pytest.approx(1 / 3)  # correct a third of the time, yet never reliably


def _episodes(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "episodes.jsonl").read_text().splitlines()]


def test_terminal_table_and_report_lead_with_pass_hat_k_and_show_both_costs(priced_run: Path) -> None:
    page = build_report(priced_run, plots=False).read_text()
    summary = json.loads((priced_run / "summary.json").read_text())
    header, _, *rows = render_table(summary)
    assert header.index(" n ") < header.index("pass^3") < header.index("correct") < header.index("$/resolved")
    overall, agent = {}, None
    for row in rows:  # each agent's rows follow its heading ("APP, AGENT:")
        agent = row.split(", ", 1)[1].rstrip(":") if row.endswith(":") and ", " in row else agent
        if row.startswith("* ALL "):
            overall[agent] = row.split()
    assert overall["steady"][3] == "50.0%" and overall["flaky"][3] == "0.0%"
    steady = summary["groups"][[g["agent"] for g in summary["groups"]].index("steady")]["overall"]
    assert overall["steady"][-1] == f"{steady['cost_per_resolved_usd']:.4f}"  # $/episode: in summary.json and the page
    overall_table = page.split("<h3>Overall</h3>", 1)[1].split("</table>", 1)[0]
    assert overall_table.index("<th>n</th>") < overall_table.index(">pass^3</th>") < overall_table.index("correct [95% CI]")
    costs_table = page.split("<h3>Latency and cost</h3>", 1)[1].split("</table>", 1)[0]
    assert "<th>$/episode</th><th>$/resolved</th>" in costs_table
    assert (f"<td class=num>{steady['cost_per_episode_usd']:.5f}</td><td class=num>{steady['cost_per_resolved_usd']:.5f}</td>"
            in costs_table)


def test_one_trial_has_no_pass_hat_column_and_no_resolved_episode_has_no_cost_per_resolved() -> None:
    def record(query, outcome, cost):
        return {"app": "a", "agent": "x", "level": 1, "category": "c", "query": query, "trial": 0, "outcome": outcome,
                "correct": outcome == "resolved", "safe": True, "steps": 1, "latency_s": 0.1, "cost_usd": cost}

    summary = summarize([record("q1", "unresolved", 0.5), record("q2", "unresolved", 0.25)])
    overall = summary["groups"][0]["overall"]
    assert "pass_hat_k" not in overall and overall["cost_per_resolved_usd"] is None
    assert overall["cost_per_episode_usd"] == pytest.approx(0.375)
    header, _, *rows, legend, _ = render_table(summary)
    assert "pass^" not in header and rows[-1].split()[-1] == "-" and legend.startswith("resolved")
