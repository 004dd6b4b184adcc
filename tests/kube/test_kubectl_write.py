"""Golden tests: kubectl commands that change the embedded cluster."""

from __future__ import annotations

import json

from .conftest import WEB, mask


def test_create_generators_sent_as_protobuf(kubectl, cluster):
    assert kubectl("create", "namespace", "shop").stdout == "namespace/shop created\n"
    assert kubectl("create", "deployment", "api", "-n", "shop", "--image=example/api:1.0", "--replicas=3",
                   "--port=9000").stdout == "deployment.apps/api created\n"
    assert kubectl("create", "configmap", "cfg", "-n", "shop", "--from-literal=a=1",
                   "--from-literal=b=2").stdout == "configmap/cfg created\n"
    assert kubectl("create", "secret", "generic", "pw", "-n", "shop",
                   "--from-literal=password=s3cret").stdout == "secret/pw created\n"
    assert kubectl("create", "service", "clusterip", "api", "-n", "shop",
                   "--tcp=80:9000").stdout == "service/api created\n"
    deploy = cluster.get_object("Deployment", "shop", "api")
    assert deploy["spec"]["replicas"] == 3
    assert deploy["spec"]["template"]["spec"]["containers"][0]["ports"] == [{"containerPort": 9000, "protocol": "TCP"}]
    assert cluster.get_object("ConfigMap", "shop", "cfg")["data"] == {"a": "1", "b": "2"}
    assert cluster.get_object("Secret", "shop", "pw")["data"] == {"password": "czNjcmV0"}
    assert cluster.get_object("Service", "shop", "api")["spec"]["ports"][0]["targetPort"] == 9000
    eps = mask(kubectl("get", "ep", "api", "-n", "shop").stdout)
    assert "10.244.0.2:9000,10.244.0.3:9000,10.244.0.4:9000" in eps


def test_apply_file_update_unchanged_and_dry_run(kubectl, tmp_path):
    path = tmp_path / "web.yaml"
    path.write_text(WEB)
    kubectl("apply", "-f", str(path))
    assert kubectl("apply", "-f", str(path)).stdout == "deployment.apps/web unchanged\nservice/web unchanged\n"
    path.write_text(WEB.replace("replicas: 2", "replicas: 3").replace("nginx:1.25", "nginx:1.26"))
    dry = kubectl("apply", "-f", str(path), "--dry-run=server").stdout
    assert "deployment.apps/web configured (server dry run)" in dry
    assert kubectl("get", "deploy", "web", "-o", "jsonpath={.spec.replicas}").stdout == "2"
    kubectl("apply", "-f", str(path))
    kubectl("rollout", "status", "deploy/web", "--timeout=10s")
    images = kubectl("get", "pods", "-o", "jsonpath={.items[*].spec.containers[0].image}").stdout.split()
    assert images == ["nginx:1.26"] * 3
    rs = mask(kubectl("get", "rs").stdout).splitlines()
    assert len(rs) == 3 and sorted(line.split("  ")[1] for line in rs[1:]) == ["0", "3"]
    last = json.loads(kubectl("get", "deploy", "web", "-o",
                              "jsonpath={.metadata.annotations.kubectl\\.kubernetes\\.io/last-applied-configuration}").stdout)
    assert last["spec"]["replicas"] == 3


def test_create_replace_delete(kubectl, tmp_path):
    cm = tmp_path / "cm.yaml"
    cm.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: dev}\n")
    assert kubectl("create", "-f", str(cm)).stdout == "configmap/settings created\n"
    again = kubectl("create", "-f", str(cm), check=False)
    assert again.returncode == 1
    assert 'Error from server (AlreadyExists): error when creating' in again.stderr
    assert 'configmaps "settings" already exists' in again.stderr
    cm.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: prod}\n")
    assert kubectl("replace", "-f", str(cm)).stdout == "configmap/settings replaced\n"
    assert kubectl("get", "cm", "settings", "-o", "jsonpath={.data.mode}").stdout == "prod"
    stale = tmp_path / "stale.yaml"
    stale.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, resourceVersion: '1'}\n"
                     "data: {mode: x}\n")
    conflict = kubectl("replace", "-f", str(stale), check=False)
    assert "Error from server (Conflict)" in conflict.stderr and "the object has been modified" in conflict.stderr
    assert "deleted" in kubectl("delete", "-f", str(cm)).stdout
    missing = kubectl("get", "cm", "settings", check=False)
    assert missing.stderr.strip() == 'Error from server (NotFound): configmaps "settings" not found'


def test_patch_strategic_merge_json(kubectl, cluster):
    kubectl("apply", "-f", "-", input=WEB)
    kubectl("patch", "deploy", "web", "-p",
            '{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox"}]}}}}')
    names = [c["name"] for c in cluster.get_object("Deployment", "default", "web")["spec"]["template"]["spec"]["containers"]]
    assert names == ["web", "sidecar"]  # strategic merge keeps the existing container
    kubectl("patch", "deploy", "web", "--type=merge", "-p", '{"metadata":{"labels":{"team":"a"}}}')
    kubectl("patch", "deploy", "web", "--type=json",
            "-p", '[{"op":"replace","path":"/spec/replicas","value":1}]')
    deploy = cluster.get_object("Deployment", "default", "web")
    assert deploy["metadata"]["labels"] == {"app": "web", "team": "a"} and deploy["spec"]["replicas"] == 1
    assert len(cluster.list_objects("Pod", "default")) == 1
    bad = kubectl("patch", "deploy", "web", "--type=json", "-p", '[{"op":"remove","path":"/spec/nothere"}]',
                  check=False)
    assert bad.returncode == 1 and bad.stderr.startswith("The request is invalid: ")
    status = kubectl("patch", "deploy", "web", "--subresource=status", "--type=merge",
                     "-p", '{"status":{"replicas":7}}', "-o", "jsonpath={.status.replicas}")
    assert status.returncode == 0


def test_label_annotate_edit(kubectl, cluster):
    kubectl("apply", "-f", "-", input=WEB)
    assert kubectl("label", "svc", "web", "env=dev").stdout == "service/web labeled\n"
    refused = kubectl("label", "svc", "web", "env=prod", check=False)
    assert "'env' already has a value (dev), and --overwrite is false" in refused.stderr
    kubectl("label", "svc", "web", "env=prod", "--overwrite")
    kubectl("annotate", "svc", "web", "owner=team-a")
    svc = cluster.get_object("Service", "default", "web")
    assert svc["metadata"]["labels"] == {"env": "prod"} and svc["metadata"]["annotations"]["owner"] == "team-a"
    kubectl("label", "svc", "web", "env-")
    assert "labels" not in cluster.get_object("Service", "default", "web")["metadata"] or \
        not cluster.get_object("Service", "default", "web")["metadata"]["labels"]
    edited = kubectl("edit", "deploy", "web", editor="sed -i s/replicas:.2/replicas:\\ 4/")
    assert edited.stdout == "deployment.apps/web edited\n"
    assert len(cluster.list_objects("Pod", "default")) == 4
    unchanged = kubectl("edit", "deploy", "web", editor="true")
    assert "Edit cancelled, no changes made." in unchanged.stdout + unchanged.stderr
    invalid = kubectl("edit", "deploy", "web", editor="sed -i s/replicas:.4/replicas:\\ abc/", check=False)
    assert invalid.returncode == 1
    assert ('error: deployments.apps "web" could not be patched: Deployment in version "v1" cannot be handled as a '
            'Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type '
            'int32') in invalid.stderr


def test_diff_scale_rollout_wait(kubectl, cluster):
    kubectl("apply", "-f", "-", input=WEB)
    changed = WEB.replace("replicas: 2", "replicas: 5")
    diff = kubectl("diff", "-f", "-", input=changed, check=False)
    assert diff.returncode == 1 and "-  replicas: 2\n+  replicas: 5" in diff.stdout
    assert kubectl("scale", "deploy", "web", "--replicas=3").stdout == "deployment.apps/web scaled\n"
    assert len(cluster.list_objects("Pod", "default")) == 3
    kubectl("scale", "deploy", "web", "--replicas=0")
    assert cluster.list_objects("Pod", "default") == []
    kubectl("scale", "deploy", "web", "--replicas=2")
    before = {p["metadata"]["name"] for p in cluster.list_objects("Pod", "default")}
    assert kubectl("rollout", "restart", "deploy/web").stdout == "deployment.apps/web restarted\n"
    assert kubectl("rollout", "status", "deploy/web", "--timeout=10s").stdout.strip() == \
        'deployment "web" successfully rolled out'
    after = {p["metadata"]["name"] for p in cluster.list_objects("Pod", "default")}
    assert len(after) == 2 and not before & after
    assert kubectl("wait", "--for=condition=available", "deploy/web", "--timeout=10s").stdout == \
        "deployment.apps/web condition met\n"
    assert "condition met" in kubectl("wait", "--for=condition=Ready", "pod", "--all", "--timeout=10s").stdout
    history = kubectl("rollout", "history", "deploy/web").stdout
    assert "REVISION" in history


def test_run_expose_and_delete_namespace(kubectl, cluster):
    kubectl("create", "namespace", "tmp")
    kubectl("run", "probe", "-n", "tmp", "--image=busybox", "--labels=app=probe", "--port=8080")
    kubectl("expose", "pod", "probe", "-n", "tmp", "--port=80", "--target-port=8080")
    assert cluster.get_object("Endpoints", "tmp", "probe")["subsets"][0]["ports"][0]["port"] == 8080
    kubectl("delete", "namespace", "tmp")
    assert cluster.list_objects("Pod", "tmp") == [] and cluster.get_object("Namespace", None, "tmp") is None
