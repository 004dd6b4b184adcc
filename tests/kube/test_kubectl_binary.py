"""Finding kubectl runs it once per binary: its path and its minor version come from one `kubectl version`."""

from __future__ import annotations

import subprocess

import pytest

from pytest_netarena.kube import kubectl


def test_the_path_and_the_minor_version_cost_one_kubectl_run(monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        kubectl.kubectl_path()
    except kubectl.KubectlNotFound as error:
        pytest.skip(str(error))
    real, runs = subprocess.run, []

    def counted(argv, *args, **kwargs):
        runs.append(argv)
        return real(argv, *args, **kwargs)

    for cached in (kubectl.kubectl_path, kubectl.kubectl_minor, kubectl._minor_of):
        cached.cache_clear()
    monkeypatch.setattr(kubectl.subprocess, "run", counted)
    try:
        path, minor = kubectl.kubectl_path(), kubectl.kubectl_minor()
    finally:
        for cached in (kubectl.kubectl_path, kubectl.kubectl_minor, kubectl._minor_of):
            cached.cache_clear()
    assert minor >= kubectl.MIN_MINOR
    assert [argv for argv in runs if argv[0] == path] == [[path, "version", "--client", "-o", "json"]]
