"""The Job controller: pods until enough succeed (completions, parallelism), failures counted against backoffLimit.

As batch/v1's controller does: it keeps min(parallelism, completions left) pods active, counts the pods
that Succeeded and Failed (and, for restartPolicy OnFailure, their containers' restarts as failures),
waits 10 s, doubled per failure, before replacing a failed pod, and ends with the conditions `kubectl
wait --for=condition=complete` and `describe` read: SuccessCriteriaMet then Complete, or FailureTarget then
Failed (BackoffLimitExceeded, DeadlineExceeded). Indexed Jobs give each pod its completion index (its
annotation, JOB_COMPLETION_INDEX, hostname). A finished Job's active pods are removed; ttlSecondsAfterFinished
removes the Job itself. Events: SuccessfulCreate, Completed, BackoffLimitExceeded, DeadlineExceeded.
"""

from __future__ import annotations

import copy
import datetime as dt

from . import limits, recorder
from .tables import timestamp
from .workloads import Writer, create_pod, owned_by, pod_from_template, ready, suffix

COMPONENT = "job-controller"
INDEX = "batch.kubernetes.io/job-completion-index"
BACKOFF_S, MAX_BACKOFF_S = 10.0, 360.0
#: pods one Job keeps at once at most (a parallelism of millions stops here)
MAX_ACTIVE = 1000


def _parse(stamp: str | None) -> dt.datetime | None:
    try:
        return dt.datetime.strptime(stamp or "", "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)
    except ValueError:
        return None


def _seconds_since(stamp: str | None) -> float:
    when = _parse(stamp)
    return (dt.datetime.now(dt.UTC) - when).total_seconds() if when else 0.0


def _condition(kind: str, reason: str = "", message: str = "") -> dict:
    now = timestamp()
    found = {"type": kind, "status": "True", "lastProbeTime": now, "lastTransitionTime": now}
    if reason:
        found["reason"] = reason
    if message:
        found["message"] = message
    return found


def finished(job: dict) -> str:
    """"Complete" or "Failed" once the Job ended, else ""."""
    for condition in (job.get("status") or {}).get("conditions") or []:
        if condition.get("type") in ("Complete", "Failed") and condition.get("status") == "True":
            return condition["type"]
    return ""


def reconcile(writer: Writer, job: dict) -> None:
    store, meta, spec = writer.store, job["metadata"], job.get("spec") or {}
    namespace = meta["namespace"]
    pods = [p for p in store.list("pods", namespace) if owned_by(p, job)]
    done = finished(job)
    if done:
        _remove_active(writer, pods)
        _expire(writer, job)
        return
    status = copy.deepcopy(job.get("status") or {})
    if not spec.get("suspend"):
        status.setdefault("startTime", timestamp())
    active = [p for p in pods if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
              and not p["metadata"].get("deletionTimestamp")]
    succeeded = [p for p in pods if (p.get("status") or {}).get("phase") == "Succeeded"]
    failed = [p for p in pods if (p.get("status") or {}).get("phase") == "Failed"]
    restarts = sum(int(c.get("restartCount") or 0) for p in active
                   for c in (p.get("status") or {}).get("containerStatuses") or [])
    on_failure = ((spec.get("template") or {}).get("spec") or {}).get("restartPolicy") == "OnFailure"
    failures = len(failed) + (restarts if on_failure else 0)
    completions = spec.get("completions")
    wanted_done = completions if completions is not None else 1
    indexed = spec.get("completionMode") == "Indexed"
    done_indexes = {_index(p) for p in succeeded} if indexed else set()
    count_succeeded = len(done_indexes) if indexed else len(succeeded)
    conditions = list(status.get("conditions") or [])
    deadline = spec.get("activeDeadlineSeconds")
    ending = ""
    if count_succeeded >= wanted_done or (completions is None and succeeded and not active):
        ending = "Complete"
        conditions += [_condition("SuccessCriteriaMet", "CompletionsReached", "Reached expected number of succeeded "
                                                                             "pods"),
                       _condition("Complete", "CompletionsReached", "Reached expected number of succeeded pods")]
        status["completionTime"] = timestamp()
        recorder.record(writer, job, "Completed", "Job completed", component=COMPONENT)
    elif failures > int(spec.get("backoffLimit", 6)):
        ending = "Failed"
        message = "Job has reached the specified backoff limit"
        conditions += [_condition("FailureTarget", "BackoffLimitExceeded", message),
                       _condition("Failed", "BackoffLimitExceeded", message)]
        recorder.record(writer, job, "BackoffLimitExceeded", message, warning=True, component=COMPONENT)
    elif isinstance(deadline, int) and status.get("startTime") and _seconds_since(status["startTime"]) >= deadline:
        ending = "Failed"
        message = "Job was active longer than specified deadline"
        conditions += [_condition("FailureTarget", "DeadlineExceeded", message),
                       _condition("Failed", "DeadlineExceeded", message)]
        recorder.record(writer, job, "DeadlineExceeded", message, warning=True, component=COMPONENT)
    if ending:
        _remove_active(writer, active)
        active = []
    elif not spec.get("suspend"):
        active += _start(writer, job, pods, active, succeeded, done_indexes, len(failed), wanted_done)
        if isinstance(deadline, int) and status.get("startTime"):
            left = max(0.0, deadline - _seconds_since(status["startTime"]))
            _timers(writer, left + 0.5, job)
    elif not any(c.get("type") == "Suspended" for c in conditions):
        conditions.append(_condition("Suspended", "JobSuspended", "Job suspended"))
        _remove_active(writer, active)
        active = []
    status.update(active=len(active), ready=sum(1 for p in active if ready(p)), succeeded=count_succeeded,
                  failed=len(failed), terminating=0, uncountedTerminatedPods={})
    for key in ("active", "succeeded", "failed"):
        if not status[key]:
            del status[key]
    if conditions:
        status["conditions"] = conditions
    if indexed and done_indexes:
        status["completedIndexes"] = _ranges(sorted(done_indexes))
    if status != job.get("status"):
        updated = copy.deepcopy(job)
        updated["status"] = status
        job = writer.put("jobs", updated, job)
    if ending:
        _expire(writer, job)


def _index(pod: dict) -> int:
    try:
        return int((pod["metadata"].get("annotations") or {}).get(INDEX, "-1"))
    except ValueError:
        return -1


def _ranges(indexes: list[int]) -> str:
    parts, start = [], None
    for i, value in enumerate(indexes):
        if start is None:
            start = value
        if i + 1 == len(indexes) or indexes[i + 1] != value + 1:
            parts.append(str(start) if start == value else f"{start}-{value}")
            start = None
    return ",".join(parts)


def _start(writer: Writer, job: dict, pods: list, active: list, succeeded: list, done_indexes: set, failures: int,
           wanted_done: int) -> list:
    """Create the pods the Job lacks (after the failure back-off); returns them."""
    spec, meta = job.get("spec") or {}, job["metadata"]
    parallelism = min(int(spec.get("parallelism", 1)), MAX_ACTIVE)
    indexed = spec.get("completionMode") == "Indexed"
    left = wanted_done - (len(done_indexes) if indexed else len(succeeded))
    missing = min(parallelism, left) - len(active)
    if missing <= 0:
        return []
    if failures:
        last = max((_finished_at(p) for p in pods if (p.get("status") or {}).get("phase") == "Failed"), default="")
        wait = min(BACKOFF_S * 2 ** (failures - 1), MAX_BACKOFF_S) - _seconds_since(last)
        if wait > 0:
            _timers(writer, wait, job)
            return []
    taken = {_index(p) for p in active} | done_indexes
    free = [i for i in range(wanted_done) if i not in taken] if indexed else []
    made = []
    counter_key = f"job-pods/{meta['namespace']}/{meta['uid']}"
    for n in range(missing):
        limits.spend()
        count = writer.store.counters.get(counter_key, 0)
        writer.store.counters[counter_key] = count + 1
        template = copy.deepcopy(spec.get("template") or {})
        annotations = {}
        prefix = f"{meta['name']}-"
        if indexed:
            if n >= len(free):
                break
            index = free[n]
            annotations = {INDEX: str(index)}
            prefix = f"{meta['name']}-{index}-"
            template.setdefault("spec", {})["hostname"] = f"{meta['name']}-{index}"
            labels = template.setdefault("metadata", {}).setdefault("labels", {})
            labels[INDEX] = str(index)
            for container in template["spec"].get("containers") or []:
                container.setdefault("env", []).append({"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
                    "fieldPath": f"metadata.annotations['{INDEX}']"}}})
        name = prefix + suffix(f"{meta['uid']}/{count}", 5)
        pod = pod_from_template(job, template, name, prefix)
        if annotations:
            pod["metadata"].setdefault("annotations", {}).update(annotations)
        created = create_pod(writer, job, pod, COMPONENT, "jobs", announce=True)
        if created is None:
            break
        made.append(created)
    return made


def _finished_at(pod: dict) -> str:
    stamps = [((c.get("state") or {}).get("terminated") or {}).get("finishedAt") or ""
              for c in (pod.get("status") or {}).get("containerStatuses") or []]
    return max(stamps, default="")


def _remove_active(writer: Writer, pods: list) -> None:
    for pod in pods:
        if (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
            writer.remove("pods", pod["metadata"]["namespace"], pod["metadata"]["name"])


def _expire(writer: Writer, job: dict) -> None:
    """ttlSecondsAfterFinished: the finished Job goes (its pods with it) once its time is up."""
    ttl = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
    if not isinstance(ttl, int):
        return
    status = job.get("status") or {}
    ended = status.get("completionTime") or max((c.get("lastTransitionTime") or "" for c in
                                                 status.get("conditions") or []), default="")
    left = ttl - _seconds_since(ended)
    if left <= 0:
        writer.remove("jobs", job["metadata"]["namespace"], job["metadata"]["name"])
    else:
        _timers(writer, left + 0.1, job)


def _timers(writer: Writer, seconds: float, job: dict) -> None:
    timers = getattr(writer.store, "timers", None)
    if timers is not None:
        timers.after(seconds, "jobs", (job["metadata"]["namespace"], job["metadata"]["name"]))
