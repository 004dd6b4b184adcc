"""The CronJob controller: a Job at each scheduled time, its concurrency policy, history limits and status.

As batch/v1's controller (v2) does: the latest scheduled time that passed since the last one (or the
CronJob's creation) makes a Job named `<cronjob>-<minutes since the epoch>`, owned by the CronJob, from
its jobTemplate; a time older than startingDeadlineSeconds is missed; Forbid skips while a Job runs,
Replace deletes the running ones first. status.active lists the Jobs still running, lastScheduleTime and
lastSuccessfulTime follow; finished Jobs beyond successfulJobsHistoryLimit and failedJobsHistoryLimit go,
oldest first. The controllers' clock (timers.py) wakes it at the next scheduled time.
Events: SuccessfulCreate, SawCompletedJob, SuccessfulDelete, JobAlreadyActive, MissSchedule, UnexpectedJob.
"""

from __future__ import annotations

import copy
import datetime as dt

from . import cron, defaults, recorder
from .jobs import finished
from .workloads import Writer, owned_by, owner

COMPONENT = "cronjob-controller"
SCHEDULED = "batch.kubernetes.io/cronjob-scheduled-timestamp"


def _parse(stamp: str | None) -> dt.datetime | None:
    try:
        return dt.datetime.strptime(stamp or "", "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)
    except ValueError:
        return None


def _stamp(when: dt.datetime) -> str:
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _reference(job: dict) -> dict:
    meta = job["metadata"]
    return {"apiVersion": "batch/v1", "kind": "Job", "name": meta["name"], "namespace": meta["namespace"],
            "resourceVersion": meta.get("resourceVersion", ""), "uid": meta["uid"]}


def reconcile(writer: Writer, cronjob: dict, now: dt.datetime | None = None) -> None:
    store, meta, spec = writer.store, cronjob["metadata"], cronjob.get("spec") or {}
    namespace = meta["namespace"]
    now = now or dt.datetime.now(dt.UTC)
    status = copy.deepcopy(cronjob.get("status") or {})
    jobs = [j for j in store.list("jobs", namespace) if owned_by(j, cronjob)]
    running = [j for j in jobs if not finished(j)]
    for job in jobs:
        state = finished(job)
        if state and any(ref.get("uid") == job["metadata"]["uid"] for ref in status.get("active") or []):
            recorder.record(writer, cronjob, "SawCompletedJob", f"Saw completed job: {job['metadata']['name']}, "
                                                                f"status: {state}", component=COMPONENT)
            if state == "Complete":
                done_at = (job.get("status") or {}).get("completionTime")
                if done_at and done_at > (status.get("lastSuccessfulTime") or ""):
                    status["lastSuccessfulTime"] = done_at
    try:
        schedule = cron.parse(str(spec.get("schedule") or ""))
        zone = cron.zone(spec.get("timeZone"))
    except ValueError as error:
        recorder.record(writer, cronjob, "UnparseableSchedule", f"unparseable schedule: {error}", warning=True,
                        component=COMPONENT)
        _write(writer, cronjob, status, running)
        return
    local_now = now.astimezone(zone)
    since = _parse(status.get("lastScheduleTime")) or _parse(meta.get("creationTimestamp")) or now
    due, _missed = schedule.last_between(since.astimezone(zone), local_now)
    if due is not None and not spec.get("suspend"):
        deadline = spec.get("startingDeadlineSeconds")
        if isinstance(deadline, int) and (now - due.astimezone(dt.UTC)).total_seconds() > deadline:
            recorder.record(writer, cronjob, "MissSchedule", f"Missed scheduled time to start a job: "
                                                             f"{_stamp(due)}", warning=True, component=COMPONENT)
        else:
            running = _start(writer, cronjob, due, running, status)
    _prune(writer, cronjob, [j for j in jobs if finished(j) and store.get("jobs", namespace, j["metadata"]["name"])])
    _write(writer, cronjob, status, running)
    following = schedule.next_after(local_now)
    timers = getattr(store, "timers", None)
    if following is not None and timers is not None:
        wait = (following.astimezone(dt.UTC) - now).total_seconds()
        timers.after(wait + 0.2, "cronjobs", (namespace, meta["name"]))


def _start(writer: Writer, cronjob: dict, due: dt.datetime, running: list, status: dict) -> list:
    """Create the Job of scheduled time `due` (per the concurrency policy); returns the Jobs running after."""
    meta, spec = cronjob["metadata"], cronjob.get("spec") or {}
    name = f"{meta['name']}-{int(due.timestamp()) // 60}"
    status["lastScheduleTime"] = _stamp(due)
    if writer.store.get("jobs", meta["namespace"], name) is not None:
        return running
    policy = spec.get("concurrencyPolicy") or "Allow"
    if running and policy == "Forbid":
        recorder.record(writer, cronjob, "JobAlreadyActive", "Not starting job because prior execution is running "
                                                             "and concurrency policy is Forbid", component=COMPONENT)
        return running
    if running and policy == "Replace":
        for job in running:
            writer.remove("jobs", job["metadata"]["namespace"], job["metadata"]["name"])
            recorder.record(writer, cronjob, "SuccessfulDelete", f"Deleted job {job['metadata']['name']}",
                            component=COMPONENT)
        running = []
    template = copy.deepcopy(spec.get("jobTemplate") or {})
    template_meta = template.get("metadata") or {}
    job = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": name, "namespace": meta["namespace"], "labels": template_meta.get("labels") or {},
                        "annotations": {**(template_meta.get("annotations") or {}), SCHEDULED: _stamp(due)},
                        "ownerReferences": [owner(cronjob)], "generation": 1},
           "spec": template.get("spec") or {}}
    defaults.apply_defaults("Job", job)
    created = writer.create("jobs", job)
    recorder.record(writer, cronjob, "SuccessfulCreate", f"Created job {name}", component=COMPONENT)
    return [*running, created]


def _prune(writer: Writer, cronjob: dict, done: list) -> None:
    spec = cronjob.get("spec") or {}
    for state, limit in (("Complete", spec.get("successfulJobsHistoryLimit", 3)),
                         ("Failed", spec.get("failedJobsHistoryLimit", 1))):
        kept = sorted((j for j in done if finished(j) == state),
                      key=lambda j: ((j.get("status") or {}).get("startTime") or "", j["metadata"]["name"]))
        for job in kept[:max(0, len(kept) - int(limit if isinstance(limit, int) else 0))]:
            writer.remove("jobs", job["metadata"]["namespace"], job["metadata"]["name"])
            recorder.record(writer, cronjob, "SuccessfulDelete", f"Deleted job {job['metadata']['name']}",
                            component=COMPONENT)


def _write(writer: Writer, cronjob: dict, status: dict, running: list) -> None:
    status["active"] = [_reference(j) for j in sorted(running, key=lambda j: j["metadata"]["name"])]
    if not status["active"]:
        del status["active"]
    if status != (cronjob.get("status") or {}):
        updated = copy.deepcopy(cronjob)
        updated["status"] = status
        writer.put("cronjobs", updated, cronjob)
