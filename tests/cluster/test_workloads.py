"""Workload controllers with pods that run, through the real kubectl: Jobs (completions, parallelism, backoffLimit,
`kubectl wait --for=condition=complete`), CronJobs (a schedule that comes due, `kubectl create job --from=cronjob`),
StatefulSets (stable names, ordered start, per-pod claims kept across a restart, per-pod DNS through the headless
Service), and rollout history and undo."""

from __future__ import annotations

import datetime as dt
import json
import time

from .conftest import needs_live

pytestmark = needs_live

JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: NAME}
spec:
  completions: COMPLETIONS
  parallelism: 2
  backoffLimit: BACKOFF
  template:
    spec:
      restartPolicy: Never
      containers: [{name: work, image: busybox, command: [sh, -c, "COMMAND"]}]
"""


def _job(name: str, command: str, completions: int = 1, backoff: int = 6) -> str:
    return JOB.replace("NAME", name).replace("COMPLETIONS", str(completions)).replace("BACKOFF", str(backoff)) \
        .replace("COMMAND", command)


def test_a_job_runs_its_completions_and_kubectl_wait_sees_it_complete(live):
    ns = live.namespace()
    live.kubectl("-n", ns, "apply", "-f", "-", input=_job("batch", "echo processed $HOSTNAME", completions=3))
    live.kubectl("-n", ns, "wait", "--for=condition=complete", "job/batch", "--timeout=60s")
    job = live.json("-n", ns, "get", "job", "batch")
    assert job["status"]["succeeded"] == 3 and "active" not in job["status"] and job["status"]["completionTime"]
    assert [c["type"] for c in job["status"]["conditions"]] == ["SuccessCriteriaMet", "Complete"]
    pods = live.json("-n", ns, "get", "pods", "-l", "job-name=batch")["items"]
    assert len(pods) == 3 and {p["status"]["phase"] for p in pods} == {"Succeeded"}
    assert live.kubectl("-n", ns, "logs", "-l", "job-name=batch").stdout.count("processed batch-") == 3
    row = live.kubectl("-n", ns, "get", "job", "batch").stdout.splitlines()[1].split()
    assert row[:3] == ["batch", "Complete", "3/3"]


def test_a_failing_job_stops_at_its_backoff_limit(live):
    ns = live.namespace()
    live.kubectl("-n", ns, "apply", "-f", "-", input=_job("broken", "echo bad argument; exit 2", backoff=0))
    live.kubectl("-n", ns, "wait", "--for=condition=failed", "job/broken", "--timeout=60s")
    job = live.json("-n", ns, "get", "job", "broken")
    failed = next(c for c in job["status"]["conditions"] if c["type"] == "Failed")
    assert (failed["reason"], failed["message"]) == ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
    assert job["status"]["failed"] == 1 and "succeeded" not in job["status"]
    pod = live.json("-n", ns, "get", "pods", "-l", "job-name=broken")["items"][0]
    assert pod["status"]["phase"] == "Failed"
    assert "bad argument" in live.kubectl("-n", ns, "logs", pod["metadata"]["name"]).stdout
    assert "BackoffLimitExceeded" in live.kubectl("-n", ns, "describe", "job", "broken").stdout
    live.kubectl("-n", ns, "delete", "job", "broken", "--wait=true")
    live.wait_for(lambda: not live.json("-n", ns, "get", "pods")["items"], what="the job's pods to go with it")


CRONJOB = """\
apiVersion: batch/v1
kind: CronJob
metadata: {name: report}
spec:
  schedule: "*/1 * * * *"
  successfulJobsHistoryLimit: 2
  jobTemplate:
    metadata: {labels: {app: report}}
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{name: report, image: busybox, command: [sh, -c, "echo report written"]}]
"""


def test_a_cron_job_runs_when_due_and_on_demand(live):
    ns = live.namespace()
    live.kubectl("-n", ns, "apply", "-f", "-", input=CRONJOB)
    manual = live.kubectl("-n", ns, "create", "job", "report-now", "--from=cronjob/report")
    assert manual.stdout == "job.batch/report-now created\n"
    live.kubectl("-n", ns, "wait", "--for=condition=complete", "job/report-now", "--timeout=60s")
    made = live.json("-n", ns, "get", "job", "report-now")
    assert made["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"] == "manual"
    assert made["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
    # a schedule that came due: the last run was two minutes ago (as after a controller restart)
    before = (dt.datetime.now(dt.UTC) - dt.timedelta(minutes=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    live.kubectl("-n", ns, "patch", "cronjob", "report", "--subresource=status", "--type=merge",
                 "-p", json.dumps({"status": {"lastScheduleTime": before}}))

    def scheduled():
        jobs = [j for j in live.json("-n", ns, "get", "jobs")["items"] if j["metadata"]["name"] != "report-now"]
        return jobs if jobs else None

    jobs = live.wait_for(scheduled, what="the scheduled job")
    name = jobs[0]["metadata"]["name"]
    assert name.startswith("report-") and name[len("report-"):].isdigit()
    assert jobs[0]["metadata"]["labels"]["app"] == "report"
    assert "batch.kubernetes.io/cronjob-scheduled-timestamp" in jobs[0]["metadata"]["annotations"]
    live.kubectl("-n", ns, "wait", "--for=condition=complete", f"job/{name}", "--timeout=60s")
    status = live.json("-n", ns, "get", "cronjob", "report")["status"]
    assert status["lastScheduleTime"] > before
    live.wait_for(lambda: "lastSuccessfulTime" in live.json("-n", ns, "get", "cronjob", "report")["status"],
                  what="lastSuccessfulTime")


STATEFULSET = """\
apiVersion: v1
kind: Service
metadata: {name: db}
spec: {clusterIP: None, selector: {app: db}, ports: [{name: peer, port: 7000}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  replicas: 3
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - name: db
        image: busybox
        command: [sh, -c, "[ -f /data/first ] || hostname > /data/first; cat /data/first; exec sleep 3600"]
        volumeMounts: [{name: data, mountPath: /data}]
        readinessProbe: {exec: {command: [test, -f, /data/first]}, periodSeconds: 1}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 64Mi}}}
"""


def test_a_stateful_set_has_stable_names_ordered_pods_and_claims_that_keep_their_data(live):
    ns = live.namespace()
    live.kubectl("-n", ns, "apply", "-f", "-", input=STATEFULSET)
    live.kubectl("-n", ns, "rollout", "status", "statefulset/db", "--timeout=90s")
    pods = {p["metadata"]["name"]: p for p in live.json("-n", ns, "get", "pods", "-l", "app=db")["items"]}
    assert sorted(pods) == ["db-0", "db-1", "db-2"]
    created = [pods[f"db-{i}"]["metadata"]["creationTimestamp"] for i in range(3)]
    assert created == sorted(created)  # in order
    assert pods["db-1"]["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] == "db-1"
    assert (pods["db-1"]["spec"]["hostname"], pods["db-1"]["spec"]["subdomain"]) == ("db-1", "db")
    claims = {c["metadata"]["name"]: c for c in live.json("-n", ns, "get", "pvc")["items"]}
    assert sorted(claims) == ["data-db-0", "data-db-1", "data-db-2"]
    assert {c["status"]["phase"] for c in claims.values()} == {"Bound"}
    found = live.kubectl("-n", ns, "exec", "db-0", "--", "nslookup", f"db-2.db.{ns}.svc.cluster.local").stdout
    assert pods["db-2"]["status"]["podIP"] in found
    live.kubectl("-n", ns, "delete", "pod", "db-1")
    live.kubectl("-n", ns, "rollout", "status", "statefulset/db", "--timeout=60s")
    live.wait_for(lambda: live.kubectl("-n", ns, "logs", "db-1").stdout == "db-1\n", what="db-1 back with its data")
    again = live.json("-n", ns, "get", "pod", "db-1")
    assert again["metadata"]["uid"] != pods["db-1"]["metadata"]["uid"]
    status = live.json("-n", ns, "get", "statefulset", "db")["status"]
    assert (status["readyReplicas"], status["currentRevision"]) == (3, status["updateRevision"])


STUCK_PARALLEL = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: cache}
spec:
  serviceName: cache
  replicas: 3
  podManagementPolicy: PodManagementPolicy
  selector: {matchLabels: {app: cache}}
  template:
    metadata: {labels: {app: cache}}
    spec:
      containers:
      - name: cache
        image: busybox
        command: [sh, -c, "exec sleep 3600"]
        readinessProbe: {exec: {command: [test, -f, /tmp/never]}, periodSeconds: 1}
"""
FIX_READINESS = '[{"op": "replace", "path": "/spec/template/spec/containers/0/command/2", ' \
                '"value": "touch /tmp/never; exec sleep 3600"}]'


def test_a_parallel_set_rolls_out_a_fix_for_pods_that_cannot_get_ready_and_an_ordered_one_waits(live):
    """apps/v1's RollingUpdate: Parallel replaces the highest old pod without waiting for the old ones to be ready,
    then each next one once the pod it made is ready; OrderedReady waits until every pod is ready."""
    ns = live.namespace()
    live.kubectl("-n", ns, "apply", "-f", "-", input=STUCK_PARALLEL.replace("PodManagementPolicy", "Parallel"))
    live.wait_for(lambda: len(live.json("-n", ns, "get", "pods", "-l", "app=cache")["items"]) == 3, what="3 pods")
    live.kubectl("-n", ns, "patch", "statefulset", "cache", "--type=json", "-p", FIX_READINESS)
    live.kubectl("-n", ns, "rollout", "status", "statefulset/cache", "--timeout=90s")
    status = live.json("-n", ns, "get", "statefulset", "cache")["status"]
    assert (status["readyReplicas"], status["updatedReplicas"]) == (3, 3)
    ordered = live.namespace()
    live.kubectl("-n", ordered, "apply", "-f", "-", input=STUCK_PARALLEL.replace("PodManagementPolicy", "OrderedReady"))
    live.wait_for(lambda: live.json("-n", ordered, "get", "pods", "-l", "app=cache")["items"], what="cache-0")
    first = live.json("-n", ordered, "get", "pod", "cache-0")["metadata"]["uid"]
    live.kubectl("-n", ordered, "patch", "statefulset", "cache", "--type=json", "-p", FIX_READINESS)
    time.sleep(3)  # an OrderedReady set neither makes cache-1 nor replaces the unready cache-0
    assert [p["metadata"]["uid"] for p in live.json("-n", ordered, "get", "pods", "-l", "app=cache")["items"]] == [first]


def test_rollout_history_and_undo_bring_back_the_previous_template(live):
    ns = live.namespace()
    live.kubectl("-n", ns, "create", "deployment", "web", "--image=busybox", "--", "sh", "-c", "echo v1; sleep 3600")
    live.kubectl("-n", ns, "rollout", "status", "deployment/web", "--timeout=60s")
    live.kubectl("-n", ns, "annotate", "deployment", "web", "kubernetes.io/change-cause=bad release")
    live.kubectl("-n", ns, "patch", "deployment", "web", "--type=json", "-p",
                 '[{"op": "replace", "path": "/spec/template/spec/containers/0/command/2", "value": "exit 1"}]')
    history = live.kubectl("-n", ns, "rollout", "history", "deployment/web").stdout
    assert "1" in history and "2" in history and "bad release" in history
    live.kubectl("-n", ns, "rollout", "undo", "deployment/web")
    live.kubectl("-n", ns, "rollout", "status", "deployment/web", "--timeout=60s")
    live.wait_for(lambda: live.kubectl("-n", ns, "logs", "deployment/web").stdout == "v1\n", what="v1 running again")
    assert live.json("-n", ns, "get", "deployment", "web")["metadata"]["annotations"][
        "deployment.kubernetes.io/revision"] == "3"


CLAIM = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: ledger}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 64Mi}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: ledger}
spec:
  selector: {matchLabels: {app: ledger}}
  template:
    metadata: {labels: {app: ledger}}
    spec:
      containers:
      - name: ledger
        image: busybox
        command: [sh, -c, "echo entry-$(hostname) >> /var/lib/ledger/entries; cat /var/lib/ledger/entries; sleep 3600"]
        volumeMounts: [{name: data, mountPath: /var/lib/ledger}]
      volumes:
      - name: data
        persistentVolumeClaim: {claimName: ledger}
"""


def test_a_claim_of_the_default_class_binds_mounts_and_keeps_its_data_across_pods(live):
    ns = live.namespace()
    live.kubectl("-n", ns, "apply", "-f", "-", input=CLAIM)
    live.kubectl("-n", ns, "rollout", "status", "deployment/ledger", "--timeout=60s")
    claim = live.json("-n", ns, "get", "pvc", "ledger")
    assert claim["status"]["phase"] == "Bound" and claim["spec"]["storageClassName"] == "standard"
    volume = live.json("get", "pv", claim["spec"]["volumeName"])
    assert volume["spec"]["claimRef"]["name"] == "ledger"
    first = live.pod(ns, "ledger-")["metadata"]["name"]
    live.kubectl("-n", ns, "delete", "pod", first)
    live.kubectl("-n", ns, "rollout", "status", "deployment/ledger", "--timeout=60s")
    second = live.pod(ns, "ledger-")["metadata"]["name"]
    live.wait_for(lambda: live.kubectl("-n", ns, "logs", second).stdout == f"entry-{first}\nentry-{second}\n",
                  what="the second pod to see the first one's entry")
