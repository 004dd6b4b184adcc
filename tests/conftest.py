"""Shared fixtures of the project's own tests: pytester, and a pytester project with the toy app."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# pytester puts sys.modules back as it found them after each test; cryptography's Rust core cannot be loaded
# twice in a process, so its Python side re-imported in a later test would no longer match it ("curve must be
# an EllipticCurve instance" in the embedded API server's certificates). Imported once here, it stays.
import cryptography.hazmat.primitives.asymmetric.ec  # noqa: F401
# the same for libyaml's C loader, whose classes stay the first import's ("could not determine a constructor for
# the tag None" when a pytester run between two tests imported yaml afresh)
import yaml  # noqa: F401
import pytest_netarena
from pytest_netarena.testing.netarena_checkout import CHECKOUT_ENV, malt_checkout
from pytest_netarena.plugin.session import freeze_long_lived

pytest_plugins = ["pytester"]

# Every pytest the tests start (pytester subprocesses, xdist workers, documented commands) rewrites the asserts of
# the plugins' packages (hypothesis, anyio, xdist: about 200 modules) unless it may cache them: with
# PYTHONDONTWRITEBYTECODE set, each start cost 3.5 s of CPU instead of 1.8 s
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

# anyio's pytest plugin, which no test here uses, imports anyio's asyncio backend when pytest loads it: 0.2-0.3 s
# of CPU in each of the several hundred pytests a run of the tests starts. They are started without it: through
# the environment (xdist workers, documented commands, installs) and through pytester's own list (it drops
# PYTEST_ADDOPTS), below.
UNUSED_PLUGINS = ("anyio",)
os.environ["PYTEST_ADDOPTS"] = " ".join([os.environ.get("PYTEST_ADDOPTS", ""),
                                         *(f"-p no:{name}" for name in UNUSED_PLUGINS)]).strip()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--netarena-checkout", metavar="PATH", default=None,
                     help=f"a NetArena checkout (or a bare git mirror of it) for the tests that compare with NetArena; "
                          f"default ${CHECKOUT_ENV} or $NETARENA_MIRROR; without one those tests skip")


def pytest_configure(config: pytest.Config) -> None:
    given = config.getoption("--netarena-checkout")
    if given:  # through the environment, so pytester's runs and subprocesses find it too
        os.environ[CHECKOUT_ENV] = str(Path(given).expanduser().resolve())


def pytest_collection_finish(session: pytest.Session) -> None:
    # The plugin does this in benchmark runs only (never in pytester's in-process runs, whose heap is this
    # process's); these sessions are not, and each worker holds every test module and item.
    freeze_long_lived()


#: the files holding the longest tests (a -n 2 run's --durations, longest first), which each worker starts on: last
#: in the collection order, where tests/suites, tests/training and tests/validity sit, one of them kept a worker busy
#: for a minute or more after the others had run out of tests. Whole files move, so a module's fixtures are still
#: made once per worker. A stale entry costs time, never a test.
LONGEST_FIRST = (
    "tests/install/test_bootstrap.py",
    "tests/search/test_planted_weakness_route.py",
    "tests/validity/test_card.py",
    "tests/suites/test_suites.py",
    "tests/route/test_compat_env.py",
    "tests/kube/test_harbor.py",
    "tests/route/test_episodes.py",
    "tests/training/test_vector.py",
    "tests/suites/test_route_compat.py",
    "tests/reproduce/test_determinism.py",
    "tests/install/test_imports.py",
    "tests/k8s/test_env.py",
    "tests/route/test_chatty.py",
    "tests/suites/test_malt_compat.py",
    "tests/audit/test_audit.py",
    "tests/scale/test_docs.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The files of LONGEST_FIRST first, dealt out across xdist's workers; the rest in collection order."""
    long: dict[str, list[pytest.Item]] = {path: [] for path in LONGEST_FIRST}
    rest: list[pytest.Item] = []
    for item in items:
        long.get(item.nodeid.split("::")[0], rest).append(item)
    workers = getattr(config, "workerinput", {}).get("workercount", 1)
    # xdist's load scheduler starts worker k on the k-th run of `chunk` consecutive tests: each run begins with its
    # share of the long files (dealt round-robin, longest first), or all of them would queue on the first worker
    chunk = max(min(len(items) // workers // 4, config.getoption("maxschedchunk", None) or len(items)), 2)
    heads: list[list[pytest.Item]] = [[] for _ in range(workers)]
    for i, path in enumerate(LONGEST_FIRST):
        heads[i % workers].extend(long[path])
    order: list[pytest.Item] = []
    for head in heads:
        order += head + rest[:max(chunk - len(head), 0)]
        del rest[:max(chunk - len(head), 0)]
    items[:] = order + rest


@pytest.fixture
def pytester(pytester: pytest.Pytester) -> pytest.Pytester:
    """pytester, whose runs (in this process or another) load no plugin the tests do not use."""
    pytester.plugins.extend(f"no:{name}" for name in UNUSED_PLUGINS)
    return pytester


HERE = Path(__file__).parent / "plugin"
PACKAGE_ROOT = Path(pytest_netarena.__file__).resolve().parent.parent

SUITE = """
import pytest
from pytest_netarena.plugin.assertions import assert_episode

@pytest.mark.netarena("toy")
def test_episode(netarena_result):
    assert_episode(netarena_result)
"""


@pytest.fixture
def toy(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A pytester project with the toy app registered and one benchmark test module."""
    # the package under test first: subprocesses must not import another checkout's editable install
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(HERE), str(PACKAGE_ROOT)]))
    monkeypatch.syspath_prepend(str(HERE))
    pytester.makeini("[pytest]\nnetarena_apps = toy = toy_app:APP\njunit_family = xunit1\nnetarena_plots = false\n")
    pytester.makepyfile(test_toy=SUITE)
    return pytester


@pytest.fixture
def suite(pytester: pytest.Pytester):
    """suite(app, ini=""): pytester as a project with that app's real suite (suites/APP/test_APP.py), no plots."""

    def make(app: str, ini: str = "") -> pytest.Pytester:
        pytester.makeini(f"[pytest]\nnetarena_plots = false\n{ini}")
        pytester.makepyfile(**{f"test_{app}": (PACKAGE_ROOT / "suites" / app / f"test_{app}.py").read_text()})
        return pytester

    return make


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    """A NetArena checkout holding its MALT data (--netarena-checkout, or a checkout or mirror the environment names);
    skips, saying how to give one, without."""
    root, why = malt_checkout(tmp_path_factory.mktemp("netarena"))
    if root is None:
        pytest.skip(why)
    return root
