"""Pod Security admission by namespace labels through the real kubectl: enforce refuses a pod with the real
message, warn and stricter enforce levels are kubectl warnings, a workload's refused pods are the ReplicaSet's
FailedCreate events, a label that does not read is refused, and baseline lets what restricted does not."""

from __future__ import annotations

import textwrap

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: NAME}
spec:
  containers:
  - name: app
    image: busybox
    command: [sleep, "3600"]
"""
RESTRICTED_OK = """\
  securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: app
    image: busybox
    command: [sleep, "3600"]
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
"""


def _namespace(kubectl, **labels) -> None:
    kubectl("create", "namespace", "team")
    kubectl("label", "namespace", "team", *(f"pod-security.kubernetes.io/{k.replace('_', '-')}={v}"
                                            for k, v in labels.items()))


def test_enforce_restricted_refuses_a_pod_with_the_real_message(kubectl, cluster):
    _namespace(kubectl, enforce="restricted")
    refused = kubectl("apply", "-n", "team", "-f", "-", input=POD.replace("NAME", "web"), check=False)
    assert refused.returncode == 1
    assert ('pods "web" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false '
            '(container "app" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities '
            '(container "app" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or '
            'container "app" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "app" '
            'must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")') in refused.stderr
    fine = POD.replace("NAME", "ok").split("  containers:")[0] + RESTRICTED_OK
    assert kubectl("apply", "-n", "team", "-f", "-", input=fine).stdout == "pod/ok created\n"


def test_warn_and_a_stricter_enforce_level_are_warnings(kubectl):
    _namespace(kubectl, warn="baseline")
    made = kubectl("run", "tool", "-n", "team", "--image=busybox", "--privileged")
    assert made.stdout == "pod/tool created\n"
    assert ('Warning: would violate PodSecurity "baseline:latest": privileged (container "tool" must not set '
            'securityContext.privileged=true)') in made.stderr
    stricter = kubectl("label", "namespace", "team", "pod-security.kubernetes.io/enforce=restricted")
    assert 'Warning: existing pods in namespace "team" violate the new PodSecurity enforce level "restricted:latest"' \
        in stricter.stderr
    assert "Warning: tool: privileged, allowPrivilegeEscalation != false, unrestricted capabilities, " \
           "runAsNonRoot != true, seccompProfile" in stricter.stderr
    bad = kubectl("label", "namespace", "team", "pod-security.kubernetes.io/audit=strict", check=False)
    assert ('metadata.labels[pod-security.kubernetes.io/audit]: Invalid value: "strict": must be one of privileged, '
            'baseline, restricted') in bad.stderr


def test_a_workloads_refused_pods_are_failed_creates_until_the_template_complies(kubectl, cluster):
    _namespace(kubectl, enforce="restricted")
    deployment = textwrap.dedent("""\
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: reporting}
        spec:
          selector: {matchLabels: {app: reporting}}
          template:
            metadata: {labels: {app: reporting}}
            spec:
        """) + textwrap.indent(RESTRICTED_OK.replace("allowPrivilegeEscalation: false, ", ""), "    ")
    made = kubectl("apply", "-n", "team", "-f", "-", input=deployment)
    assert 'Warning: would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false' in made.stderr
    assert cluster.list_objects("Pod", "team") == []
    events = kubectl("get", "events", "-n", "team").stdout
    assert "FailedCreate" in events and 'violates PodSecurity "restricted:latest"' in events
    assert "ReplicaFailure   True    FailedCreate" in kubectl("describe", "rs", "-n", "team").stdout
    kubectl("patch", "deployment", "reporting", "-n", "team", "--type=json", "-p",
            '[{"op":"add","path":"/spec/template/spec/containers/0/securityContext/allowPrivilegeEscalation",'
            '"value":false}]')
    kubectl("rollout", "status", "deployment/reporting", "-n", "team", "--timeout=10s")
    assert len(cluster.list_objects("Pod", "team")) == 1


def test_baseline_allows_what_restricted_refuses_and_refuses_host_access(kubectl):
    _namespace(kubectl, enforce="baseline")
    assert kubectl("apply", "-n", "team", "-f", "-", input=POD.replace("NAME", "plain")).returncode == 0
    host = POD.replace("NAME", "host").replace("spec:\n", "spec:\n  hostNetwork: true\n") + \
        "    ports: [{containerPort: 80, hostPort: 8080}]\n  volumes: [{name: root, hostPath: {path: /}}]\n"
    refused = kubectl("apply", "-n", "team", "-f", "-", input=host, check=False)
    assert ('violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true), hostPath volumes (volume '
            '"root"), hostPort (container "app" uses hostPort 8080)') in refused.stderr
