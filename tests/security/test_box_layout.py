"""Red team (issue 43, item 10): a box's process 1 ran with a readable command line naming the host's cache paths, and
its mount table named where the harness keeps its cache, its Python and its checkout. From boxes of every kind
(and a plain user's), nothing readable names a host path of the harness."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

import pytest_netarena
from pytest_netarena.sandbox import views
from pytest_netarena.testing import unprivileged

from .conftest import malt_box, needs_boxes
from .kinds import pod_cluster, shell_in_box  # noqa: F401 - fixtures

#: what a box may read about itself that once named the host's layout
READ = "/proc/1/cmdline /proc/1/environ /proc/self/mountinfo /proc/self/mounts /proc/1/mountinfo"


def host_paths() -> list[str]:
    """Where this harness lives on the host: its checkout, its Python, its caches (the views, a CLI's install),
    its home and its temporary folders."""
    from pytest_netarena.mcp.install import cache_root as cli_cache

    paths = {str(Path(pytest_netarena.__file__).resolve().parents[1]), str(views.cache_root()), sys.prefix,
             sys.base_prefix, os.path.dirname(os.path.realpath(sys.executable)), str(cli_cache()),
             os.path.join(tempfile.gettempdir(), "netarena-"), str(Path.home()) + "/"}
    return sorted(path for path in paths if path.strip("/"))


def assert_names_no_host_path(text: str) -> None:
    for path in host_paths():
        assert path not in text, f"{path} in:\n{text}"


def test_nothing_a_box_reads_names_a_host_path(shell_in_box) -> None:
    output = shell_in_box(f"for f in {READ}; do echo \"== $f\"; tr '\\0' ' ' < $f; echo; done 2>&1; echo END")
    assert "END" in output and " /usr/bin " in output and " /proc " in output, output  # the mount table was read
    assert_names_no_host_path(output)


@needs_boxes
def test_nothing_a_malt_answer_reads_names_a_host_path() -> None:
    code = ("def process_graph(graph_data):\n"
            f"    found = []\n"
            f"    for name in {READ.split()!r}:\n"
            "        try:\n"
            "            found.append(open(name, 'rb').read().decode(errors='replace'))\n"
            "        except OSError as error:\n"
            "            found.append(str(error))\n"
            "    return found")
    box = malt_box()
    try:
        result = box.run(code)
    finally:
        box.close()
    assert result.ok, result.error
    text = "\n".join(result.value)
    assert " /opt/python/lib/" in text  # the mount table, with the Python it holds
    assert_names_no_host_path(text)


PLAIN_USER = """
import sys
from pytest_netarena import sandbox
from pytest_netarena.sandbox import views
spec = sandbox.BoxSpec(programs=views.programs(views.SHELL_TOOLS), limits=sandbox.Limits(wall_s=20))
done = sandbox.run(spec, ["bash", "-c", "for f in %s; do tr '\\\\0' ' ' < $f; echo; done 2>&1"])
sys.stdout.write(done.text)
""" % READ


@pytest.mark.skipif(unprivileged.unavailable() is not None, reason=str(unprivileged.unavailable()))
def test_a_plain_users_box_names_no_host_path_either() -> None:
    with unprivileged.unprivileged_home() as home:
        script = home / "probe.py"
        script.write_text(PLAIN_USER)
        done = unprivileged.run_python([str(script)], home)
        text = done.stdout
        assert " /usr/bin " in text and " /proc " in text, done.stdout + done.stderr
        for path in (str(home), *host_paths()):
            assert path not in text, f"{path} in:\n{text}"
