"""Every option's bad values end the run with a one-line usage error (exit 4), never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

SUITES = Path(__file__).parents[2] / "suites"

BAD_VALUES = {
    "seed": ["abc", "1.5", "-1", "nan"],
    "queries": ["0", "-2", "x", "1.5", "nan"],
    "levels": ["4", "", "1;2", "nan"],
    "max-steps": ["0", "-1", "x", "inf"],
    "prompt-style": ["magic"],
    "trials": ["0", "x", "nan"],
    "agent-timeout": ["nan", "inf", "-1", "0", "x"],
    "temperature": ["nan", "inf", "-0.5", "x"],
    "adversarial-time": ["nan", "inf", "-1", "0", "x"],
    "adversarial-examples": ["0", "x", "nan"],
    "max-tokens": ["0", "-5", "x", "nan", "1.5"],
    "max-cost-usd": ["nan", "inf", "-1", "0", "x"],
    "max-episode-tokens": ["0", "x", "nan"],
    "max-episode-cost-usd": ["nan", "inf", "-1", "x"],
    "min-resolved": ["nan", "1.01", "k8s=x"],
    "min-correctness": ["nan", "1.5", "-0.1", "x", "k8s=nan", "k8s="],
    "min-safety": ["nan", "2", "route=x"],
    "llm-api-base": ["not a url", "ftp://x", "http://"],
    "route-size": ["0x0", "1x1", "4", "4x", "x4", "99x99", "nan", "-2x3", "40x1", "32x9"],
    "malt-topology": ["{missing}", "synthetic:x", "synthetic:0", "synthetic:1:x", "{dir}", "{text}"],
    "k8s-app": ["bogus", "synthetic:", "synthetic:1", "synthetic:x", "synthetic:5:x:y", "synthetic:99999"],
    "k8s-backend": ["bogus", "kubeconfigx"],
    "reports-dir": ["{text}", "/proc/x", "/proc/x/y"],
    "corpus": ["{missing}", "{dir}", "{text}"],
    "resume": ["{missing}", "{dir}", "{text}"],
    "llm-replay": ["{missing}", "{text}"],
    "llm-record": ["{text}"],
    "save-corpus": ["{dir}"],
    "split": ["validation", "1"],
}
CASES = [(name, value) for name, values in BAD_VALUES.items() for value in values]


@pytest.mark.parametrize(("name", "value"), CASES, ids=[f"{n}={v}" for n, v in CASES])
def test_a_bad_value_is_a_one_line_usage_error(toy: pytest.Pytester, name: str, value: str) -> None:
    (toy.path / "folder").mkdir()
    (toy.path / "text.txt").write_text("not what the option wants\n")
    value = value.format(dir=toy.path / "folder", text=toy.path / "text.txt", missing=toy.path / "missing")
    result = toy.runpytest("--agent=builtin:oracle", "--adversarial" if name.startswith("adversarial") else "-q",
                           f"--{name}={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()[-2000:]
    errors = [line for line in result.stderr.lines if line.strip()]
    assert len(errors) == 1 and errors[0].startswith("ERROR: ") and f"--{name}" in errors[0], errors
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


@pytest.mark.parametrize(("suite", "option"), [("route", "--route-size=0x0"), ("malt", "--malt-topology=/nonexistent"),
                                                ("k8s", "--k8s-backend=bogus")])
def test_the_app_options_are_checked_before_collection(pytester: pytest.Pytester, suite: str, option: str) -> None:
    result = pytester.runpytest_subprocess(str(SUITES / suite), "--agent=builtin:oracle", option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.strip()]
    assert len(errors) == 1 and option.split("=")[0] in errors[0], errors


def test_a_nan_budget_is_refused_rather_than_never_tripping(toy: pytest.Pytester) -> None:
    result = toy.runpytest("--agent=builtin:oracle", "--max-cost-usd=nan")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: pytest-netarena: --max-cost-usd*"])


def test_paths_in_option_values_start_from_the_home_folder(toy: pytest.Pytester, monkeypatch) -> None:
    home = toy.path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # `--opt=~/x` reaches pytest unexpanded: the shell expands only a word's start
    first = toy.runpytest("--agent=builtin:oracle", "--queries=1", "--reports-dir=~/runs", "--save-corpus=~/corpus.jsonl")
    first.assert_outcomes(passed=2)
    (run,) = (home / "runs").glob("*/run.json")
    assert (home / "corpus.jsonl").is_file() and not (toy.path / "~").exists()
    again = toy.runpytest("--agent=builtin:oracle", "--corpus=~/corpus.jsonl", "--reports-dir=~/runs")
    again.assert_outcomes(passed=2)
    resumed = toy.runpytest(f"--resume=~/runs/{run.parent.name}")
    resumed.assert_outcomes(passed=2)
    missing = toy.runpytest("--agent=builtin:oracle", "--corpus=netarena-malt:~/absent.jsonl")
    assert missing.ret == pytest.ExitCode.USAGE_ERROR
    missing.stderr.fnmatch_lines([f"*--corpus {home}/absent.jsonl: no such file*"])


def test_an_apps_path_option_and_a_corpus_format_expand_the_home_folder(monkeypatch, tmp_path) -> None:
    from pytest_netarena.apps import available_apps
    from pytest_netarena.run.settings import expand_home, path_options

    monkeypatch.setenv("HOME", str(tmp_path))
    assert {"malt-topology", "netarena-data", "corpus", "reports-dir", "resume"} <= path_options(available_apps())
    assert expand_home("corpus", "netarena-malt:~/NetArena/q.jsonl") == f"netarena-malt:{tmp_path}/NetArena/q.jsonl"
    assert expand_home("netarena-data", "~/NetArena") == f"{tmp_path}/NetArena"
    assert expand_home("malt-topology", "synthetic:300") == "synthetic:300"


def test_the_command_lines_out_folders_start_from_the_home_folder(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "HOME": str(tmp_path), "PYTHONPATH": str(Path(__file__).parents[2])}
    cli = [sys.executable, "-m", "pytest_netarena.cli"]
    made = subprocess.run([*cli, "generate", "--agent=builtin:oracle", "--episodes=1", "--app=malt",
                           "--option=malt-topology=synthetic:300", "--out=~/generated"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert made.returncode == 0, made.stderr[-2000:]
    (run,) = (tmp_path / "generated").iterdir()
    rebuilt = subprocess.run([*cli, "report", f"~/generated/{run.name}", "--no-plots"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=300, check=False)
    assert rebuilt.returncode == 0, rebuilt.stderr[-2000:]
    exported = subprocess.run([*cli, "export", "sft", str(run), "--out=~/sft"], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300, check=False)
    assert exported.returncode == 0 and (tmp_path / "sft" / "data.jsonl").is_file(), exported.stderr[-2000:]
