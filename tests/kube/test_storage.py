"""PersistentVolumes, PersistentVolumeClaims and StorageClasses through the real kubectl: k3s's default class, a
claim's default class, validation messages, static binding (volumeName and a fitting volume), provisioning when
the first consumer is placed (WaitForFirstConsumer) through store.provisioners, claim protection, and release."""

from __future__ import annotations

import textwrap

import pytest

from pytest_netarena.kube import EmbeddedAPIServer
from pytest_netarena.kube.k3s import Profile

from .conftest import kubectl_for, mask

VOLUME = """\
apiVersion: v1
kind: PersistentVolume
metadata: {name: NAME, labels: {tier: cache}}
spec:
  capacity: {storage: SIZE}
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  hostPath: {path: /srv/NAME}
"""
CLAIM = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: NAME}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: SIZE}}
"""
CONSUMER = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: db}
spec:
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: busybox, command: [sleep, "3600"], volumeMounts: [{name: d, mountPath: /data}]}]
      volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]
"""


@pytest.fixture(scope="module")
def k3s():
    server = EmbeddedAPIServer(profile=Profile(frozenset({"traefik"}))).start()
    server.snapshot()
    yield server
    server.stop()


@pytest.fixture
def kc(k3s, kubectl_bin, tmp_path):
    k3s.reset()
    return kubectl_for(k3s, kubectl_bin, tmp_path)


def _claim(kc, name: str, field: str) -> str:
    return kc("get", "pvc", name, "-o", f"jsonpath={{{field}}}").stdout


def test_k3s_ships_a_default_local_path_class_and_claims_get_it(kc):
    assert mask(kc("get", "sc").stdout).splitlines()[1] == \
        "local-path (default)  rancher.io/local-path  Delete  WaitForFirstConsumer  false  <age>"
    kc("apply", "-f", "-", input=CLAIM.replace("NAME", "data").replace("SIZE", "2Gi"))
    assert _claim(kc, "data", ".spec.storageClassName") == "local-path"
    assert _claim(kc, "data", ".status.phase") == "Pending"
    assert "waiting for first consumer to be created before binding" in kc("describe", "pvc", "data").stdout


def test_the_first_consumer_gets_a_provisioned_volume_pinned_to_its_node(kc, k3s):
    kc("apply", "-f", "-", input=CLAIM.replace("NAME", "data").replace("SIZE", "2Gi") + "---\n" + CONSUMER)
    volume = _claim(kc, "data", ".spec.volumeName")
    assert volume.startswith("pvc-") and _claim(kc, "data", ".status.phase") == "Bound"
    pv = k3s.get_object("PersistentVolume", None, volume)
    assert pv["spec"]["claimRef"]["name"] == "data" and pv["spec"]["persistentVolumeReclaimPolicy"] == "Delete"
    assert pv["spec"]["hostPath"]["path"].startswith("/var/lib/rancher/k3s/storage/pvc-")
    assert pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == \
        ["netarena-node"]
    assert "ProvisioningSucceeded" in kc("get", "events").stdout
    row = mask(kc("get", "pvc", "data").stdout).splitlines()[1]
    assert row.startswith(f"data  Bound  {volume}  2Gi  RWO  local-path")


def test_a_provisioner_a_runtime_registers_makes_the_volume(kc, k3s):
    made = []

    def provision(claim, storage_class, node):
        made.append((claim["metadata"]["name"], storage_class["metadata"]["name"], node))
        return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "made-by-runtime"},
                "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                         "storageClassName": "local-path", "hostPath": {"path": "/real/dir"}}}

    k3s.store.provisioners = {"rancher.io/local-path": provision}
    try:
        kc("apply", "-f", "-", input=CLAIM.replace("NAME", "data").replace("SIZE", "1Gi") + "---\n" + CONSUMER)
    finally:
        k3s.store.provisioners = None
    assert made == [("data", "local-path", "netarena-node")]
    assert _claim(kc, "data", ".spec.volumeName") == "made-by-runtime"


def test_static_binding_by_name_and_by_fit(kc, k3s):
    kc("apply", "-f", "-", input="---\n".join([
        VOLUME.replace("NAME", "small").replace("SIZE", "1Gi"), VOLUME.replace("NAME", "large").replace("SIZE", "5Gi"),
        CLAIM.replace("NAME", "fit").replace("SIZE", "3Gi").replace("spec:\n", 'spec:\n  storageClassName: ""\n'),
        CLAIM.replace("NAME", "named").replace("SIZE", "1Gi").replace(
            "spec:\n", 'spec:\n  storageClassName: ""\n  volumeName: small\n')]))
    assert _claim(kc, "fit", ".spec.volumeName") == "large" and _claim(kc, "named", ".spec.volumeName") == "small"
    rows = mask(kc("get", "pv").stdout).splitlines()
    assert rows[1].startswith("large  5Gi  RWO  Retain  Bound  default/fit")
    assert k3s.get_object("PersistentVolumeClaim", "default", "named")["metadata"]["annotations"][
        "pv.kubernetes.io/bind-completed"] == "yes"
    kc("delete", "pvc", "named")
    assert k3s.get_object("PersistentVolume", None, "small")["status"]["phase"] == "Released"


def test_a_claim_in_use_waits_for_its_pods_before_it_goes(kc, k3s):
    kc("apply", "-f", "-", input=CLAIM.replace("NAME", "data").replace("SIZE", "1Gi") + "---\n" + CONSUMER)
    kc("delete", "pvc", "data", "--wait=false")
    assert _claim(kc, "data", ".metadata.finalizers[0]") == "kubernetes.io/pvc-protection"
    assert mask(kc("get", "pvc", "data").stdout).splitlines()[1].startswith("data  Bound")
    assert kc("get", "pvc", "data", "-o", "jsonpath={.metadata.deletionTimestamp}").stdout
    kc("delete", "deployment", "db")
    assert k3s.get_object("PersistentVolumeClaim", "default", "data") is None
    assert k3s.list_objects("PersistentVolume") == []  # Delete: the provisioned volume went with it


def test_a_pod_whose_claim_does_not_exist_waits_as_the_scheduler_says(kc, k3s):
    kc("apply", "-f", "-", input=CONSUMER)
    pod = k3s.list_objects("Pod", "default")[0]
    assert pod["status"]["phase"] == "Pending" and not pod["spec"].get("nodeName")
    assert ('0/1 nodes are available: persistentvolumeclaim "data" not found. preemption: 0/1 nodes are available: '
            "1 Preemption is not helpful for scheduling.") in kc("get", "events").stdout
    kc("apply", "-f", "-", input=CLAIM.replace("NAME", "data").replace("SIZE", "1Gi"))
    assert k3s.list_objects("Pod", "default")[0]["spec"]["nodeName"] == "netarena-node"


def test_storage_objects_are_validated_with_the_real_messages(kc):
    refused = kc("apply", "-f", "-", input=textwrap.dedent("""\
        apiVersion: v1
        kind: PersistentVolumeClaim
        metadata: {name: bad}
        spec: {accessModes: [ReadWriteSometimes]}
        """), check=False)
    assert ('spec.accessModes: Unsupported value: "ReadWriteSometimes": supported values: "ReadOnlyMany", '
            '"ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"') in refused.stderr
    assert "spec.resources[storage]: Required value" in refused.stderr
    kc("apply", "-f", "-", input=CLAIM.replace("NAME", "data").replace("SIZE", "2Gi"))
    shrink = kc("patch", "pvc", "data", "--type=merge", "-p", '{"spec":{"accessModes":["ReadOnlyMany"]}}',
                check=False)
    assert "spec: Forbidden: spec is immutable after creation except resources.requests and " \
           "volumeAttributesClassName for bound claims" in shrink.stderr
    volume = kc("apply", "-f", "-", input=VOLUME.replace("NAME", "v").replace("SIZE", "1Gi").replace(
        "  hostPath: {path: /srv/v}\n", ""), check=False)
    assert "spec: Required value: must specify a volume type" in volume.stderr
    sc = kc("patch", "sc", "local-path", "--type=merge", "-p", '{"reclaimPolicy":"Retain"}', check=False)
    assert "reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden." in sc.stderr
