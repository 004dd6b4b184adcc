"""Pods that call the API, through the real kubectl: the ServiceAccount token, CA and namespace projected at
/var/run/secrets/kubernetes.io/serviceaccount, kubernetes.default.svc reachable over TLS, RBAC deciding, and the
clients task images use (kubectl in a kubectl image, busybox wget and curl with a bearer token)."""

from __future__ import annotations

from .conftest import busybox_pod, needs_live

pytestmark = needs_live

TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount"


def _reader(ns: str) -> list[dict]:
    return [{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "reader"}},
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "read-pods"},
             "rules": [{"apiGroups": [""], "resources": ["pods", "configmaps"], "verbs": ["get", "list"]}]},
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "read-pods"},
             "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": ns}],
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "read-pods"}}]


def test_the_token_ca_and_namespace_are_projected_and_the_api_answers_over_tls(live):
    ns = live.namespace()
    client = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "ctl"},
              "spec": {"serviceAccountName": "reader", "containers": [
                  {"name": "main", "image": "alpine/k8s:1.30.6", "command": ["sh", "-c", "sleep 3600"]}]}}
    live.apply(ns, *_reader(ns), client)
    live.ready(ns)
    pod = live.json("-n", ns, "get", "pod", "ctl")
    volume = next(v for v in pod["spec"]["volumes"] if v["name"].startswith("kube-api-access-"))
    assert [next(iter(s)) for s in volume["projected"]["sources"]] == ["serviceAccountToken", "configMap", "downwardAPI"]
    assert {"mountPath": TOKEN, "name": volume["name"], "readOnly": True} in pod["spec"]["containers"][0]["volumeMounts"]

    def sh(command: str, check: bool = True):
        return live.kubectl("-n", ns, "exec", "ctl", "--", "sh", "-c", command, check=check)

    assert sh(f"cat {TOKEN}/namespace").stdout == ns
    assert sh("mkdir -p /var/run/app && touch /var/run/app/pid && echo made").stdout == "made\n"  # beside the mount
    assert sh(f"head -1 {TOKEN}/ca.crt").stdout == "-----BEGIN CERTIFICATE-----\n"
    review = live.kubectl("create", "-f", "-", "-o", "jsonpath={.status.user.username}", input=(
        '{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": "'
        + sh(f"cat {TOKEN}/token").stdout + '"}}')).stdout
    assert review == f"system:serviceaccount:{ns}:reader"
    assert "ctl" in sh("kubectl get pods -o name").stdout  # in-cluster config: KUBERNETES_SERVICE_HOST and the token
    denied = sh("kubectl get secrets", check=False)
    assert denied.returncode != 0 and f'User "system:serviceaccount:{ns}:reader" cannot list resource "secrets"' \
        in denied.stderr
    curl = sh(f'curl -s --cacert {TOKEN}/ca.crt -H "Authorization: Bearer $(cat {TOKEN}/token)" '
              f"https://kubernetes.default.svc/api/v1/namespaces/{ns}/pods").stdout
    assert '"kind":"PodList"' in curl
    anonymous = sh(f"curl -s --cacert {TOKEN}/ca.crt https://kubernetes.default.svc.cluster.local/api/v1/namespaces/"
                   f"{ns}/pods").stdout
    assert '"code":403' in anonymous and "system:anonymous" in anonymous


def test_busybox_wget_reaches_the_api_with_a_bearer_token(live):
    ns = live.namespace()
    command = (f'token="$(cat {TOKEN}/token)"; while true; do wget --no-check-certificate -qO- --header '
               f'"Authorization: Bearer $token" https://kubernetes.default.svc/api/v1/namespaces/{ns}/configmaps/'
               "settings && echo; sleep 1; done")
    pod = busybox_pod("poller", command, serviceAccountName="reader")
    live.apply(ns, *_reader(ns), {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"},
                                  "data": {"mode": "blue-green"}}, pod)
    live.ready(ns)
    live.wait_for(lambda: "blue-green" in live.kubectl("-n", ns, "logs", "poller").stdout, what="the poller's read")


def test_a_pod_without_automount_gets_no_token(live):
    ns = live.namespace()
    live.apply(ns, busybox_pod("plain", "sleep 3600", automountServiceAccountToken=False))
    live.ready(ns)
    pod = live.json("-n", ns, "get", "pod", "plain")
    assert not any(v["name"].startswith("kube-api-access-") for v in pod["spec"].get("volumes") or [])
    assert live.kubectl("-n", ns, "exec", "plain", "--", "ls", TOKEN, check=False).returncode != 0


def test_a_pod_of_a_missing_service_account_is_refused_and_its_replica_set_says_so(live):
    ns = live.namespace()
    refused = live.kubectl("-n", ns, "run", "orphan", "--image=busybox", "--overrides",
                           '{"spec": {"serviceAccountName": "ghost"}}', "--", "sleep", "3600", check=False)
    assert refused.returncode != 0
    assert f'error looking up service account {ns}/ghost: serviceaccount "ghost" not found' in refused.stderr
    live.kubectl("-n", ns, "create", "deployment", "web", "--image=busybox", "--", "sleep", "3600")
    live.kubectl("-n", ns, "patch", "deployment", "web", "-p",
                 '{"spec": {"template": {"spec": {"serviceAccountName": "ghost"}}}}')

    def failed_create():
        return "FailedCreate" in live.kubectl("-n", ns, "get", "events").stdout

    live.wait_for(failed_create, what="the FailedCreate event")
    live.kubectl("-n", ns, "create", "serviceaccount", "ghost")
    live.wait_for(lambda: any(p["spec"].get("serviceAccountName") == "ghost"
                              for p in live.json("-n", ns, "get", "pods")["items"]),
                  what="the ReplicaSet to try again once the account exists")
