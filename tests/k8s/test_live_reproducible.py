"""Live mode reproduces: two environments made with one seed, pods running, show the agent the same pod names, uids
and first observation, even when the running pods' status reports land in another order."""

from __future__ import annotations

import hashlib
import time

import pytest

from pytest_netarena.cluster import live_support

pytestmark = pytest.mark.skipif(not live_support().ok, reason=f"pods cannot run here: {live_support().reason}")

SEE = ("```bash\nkubectl get pods,replicasets -o custom-columns="
       "NAME:.metadata.name,UID:.metadata.uid,IP:.status.podIP,OWNER:.metadata.ownerReferences[0].uid\n```")


def _late_status(original):
    """The kubelet's status write, held back for some pods (by a hash of their name): the order reports land in
    changes, and with it the resourceVersion every later object is made at."""
    def write(self, run):
        if hashlib.sha256(run.pod["metadata"]["name"].encode()).digest()[0] % 2:
            time.sleep(0.03)
        return original(self, run)
    return write


def _what_the_agent_sees(monkeypatch, delayed: bool) -> tuple[str, str, str]:
    from pytest_netarena.apps.k8s import APP
    from pytest_netarena.cluster.kubelet import Kubelet
    from pytest_netarena.core.app import RunOptions

    options = RunOptions(seed=11, queries=1)  # the default mode: live where pods can run
    with monkeypatch.context() as patch:
        if delayed:
            patch.setattr(Kubelet, "_write_status", _late_status(Kubelet._write_status))
        environment = APP.make_environment(options)
    try:
        assert environment.backend.mode == "live"
        first = environment.reset(APP.generate(options)[0])
        listing = environment.step("```bash\nkubectl get pods -o name\n```").output
        columns = environment.step(SEE).output
        return first, listing, columns
    finally:
        environment.close()


def test_one_seed_shows_the_same_pods_whatever_order_their_status_lands_in(monkeypatch):
    first, listing, columns = _what_the_agent_sees(monkeypatch, delayed=True)
    assert listing.count("pod/") >= 10 and "10.244." in columns
    assert _what_the_agent_sees(monkeypatch, delayed=False) == (first, listing, columns)


def test_the_pods_status_reports_are_not_numbered_among_the_steps_writes():
    """A step's writes are numbered in violations ("write 1 of 2"): the kubelet's reports, which land whenever
    the pods answer, must not shift the numbers."""
    from pytest_netarena.apps.k8s import APP
    from pytest_netarena.apps.k8s.writes import WriteCheck
    from pytest_netarena.core.app import RunOptions

    options = RunOptions(seed=11, queries=1, extra={"k8s_pods": "live"})
    environment = APP.make_environment(options)
    try:
        environment.reset(APP.generate(options)[0])
        backend = environment.backend
        pod = backend.server.list_objects("Pod", backend.namespace)[0]
        labelled = {"apiVersion": "v1", "kind": "Pod", "metadata": {**pod["metadata"], "labels": {
            **pod["metadata"]["labels"], "reported": "yes"}}, "spec": pod["spec"], "status": pod["status"]}
        check = WriteCheck(environment.intent, backend.observe().matrix)
        with backend.watching_writes(check):
            backend.live.kubelet.post(lambda: backend.server.apply_object(labelled))  # from the kubelet's thread
            assert backend.live.settle(10)
            assert backend.server.get_object("Pod", backend.namespace, pod["metadata"]["name"])[
                "metadata"]["labels"]["reported"] == "yes"
            assert check.writes == 0
            backend.server.apply_object({**labelled, "metadata": {**labelled["metadata"], "labels": pod["metadata"][
                "labels"]}})  # the same kind of write from a request's thread counts
            assert check.writes == 1
    finally:
        environment.close()
