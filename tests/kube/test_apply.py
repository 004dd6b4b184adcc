"""Server-side apply, managedFields and --dry-run=server through the real kubectl and raw HTTP: create and update by
apply, fields owned per manager, the real 409 conflict and --force-conflicts, fields an applier drops removed,
kubectl's move from client-side apply, and every write of a dry run left unstored."""

from __future__ import annotations

import json

from .conftest import call

WEB = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.25
        env: [{name: MODE, value: fast}, {name: LEVEL, value: "3"}]
"""


def _managers(cluster, name: str = "web") -> dict:
    meta = cluster.get_object("Deployment", "default", name)["metadata"]
    return {(e["manager"], e["operation"], e.get("subresource", "")): e["fieldsV1"] for e in meta["managedFields"]}


def test_apply_creates_and_records_what_the_applier_owns(kubectl, cluster):
    assert kubectl("apply", "--server-side", "-f", "-", input=WEB).stdout == "deployment.apps/web serverside-applied\n"
    owned = _managers(cluster)[("kubectl", "Apply", "")]
    assert owned["f:spec"]["f:replicas"] == {}
    container = owned["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"web"}']
    assert container["."] == {} and container["f:image"] == {}
    assert set(container["f:env"]) == {'k:{"name":"LEVEL"}', 'k:{"name":"MODE"}'}
    assert "f:progressDeadlineSeconds" not in owned["f:spec"]  # a default, not the applier's
    shown = kubectl("get", "deploy", "web", "-o", "yaml", "--show-managed-fields").stdout
    assert "manager: kubectl\n    operation: Apply" in shown


def test_a_field_another_manager_changed_is_a_conflict_until_forced(kubectl, cluster):
    kubectl("apply", "--server-side", "-f", "-", input=WEB)
    kubectl("scale", "deployment", "web", "--replicas=4")
    assert _managers(cluster)[("kubectl", "Update", "scale")] == {"f:spec": {"f:replicas": {}}}
    refused = kubectl("apply", "--server-side", "-f", "-", input=WEB, check=False)
    assert refused.returncode == 1
    assert ('error: Apply failed with 1 conflict: conflict with "kubectl" with subresource "scale" using apps/v1: '
            '.spec.replicas') in refused.stderr
    code, body = call(cluster, "PATCH", "/apis/apps/v1/namespaces/default/deployments/web?fieldManager=ci",
                      WEB.replace("nginx:1.25", "nginx:1.26").encode(), "application/apply-patch+yaml")
    assert code == 409 and body["reason"] == "Conflict"
    fields = sorted(c["field"] for c in body["details"]["causes"])
    assert fields == ['.spec.replicas', '.spec.template.spec.containers[name="web"].image']
    assert body["message"].startswith("Apply failed with 2 conflicts: conflicts with \"kubectl\" using apps/v1:\n- ")
    kubectl("apply", "--server-side", "--force-conflicts", "-f", "-", input=WEB)
    assert cluster.get_object("Deployment", "default", "web")["spec"]["replicas"] == 2
    assert ("kubectl", "Update", "scale") not in _managers(cluster)


def test_fields_an_applier_stops_setting_are_removed(kubectl, cluster):
    kubectl("apply", "--server-side", "-f", "-", input=WEB)
    kubectl("apply", "--server-side", "-f", "-", input=WEB.replace(', {name: LEVEL, value: "3"}', "")
            .replace("  replicas: 2\n", ""))
    deployment = cluster.get_object("Deployment", "default", "web")
    assert [e["name"] for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]] == ["MODE"]
    assert deployment["spec"]["replicas"] == 1  # back to the default


def test_kubectl_moves_client_side_applied_objects_to_server_side(kubectl, cluster):
    kubectl("apply", "-f", "-", input=WEB)
    assert ("kubectl-client-side-apply", "Update", "") in _managers(cluster)
    # kubectl applies first, then hands the client-side manager's fields to its own (a JSON patch of managedFields)
    kubectl("apply", "--server-side", "-f", "-", input=WEB)
    managers = _managers(cluster)
    assert ("kubectl", "Apply", "") in managers and ("kubectl-client-side-apply", "Update", "") not in managers
    kubectl("apply", "--server-side", "-f", "-", input=WEB.replace("replicas: 2", "replicas: 3"))  # its own now
    assert cluster.get_object("Deployment", "default", "web")["spec"]["replicas"] == 3


def test_every_write_of_a_server_dry_run_is_checked_but_not_stored(kubectl, cluster):
    assert "(server dry run)" in kubectl("apply", "--server-side", "--dry-run=server", "-f", "-", input=WEB).stdout
    assert cluster.get_object("Deployment", "default", "web") is None
    kubectl("apply", "--server-side", "-f", "-", input=WEB)
    before = cluster.get_object("Deployment", "default", "web")
    for args in (("scale", "deployment", "web", "--replicas=5"), ("label", "deployment", "web", "x=y"),
                 ("set", "image", "deployment/web", "web=nginx:2"), ("delete", "deployment", "web"),
                 ("create", "configmap", "c", "--from-literal=a=b"), ("create", "job", "j", "--image=busybox"),
                 ("drain", "netarena-node", "--ignore-daemonsets"), ("cordon", "netarena-node")):
        assert "(server dry run)" in kubectl(*args, "--dry-run=server").stdout, args
    assert cluster.get_object("Deployment", "default", "web") == before
    assert cluster.get_object("ConfigMap", "default", "c") is None and cluster.list_objects("Job") == []
    assert not cluster.get_object("Node", None, "netarena-node")["spec"].get("unschedulable")
    invalid = kubectl("apply", "--server-side", "--dry-run=server", "-f", "-",
                      input=WEB.replace("replicas: 2", "replicas: -1"), check=False)
    assert "spec.replicas: Invalid value: -1: must be greater than or equal to 0" in invalid.stderr
    assert json.loads(kubectl("get", "deploy", "web", "-o", "json").stdout)["spec"]["replicas"] == 2
