"""HorizontalPodAutoscalers (autoscaling/v2, and v1) through the real kubectl: validation with the real messages,
kubectl autoscale, the status the controller writes without metrics (target resolved or not, bounds kept) and with
a metrics source (store.metrics, the hook a runtime fills), and the v1 form."""

from __future__ import annotations

import json
import textwrap

from .conftest import call, mask

HPA = """\
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: api}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: TARGET}
  minReplicas: 2
  maxReplicas: 5
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
"""


def _conditions(kubectl, name: str = "api") -> dict:
    status = json.loads(kubectl("get", "hpa", name, "-o", "jsonpath={.status}").stdout)
    return {c["type"]: (c["status"], c["reason"], c["message"]) for c in status.get("conditions", [])}


def test_an_autoscaler_is_validated_with_the_real_messages(kubectl):
    bad = HPA.replace("minReplicas: 2", "minReplicas: 0").replace("maxReplicas: 5", "maxReplicas: 0") \
        .replace("type: Utilization, averageUtilization: 50", "type: Utilization")
    refused = kubectl("apply", "-f", "-", input=bad, check=False)
    assert 'The HorizontalPodAutoscaler "api" is invalid:' in refused.stderr
    for cause in ("spec.minReplicas: Invalid value: 0: must be greater than or equal to 1",
                  "spec.maxReplicas: Invalid value: 0: must be greater than 0",
                  "spec.metrics[0].resource.target.averageUtilization: Required value: must set either a target raw "
                  "value or a target utilization"):
        assert cause in refused.stderr
    unknown = kubectl("apply", "-f", "-", input=HPA.replace("type: Resource", "type: Magic"), check=False)
    assert ('spec.metrics[0].type: Unsupported value: "Magic": supported values: "ContainerResource", "External", '
            '"Object", "Pods", "Resource"') in unknown.stderr


def test_autoscale_keeps_the_target_within_bounds_and_says_it_has_no_metrics(kubectl, cluster):
    kubectl("create", "deployment", "api", "--image=nginx", "--replicas=1")
    assert kubectl("autoscale", "deployment", "api", "--min=2", "--max=5", "--cpu=80%").stdout == \
        "horizontalpodautoscaler.autoscaling/api autoscaled\n"
    assert cluster.get_object("Deployment", "default", "api")["spec"]["replicas"] == 2
    row = mask(kubectl("get", "hpa").stdout).splitlines()[1]
    assert row == "api  Deployment/api  cpu: <unknown>/80%  2  5  2  <age>"
    conditions = _conditions(kubectl)
    assert conditions["AbleToScale"][0] == "True"
    assert conditions["ScalingActive"][:2] == ("False", "FailedGetResourceMetric")
    assert "the server could not find the requested resource (get pods.metrics.k8s.io)" in \
        conditions["ScalingActive"][2]
    kubectl("scale", "deployment", "api", "--replicas=9")
    assert cluster.get_object("Deployment", "default", "api")["spec"]["replicas"] == 5


def test_a_target_that_does_not_exist_is_reported_and_fixing_it_resolves(kubectl):
    kubectl("create", "deployment", "catalog", "--image=nginx", "--replicas=2")
    kubectl("apply", "-f", "-", input=HPA.replace("TARGET", "catalog-worker"))
    able = _conditions(kubectl)["AbleToScale"]
    assert able == ("False", "FailedGetScale", "the HPA controller was unable to get the target's current scale: "
                                               'deployments.apps "catalog-worker" not found')
    assert "FailedGetScale" in kubectl("describe", "hpa", "api").stdout
    kubectl("patch", "hpa", "api", "--type=json",
            "-p", '[{"op":"replace","path":"/spec/scaleTargetRef/name","value":"catalog"}]')
    status = json.loads(kubectl("get", "hpa", "api", "-o", "jsonpath={.status}").stdout)
    assert _conditions(kubectl)["AbleToScale"][0] == "True"
    assert (status["currentReplicas"], status["desiredReplicas"]) == (2, 2)


class Usage:
    """A metrics source (the store.metrics contract): every pod uses `millicores` of CPU."""

    def __init__(self, millicores: int) -> None:
        self.millicores = millicores

    def usage(self, namespace, pods):
        return {p["metadata"]["name"]: {"cpu": self.millicores, "memory": 64 << 20} for p in pods}


def test_with_a_metrics_source_the_replicas_follow_utilization(kubectl, cluster):
    kubectl("apply", "-f", "-", input=textwrap.dedent("""\
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: api}
        spec:
          replicas: 2
          selector: {matchLabels: {app: api}}
          template:
            metadata: {labels: {app: api}}
            spec: {containers: [{name: api, image: nginx, resources: {requests: {cpu: 100m}}}]}
        """))
    cluster.store.metrics = Usage(150)  # 150% of the request, the target is 50%: three times the pods
    try:
        kubectl("apply", "-f", "-", input=HPA.replace("TARGET", "api"))
        assert cluster.get_object("Deployment", "default", "api")["spec"]["replicas"] == 5  # 6 wanted, at most 5
        conditions = _conditions(kubectl)
        assert conditions["ScalingActive"][:2] == ("True", "ValidMetricFound")
        assert conditions["ScalingLimited"][:2] == ("True", "TooManyReplicas")
        assert "cpu: 150%/50%" in kubectl("get", "hpa", "api").stdout
        assert "SuccessfulRescale" in kubectl("get", "events").stdout
    finally:
        cluster.store.metrics = None


def test_the_v1_form_is_served_from_the_same_object(kubectl, cluster):
    kubectl("create", "deployment", "api", "--image=nginx", "--replicas=2")
    code, made = call(cluster, "POST", "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers", {
        "apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "api"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"}, "minReplicas": 2,
                 "maxReplicas": 4, "targetCPUUtilizationPercentage": 70}})
    assert code == 201 and made["apiVersion"] == "autoscaling/v1" and made["spec"]["targetCPUUtilizationPercentage"] == 70
    v2 = json.loads(kubectl("get", "hpa", "api", "-o", "json").stdout)
    assert v2["apiVersion"] == "autoscaling/v2"
    assert v2["spec"]["metrics"][0]["resource"]["target"] == {"type": "Utilization", "averageUtilization": 70}
