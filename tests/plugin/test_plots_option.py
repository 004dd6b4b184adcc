"""Paper figures are asked for: a run writes plots/ only with --plots (or the ini key), and --no-plots wins over the ini.

The runs are subprocesses: pytester's in-process runs drop the modules a run imported, and matplotlib imported a
second time into one process mixes classes of both imports."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")


def figures(pytester: pytest.Pytester, reports: str) -> list[str]:
    (folder,) = (pytester.path / reports).iterdir()
    assert (folder / "report.html").is_file()
    plots = folder / "plots"
    return sorted(path.name for path in plots.iterdir()) if plots.is_dir() else []


def test_a_run_writes_figures_only_when_asked(toy: pytest.Pytester) -> None:
    toy.runpytest_subprocess("--agent=builtin:oracle", "--queries=1", "--reports-dir=plain").assert_outcomes(passed=2)
    assert figures(toy, "plain") == []
    # the toy project's ini says netarena_plots = false: the command line wins
    toy.runpytest_subprocess("--agent=builtin:oracle", "--queries=1", "--reports-dir=asked", "--plots").assert_outcomes(passed=2)
    written = figures(toy, "asked")
    assert "rates_toy.png" in written and "rates_toy.svg" in written and "radar_toy_L1.svg" in written
    page = next((toy.path / "asked").iterdir()) / "report.html"
    assert 'href="plots/rates_toy.svg"' in page.read_text()


def test_no_plots_wins_over_the_ini_key(toy: pytest.Pytester) -> None:
    toy.makeini("[pytest]\nnetarena_apps = toy = toy_app:APP\nnetarena_plots = true\n")
    toy.runpytest_subprocess("--agent=builtin:oracle", "--queries=1", "--reports-dir=ini").assert_outcomes(passed=2)
    assert "rates_toy.png" in figures(toy, "ini")
    toy.runpytest_subprocess("--agent=builtin:oracle", "--queries=1", "--reports-dir=off", "--no-plots").assert_outcomes(passed=2)
    assert figures(toy, "off") == []
