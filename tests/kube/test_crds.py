"""CustomResourceDefinitions through the real kubectl: served and discovered like built-in kinds, objects checked
against their structural schema with the real server's messages, the status subresource, printer columns,
finalizers, watches, several versions, and a CRD or namespace that waits for its objects' finalizers."""

from __future__ import annotations

import json
import subprocess

from .conftest import call, mask

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.platform.example.dev
spec:
  group: platform.example.dev
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wdgt]}
  versions:
    - name: v1
      served: true
      storage: true
      additionalPrinterColumns:
        - {name: Mode, type: string, jsonPath: .spec.mode}
        - {name: Replicas, type: integer, jsonPath: .spec.replicas}
        - {name: Ready, type: string, jsonPath: '.status.conditions[?(@.type=="Ready")].status'}
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              required: [mode]
              properties:
                mode: {type: string, enum: [active, passive]}
                replicas: {type: integer, minimum: 1, maximum: 5, default: 1}
                owner: {type: string, pattern: '^[a-z]+$'}
            status:
              type: object
              x-kubernetes-preserve-unknown-fields: true
      subresources:
        status: {}
    - name: v1beta1
      served: true
      storage: false
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
"""

WIDGET = """\
apiVersion: platform.example.dev/v1
kind: Widget
metadata: {name: search-index, finalizers: [platform.example.dev/cleanup]}
spec: {mode: active}
"""


def _install(kubectl) -> None:
    kubectl("apply", "-f", "-", input=CRD)
    kubectl("wait", "--for=condition=Established", "crd/widgets.platform.example.dev", "--timeout=10s")


def test_a_new_kind_is_discovered_served_and_printed_with_its_columns(kubectl):
    assert "widgets" not in kubectl("api-resources").stdout  # kubectl's discovery cache is warm now
    _install(kubectl)
    resources = mask(kubectl("api-resources", "--api-group=platform.example.dev").stdout)
    assert resources.splitlines()[1] == "widgets  wdgt  platform.example.dev/v1  true  Widget"
    assert "platform.example.dev/v1beta1" in kubectl("api-versions").stdout
    assert kubectl("apply", "-f", "-", input=WIDGET).stdout == "widget.platform.example.dev/search-index created\n"
    assert mask(kubectl("get", "wdgt").stdout) == "NAME  MODE  REPLICAS  READY\nsearch-index  active  1"
    crds = mask(kubectl("get", "crd").stdout)
    assert crds.splitlines()[1].startswith("widgets.platform.example.dev  20")  # CREATED AT, a date
    established = kubectl("get", "crd", "widgets.platform.example.dev", "-o",
                          'jsonpath={.status.conditions[?(@.type=="Established")].reason}').stdout
    assert established == "InitialNamesAccepted"
    assert "mode\t<string> -required-" in kubectl("explain", "widget.spec").stdout


def test_objects_are_checked_against_the_schema_with_the_real_messages(kubectl, cluster):
    _install(kubectl)
    bad = WIDGET.replace("mode: active", "mode: standby, replicas: 9, owner: Team1")
    refused = kubectl("apply", "-f", "-", input=bad, check=False)
    assert refused.returncode == 1
    assert ('The Widget "search-index" is invalid: \n* spec.mode: Unsupported value: "standby": supported values: '
            '"active", "passive"\n* spec.owner: Invalid value: "Team1": spec.owner in body should match '
            "'^[a-z]+$'\n* spec.replicas: Invalid value: 9: spec.replicas in body should be less than or equal to 5"
            ) in refused.stderr
    typed = kubectl("apply", "-f", "-", input=WIDGET.replace("mode: active", "mode: active, replicas: two"),
                    check=False)
    assert 'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"' \
        in typed.stderr
    missing = kubectl("apply", "-f", "-", input=WIDGET.replace("spec: {mode: active}", "spec: {}"), check=False)
    assert "spec.mode: Required value" in missing.stderr
    unknown = kubectl("apply", "-f", "-", input=WIDGET.replace("mode: active", "mode: active, colour: red"),
                      check=False)
    assert ('Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field '
            '"spec.colour"') in unknown.stderr
    # without strict field validation, unknown fields are pruned and defaults filled in
    code, body = call(cluster, "POST", "/apis/platform.example.dev/v1/namespaces/default/widgets", {
        "apiVersion": "platform.example.dev/v1", "kind": "Widget", "metadata": {"name": "pruned"},
        "spec": {"mode": "passive", "colour": "red"}, "extra": 1})
    assert code == 201 and body["spec"] == {"mode": "passive", "replicas": 1} and "extra" not in body


def test_the_status_subresource_owns_status_and_generation_follows_spec(kubectl, cluster):
    _install(kubectl)
    kubectl("apply", "-f", "-", input=WIDGET)
    kubectl("patch", "widget", "search-index", "--type=merge", "-p", '{"status":{"phase":"Ignored"}}')
    assert "status" not in cluster.get_object("Widget", "default", "search-index")
    kubectl("patch", "widget", "search-index", "--subresource=status", "--type=merge",
            "-p", '{"spec":{"mode":"passive"},"status":{"conditions":[{"type":"Ready","status":"True"}]}}')
    widget = cluster.get_object("Widget", "default", "search-index")
    assert widget["spec"]["mode"] == "active" and widget["metadata"]["generation"] == 1
    assert mask(kubectl("get", "widget", "search-index").stdout).splitlines()[1] == "search-index  active  1  True"
    kubectl("patch", "widget", "search-index", "--type=merge", "-p", '{"spec":{"mode":"passive"}}')
    assert cluster.get_object("Widget", "default", "search-index")["metadata"]["generation"] == 2
    smp = kubectl("patch", "widget", "search-index", "-p", '{"spec":{"mode":"active"}}', check=False)
    assert "the body of the request was in an unknown format - accepted media types include: " \
           "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml" in smp.stderr


def test_a_finalizer_holds_a_deleted_object_until_it_is_removed(kubectl, cluster):
    _install(kubectl)
    kubectl("apply", "-f", "-", input=WIDGET)
    assert "deleted" in kubectl("delete", "widget", "search-index", "--wait=false").stdout
    held = cluster.get_object("Widget", "default", "search-index")
    assert held["metadata"]["deletionTimestamp"] and held["metadata"]["finalizers"] == ["platform.example.dev/cleanup"]
    added = kubectl("patch", "widget", "search-index", "--type=json",
                    "-p", '[{"op":"add","path":"/metadata/finalizers/-","value":"other/one"}]', check=False)
    assert ('metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found '
            'new finalizers []string{"other/one"}') in added.stderr
    kubectl("patch", "widget", "search-index", "--type=json", "-p", '[{"op":"remove","path":"/metadata/finalizers"}]')
    assert cluster.get_object("Widget", "default", "search-index") is None


def test_a_crd_and_a_namespace_take_their_objects_when_the_finalizers_allow(kubectl, cluster):
    _install(kubectl)
    kubectl("create", "namespace", "search")
    kubectl("apply", "-n", "search", "-f", "-", input=WIDGET)
    kubectl("apply", "-n", "search", "-f", "-", input=WIDGET.replace("search-index", "plain").replace(
        ", finalizers: [platform.example.dev/cleanup]", ""))
    kubectl("delete", "namespace", "search", "--wait=false")
    assert kubectl("get", "ns", "search", "-o", "jsonpath={.status.phase}").stdout == "Terminating"
    assert [w["metadata"]["name"] for w in cluster.list_objects("Widget", "search")] == ["search-index"]
    created = kubectl("create", "configmap", "late", "-n", "search", check=False)
    assert ('configmaps "late" is forbidden: unable to create new content in namespace search because it is being '
            'terminated') in created.stderr
    kubectl("patch", "widget", "search-index", "-n", "search", "--type=merge", "-p", '{"metadata":{"finalizers":null}}')
    assert cluster.get_object("Namespace", None, "search") is None
    kubectl("apply", "-f", "-", input=WIDGET)
    kubectl("delete", "crd", "widgets.platform.example.dev", "--wait=false")
    terminating = kubectl("get", "crd", "widgets.platform.example.dev", "-o",
                          'jsonpath={.status.conditions[?(@.type=="Terminating")].reason}').stdout
    assert terminating == "InstanceDeletionInProgress"
    kubectl("patch", "widget", "search-index", "--type=merge", "-p", '{"metadata":{"finalizers":null}}')
    assert cluster.get_object("CustomResourceDefinition", None, "widgets.platform.example.dev") is None
    gone = kubectl("get", "widgets", check=False)  # kubectl's cached discovery still names it, as on a real server
    assert "the server could not find the requested resource" in gone.stderr


def test_custom_objects_are_watched_and_served_in_every_version(kubectl, kubectl_bin, kube_env, cluster):
    _install(kubectl)
    watch = subprocess.Popen([kubectl_bin, "get", "widgets", "-w", "--output-watch-events", "-o",
                              "jsonpath={.type} {.object.spec.mode}{\"\\n\"}", "--request-timeout=5s"],
                             env=kube_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        kubectl("wait", "--for=condition=Established", "crd/widgets.platform.example.dev", "--timeout=5s")
        kubectl("apply", "-f", "-", input=WIDGET)
        kubectl("patch", "widget", "search-index", "--type=merge", "-p", '{"spec":{"mode":"passive"}}')
        out, _ = watch.communicate(timeout=15)
    finally:
        watch.kill()
    assert "ADDED active" in out and "MODIFIED passive" in out
    old = json.loads(kubectl("get", "widgets.v1beta1.platform.example.dev", "search-index", "-o", "json").stdout)
    assert old["apiVersion"] == "platform.example.dev/v1beta1" and old["spec"]["mode"] == "passive"
    stored = cluster.get_object("Widget", "default", "search-index")
    assert stored["apiVersion"] == "platform.example.dev/v1"
