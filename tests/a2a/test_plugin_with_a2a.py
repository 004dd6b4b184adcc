"""--agent=a2a:URL through the whole plugin: a local purple agent plays the toy suite."""

from __future__ import annotations

from pathlib import Path

import pytest

SUITE = """
import pytest
from pytest_netarena.assertions import assert_episode

@pytest.mark.netarena("toy")
def test_episode(netarena_result):
    assert_episode(netarena_result)
"""


@pytest.fixture
def toy_project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parents[1] / "plugin"))
    pytester.makeini("[pytest]\nnetarena_apps = toy = toy_app:APP\nnetarena_plots = false\n")
    pytester.makepyfile(test_toy=SUITE)
    return pytester


def test_a2a_agent_resolves_the_toy_suite(toy_project: pytest.Pytester, purple, solve_toy) -> None:
    url = purple(solve_toy)
    result = toy_project.runpytest_subprocess(f"--agent=a2a:{url}", "--queries=1", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_unreachable_a2a_agent_is_an_agent_error_not_a_hang(toy_project: pytest.Pytester, closed_port_url) -> None:
    result = toy_project.runpytest_subprocess(f"--agent=a2a:{closed_port_url}", "--queries=1", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*agent_error*"])


def test_malformed_a2a_spec_is_a_usage_error(toy_project: pytest.Pytester) -> None:
    result = toy_project.runpytest_subprocess("--agent=a2a:not-a-url")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*expected a2a:http://HOST:PORT*"])
