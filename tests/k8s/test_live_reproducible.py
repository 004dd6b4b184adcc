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
