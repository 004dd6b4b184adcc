"""Configuration reaches the process, as a kubelet delivers it, through the real kubectl: env valueFrom (ConfigMap and
Secret keys, fields, resources), envFrom, $(VAR) expansion, configMap, secret, emptyDir, projected and downwardAPI
volumes, init containers in order, and a missing key keeping the container in CreateContainerConfigError."""

from __future__ import annotations

import base64

from .conftest import busybox_pod, needs_live

pytestmark = needs_live


def _config(name: str, **data: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def _secret(name: str, **data: str) -> dict:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name},
            "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}}


def test_env_value_from_and_env_from_reach_the_process(live):
    ns = live.namespace()
    pod = busybox_pod("app", "sleep 3600", labels={"app": "app", "tier": "web"})
    main = pod["spec"]["containers"][0]
    main["resources"] = {"requests": {"cpu": "250m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}}
    main["envFrom"] = [{"configMapRef": {"name": "settings"}, "prefix": "CFG_"}, {"secretRef": {"name": "creds"}}]
    main["env"] = [
        {"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "mode"}}},
        {"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "password"}}},
        {"name": "ABSENT", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "nope", "optional": True}}},
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "POD_NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
        {"name": "TIER", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['tier']"}}},
        {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
        {"name": "CPU_MILLI", "valueFrom": {"resourceFieldRef": {"resource": "requests.cpu", "divisor": "1m"}}},
        {"name": "MEM_MI", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "divisor": "1Mi"}}},
        {"name": "GREETING", "value": "mode is $(MODE) in $(POD_NS), $$(MODE) stays"}]
    live.apply(ns, _config("settings", mode="live", region="eu-west"), _secret("creds", password="s3cret"), pod)
    live.ready(ns)
    env = dict(line.split("=", 1) for line in live.kubectl("-n", ns, "exec", "app", "--", "env").stdout.splitlines()
               if "=" in line)
    ip = live.pod(ns, "app")["status"]["podIP"]
    assert {k: env.get(k) for k in ("MODE", "PASSWORD", "POD_NAME", "POD_NS", "TIER", "POD_IP", "CPU_MILLI", "MEM_MI",
                                    "CFG_mode", "CFG_region", "password")} == {
        "MODE": "live", "PASSWORD": "s3cret", "POD_NAME": "app", "POD_NS": ns, "TIER": "web", "POD_IP": ip,
        "CPU_MILLI": "250", "MEM_MI": "128", "CFG_mode": "live", "CFG_region": "eu-west", "password": "s3cret"}
    assert "ABSENT" not in env
    assert env["GREETING"] == f"mode is live in {ns}, $(MODE) stays"


def test_a_missing_key_waits_in_create_container_config_error_until_it_is_there(live):
    ns = live.namespace()
    pod = busybox_pod("app", 'echo "mode=$MODE"; sleep 3600')
    pod["spec"]["containers"][0]["env"] = [
        {"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "active_mode"}}}]
    live.apply(ns, _config("settings", mode="live"), pod)

    def waiting():
        status = live.json("-n", ns, "get", "pod", "app")["status"]
        state = (status.get("containerStatuses") or [{}])[0].get("state", {}).get("waiting") or {}
        return state if state.get("reason") == "CreateContainerConfigError" else None

    state = live.wait_for(waiting, what="CreateContainerConfigError")
    assert state["message"] == f"couldn't find key active_mode in ConfigMap {ns}/settings"
    assert live.json("-n", ns, "get", "pod", "app")["status"]["phase"] == "Pending"
    table = live.kubectl("-n", ns, "get", "pod", "app").stdout
    assert "CreateContainerConfigError" in table
    events = live.kubectl("-n", ns, "get", "events", "--field-selector", "involvedObject.name=app").stdout
    assert f"Error: couldn't find key active_mode in ConfigMap {ns}/settings" in events
    logs = live.kubectl("-n", ns, "logs", "app", check=False)
    assert logs.returncode != 0 and "is waiting to start: CreateContainerConfigError" in logs.stderr
    live.kubectl("-n", ns, "patch", "configmap", "settings", "-p", '{"data": {"active_mode": "blue"}}')
    live.ready(ns, timeout=30)
    live.wait_for(lambda: "mode=blue" in live.kubectl("-n", ns, "logs", "app").stdout, what="the started container")


def test_volumes_are_mounted_and_follow_their_config_map(live):
    ns = live.namespace()
    pod = busybox_pod("app", "sleep 3600", labels={"app": "app", "team": "blue"})
    pod["metadata"]["annotations"] = {"owner": "ops"}
    pod["spec"]["containers"][0]["volumeMounts"] = [
        {"name": "config", "mountPath": "/etc/app"},
        {"name": "one-key", "mountPath": "/etc/one/settings.conf", "subPath": "settings.conf"},
        {"name": "creds", "mountPath": "/etc/creds"},
        {"name": "scratch", "mountPath": "/scratch"},
        {"name": "all", "mountPath": "/etc/all"},
        {"name": "meta", "mountPath": "/etc/podinfo"}]
    pod["spec"]["volumes"] = [
        {"name": "config", "configMap": {"name": "settings"}},
        {"name": "one-key", "configMap": {"name": "settings", "items": [{"key": "mode", "path": "settings.conf"}]}},
        {"name": "creds", "secret": {"secretName": "creds", "defaultMode": 0o400}},
        {"name": "scratch", "emptyDir": {}},
        {"name": "all", "projected": {"sources": [
            {"configMap": {"name": "settings", "items": [{"key": "region", "path": "region"}]}},
            {"secret": {"name": "creds"}},
            {"downwardAPI": {"items": [{"path": "name", "fieldRef": {"fieldPath": "metadata.name"}}]}}]}},
        {"name": "meta", "downwardAPI": {"items": [
            {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
            {"path": "owner", "fieldRef": {"fieldPath": "metadata.annotations['owner']"}}]}}]
    live.apply(ns, _config("settings", mode="live", region="eu-west"), _secret("creds", password="s3cret"), pod)
    live.ready(ns)

    def sh(command: str) -> str:
        return live.kubectl("-n", ns, "exec", "app", "--", "sh", "-c", command).stdout

    assert sh("cat /etc/app/mode /etc/app/region") == "liveeu-west"
    assert sh("cat /etc/one/settings.conf") == "live"
    assert sh("cat /etc/creds/password; stat -c %a /etc/creds/..data/password") == "s3cret400\n"
    assert sh("cat /etc/all/region /etc/all/password /etc/all/name") == "eu-wests3cretapp"
    assert sh("cat /etc/podinfo/labels; echo; cat /etc/podinfo/owner") == 'app="app"\nteam="blue"\nops'
    assert sh("echo data > /scratch/file && cat /scratch/file") == "data\n"
    refused = live.kubectl("-n", ns, "exec", "app", "--", "sh", "-c", "echo x > /etc/app/mode", check=False)
    assert refused.returncode != 0 and "Read-only file system" in refused.stderr
    live.kubectl("-n", ns, "patch", "configmap", "settings", "-p", '{"data": {"mode": "dark"}}')
    live.wait_for(lambda: sh("cat /etc/app/mode") == "dark", what="the volume to follow its ConfigMap")


def test_an_empty_dir_is_shared_by_the_containers_of_a_pod(live):
    ns = live.namespace()
    pod = busybox_pod("app", "while ! [ -f /shared/note ]; do sleep 0.1; done; cat /shared/note; sleep 3600")
    pod["spec"]["containers"][0]["volumeMounts"] = [{"name": "shared", "mountPath": "/shared"}]
    pod["spec"]["containers"].append({"name": "writer", "image": "busybox", "command": [
        "sh", "-c", "echo from-writer > /data/note; sleep 3600"],
        "volumeMounts": [{"name": "shared", "mountPath": "/data"}]})
    pod["spec"]["volumes"] = [{"name": "shared", "emptyDir": {}}]
    live.apply(ns, pod)
    live.ready(ns)
    live.wait_for(lambda: live.kubectl("-n", ns, "logs", "app", "-c", "main").stdout == "from-writer\n",
                  what="the reader to see the writer's file")


def test_init_containers_run_in_order_before_the_app(live):
    ns = live.namespace()
    pod = busybox_pod("app", "cat /shared/steps; sleep 3600")
    pod["spec"]["containers"][0]["volumeMounts"] = [{"name": "work", "mountPath": "/shared"}]
    pod["spec"]["initContainers"] = [
        {"name": "first", "image": "busybox", "command": ["sh", "-c", "sleep 0.5; echo first >> /shared/steps"],
         "volumeMounts": [{"name": "work", "mountPath": "/shared"}]},
        {"name": "second", "image": "busybox", "command": ["sh", "-c", "echo second >> /shared/steps"],
         "volumeMounts": [{"name": "work", "mountPath": "/shared"}]}]
    pod["spec"]["volumes"] = [{"name": "work", "emptyDir": {}}]
    live.apply(ns, pod)
    live.ready(ns)
    live.wait_for(lambda: live.kubectl("-n", ns, "logs", "app").stdout == "first\nsecond\n", what="the app's log")
    status = live.json("-n", ns, "get", "pod", "app")["status"]
    inits = [(s["name"], s["state"]["terminated"]["reason"]) for s in status["initContainerStatuses"]]
    assert inits == [("first", "Completed"), ("second", "Completed")]
    assert {c["type"]: c["status"] for c in status["conditions"]}["Initialized"] == "True"
    assert live.kubectl("-n", ns, "logs", "app", "-c", "second").stdout == ""


def test_a_failing_init_container_holds_the_app_back(live):
    ns = live.namespace()
    pod = busybox_pod("app", "echo app started; sleep 3600")
    pod["spec"]["initContainers"] = [{"name": "wait-for-db", "image": "busybox",
                                      "command": ["sh", "-c", "echo db unreachable; exit 3"]}]
    live.apply(ns, pod)

    def crashing():
        status = live.json("-n", ns, "get", "pod", "app")["status"]
        init = (status.get("initContainerStatuses") or [{}])[0]
        return status if init.get("restartCount", 0) >= 1 else None

    status = live.wait_for(crashing, what="the init container to restart")
    assert status["phase"] == "Pending"
    assert {c["type"]: c.get("reason") for c in status["conditions"]}["Initialized"] == "ContainersNotInitialized"
    assert status["containerStatuses"][0]["state"]["waiting"]["reason"] == "PodInitializing"
    assert "Init:" in live.kubectl("-n", ns, "get", "pod", "app").stdout
    assert "db unreachable" in live.kubectl("-n", ns, "logs", "app", "-c", "wait-for-db").stdout
    assert live.kubectl("-n", ns, "logs", "app", check=False).returncode != 0
    never = busybox_pod("once", "echo never; sleep 3600", restartPolicy="Never")
    never["spec"]["initContainers"] = [{"name": "setup", "image": "busybox", "command": ["sh", "-c", "exit 1"]}]
    live.apply(ns, never)
    live.wait_for(lambda: live.json("-n", ns, "get", "pod", "once")["status"]["phase"] == "Failed",
                  what="a Never pod to fail on its init container")


def test_a_container_reads_its_own_limits_in_its_cgroup_files(live):
    ns = live.namespace()
    pod = busybox_pod("sized", "sleep 3600")
    pod["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "250m"}, "limits": {"cpu": "750m",
                                                                                        "memory": "128Mi"}}
    live.apply(ns, pod)
    live.ready(ns)
    out = live.kubectl("-n", ns, "exec", "sized", "--", "cat", "/sys/fs/cgroup/cpu.max",
                       "/sys/fs/cgroup/memory.max").stdout
    assert out == "75000 100000\n134217728\n"
