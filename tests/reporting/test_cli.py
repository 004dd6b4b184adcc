"""`netarena report RUN_DIR` in a real subprocess: rebuilds the files, exit 2 with the reason on bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

# the lead registers pytest_netarena.reporting.cli in pytest_netarena.cli; until then, build the same parser
MAIN = """
import argparse, sys
from pytest_netarena import cli
if "pytest_netarena.reporting.cli" in cli.SUBCOMMAND_MODULES:
    sys.exit(cli.main(sys.argv[1:]))
from pytest_netarena.reporting.cli import register
parser = argparse.ArgumentParser(prog="netarena")
register(parser.add_subparsers(dest="command", required=True))
args = parser.parse_args(sys.argv[1:])
sys.exit(args.handler(args))
"""


def netarena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", MAIN, *args], capture_output=True, text=True, timeout=120, check=False)


def test_report_rebuilds_summary_and_html_from_episodes(make_run, tmp_path: Path) -> None:
    run = tmp_path / "reports" / "run-1"
    make_run(run, agents=("oracle", "half"), trials=1, queries=2)
    done = netarena("report", str(run), "--no-plots")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(run / "report.html")
    summary = json.loads((run / "summary.json").read_text())
    assert {g["agent"] for g in summary["groups"]} == {"oracle", "half"}
    assert summary["comparisons"] and (run / "report.html").stat().st_size > 1000
    assert not (run / "plots").exists()


def test_report_exits_2_naming_the_problem(make_run, tmp_path: Path) -> None:
    done = netarena("report", str(tmp_path / "missing"))
    assert done.returncode == 2
    assert "netarena report: error:" in done.stderr and "no such run folder" in done.stderr
    run = tmp_path / "run"
    make_run(run, agents=("oracle",), trials=1, queries=1)
    with open(run / "episodes.jsonl", "a") as handle:
        handle.write('{"query": {"id": "toy-L1-set-0009"}, "agent": "x", "trial"')  # a killed writer
    lines = len((run / "episodes.jsonl").read_text().splitlines())
    done = netarena("report", str(run))
    assert done.returncode == 2
    assert f"line {lines} is not valid JSON" in done.stderr and "Traceback" not in done.stderr
