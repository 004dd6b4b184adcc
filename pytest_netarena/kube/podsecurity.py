"""Pod Security admission: the baseline and restricted standards a namespace's labels enforce and warn about.

The labels are `pod-security.kubernetes.io/*`; the words are the real admission plugin's.
"""

from __future__ import annotations

import copy
import re

from . import errors, notices

PREFIX = "pod-security.kubernetes.io/"
LEVELS = ("privileged", "baseline", "restricted")
MODES = ("enforce", "audit", "warn")
SAFE_CAPABILITIES = frozenset({"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
                               "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"})
SAFE_SYSCTLS = frozenset({"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies",
                          "net.ipv4.ping_group_range", "net.ipv4.ip_unprivileged_port_start",
                          "net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time",
                          "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes",
                          "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.ipv4.tcp_slow_start_after_idle",
                          "net.ipv4.tcp_notsent_lowat"})
RESTRICTED_VOLUMES_OK = frozenset({"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "image",
                                   "persistentVolumeClaim", "projected", "secret"})
SELINUX_TYPES = frozenset({"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"})
VERSION = re.compile(r"^v1\.(\d+)$")


# -- helpers as the standard words them ------------------------------------------------------------------------
def _quote(items) -> str:
    return ", ".join(f'"{i}"' for i in items)


def _plural(singular: str, plural: str, count: int) -> str:
    return singular if count == 1 else plural


def _containers(spec: dict) -> list[dict]:
    return [c for key in ("initContainers", "containers", "ephemeralContainers")
            for c in spec.get(key) or [] if isinstance(c, dict)]


def _context(container: dict) -> dict:
    return container.get("securityContext") if isinstance(container.get("securityContext"), dict) else {}


def _pod_context(spec: dict) -> dict:
    return spec.get("securityContext") if isinstance(spec.get("securityContext"), dict) else {}


def _named(names: list[str], what: str = "container") -> str:
    return f"{_plural(what, what + 's', len(names))} {_quote(names)}"


# -- baseline checks -------------------------------------------------------------------------------------------
def _apparmor(spec: dict) -> tuple[str, str] | None:
    setters, values = [], []
    pod = (_pod_context(spec).get("appArmorProfile") or {}).get("type")
    if pod == "Unconfined":
        setters.append("pod")
        values.append(pod)
    bad = [c["name"] for c in _containers(spec) if (_context(c).get("appArmorProfile") or {}).get("type") == "Unconfined"]
    if bad:
        setters.append(_named(bad))
        values.append("Unconfined")
    if not setters:
        return None
    return "forbidden AppArmor profile", f"{' and '.join(setters)} must not set AppArmor profile type to \"Unconfined\""


def _capabilities_baseline(spec: dict) -> tuple[str, str] | None:
    bad, added = [], set()
    for c in _containers(spec):
        extra = [cap for cap in ((_context(c).get("capabilities") or {}).get("add") or []) if cap not in SAFE_CAPABILITIES]
        if extra:
            bad.append(c["name"])
            added.update(extra)
    if not bad:
        return None
    return "non-default capabilities", f"{_named(bad)} must not include {_quote(sorted(added))} in " \
                                       "securityContext.capabilities.add"


def _host_namespaces(spec: dict) -> tuple[str, str] | None:
    used = [f"{key}=true" for key in ("hostNetwork", "hostPID", "hostIPC") if spec.get(key)]
    return ("host namespaces", ", ".join(used)) if used else None


def _host_path(spec: dict) -> tuple[str, str] | None:
    bad = [v.get("name", "") for v in spec.get("volumes") or [] if isinstance(v, dict) and v.get("hostPath")]
    return ("hostPath volumes", _named(bad, "volume")) if bad else None


def _host_ports(spec: dict) -> tuple[str, str] | None:
    bad, ports = [], set()
    for c in _containers(spec):
        used = [p.get("hostPort") for p in c.get("ports") or [] if isinstance(p, dict) and p.get("hostPort")]
        if used:
            bad.append(c["name"])
            ports.update(str(p) for p in used)
    if not bad:
        return None
    return "hostPort", (f"{_named(bad)} {_plural('uses', 'use', len(bad))} "
                        f"{_plural('hostPort', 'hostPorts', len(ports))} {', '.join(sorted(ports))}")


def _probe_hosts(spec: dict) -> tuple[str, str] | None:
    bad, hosts = [], set()
    for c in _containers(spec):
        handlers = [c.get(k) for k in ("livenessProbe", "readinessProbe", "startupProbe")]
        handlers += [(c.get("lifecycle") or {}).get(k) for k in ("postStart", "preStop")]
        found = [(h.get(kind) or {}).get("host") for h in handlers if isinstance(h, dict)
                 for kind in ("httpGet", "tcpSocket")]
        found = [h for h in found if h]
        if found:
            bad.append(c["name"])
            hosts.update(found)
    if not bad:
        return None
    return "probe or lifecycle host", (f"{_named(sorted(bad))} {_plural('uses', 'use', len(bad))} "
                                       f"{_plural('probe or lifecycle host', 'probe or lifecycle hosts', len(hosts))} "
                                       f"{_quote(sorted(hosts))}")


def _privileged(spec: dict) -> tuple[str, str] | None:
    bad = [c["name"] for c in _containers(spec) if _context(c).get("privileged") is True]
    return ("privileged", f"{_named(bad)} must not set securityContext.privileged=true") if bad else None


def _proc_mount(spec: dict) -> tuple[str, str] | None:
    bad, kinds = [], set()
    for c in _containers(spec):
        mount = _context(c).get("procMount")
        if mount not in (None, "", "Default"):
            bad.append(c["name"])
            kinds.add(mount)
    if not bad:
        return None
    return "procMount", f"{_named(bad)} must not set securityContext.procMount to {_quote(sorted(kinds))}"


def _selinux(spec: dict) -> tuple[str, str] | None:
    setters, kinds, data = [], set(), []
    contexts = [("pod", _pod_context(spec))] + [(f'container "{c["name"]}"', _context(c)) for c in _containers(spec)]
    for who, context in contexts:
        options = context.get("seLinuxOptions") if isinstance(context.get("seLinuxOptions"), dict) else {}
        if options.get("type", "") not in SELINUX_TYPES:
            setters.append(who)
            kinds.add(options["type"])
        if options.get("user") or options.get("role"):
            data.append(who)
    if not setters and not data:
        return None
    parts = []
    if setters:
        parts.append(f"{' and '.join(setters)} set forbidden securityContext.seLinuxOptions: "
                     f"{_plural('type', 'types', len(kinds))} {_quote(sorted(kinds))}")
    if data:
        parts.append(f"{' and '.join(data)} set forbidden securityContext.seLinuxOptions: user, role")
    return "seLinuxOptions", "; ".join(parts)


def _seccomp_baseline(spec: dict) -> tuple[str, str] | None:
    setters = []
    if (_pod_context(spec).get("seccompProfile") or {}).get("type") == "Unconfined":
        setters.append("pod")
    bad = [c["name"] for c in _containers(spec) if (_context(c).get("seccompProfile") or {}).get("type") == "Unconfined"]
    if bad:
        setters.append(_named(bad))
    if not setters:
        return None
    return "seccompProfile", f"{' and '.join(setters)} must not set securityContext.seccompProfile.type to \"Unconfined\""


def _sysctls(spec: dict) -> tuple[str, str] | None:
    bad = [s.get("name", "") for s in _pod_context(spec).get("sysctls") or []
           if isinstance(s, dict) and s.get("name") not in SAFE_SYSCTLS]
    return ("forbidden sysctls", ", ".join(bad)) if bad else None


def _host_process(spec: dict) -> tuple[str, str] | None:
    setters = []
    if (_pod_context(spec).get("windowsOptions") or {}).get("hostProcess") is True:
        setters.append("pod")
    bad = [c["name"] for c in _containers(spec) if (_context(c).get("windowsOptions") or {}).get("hostProcess") is True]
    if bad:
        setters.append(_named(bad))
    if not setters:
        return None
    return "hostProcess", f"{' and '.join(setters)} must not set securityContext.windowsOptions.hostProcess=true"


# -- restricted checks -----------------------------------------------------------------------------------------
def _escalation(spec: dict) -> tuple[str, str] | None:
    bad = [c["name"] for c in _containers(spec) if _context(c).get("allowPrivilegeEscalation") is not False]
    if not bad:
        return None
    return "allowPrivilegeEscalation != false", f"{_named(bad)} must set securityContext.allowPrivilegeEscalation=false"


def _capabilities_restricted(spec: dict) -> tuple[str, str] | None:
    missing, adding, added = [], [], set()
    for c in _containers(spec):
        caps = _context(c).get("capabilities")
        if not isinstance(caps, dict):
            missing.append(c["name"])
            continue
        if "ALL" not in (caps.get("drop") or []):
            missing.append(c["name"])
        extra = [cap for cap in caps.get("add") or [] if cap != "NET_BIND_SERVICE"]
        if extra:
            adding.append(c["name"])
            added.update(extra)
    details = []
    if missing:
        details.append(f'{_named(missing)} must set securityContext.capabilities.drop=["ALL"]')
    if adding:
        details.append(f"{_named(adding)} must not include {_quote(sorted(added))} in securityContext.capabilities.add")
    return ("unrestricted capabilities", "; ".join(details)) if details else None


def _restricted_volumes(spec: dict) -> tuple[str, str] | None:
    bad, kinds = [], set()
    for volume in spec.get("volumes") or []:
        if not isinstance(volume, dict):
            continue
        sources = [k for k in volume if k != "name"]
        if any(k in RESTRICTED_VOLUMES_OK for k in sources):
            continue
        bad.append(volume.get("name", ""))
        kinds.add(sources[0] if sources else "unknown")
    if not bad:
        return None
    return "restricted volume types", (f"{_named(bad, 'volume')} {_plural('uses', 'use', len(bad))} "
                                       f"{_plural('restricted volume type', 'restricted volume types', len(kinds))} "
                                       f"{_quote(sorted(kinds))}")


def _user_namespace(spec: dict) -> bool:
    return spec.get("hostUsers") is False


def _run_as_non_root(spec: dict) -> tuple[str, str] | None:
    if _user_namespace(spec):
        return None
    setters, implicit = [], []
    pod = _pod_context(spec).get("runAsNonRoot")
    if pod is False:
        setters.append("pod")
    explicit = []
    for c in _containers(spec):
        own = _context(c).get("runAsNonRoot")
        if own is False:
            explicit.append(c["name"])
        elif own is None and pod is not True:
            implicit.append(c["name"])
    if explicit:
        setters.append(_named(explicit))
    if setters:
        return "runAsNonRoot != true", f"{' and '.join(setters)} must not set securityContext.runAsNonRoot=false"
    if implicit:
        return "runAsNonRoot != true", f"pod or {_named(implicit)} must set securityContext.runAsNonRoot=true"
    return None


def _run_as_user(spec: dict) -> tuple[str, str] | None:
    if _user_namespace(spec):
        return None
    setters = ["pod"] if _pod_context(spec).get("runAsUser") == 0 else []
    bad = [c["name"] for c in _containers(spec) if _context(c).get("runAsUser") == 0]
    if bad:
        setters.append(_named(bad))
    return ("runAsUser=0", f"{' and '.join(setters)} must not set runAsUser=0") if setters else None


def _seccomp_restricted(spec: dict) -> tuple[str, str] | None:
    good = ("RuntimeDefault", "Localhost")
    setters, values, implicit = [], set(), []
    pod = _pod_context(spec).get("seccompProfile")
    pod_set = False
    if isinstance(pod, dict):
        if pod.get("type") in good:
            pod_set = True
        else:
            setters.append("pod")
            values.add(pod.get("type", ""))
    explicit = []
    for c in _containers(spec):
        own = _context(c).get("seccompProfile")
        if isinstance(own, dict):
            if own.get("type") not in good:
                explicit.append(c["name"])
                values.add(own.get("type", ""))
        elif not pod_set:
            implicit.append(c["name"])
    if explicit:
        setters.append(_named(explicit))
    if setters:
        return "seccompProfile", (f"{' and '.join(setters)} must not set securityContext.seccompProfile.type to "
                                  f"{_quote(sorted(values))}")
    if implicit:
        return "seccompProfile", (f"pod or {_named(implicit)} must set securityContext.seccompProfile.type to "
                                  '"RuntimeDefault" or "Localhost"')
    return None


#: (id, check) in the admission plugin's order: baseline ids sorted, then restricted ids sorted
BASELINE = (("appArmorProfile", _apparmor), ("capabilities_baseline", _capabilities_baseline),
            ("hostNamespaces", _host_namespaces), ("hostPathVolumes", _host_path), ("hostPorts", _host_ports),
            ("hostProbesAndhostLifecycle", _probe_hosts), ("privileged", _privileged),
            ("procMount_baseline", _proc_mount), ("seLinuxOptions", _selinux),
            ("seccompProfile_baseline", _seccomp_baseline), ("sysctls", _sysctls), ("windowsHostProcess", _host_process))
RESTRICTED = (("allowPrivilegeEscalation", _escalation), ("capabilities_restricted", _capabilities_restricted),
              ("restrictedVolumes", _restricted_volumes), ("runAsNonRoot", _run_as_non_root),
              ("runAsUser", _run_as_user), ("seccompProfile_restricted", _seccomp_restricted))
#: restricted checks that take a baseline check's place
OVERRIDES = {"capabilities_baseline": "capabilities_restricted", "hostPathVolumes": "restrictedVolumes",
             "seccompProfile_baseline": "seccompProfile_restricted"}


def evaluate(level: str, spec: dict) -> list[tuple[str, str]]:
    """The (reason, detail) of every check of level that spec fails, in the plugin's order."""
    if level == "privileged" or not isinstance(spec, dict):
        return []
    checks = list(BASELINE)
    if level == "restricted":
        checks = [(i, fn) for i, fn in checks if i not in OVERRIDES] + list(RESTRICTED)
    return [found for _, check in checks if (found := check(spec)) is not None]


def detail(results: list[tuple[str, str]]) -> str:
    return ", ".join(f"{reason} ({text})" if text else reason for reason, text in results)


# -- the namespace's policy --------------------------------------------------------------------------------------
def policy(labels: dict | None) -> dict[str, tuple[str, str]]:
    """mode -> (level, version) from a namespace's labels (invalid values fail open for warn and audit, closed for
    enforce, as the plugin does); warn follows a stricter enforce unless set."""
    labels = labels or {}
    out = dict.fromkeys(MODES, ("privileged", "latest"))
    for mode in MODES:
        level, version = labels.get(PREFIX + mode), labels.get(f"{PREFIX}{mode}-version", "latest")
        if level is not None:
            out[mode] = (level if level in LEVELS else ("restricted" if mode == "enforce" else "privileged"),
                         version if version == "latest" or VERSION.match(version) else "latest")
        elif labels.get(f"{PREFIX}{mode}-version"):
            out[mode] = (out[mode][0], version)
    enforce, warn = out["enforce"], out["warn"]
    if PREFIX + "warn" not in labels and PREFIX + "enforce" in labels and \
            LEVELS.index(enforce[0]) > LEVELS.index(warn[0]):
        out["warn"] = (enforce[0], labels.get(PREFIX + "warn-version") or enforce[1])
    return out


def label_causes(labels: dict | None) -> list:
    """The 422 causes of a namespace's invalid Pod Security labels."""
    causes = []
    for key, value in sorted((labels or {}).items()):
        if not key.startswith(PREFIX):
            continue
        mode = key[len(PREFIX):]
        if mode in MODES and value not in LEVELS:
            causes.append((f"metadata.labels[{key}]", "FieldValueInvalid",
                           f'Invalid value: "{value}": must be one of {", ".join(LEVELS)}'))
        elif mode.endswith("-version") and mode[:-8] in MODES and value != "latest" and not VERSION.match(value):
            causes.append((f"metadata.labels[{key}]", "FieldValueInvalid",
                           f'Invalid value: "{value}": must be "latest" or "v1.x"'))
    return causes


def _name(level: tuple[str, str]) -> str:
    return f"{level[0]}:{level[1]}"


# -- admission ---------------------------------------------------------------------------------------------------
def _pod_spec(kind: str, obj: dict) -> dict | None:
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    if kind == "Pod":
        return spec
    if kind == "CronJob":
        spec = ((spec.get("jobTemplate") or {}).get("spec") or {})
    template = spec.get("template") if isinstance(spec.get("template"), dict) else None
    return template.get("spec") if template is not None else None


def _significant(old: dict, new: dict) -> bool:
    """A pod update the plugin evaluates again: containers added or removed, or an image changed."""
    def images(pod: dict) -> list:
        spec = pod.get("spec") or {}
        return [[(c.get("name"), c.get("image")) for c in spec.get(key) or [] if isinstance(c, dict)]
                for key in ("containers", "initContainers", "ephemeralContainers")]
    return images(old) != images(new)


def admit(store, res, obj: dict, old: dict | None) -> None:
    """Enforce (pods only), warn and (pods, workloads) the namespace's policy; 403 when enforce refuses."""
    namespace = obj["metadata"].get("namespace", "")
    ns = store.get("namespaces", "", namespace) if namespace else None
    if ns is None or not any(k.startswith(PREFIX) for k in ns["metadata"].get("labels") or {}):
        return
    if res.kind == "Pod" and old is not None and not _significant(old, obj):
        return
    spec = _pod_spec(res.kind, obj)
    if spec is None:
        return
    modes = policy(ns["metadata"].get("labels"))
    if res.kind == "Pod":
        refused = evaluate(modes["enforce"][0], spec)
        if refused:
            raise forbidden_pod(obj["metadata"].get("name") or obj["metadata"].get("generateName", ""),
                                modes["enforce"], refused)
    warned = evaluate(modes["warn"][0], spec)
    if warned:
        notices.warn(f'would violate PodSecurity "{_name(modes["warn"])}": {detail(warned)}')


def forbidden_pod(name: str, level: tuple[str, str], results: list[tuple[str, str]]) -> errors.ApiError:
    return errors.ApiError(403, "Forbidden", f'pods "{name}" is forbidden: violates PodSecurity "{_name(level)}": '
                                             f"{detail(results)}", {"name": name, "kind": "pods"})


def pod_refusal(store, pod: dict) -> errors.ApiError | None:
    """What admission says of a pod a controller is about to make (None: it may be made)."""
    ns = store.get("namespaces", "", pod["metadata"].get("namespace", ""))
    if ns is None:
        return None
    level = policy(ns["metadata"].get("labels"))["enforce"]
    refused = evaluate(level[0], pod.get("spec") or {})
    return forbidden_pod(pod["metadata"]["name"], level, refused) if refused else None


def namespace_warnings(store, name: str, old_labels: dict | None, new_labels: dict | None) -> list[str]:
    """The warnings of a namespace write that makes its enforce level stricter: which existing pods break it."""
    before, after = policy(old_labels)["enforce"], policy(new_labels)["enforce"]
    if after == before or after[0] == "privileged":
        return []
    found: dict[str, list[str]] = {}
    for pod in store.list("pods", name):
        results = evaluate(after[0], pod.get("spec") or {})
        if results:
            found.setdefault(", ".join(r for r, _ in results), []).append(pod["metadata"]["name"])
    if not found:
        return []
    lines = []
    for reasons, pods in found.items():
        first = min(pods)
        others = len(pods) - 1
        prefix = first if not others else f"{first} (and {others} other pod{'s' if others > 1 else ''})"
        lines.append(f"{prefix}: {reasons}")
    return [f'existing pods in namespace "{name}" violate the new PodSecurity enforce level "{_name(after)}"',
            *sorted(lines)]


def refused(writer, owner: dict, pod: dict) -> bool:
    """A controller about to make pod for owner (a ReplicaSet) asks admission first: when enforce refuses, the
    owner reports it (a FailedCreate event, its ReplicaFailure condition) and no pod is made."""
    from . import recorder
    from .tables import timestamp

    error = pod_refusal(writer.store, pod)
    if error is None:
        return False
    recorder.record(writer, owner, "FailedCreate", f"Error creating: {error.message}", warning=True,
                    component="replicaset-controller")
    old = (owner.get("status") or {}).get("conditions") or []
    kept = next((c for c in old if c.get("type") == "ReplicaFailure"), None)  # the first refusal stays reported
    condition = kept or {"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate", "message": error.message,
                         "lastTransitionTime": timestamp()}
    updated = copy.deepcopy(owner)
    updated.setdefault("status", {})["conditions"] = [condition]
    writer.put("replicasets", updated, owner)
    return True
