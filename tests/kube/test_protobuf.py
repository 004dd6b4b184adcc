"""Protobuf request bodies of every kind kubectl's generators send, through the real kubectl: a Job made from a
CronJob keeps its whole pod template, the other generators' objects arrive whole, and a field this server does not
know is refused (415), never dropped."""

from __future__ import annotations


from .conftest import call

CRONJOB = """\
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly-report}
spec:
  schedule: "0 2 * * *"
  jobTemplate:
    spec:
      backoffLimit: 0
      activeDeadlineSeconds: 600
      template:
        metadata: {labels: {app: report}}
        spec:
          restartPolicy: Never
          serviceAccountName: default
          securityContext: {runAsNonRoot: true, runAsUser: 1000, fsGroup: 2000}
          tolerations: [{key: batch, operator: Equal, value: "yes", effect: NoSchedule}]
          volumes:
          - {name: config, configMap: {name: report-config, items: [{key: a, path: a.conf}], defaultMode: 420}}
          - {name: scratch, emptyDir: {}}
          - {name: cache, emptyDir: {sizeLimit: 1Gi}}
          containers:
          - name: report
            image: busybox:1.36
            command: [sh, -c, "report --out /scratch"]
            env:
            - {name: REGION, valueFrom: {configMapKeyRef: {name: report-config, key: region}}}
            - {name: TOKEN, valueFrom: {secretKeyRef: {name: report-token, key: token, optional: true}}}
            - {name: POD, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
            envFrom: [{prefix: CFG_, configMapRef: {name: report-config}}]
            resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {memory: 128Mi}}
            volumeMounts: [{name: config, mountPath: /etc/report, readOnly: true}, {name: scratch, mountPath: /scratch}]
            securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
            readinessProbe: {exec: {command: [cat, /scratch/ready]}, periodSeconds: 5, failureThreshold: 3}
"""


def test_a_job_made_from_a_cronjob_keeps_its_whole_template(kubectl, cluster):
    kubectl("apply", "-f", "-", input=CRONJOB)
    assert kubectl("create", "job", "manual-run", "--from=cronjob/nightly-report").stdout == \
        "job.batch/manual-run created\n"
    job = cluster.get_object("Job", "default", "manual-run")
    template = cluster.get_object("CronJob", "default", "nightly-report")["spec"]["jobTemplate"]["spec"]["template"]
    made = job["spec"]["template"]
    labels = made["metadata"].pop("labels")
    assert labels["app"] == "report" and labels["job-name"] == "manual-run"
    assert made["spec"] == template["spec"]
    assert (job["spec"]["backoffLimit"], job["spec"]["activeDeadlineSeconds"]) == (0, 600)
    assert job["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
    assert job["metadata"]["annotations"] == {"cronjob.kubernetes.io/instantiate": "manual"}
    assert job["spec"]["selector"]["matchLabels"] == {"batch.kubernetes.io/controller-uid": job["metadata"]["uid"]}


def test_the_other_generators_arrive_whole(kubectl, cluster):
    kubectl("create", "cronjob", "tick", "--image=busybox", "--schedule=*/5 * * * *", "--", "date")
    assert cluster.get_object("CronJob", "default", "tick")["spec"]["schedule"] == "*/5 * * * *"
    kubectl("create", "job", "once", "--image=busybox", "--", "echo", "hi")
    containers = cluster.get_object("Job", "default", "once")["spec"]["template"]["spec"]["containers"]
    assert containers[0]["command"] == ["echo", "hi"]
    kubectl("create", "deployment", "zero", "--image=nginx", "--replicas=0")
    assert cluster.get_object("Deployment", "default", "zero")["spec"]["replicas"] == 0  # a zero kept
    kubectl("create", "pdb", "zero", "--selector=app=zero", "--min-available=50%")
    assert cluster.get_object("PodDisruptionBudget", "default", "zero")["spec"]["minAvailable"] == "50%"
    kubectl("create", "priorityclass", "batch-low", "--value=100", "--description=batch")
    assert cluster.get_object("PriorityClass", None, "batch-low")["value"] == 100
    kubectl("create", "quota", "small", "--hard=pods=3,requests.cpu=1")
    assert cluster.get_object("ResourceQuota", "default", "small")["spec"]["hard"] == {"pods": "3", "requests.cpu": "1"}
    kubectl("autoscale", "deployment", "zero", "--min=1", "--max=3", "--cpu=60%")
    hpa = cluster.get_object("HorizontalPodAutoscaler", "default", "zero")
    assert hpa["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 60


def test_a_field_this_server_does_not_know_is_refused(cluster):
    def field(number: int, payload: bytes) -> bytes:
        return bytes([number << 3 | 2, len(payload)]) + payload

    meta = field(1, b"x")
    namespace = field(1, meta) + field(9, b"??")  # field 9 of Namespace: none such
    body = b"k8s\x00" + field(1, field(1, b"v1") + field(2, b"Namespace")) + field(2, namespace)
    code, status = call(cluster, "POST", "/api/v1/namespaces", body, "application/vnd.kubernetes.protobuf")
    assert code == 415 and status["reason"] == "UnsupportedMediaType"
    assert "field 9 of v1:Namespace is not known to this server" in status["message"]
    assert cluster.get_object("Namespace", None, "x") is None
