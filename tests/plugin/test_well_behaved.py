"""The plugin in other projects' sessions: silent and cheap there, options that collide with no popular plugin,
typed and grouped in --help."""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path

import pytest

import pytest_netarena

PACKAGE_ROOT = Path(pytest_netarena.__file__).resolve().parent.parent

UNRELATED = "def test_one():\n    assert True\n"
#: a conftest that writes which pytest_netarena modules the session imported
IMPORTS_LOG = """
import sys

def pytest_unconfigure(config):
    with open("imported.txt", "w") as log:
        log.write("\\n".join(sorted(name for name in sys.modules if name.startswith("pytest_netarena"))))
"""
#: the options pytest-replay 1.5 declares (ESSS/pytest-replay, pytest_replay/__init__.py)
PYTEST_REPLAY = """
def pytest_addoption(parser):
    group = parser.getgroup("replay")
    group.addoption("--replay-record-dir", action="store", dest="replay_record_dir", default=None)
    group.addoption("--replay", action="store", dest="replay_file", default=None)
    group.addoption("--replay-base-name", action="store", dest="base_name", default=".pytest-replay")
"""
#: option names of popular plugins (their pytest_addoption): none may be ours
POPULAR_OPTIONS = {
    "pytest-replay": ["--replay", "--replay-record-dir", "--replay-base-name", "--replay-skip-cleanup"],
    "pytest-recording": ["--record-mode", "--block-network", "--allowed-hosts", "--disable-recording"],
    "pytest-vcr": ["--vcr-record", "--disable-vcr"],
    "pytest-randomly": ["--randomly-seed", "--randomly-dont-reset-seed", "--randomly-dont-reorganize"],
    "pytest-random-order": ["--random-order", "--random-order-bucket", "--random-order-seed"],
    "pytest-timeout": ["--timeout", "--timeout-method", "--session-timeout"],
    "pytest-rerunfailures": ["--reruns", "--reruns-delay", "--only-rerun", "--rerun-except"],
    "pytest-repeat": ["--count", "--repeat-scope"],
    "pytest-html": ["--html", "--self-contained-html", "--css"],
    "pytest-cov": ["--cov", "--cov-report", "--cov-config", "--no-cov", "--cov-fail-under", "--cov-append"],
    "pytest-split": ["--splits", "--group", "--store-durations", "--durations-path", "--splitting-algorithm"],
    "pytest-shard": ["--shard-id", "--num-shards"],
    "pytest-playwright": ["--browser", "--headed", "--output", "--tracing", "--video", "--screenshot", "--base-url"],
    "pytest-metadata": ["--metadata", "--metadata-from-json"],
    "pytest-json-report": ["--json-report", "--json-report-file"],
    "pytest-retry": ["--retries", "--retry-delay"],
    "pytest-socket": ["--disable-socket", "--allow-hosts", "--allow-unix-socket"],
    "pytest-profiling": ["--profile", "--profile-svg"],
    "pytest-asyncio": ["--asyncio-mode"],
    "pytest-django": ["--ds", "--dc", "--reuse-db", "--create-db", "--migrations", "--nomigrations"],
    "pytest-testinfra": ["--hosts", "--connection", "--sudo", "--ssh-config"],
    "hypothesis": ["--hypothesis-profile", "--hypothesis-seed", "--hypothesis-verbosity"],
}


@pytest.fixture
def unrelated(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.Pytester:
    """A one-test project that has nothing to do with the benchmark; a bubblewrap that leaves a canary if run."""
    monkeypatch.setenv("PYTHONPATH", str(PACKAGE_ROOT))
    canary = tmp_path / "bwrap-ran"
    fake = tmp_path / "bwrap"
    fake.write_text(f"#!/bin/sh\ntouch {canary}\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("NETARENA_BWRAP", str(fake))
    pytester.makepyfile(test_one=UNRELATED)
    pytester.makeconftest(IMPORTS_LOG)
    return pytester


def test_an_unrelated_session_prints_nothing_runs_nothing_and_imports_no_app(unrelated: pytest.Pytester,
                                                                             tmp_path: Path) -> None:
    result = unrelated.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    ours = [line for line in result.outlines + result.errlines if "netarena" in line and not line.startswith("plugins:")]
    assert ours == []
    imported = (unrelated.path / "imported.txt").read_text().split()
    apps = [name for name in imported if name.startswith(("pytest_netarena.apps.k8s", "pytest_netarena.apps.malt",
                                                        "pytest_netarena.apps.route"))]
    assert apps == []  # the registry and the built-in apps' option declarations are not apps
    assert not any(name.startswith(("pytest_netarena.sandbox", "pytest_netarena.scale", "pytest_netarena.run."))
                   for name in imported), imported
    assert not (tmp_path / "bwrap-ran").exists()  # no trial box
    assert not (unrelated.path / "reports").exists()


def test_a_netarena_option_wakes_the_plugin(unrelated: pytest.Pytester) -> None:
    result = unrelated.runpytest_subprocess("-p", "no:cacheprovider", "--queries=1")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["netarena: seed=*"])


def test_a_benchmark_test_without_any_netarena_setting_is_one_usage_error(unrelated: pytest.Pytester) -> None:
    unrelated.makepyfile(test_bench="""
import pytest

@pytest.mark.netarena("malt")
def test_episode(netarena_result):
    pass
""")
    result = unrelated.runpytest_subprocess("-p", "no:cacheprovider", "test_bench.py")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "no agent selected: pass --agent=SPEC" in result.stdout.str() + result.stderr.str()


def test_pytest_replay_and_netarena_load_together(unrelated: pytest.Pytester) -> None:
    unrelated.makepyfile(pytest_replay_like=PYTEST_REPLAY)
    unrelated.syspathinsert()
    result = unrelated.runpytest_subprocess("-p", "pytest_replay_like", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_no_option_is_one_a_popular_plugin_declares(pytestconfig: pytest.Config) -> None:
    ours = {name for group in pytestconfig._parser._groups if group.name.startswith("netarena")
            for option in group.options for name in option.names()}
    assert "--llm-replay" in ours and "--llm-record" in ours and "--agent" in ours
    clashes = {plugin: sorted(ours & set(names)) for plugin, names in POPULAR_OPTIONS.items() if ours & set(names)}
    assert clashes == {}


def test_options_are_typed_and_grouped_in_help(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(PACKAGE_ROOT))
    result = pytester.runpytest_subprocess("--help")
    text = result.stdout.str()
    for heading in ("netarena: agents", "netarena: run selection", "netarena: budgets and gates", "netarena: reports",
                    "netarena: apps", "netarena: scale"):
        assert heading in text, heading
    for usage in ("--reports-dir=DIR", "--queries=N", "--max-cost-usd=USD", "--min-resolved=RATE",
                  "--route-size=NxH", "--seed=N", "--agent=SPEC"):
        assert usage in text, usage
    assert "REPORTS_DIR" not in text and "MAX_COST_USD" not in text


def test_typed_options_give_numbers_to_other_plugins(pytester: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(PACKAGE_ROOT))
    pytester.makeconftest("""
def pytest_configure(config):
    config._seen = (config.getoption("queries"), config.getoption("max_cost_usd"))

def pytest_report_header(config):
    return [f"seen {config._seen!r}"]
""")
    pytester.makepyfile(test_one=UNRELATED)
    result = pytester.runpytest_subprocess("--queries=2", "--max-cost-usd=0.5", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["seen (2, 0.5)"])


def test_the_readmes_commands_are_found_in_a_fresh_shell(tmp_path: Path) -> None:
    """README says to activate .venv before `pytest` and `netarena`; in a shell with a bare PATH that is enough."""
    root = Path(__file__).parents[2]
    readme = (root / "README.md").read_text()
    setup = readme[readme.index("## Set up and run"):readme.index("## Usage")]
    assert ". .venv/bin/activate" in setup
    if not (root / ".venv" / "bin" / "activate").is_file():
        pytest.skip("no .venv here (scripts/bootstrap makes it)")
    done = subprocess.run(["bash", "--noprofile", "--norc", "-c",
                           '. .venv/bin/activate && echo "$VIRTUAL_ENV" && command -v pytest && command -v netarena '
                           '&& netarena --help'],
                          cwd=root, capture_output=True, text=True, timeout=300,
                          env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    venv, *found = done.stdout.splitlines()[:3]
    assert venv and all(Path(path).parent == Path(venv) / "bin" for path in found), (venv, found)


HYPOTHESIS_LOG = """
import sys

def pytest_unconfigure(config):
    with open("hypothesis-imported.txt", "w") as log:
        log.write(str("hypothesis" in sys.modules))
"""


def test_a_benchmark_session_that_uses_no_hypothesis_does_not_import_it(unrelated: pytest.Pytester) -> None:
    """Importing Hypothesis costs every process of a run 0.4 s of CPU (2 s without bytecode caching):
    not at set-up (its profiles are registered only when one is asked for), nor for its plugin's summary."""
    unrelated.makeconftest(HYPOTHESIS_LOG)
    result = unrelated.runpytest_subprocess("-p", "no:cacheprovider", "--queries=1")
    result.assert_outcomes(passed=1)
    assert (unrelated.path / "hypothesis-imported.txt").read_text() == "False"


def test_hypothesis_tests_in_a_benchmark_session_keep_their_summary(unrelated: pytest.Pytester) -> None:
    unrelated.makeconftest(HYPOTHESIS_LOG)
    unrelated.makepyfile(test_prop="""
from hypothesis import given, strategies as st

@given(st.integers())
def test_prop(n):
    assert n == n
""")
    result = unrelated.runpytest_subprocess("-p", "no:cacheprovider", "--queries=1", "--hypothesis-show-statistics")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*Hypothesis Statistics*", "*test_prop*"])
    assert (unrelated.path / "hypothesis-imported.txt").read_text() == "True"
    profile = unrelated.runpytest_subprocess("-p", "no:cacheprovider", "--hypothesis-profile=netarena-ci", "test_one.py")
    profile.assert_outcomes(passed=1)  # the netarena profiles are registered before Hypothesis loads one
