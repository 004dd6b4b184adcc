"""The store a box's binds are copied into: what a box sees is the host's file as it is now, never a stale copy, and
nothing a box does reaches the store."""

from __future__ import annotations

import os
import time
from pathlib import Path

from pytest_netarena import sandbox
from pytest_netarena.sandbox import views
from pytest_netarena.sandbox.store import store

from .conftest import needs_boxes


def box_with(program: Path, folder: Path) -> sandbox.BoxSpec:
    return sandbox.BoxSpec(programs={**views.programs(("sh", "cat", "touch")), "probe": str(program)},
                           binds=((str(folder), "/usr/share/given"),), limits=sandbox.Limits(wall_s=20))


@needs_boxes
def test_a_changed_program_or_folder_reaches_the_next_box(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    program, folder = tmp_path / "probe", tmp_path / "given"
    folder.mkdir(mode=0o755)
    program.write_text("#!/bin/sh\necho version-1\n")
    program.chmod(0o755)
    (folder / "data").write_text("data-1\n")
    first = sandbox.run(box_with(program, folder), ["sh", "-c", "probe; cat /usr/share/given/data"]).text
    time.sleep(0.01)  # a later modification time, whatever the file system's resolution
    program.write_text("#!/bin/sh\necho version-2\n")
    (folder / "data").write_text("data-2\n")
    (folder / "more").write_text("more\n")
    second = sandbox.run(box_with(program, folder), ["sh", "-c", "probe; cat /usr/share/given/data /usr/share/given/more"]).text
    assert first.split() == ["version-1", "data-1"]
    assert second.split() == ["version-2", "data-2", "more"]


@needs_boxes
def test_nothing_a_box_does_reaches_the_store(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    program, folder = tmp_path / "probe", tmp_path / "given"
    folder.mkdir(mode=0o755)
    program.write_text("#!/bin/sh\necho probe\n")
    program.chmod(0o755)
    done = sandbox.run(box_with(program, folder), ["sh", "-c", "touch /usr/bin/planted /usr/share/given/planted "
                                                               "/usr/lib/planted 2>&1; echo END"])
    assert "END" in done.text and done.text.count("Read-only file system") == 3, done.text
    held = store()
    planted = [path for path, _, names in os.walk(held.local(held.root)) for name in names if name == "planted"]
    assert planted == [] and not (folder / "planted").exists()
