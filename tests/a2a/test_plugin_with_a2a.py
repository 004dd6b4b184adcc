"""--agent=a2a:URL through the whole plugin: a local purple agent plays the toy suite."""

from __future__ import annotations

import pytest


def test_a2a_agent_resolves_the_toy_suite(toy: pytest.Pytester, purple, solve_toy) -> None:
    url = purple(solve_toy)
    result = toy.runpytest_subprocess(f"--agent=a2a:{url}", "--queries=1", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_unreachable_a2a_agent_is_an_agent_error_not_a_hang(toy: pytest.Pytester, closed_port_url) -> None:
    result = toy.runpytest_subprocess(f"--agent=a2a:{closed_port_url}", "--queries=1", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*agent_error*"])


def test_malformed_a2a_spec_is_a_usage_error(toy: pytest.Pytester) -> None:
    result = toy.runpytest_subprocess("--agent=a2a:not-a-url")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*expected a2a:http://HOST:PORT*"])
