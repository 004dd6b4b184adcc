"""The pytest glue, registered from the `pytest11` entry point: this module gathers its hooks and fixtures.

Everything substantive lives in the pytest-free core; the hooks only translate between pytest and it.

    state        what the modules share: stash keys, this process's Scale, skip messages
    options      the netarena options and ini keys, their lookup, run.json's record for --resume
    session      pytest_configure/unconfigure: Settings, Scale, user apps, the per-role plugins
    collection   one test per query x agent x trial (Case, SearchCase), --shard, --save-corpus
    fixtures     netarena_settings/_environments/_result: playing a test's episode or search
    scheduling   xdist's controller hooks (XdistHooks), episodes in flight, -n N folded into them
    reporting    the header, failed tests' transcripts, the run files (RunReporter)
    assertions   assert_episode(), for the tests' bodies
"""

from __future__ import annotations

from .collection import pytest_collection_modifyitems, pytest_generate_tests
from .fixtures import netarena_environments, netarena_result, netarena_settings
from .options import pytest_addoption
from .reporting import pytest_report_header, pytest_runtest_makereport
from .scheduling import pytest_collection_finish, pytest_runtest_protocol
from .session import pytest_configure, pytest_unconfigure

# pytest finds the hooks and fixtures as attributes of this module
__all__ = [
    "pytest_addoption", "pytest_configure", "pytest_unconfigure", "pytest_generate_tests",
    "pytest_collection_modifyitems", "pytest_collection_finish", "pytest_runtest_protocol",
    "pytest_report_header", "pytest_runtest_makereport",
    "netarena_settings", "netarena_environments", "netarena_result",
]
