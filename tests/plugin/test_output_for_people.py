"""What a person reads at the end of a run: a short account per failed episode, a table that fits 100 columns."""

from __future__ import annotations

import json

import pytest

from pytest_netarena.reporting.summary import render_table, summarize

#: never solves; each reply is a long think-aloud, as chatty models write
CHATTY = """
from toy_app import ToyAgent

class Agent(ToyAgent):
    def act(self, observation):
        return "\\n".join(f"I wonder whether {n} is the answer; let me think about it more." for n in range(60))
"""


def section_of(lines: list[str], test_id_part: str) -> list[str]:
    """The lines of one failed test's report section (from its ____ header to the next)."""
    start = next(i for i, line in enumerate(lines) if line.startswith("_") and test_id_part in line)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith(("_", "=")) and "netarena" not in lines[i]),
               len(lines))
    return lines[start:end]


def test_a_failed_episode_prints_a_short_account_and_where_the_transcript_is(toy: pytest.Pytester) -> None:
    toy.makepyfile(chatty_agent=CHATTY)
    toy.syspathinsert()
    result = toy.runpytest("--agent=python:chatty_agent:Agent", "--queries=1", "-k", "L1")
    result.assert_outcomes(failed=1, deselected=1)
    (run,) = (toy.path / "reports").iterdir()
    (episode,) = [json.loads(line) for line in (run / "episodes.jsonl").read_text().splitlines()]
    section = section_of(result.outlines, "toy-L1-set-0000")
    assert len(section) <= 30, "\n".join(section)
    text = "\n".join(section)
    assert "unresolved after 3 step(s)" in text and "last step 3" in text
    assert f"full transcript: {run}/episodes.jsonl, episode {episode['episode_id']}" in text
    assert text.count("I wonder whether") <= 5


def test_very_verbose_runs_still_print_the_whole_transcript(toy: pytest.Pytester) -> None:
    toy.makepyfile(chatty_agent=CHATTY)
    toy.syspathinsert()
    result = toy.runpytest("--agent=python:chatty_agent:Agent", "--queries=1", "-k", "L1", "-vv")
    assert result.stdout.str().count("I wonder whether 59 is the answer") == 3


def record(app: str, agent: str, category: str, level: int, trial: int, outcome: str) -> dict:
    return {"app": app, "agent": agent, "category": category, "level": level, "query": f"{app}-{category}-{level}",
            "trial": trial, "outcome": outcome, "correct": outcome == "resolved", "safe": outcome != "unsafe",
            "steps": 3, "latency_s": 12.5, "tokens": 1000, "cost_usd": 0.0123, "metric.overly_permissive": False}


def test_the_table_fits_100_columns_with_long_names_and_trials() -> None:
    records = [record(app, agent, category, level, trial, outcome)
               for app, category, level in (("k8s", "remove_ingress+change_protocol", 2), ("malt", "add+update", 2),
                                            ("route", "drop_traffic_to_from_subnet", 1))
               for agent in ("openai:gpt-4o-mini-2024-07-18", "python:my_company.agents.network:ProductionAgent")
               for trial in range(3) for outcome in ("resolved", "unsafe")]
    lines = render_table(summarize(records))
    assert max(len(line) for line in lines) <= 100, "\n".join(lines)
    text = "\n".join(lines)
    assert "pass^3" in text and "resolved" in text and "k8s" in text
    assert "openai:gpt-4o-mini-2024-07-18" in text  # an agent's name is never cut


def test_the_terminal_summary_fits_100_columns(toy: pytest.Pytester) -> None:
    result = toy.runpytest("--agent=builtin:oracle", "--agent=builtin:reckless", "--queries=1", "--trials=2")
    start = next(i for i, line in enumerate(result.outlines) if "netarena summary" in line)
    # our section ends at pytest's next heading (its short test summary, whose lines pytest leaves whole when
    # $CI is set)
    end = next((i for i, line in enumerate(result.outlines) if i > start and line.startswith("=")),
               len(result.outlines))
    table = [line for line in result.outlines[start + 1:end] if not line.startswith(("report:", "seed "))]
    assert table and max(len(line) for line in table) <= 100, "\n".join(table)


#: thinks a while before each reply, as a CLI or model agent does
SLOW = """
import time
from toy_app import ToyAgent

class Agent(ToyAgent):
    def answer(self, target):
        time.sleep(0.9)
        return f"set {target}"
"""


def test_a_long_episode_says_it_is_running_while_it_runs(toy: pytest.Pytester, monkeypatch) -> None:
    """pytest shows nothing of a test before it ends; a long episode prints a line now and then meanwhile."""
    toy.makepyfile(slow_agent=SLOW)
    toy.syspathinsert()
    monkeypatch.setenv("NETARENA_PROGRESS_S", "0.3")
    result = toy.runpytest_subprocess("--agent=python:slow_agent:Agent", "--queries=1", "-k", "L1")
    result.assert_outcomes(passed=1, deselected=1)
    lines = [line for line in result.outlines if line.startswith("netarena: test_toy.py::test_episode[toy-L1-set-0000]")]
    assert lines and all("(python:slow_agent:Agent): episode running for " in line for line in lines), result.outlines
    monkeypatch.setenv("NETARENA_PROGRESS_S", "0")  # off
    quiet = toy.runpytest_subprocess("--agent=python:slow_agent:Agent", "--queries=1", "-k", "L1")
    assert not [line for line in quiet.outlines if "episode running for" in line]


def test_every_skips_reason_is_in_the_final_summary_summary_json_and_the_report(toy: pytest.Pytester,
                                                                                  monkeypatch) -> None:
    """`4 passed, 1 skipped` never ends a run without the reason: the netarena summary, summary.json and report.html
    say each reason once, with how many episodes it skipped and of which app."""
    from pathlib import Path

    monkeypatch.setenv("TOY_UNAVAILABLE", "1")  # a host that cannot run the toy app (as route without root)
    toy.makepyfile(test_malt=(Path(__file__).parents[2] / "suites" / "malt" / "test_malt.py").read_text())
    result = toy.runpytest("--agent=builtin:oracle", "--queries=1", "--levels=1", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4, skipped=1)
    output = result.stdout.str()
    summary_section = output[output.index("netarena summary"):]
    reason = "toy cannot run here: the toy backend is not installed on this host"
    assert "skipped: 1 episode, not run and not scored, because:" in summary_section
    assert f"  1 [toy]: {reason}" in summary_section
    (run,) = (toy.path / "reports").iterdir()
    skipped = json.loads((run / "summary.json").read_text())["skipped"]
    assert skipped == {"episodes": 1, "reasons": [{"reason": reason, "episodes": 1, "apps": ["toy"]}]}
    page = (run / "report.html").read_text()
    assert '<h2 id="skipped">Skipped</h2>' in page and reason in page and '<a href="#skipped">' in page
