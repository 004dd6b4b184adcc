"""Red team: a pod's volumes are written by the pod, and its root folder too, so links it plants there try to make
the node (root) bind or serve a host file: a subPath that is a link, a mount point swapped for a link before a
restart, nginx's html folder holding a link. Each attack aims at a canary file or folder the test made."""

from __future__ import annotations

import os
import secrets
import subprocess
import time

import pytest

from pytest_netarena.cluster import live_support
from pytest_netarena.kube import EmbeddedAPIServer, kubectl_env, kubectl_path
from pytest_netarena.sandbox import Mount, UnsafeMount
from pytest_netarena.sandbox.mounts import open_source, prepare_target

live = pytest.mark.skipif(not live_support().ok, reason=f"pods cannot run here: {live_support().reason}")


@pytest.fixture
def canary(tmp_path):
    folder = tmp_path / "canary"
    folder.mkdir()
    os.chmod(tmp_path, 0o755)
    secret = secrets.token_hex(16)
    (folder / "secret").write_text(secret)
    return folder, secret


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    if not live_support().ok:
        pytest.skip(live_support().reason)
    from pytest_netarena.cluster import LiveCluster

    server = EmbeddedAPIServer().start()
    running = LiveCluster(server, backoff_s=0.3).start()
    env = kubectl_env(server, tmp_path_factory.mktemp("kubectl"))
    yield server, running, env
    running.stop()
    server.stop()


def _kubectl(env, *args) -> subprocess.CompletedProcess:
    return subprocess.run([kubectl_path(), *args], env=env, capture_output=True, text=True, timeout=60)


def _wait(predicate, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("timed out")


def test_a_sub_path_link_is_refused_not_followed(tmp_path, canary):
    folder, _ = canary
    volume = tmp_path / "volume"
    volume.mkdir()
    (volume / "leak").symlink_to(folder / "secret")
    (volume / "ok").mkdir()
    fd = open_source(Mount(str(volume), "/data", writable=True, sub_path="ok"))
    os.close(fd)
    for sub in ("leak", "leak/x", "../canary/secret"):
        with pytest.raises(OSError):
            open_source(Mount(str(volume), "/data", writable=True, sub_path=sub))
    # a trusted (harness-written) volume follows its own links only while they stay inside it
    with pytest.raises(UnsafeMount):
        open_source(Mount(str(volume), "/data", sub_path="leak", trusted=True))


def test_a_mount_point_through_a_link_or_a_users_folder_is_refused(tmp_path, canary):
    folder, _ = canary
    root = tmp_path / "root"
    root.mkdir()
    (root / "var").mkdir()
    (root / "var" / "run").symlink_to(folder)
    with pytest.raises(UnsafeMount):
        prepare_target(str(root), "/var/run/secrets", True)
    (root / "mine").mkdir()
    os.chown(root / "mine", 1_700_999_000, 1_700_999_000)
    with pytest.raises(UnsafeMount):
        prepare_target(str(root), "/mine/data", True)
    assert sorted(os.listdir(folder)) == ["secret"]  # nothing was made through the link
    prepare_target(str(root), "/etc/app/settings.conf", False)
    assert (root / "etc" / "app" / "settings.conf").stat().st_uid == 0


@live
def test_a_pod_cannot_bind_a_host_file_through_a_sub_path_link(cluster, canary):
    server, running, env = cluster
    folder, secret = canary
    mount = {"name": "shared", "mountPath": "/shared"}
    server.apply_objects([{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "subpath", "namespace": "default"},
                           "spec": {"volumes": [{"name": "shared", "emptyDir": {}}], "initContainers": [
                               {"name": "plant", "image": "busybox", "volumeMounts": [mount], "command": [
                                   "sh", "-c", f"ln -s {folder}/secret /shared/leak; mkdir /shared/fine; "
                                               "echo inside > /shared/fine/note"]}],
                               "containers": [
                                   {"name": "honest", "image": "busybox", "command": ["sh", "-c", "sleep 3600"],
                                    "volumeMounts": [{"name": "shared", "mountPath": "/fine", "subPath": "fine"}]},
                                   {"name": "reader", "image": "busybox", "command": ["sh", "-c", "cat /leak; sleep 3600"],
                                    "volumeMounts": [{"name": "shared", "mountPath": "/leak", "subPath": "leak"}]}]}}])

    def reader_state():
        pod = server.get_object("Pod", "default", "subpath")
        statuses = {s["name"]: s for s in (pod.get("status") or {}).get("containerStatuses") or []}
        reader = statuses.get("reader") or {}
        return reader if reader.get("lastState") or (reader.get("state") or {}).get("terminated") else None

    state = _wait(reader_state)
    assert "symbolic link" in str(state)
    assert _kubectl(env, "exec", "subpath", "-c", "honest", "--", "cat", "/fine/note").stdout == "inside\n"
    logs = _kubectl(env, "logs", "subpath", "-c", "reader").stdout + _kubectl(env, "logs", "subpath", "-c", "reader",
                                                                                "--previous").stdout
    assert secret not in logs
    server.delete_object("Pod", "default", "subpath")


@live
def test_a_swapped_mount_point_does_not_redirect_the_mount_at_restart(cluster, canary):
    server, running, env = cluster
    folder, secret = canary
    attack = ("[ -f /mnt/data/marker ] && echo kept-marker; "
              f"rm -rf /mnt/data 2>/dev/null; mv /mnt/data /mnt/gone 2>/dev/null; ln -s {folder} /mnt/data 2>/dev/null; "
              f"mv /mnt /mnt-old 2>/dev/null && mkdir /mnt && ln -s {folder} /mnt/data; "
              "cat /mnt/data/secret 2>&1; echo here > /mnt/data/marker; exit 1")
    server.apply_objects([{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "swap", "namespace": "default"},
                           "spec": {"volumes": [{"name": "data", "emptyDir": {}}], "containers": [
                               {"name": "main", "image": "busybox", "command": ["sh", "-c", attack],
                                "volumeMounts": [{"name": "data", "mountPath": "/mnt/data"}]}]}}])

    def restarted():
        pod = server.get_object("Pod", "default", "swap")
        statuses = (pod.get("status") or {}).get("containerStatuses") or [{}]
        return statuses[0].get("restartCount", 0) >= 2

    _wait(restarted)
    assert sorted(os.listdir(folder)) == ["secret"]
    logs = _kubectl(env, "logs", "swap", "--previous").stdout
    assert "kept-marker" in logs and secret not in logs  # the volume, not the link, is at /mnt/data again
    server.delete_object("Pod", "default", "swap")


@live
def test_nginx_serves_its_html_folder_but_never_through_a_link(cluster, canary):
    server, running, env = cluster
    folder, secret = canary
    html = {"name": "html", "mountPath": "/usr/share/nginx/html"}
    server.apply_objects([
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
         "spec": {"volumes": [{"name": "html", "emptyDir": {}}],
                  "initContainers": [{"name": "plant", "image": "busybox", "volumeMounts": [html], "command": [
                      "sh", "-c", f"echo hello > /usr/share/nginx/html/index.html; "
                                  f"ln -s {folder}/secret /usr/share/nginx/html/leak.html; "
                                  f"ln -s {folder} /usr/share/nginx/html/dir"]}],
                  "containers": [{"name": "nginx", "image": "nginx:1.27", "volumeMounts": [html]}]}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "client", "namespace": "default"},
         "spec": {"containers": [{"name": "main", "image": "busybox", "command": ["sleep", "3600"]}]}}])
    running.wait_ready(60, "default")
    address = server.get_object("Pod", "default", "web")["status"]["podIP"]

    def fetch(path: str) -> str:
        done = _kubectl(env, "exec", "client", "--", "wget", "-qO-", "-T", "3", f"http://{address}{path}")
        return done.stdout + done.stderr

    assert fetch("/") == "hello\n"
    for path in ("/leak.html", "/dir/secret", "/../../../../" + str(folder / "secret")):
        answer = fetch(path)
        assert secret not in answer and "404" in answer, (path, answer)
    server.delete_object("Pod", "default", "web")
    server.delete_object("Pod", "default", "client")
