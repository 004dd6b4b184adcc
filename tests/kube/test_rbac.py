"""RBAC on the https listener, through the real kubectl: ServiceAccount tokens (from a token Secret and from
`kubectl create token`), roles and bindings with resourceNames and subresources, the default aggregated
roles, escalation checks, impersonation, `kubectl auth` and the real 403 wording; the admin kubeconfig's
client certificate keeps full rights."""

from __future__ import annotations

import base64
import http.client
import json
import ssl
import subprocess

import pytest

from pytest_netarena.kube import EmbeddedAPIServer, kubectl_env
from pytest_netarena.kube.kubectl import save_kubeconfig

SHOP = """\
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: operator, namespace: shop}
---
apiVersion: v1
kind: Secret
metadata:
  name: operator-token
  namespace: shop
  annotations: {kubernetes.io/service-account.name: operator}
type: kubernetes.io/service-account-token
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: operator, namespace: shop}
rules:
- apiGroups: [""]
  resources: [pods, services, configmaps, events]
  verbs: [get, list, watch]
- apiGroups: [""]
  resources: [pods/exec]
  verbs: [create]
- apiGroups: [apps]
  resources: [deployments]
  verbs: [get, list]
- apiGroups: [apps]
  resources: [deployments/scale]
  verbs: [get, patch, update]
- apiGroups: [networking.k8s.io]
  resources: [networkpolicies]
  verbs: [get, list]
- apiGroups: [networking.k8s.io]
  resources: [networkpolicies]
  resourceNames: [allow-web]
  verbs: [patch, update]
- apiGroups: [rbac.authorization.k8s.io]
  resources: [roles]
  resourceNames: [reader]
  verbs: [get, patch, update]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: operator, namespace: shop}
subjects: [{kind: ServiceAccount, name: operator, namespace: shop}]
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: operator}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader, namespace: shop}
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get]
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: viewer, namespace: shop}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: viewer, namespace: shop}
subjects: [{kind: ServiceAccount, name: viewer, namespace: shop}]
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: allow-web, namespace: shop}
spec: {podSelector: {matchLabels: {app: web}}}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: default-deny, namespace: shop}
spec: {podSelector: {}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "busybox:1.36", command: [sleep, "3600"]}]}
---
apiVersion: v1
kind: Secret
metadata: {name: db-password, namespace: shop}
stringData: {password: CANARY-db-password}
"""
OPERATOR = "system:serviceaccount:shop:operator"


@pytest.fixture(scope="module")
def tls(tmp_path_factory, kubectl_bin):
    """An https server with the shop namespace applied by the admin (through kubectl), snapshotted."""
    server = EmbeddedAPIServer(tls=True).start()
    folder = tmp_path_factory.mktemp("tls")
    admin = kubectl_env(save_kubeconfig(folder / "admin", server.kubeconfig("shop")), folder / "a")
    done = subprocess.run([kubectl_bin, "apply", "-f", "-"], input=SHOP, env=admin, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    server.snapshot()
    yield server, admin, folder
    server.stop()


@pytest.fixture
def kube(tls, kubectl_bin):
    """run(*args, env=...) -> (exit status, stdout + stderr); the server reset to the shop snapshot first."""
    server, admin, folder = tls
    server.reset()

    def run(*args, env=admin, input=None):
        done = subprocess.run([kubectl_bin, *args], env=env, input=input, capture_output=True, text=True, timeout=60)
        return done.returncode, (done.stdout + done.stderr).strip()

    return run


def secret_token(kube) -> tuple[str, str]:
    """(token, ca.crt) of the operator's token Secret, read as a bootstrap script reads them."""
    code, out = kube("get", "secret", "operator-token", "-n", "shop", "-o", "json")
    assert code == 0, out
    data = json.loads(out)["data"]
    return base64.b64decode(data["token"]).decode(), data["ca.crt"]


def token_env(tls, name: str, token: str, ca_data: str | None = None) -> dict:
    """A kubeconfig like a Harbor bootstrap writes: the server, certificate-authority-data, a bearer token."""
    server, _, folder = tls
    config = server.kubeconfig("shop", token=token)
    if ca_data is not None:
        config["clusters"][0]["cluster"]["certificate-authority-data"] = ca_data
    return kubectl_env(save_kubeconfig(folder / name, config), folder / f"{name}-home")


def test_the_token_secret_is_filled_with_token_ca_and_namespace(tls, kube):
    server = tls[0]
    code, out = kube("get", "secret", "operator-token", "-n", "shop", "-o", "json")
    secret = json.loads(out)
    assert secret["type"] == "kubernetes.io/service-account-token"
    assert set(secret["data"]) == {"token", "ca.crt", "namespace"}
    assert base64.b64decode(secret["data"]["namespace"]) == b"shop"
    assert base64.b64decode(secret["data"]["ca.crt"]) == server.authority.ca_pem
    uid = json.loads(kube("get", "sa", "operator", "-n", "shop", "-o", "json")[1])["metadata"]["uid"]
    assert secret["metadata"]["annotations"]["kubernetes.io/service-account.uid"] == uid
    claims = json.loads(base64.urlsafe_b64decode(base64.b64decode(secret["data"]["token"]).split(b".")[1] + b"=="))
    assert claims["sub"] == OPERATOR
    # every namespace has its default ServiceAccount and the cluster CA, as on a real cluster
    assert kube("get", "sa", "default", "-n", "shop", "-o", "name") == (0, "serviceaccount/default")
    code, out = kube("get", "configmap", "kube-root-ca.crt", "-n", "shop", "-o", "jsonpath={.data.ca\\.crt}")
    assert out.encode().strip() == server.authority.ca_pem.strip()


def test_a_token_user_is_allowed_what_its_role_grants_and_nothing_else(tls, kube):
    env = token_env(tls, "operator", *secret_token(kube))
    assert kube("get", "pods", env=env)[0] == 0
    assert kube("get", "networkpolicy", "allow-web", "-o", "name", env=env) == (
        0, "networkpolicy.networking.k8s.io/allow-web")
    code, out = kube("get", "secrets", env=env)
    assert code == 1 and out == ('Error from server (Forbidden): secrets is forbidden: User '
                                 '"system:serviceaccount:shop:operator" cannot list resource "secrets" in API group "" '
                                 'in the namespace "shop"')
    code, out = kube("get", "secret", "db-password", "-o", "yaml", env=env)
    assert code == 1 and 'secrets "db-password" is forbidden' in out and "CANARY" not in out
    code, out = kube("get", "pods", "-n", "default", env=env)
    assert code == 1 and 'in the namespace "default"' in out
    code, out = kube("get", "namespaces", env=env)
    assert code == 1 and 'cannot list resource "namespaces" in API group "" at the cluster scope' in out
    code, out = kube("delete", "pod", "--all", env=env)  # kubectl lists, then deletes each
    assert code == 1 and 'is forbidden: User "system:serviceaccount:shop:operator" cannot delete resource "pods"' in out


def test_resource_names_limit_a_write_to_the_named_object(tls, kube):
    env = token_env(tls, "operator", *secret_token(kube))
    patch = ["--type=merge", "-p", '{"metadata":{"labels":{"fixed":"yes"}}}']
    assert kube("patch", "networkpolicy", "allow-web", *patch, env=env)[0] == 0
    code, out = kube("patch", "networkpolicy", "default-deny", *patch, env=env)
    assert code == 1 and out == (
        'Error from server (Forbidden): networkpolicies.networking.k8s.io "default-deny" is forbidden: User '
        f'"{OPERATOR}" cannot patch resource "networkpolicies" in API group "networking.k8s.io" in the namespace '
        '"shop"')
    code, out = kube("delete", "networkpolicy", "allow-web", env=env)
    assert code == 1 and 'cannot delete resource "networkpolicies"' in out
    assert kube("get", "networkpolicy", "default-deny", "-o", "jsonpath={.metadata.labels}")[1] == ""


def test_subresources_pods_exec_and_deployments_scale_are_their_own_permissions(tls, kube):
    operator = token_env(tls, "operator", *secret_token(kube))
    viewer = token_env(tls, "viewer", tls[0].token("shop", "viewer"))
    assert kube("auth", "can-i", "create", "pods", "--subresource=exec", env=operator) == (0, "yes")
    assert kube("auth", "can-i", "create", "pods", env=operator) == (1, "no")
    assert kube("auth", "can-i", "create", "pods", "--subresource=exec", env=viewer) == (1, "no")
    pod = json.loads(kube("get", "pods", "-l", "app=web", "-o", "json")[1])["items"][0]["metadata"]["name"]
    code, out = kube("exec", pod, "--", "true", env=viewer)
    assert code == 1 and out == (f'error: unable to upgrade connection: pods "{pod}" is forbidden: User '
                                 '"system:serviceaccount:shop:viewer" cannot create resource "pods/exec" in API group '
                                 '"" in the namespace "shop"')
    code, out = kube("exec", pod, "--", "true", env=operator)
    assert "forbidden" not in out.lower()  # past RBAC: what answers is the exec itself
    assert kube("scale", "deployment", "web", "--replicas=2", env=operator)[0] == 0
    assert kube("get", "deployment", "web", "-o", "jsonpath={.spec.replicas}")[1] == "2"
    code, out = kube("patch", "deployment", "web", "--type=merge", "-p", '{"spec":{"replicas":3}}', env=operator)
    assert code == 1 and 'cannot patch resource "deployments" in API group "apps"' in out
    code, out = kube("scale", "deployment", "web", "--replicas=3", env=viewer)
    assert code == 1 and 'cannot patch resource "deployments/scale" in API group "apps"' in out


def test_auth_can_i_whoami_and_list_answer_by_rbac(tls, kube):
    env = token_env(tls, "operator", *secret_token(kube))
    assert kube("auth", "can-i", "patch", "networkpolicy/allow-web", env=env) == (0, "yes")
    assert kube("auth", "can-i", "patch", "networkpolicy/default-deny", env=env) == (1, "no")
    assert kube("auth", "can-i", "get", "secrets", env=env) == (1, "no")
    assert kube("auth", "can-i", "list", "pods", "-n", "kube-system", env=env) == (1, "no")
    code, out = kube("auth", "whoami", "-o", "json", env=env)
    assert json.loads(out)["status"]["userInfo"]["username"] == OPERATOR
    code, out = kube("auth", "can-i", "--list", env=env)
    assert code == 0 and "networkpolicies.networking.k8s.io" in out and "[allow-web]" in out
    # the admin asks on someone's behalf by impersonating them
    assert kube("auth", "can-i", "get", "pods", f"--as={OPERATOR}") == (0, "yes")
    assert kube("auth", "can-i", "get", "secrets", f"--as={OPERATOR}") == (1, "no")
    code, out = kube("get", "secrets", f"--as={OPERATOR}")
    assert code == 1 and f'User "{OPERATOR}" cannot list resource "secrets"' in out
    code, out = kube("get", "pods", "--as=system:serviceaccount:shop:viewer", env=env)  # no right to impersonate
    assert code == 1 and 'cannot impersonate resource "serviceaccounts"' in out


def test_the_default_roles_are_aggregated_as_on_a_real_cluster(tls, kube):
    viewer = token_env(tls, "viewer", tls[0].token("shop", "viewer"))
    assert kube("get", "deployments,pods,networkpolicies", env=viewer)[0] == 0
    assert kube("auth", "can-i", "get", "secrets", env=viewer) == (1, "no")  # view never reads secrets
    assert kube("auth", "can-i", "patch", "networkpolicies", env=viewer) == (1, "no")
    rules = json.loads(kube("get", "clusterrole", "edit", "-o", "json")[1])["rules"]
    assert any("secrets" in r.get("resources", []) and "create" in r["verbs"] for r in rules)
    assert not any("roles" in r.get("resources", []) for r in rules)  # edit grants no RBAC
    admin_rules = json.loads(kube("get", "clusterrole", "admin", "-o", "json")[1])["rules"]
    assert any("rolebindings" in r.get("resources", []) for r in admin_rules)
    # a new role labelled aggregate-to-view widens view at once (what CRD authors do)
    extra = json.dumps({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                        "metadata": {"name": "view-secrets",
                                     "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
                        "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]})
    assert kube("apply", "-f", "-", input=extra)[0] == 0
    assert kube("auth", "can-i", "get", "secrets", env=viewer) == (0, "yes")
    assert kube("auth", "can-i", "get", "secrets", "--as=system:serviceaccount:shop:nobody") == (1, "no")


def test_a_role_or_binding_may_grant_only_what_its_writer_holds(tls, kube):
    env = token_env(tls, "operator", *secret_token(kube))
    widen = ('[{"op": "add", "path": "/rules/0/verbs/-", "value": "%s"}]')
    assert kube("patch", "role", "reader", "--type=json", "-p", widen % "list", env=env)[0] == 0  # it holds list
    to_secrets = '[{"op": "replace", "path": "/rules/0/resources/0", "value": "secrets"}]'
    code, out = kube("patch", "role", "reader", "--type=json", "-p", to_secrets, env=env)
    assert code == 1 and 'roles.rbac.authorization.k8s.io "reader" is forbidden' in out
    assert "attempting to grant RBAC permissions not currently held" in out and '"secrets"' in out
    assert kube("get", "role", "reader", "-o", "jsonpath={.rules[0].resources}")[1] == '["configmaps"]'
    code, out = kube("create", "rolebinding", "mine", "--clusterrole=admin", f"--serviceaccount=shop:operator",
                     env=env)
    assert code == 1 and "forbidden" in out


def test_a_removed_secret_or_account_revokes_its_token_and_a_bad_token_is_unauthorized(tls, kube):
    token, ca = secret_token(kube)
    env = token_env(tls, "operator", token, ca)
    created = kube("create", "token", "operator", "-n", "shop", "--duration=15m")
    assert created[0] == 0
    bound = token_env(tls, "bound", created[1])
    assert kube("get", "pods", env=bound)[0] == 0
    assert kube("delete", "secret", "operator-token")[0] == 0
    code, out = kube("get", "pods", env=env)
    assert code == 1 and "error: You must be logged in to the server (" in out  # kubectl's words for a 401
    assert kube("get", "pods", env=bound)[0] == 0  # a TokenRequest token lives with the account
    kube("delete", "sa", "operator")
    assert "You must be logged in" in kube("get", "pods", env=bound)[1]
    forged = token[:-8] + ("AAAAAAAA" if not token.endswith("AAAAAAAA") else "BBBBBBBB")
    assert "You must be logged in" in kube("get", "pods", env=token_env(tls, "forged", forged))[1]
    other = EmbeddedAPIServer(tls=True)  # a token of another server is worthless here, whatever its claims
    other.apply_objects([{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "viewer",
                                                                                      "namespace": "shop"}}])
    assert "You must be logged in" in kube("get", "pods", env=token_env(tls, "other", other.token("shop", "viewer")))[1]
    assert tls[0].refusals.denied()[-1]["responseStatus"]["code"] == 401


def test_the_admin_certificate_has_full_rights_and_anonymous_has_none(tls, kube):
    assert kube("get", "secrets", "-A", "-o", "name")[0] == 0
    assert kube("create", "namespace", "elsewhere")[0] == 0
    assert kube("auth", "can-i", "*", "*") == (0, "yes")
    server = tls[0]
    context = ssl.create_default_context(cadata=server.authority.ca_pem.decode())
    for path, code in (("/api/v1/namespaces/shop/pods", 403), ("/api", 403), ("/healthz", 200), ("/version", 200)):
        connection = http.client.HTTPSConnection("127.0.0.1", server.port, context=context, timeout=30)
        connection.request("GET", path)  # no token, no client certificate: system:anonymous
        answer = connection.getresponse()
        body = answer.read()
        assert answer.status == code, (path, body)
        if code == 403:
            assert 'User "system:anonymous" cannot get' in json.loads(body)["message"] or \
                'User "system:anonymous" cannot list' in json.loads(body)["message"]


def test_refusals_are_worded_and_audited_as_a_real_server_does(tls, kube):
    server = tls[0]
    missing = json.dumps({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                          "metadata": {"name": "ghost", "namespace": "shop"},
                          "subjects": [{"kind": "ServiceAccount", "name": "viewer", "namespace": "shop"}],
                          "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "ghost"}})
    assert kube("apply", "-f", "-", input=missing)[0] == 0
    viewer = token_env(tls, "viewer", server.token("shop", "viewer"))
    code, out = kube("get", "secrets", env=viewer)
    assert out.endswith(': RBAC: role.rbac.authorization.k8s.io "ghost" not found')
    event = server.refusals.denied()[-1]
    assert event["kind"] == "Event" and event["apiVersion"] == "audit.k8s.io/v1"
    assert event["user"]["username"] == "system:serviceaccount:shop:viewer" and event["verb"] == "list"
    assert event["objectRef"] == {"resource": "secrets", "apiGroup": "", "apiVersion": "v1", "namespace": "shop"}
    assert event["responseStatus"]["code"] == 403
    assert event["annotations"]["authorization.k8s.io/decision"] == "forbid"


def test_roles_and_bindings_are_validated_and_tabled(kube):
    bad = json.dumps({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                      "metadata": {"name": "bad", "namespace": "shop"},
                      "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": []}]})
    code, out = kube("apply", "-f", "-", input=bad)
    assert code == 1 and "rules[0].verbs: Required value: verbs must contain at least one value" in out
    code, out = kube("patch", "rolebinding", "operator", "--type=merge", "-p", '{"roleRef":{"name":"reader"}}')
    assert code == 1 and "cannot change roleRef" in out
    code, out = kube("get", "rolebindings", "-o", "wide")
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["NAME", "ROLE", "AGE"] and "SERVICEACCOUNTS" in lines[0]
    assert any(line.split()[:2] == ["operator", "Role/operator"] and line.endswith("shop/operator")
               for line in lines)
    code, out = kube("get", "role", "operator")
    assert out.splitlines()[0].split() == ["NAME", "CREATED", "AT"]


def test_kubectl_create_serviceaccount_role_and_rolebinding_grant_what_they_say(tls, kube):
    """kubectl create sends these as protobuf: the fields must survive the trip."""
    assert kube("create", "serviceaccount", "bot")[0] == 0
    assert kube("create", "role", "pod-reader", "--verb=get,list", "--resource=pods,deployments.apps")[0] == 0
    assert kube("create", "rolebinding", "bot", "--role=pod-reader", "--serviceaccount=shop:bot")[0] == 0
    assert kube("create", "clusterrole", "logs", "--verb=get", "--non-resource-url=/logs/*")[0] == 0
    assert kube("create", "clusterrolebinding", "bot-logs", "--clusterrole=logs", "--serviceaccount=shop:bot")[0] == 0
    rules = json.loads(kube("get", "role", "pod-reader", "-o", "json")[1])["rules"]
    assert {"verbs": ["get", "list"], "apiGroups": ["apps"], "resources": ["deployments"]} in rules
    bot = token_env(tls, "bot", kube("create", "token", "bot")[1])
    assert kube("get", "pods,deployments", env=bot)[0] == 0
    assert kube("auth", "can-i", "get", "services", env=bot) == (1, "no")
    assert kube("auth", "can-i", "get", "/logs/kube.log", env=bot) == (0, "yes")
