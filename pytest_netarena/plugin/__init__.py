"""The pytest glue, registered from the `pytest11` entry point: the options, the fixtures, and waking the run.

pytest loads this module in every session of the environment. A session that sets no netarena option
(and no netarena_* ini key) is not a benchmark run: it sees the options in --help and the fixtures, and
nothing else happens (no header, no sandbox trial, no app imported). Otherwise `session.start` builds
the run and registers the modules holding the other hooks.

    options      the netarena options and ini keys in --help groups; whether a session asked for the benchmark
    runfile      run.json's record of the session, and reading it back for --resume from any folder
    state        what the modules share: stash keys, this process's Scale, skip messages
    session      start(): Settings, Scale, user apps, model agents checked, the per-role plugins
    collection   one test per query x agent x trial (Case, SearchCase), --shard, --save-corpus
    fixtures     playing a test's episode or search
    progress     a line now and then while an episode runs long
    scheduling   xdist's controller hooks (XdistHooks), episodes in flight, -n N folded into them
    reporting    the header, failed tests' accounts, the run files (RunReporter)
    completion   whether a run is whole or must be resumed, and whether any episode ran at all
    assertions   assert_episode(), for the tests' bodies
"""

from __future__ import annotations

from typing import Any

import pytest

from .options import NO_AGENT_MESSAGE, pytest_addoption, requested

_AWAKE = pytest.StashKey[bool]()
_DORMANT_BENCHMARKS = pytest.StashKey[list[str]]()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "netarena(app): a benchmark test run once per query x agent x trial")
    if requested(config):
        from .session import start

        start(config)
        config.stash[_AWAKE] = True


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "netarena_case" not in metafunc.fixturenames:
        return
    if metafunc.config.stash.get(_AWAKE, False):
        from .collection import generate_tests

        generate_tests(metafunc)
    else:  # a benchmark test in a session that set nothing of ours: said once, after collection
        metafunc.config.stash.setdefault(_DORMANT_BENCHMARKS, []).append(metafunc.definition.nodeid)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    dormant = config.stash.get(_DORMANT_BENCHMARKS, [])
    if dormant and not config.option.collectonly:
        raise pytest.UsageError(f"pytest-netarena: {dormant[0]} is a benchmark test, but {NO_AGENT_MESSAGE}")


@pytest.fixture(scope="session")
def netarena_settings(pytestconfig: pytest.Config) -> Any:
    """The run's resolved settings (seed, agents, options)."""
    from .state import SETTINGS_KEY

    return pytestconfig.stash[SETTINGS_KEY]


@pytest.fixture(scope="session")
def netarena_environments(pytestconfig: pytest.Config) -> Any:
    """This process's environments (one per episode in flight and app), closed at the end of the session."""
    from .state import SCALE_KEY

    scale = pytestconfig.stash[SCALE_KEY]
    yield scale.slots
    scale.close()


@pytest.fixture
def netarena_result(request: pytest.FixtureRequest, netarena_case: Any, netarena_settings: Any,
                    netarena_environments: Any) -> Any:
    """Runs this test's episode (or, with --adversarial, its search) and returns the result."""
    from .fixtures import play_case

    return play_case(request, netarena_case, netarena_settings)


# pytest finds the hooks and fixtures as attributes of this module
__all__ = [
    "pytest_addoption", "pytest_configure", "pytest_generate_tests", "pytest_collection_modifyitems",
    "netarena_settings", "netarena_environments", "netarena_result",
]
