"""A live cluster of real pods for the red-team tests that attack through pods, and the pods they run."""

from __future__ import annotations

import subprocess

import pytest

from pytest_netarena.kube import EmbeddedAPIServer, KubectlNotFound, kubectl_env, kubectl_path


def pod(name: str, command: str, **container) -> dict:
    """A busybox pod labelled app=<name> running `sh -c command`; container holds more of the container's fields."""
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default",
                                                            "labels": {"app": name}},
            "spec": {"containers": [{"name": "main", "image": "busybox:1.36", "command": ["sh", "-c", command],
                                     **container}]}}


class PodCluster:
    """The embedded API server with a live cluster attached, and a kubeconfig for the real kubectl."""

    def __init__(self, tmp, **live_options) -> None:
        """live_options: LiveCluster's keyword arguments (backoff_s 0.5 unless given)."""
        from pytest_netarena.cluster import LiveCluster

        try:
            self.kubectl_bin = kubectl_path()
        except KubectlNotFound as error:
            pytest.skip(str(error))
        self.server = EmbeddedAPIServer().start()
        self.live = LiveCluster(self.server, **{"backoff_s": 0.5, **live_options}).start()
        self.env = kubectl_env(self.server, tmp)

    def run(self, *objects: dict) -> None:
        """Apply the objects and wait until the pods are ready."""
        self.server.apply_objects(list(objects))
        self.live.wait_ready(60, "default")

    def kubectl(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        return subprocess.run([self.kubectl_bin, *args], env=self.env, capture_output=True, text=True, timeout=timeout)

    def exec(self, name: str, command: str, timeout: float = 60) -> subprocess.CompletedProcess:
        return self.kubectl("exec", name, "--", "sh", "-c", command, timeout=timeout)

    def address(self, name: str) -> str:
        return self.server.get_object("Pod", "default", name)["status"]["podIP"]

    def stop(self) -> None:
        self.live.stop()
        self.server.stop()
