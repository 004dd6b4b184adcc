"""kubectl exec, logs and events against running pods, through the real kubectl (WebSocket exec, v5.channel.k8s.io)."""

from __future__ import annotations

from .conftest import busybox_pod, deployment, needs_live, web_command

pytestmark = needs_live


def test_exec_propagates_exit_codes_and_separates_streams(live):
    ns = live.namespace()
    live.apply(ns, busybox_pod("box", "sleep 3600"))
    live.ready(ns)
    assert live.kubectl("-n", ns, "exec", "box", "--", "true").returncode == 0
    failed = live.kubectl("-n", ns, "exec", "box", "--", "false", check=False)
    assert failed.returncode == 1 and "command terminated with exit code 1" in failed.stderr
    mixed = live.kubectl("-n", ns, "exec", "box", "--", "sh", "-c", "echo out; echo err >&2; exit 7", check=False)
    assert (mixed.returncode, mixed.stdout, mixed.stderr.splitlines()[0]) == (7, "out\n", "err")


def test_exec_runs_in_the_pod_as_the_pod(live):
    """The session is a box in the pod's network namespace, with its hostname, address and resolv.conf."""
    ns = live.namespace()
    live.apply(ns, busybox_pod("box", "sleep 3600"))
    live.ready(ns)
    pod = live.pod(ns, "box")
    out = live.kubectl("-n", ns, "exec", "box", "--", "sh", "-c",
                       "hostname; ip -4 -o addr show eth0; cat /etc/resolv.conf").stdout
    assert out.splitlines()[0] == "box"
    assert f"inet {pod['status']['podIP']}/32" in out
    assert f"search {ns}.svc.cluster.local svc.cluster.local cluster.local" in out


def test_exec_chooses_the_container_with_c(live):
    ns = live.namespace()
    pod = busybox_pod("two", "echo a > /whoami && sleep 3600")
    pod["spec"]["containers"].append({"name": "side", "image": "busybox", "command": ["sh", "-c",
                                                                                      "echo b > /whoami; sleep 3600"]})
    live.apply(ns, pod)
    live.ready(ns)
    assert live.kubectl("-n", ns, "exec", "two", "-c", "side", "--", "cat", "/whoami").stdout == "b\n"
    assert live.kubectl("-n", ns, "exec", "two", "-c", "main", "--", "cat", "/whoami").stdout == "a\n"
    wrong = live.kubectl("-n", ns, "exec", "two", "-c", "nope", "--", "true", check=False)
    assert wrong.returncode != 0 and "container nope is not valid for pod two" in wrong.stderr


def test_exec_reads_stdin_with_i(live):
    ns = live.namespace()
    live.apply(ns, busybox_pod("box", "sleep 3600"))
    live.ready(ns)
    text = "".join(f"line {n}\n" for n in range(2000))
    result = live.kubectl("-n", ns, "exec", "-i", "box", "--", "sh", "-c", "wc -l; exit 4", input=text, check=False)
    assert (result.returncode, result.stdout.strip()) == (4, "2000")


def test_exec_of_a_missing_program_fails_as_a_runtime_says(live):
    ns = live.namespace()
    live.apply(ns, busybox_pod("box", "sleep 3600"))
    live.ready(ns)
    result = live.kubectl("-n", ns, "exec", "box", "--", "no-such-program", check=False)
    assert result.returncode == 1
    assert 'exec: "no-such-program": executable file not found in $PATH' in result.stderr


def test_logs_tail_previous_and_restarts(live):
    """A crashing container restarts (restartPolicy Always, back-off); --previous shows the run before."""
    ns = live.namespace()
    command = ("n=$(cat /runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > /runs; "
               "for i in 1 2 3; do echo run $n line $i; done; sleep 0.2; exit 3")
    live.apply(ns, busybox_pod("crash", command))
    live.wait_for(lambda: live.pod(ns, "crash")["status"]["containerStatuses"][0]["restartCount"] >= 2, 30,
                  "two restarts")
    previous = live.kubectl("-n", ns, "logs", "crash", "--previous").stdout
    assert previous.startswith("run ") and previous.count("line") == 3
    run = int(previous.split()[1])
    assert run >= 2
    current = live.kubectl("-n", ns, "logs", "crash", "--tail=2").stdout.splitlines()
    assert len(current) <= 2 and all(line.startswith("run ") for line in current)
    status = live.pod(ns, "crash")["status"]["containerStatuses"][0]
    assert status["lastState"]["terminated"]["exitCode"] == 3
    assert status["lastState"]["terminated"]["reason"] == "Error"
    reasons = {e["reason"] for e in live.json("-n", ns, "get", "events")["items"]}
    assert {"Scheduled", "Pulled", "Created", "Started", "BackOff"} <= reasons


def test_logs_without_a_previous_run_and_of_a_pending_container(live):
    ns = live.namespace()
    live.apply(ns, busybox_pod("once", "echo hi; sleep 3600"))
    live.ready(ns)
    result = live.kubectl("-n", ns, "logs", "once", "--previous", check=False)
    assert result.returncode != 0 and 'previous terminated container "main" in pod "once" not found' in result.stderr
    assert live.kubectl("-n", ns, "logs", "once").stdout == "hi\n"


def test_logs_follow_ends_with_the_container(live):
    ns = live.namespace()
    live.apply(ns, busybox_pod("short", "for i in 1 2 3; do echo $i; sleep 0.3; done", restartPolicy="Never"))
    live.wait_for(lambda: live.pod(ns, "short")["status"].get("phase") in ("Running", "Succeeded"), 30, "a start")
    result = live.kubectl("-n", ns, "logs", "-f", "short", timeout=30)
    assert result.stdout == "1\n2\n3\n"
    live.wait_for(lambda: live.pod(ns, "short")["status"]["phase"] == "Succeeded", 30, "the pod to succeed")


def test_events_tell_scheduling_and_start_in_describe(live):
    ns = live.namespace()
    live.apply(ns, busybox_pod("box", "sleep 3600"))
    live.ready(ns)
    described = live.kubectl("-n", ns, "describe", "pod", "box").stdout
    assert f"Successfully assigned {ns}/box to netarena-node" in described
    assert 'Container image "busybox:1.36" already present on machine' in described
    assert "Started container main" in described


def test_readiness_probe_decides_endpoints(live):
    ns = live.namespace()
    probe = {"exec": {"command": ["test", "-f", "/tmp/ready"]}, "periodSeconds": 1, "failureThreshold": 1}
    live.apply(ns, busybox_pod("web", web_command(), ports=[{"containerPort": 8080}], readinessProbe=probe),
               {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
                "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]}})
    live.wait_for(lambda: live.pod(ns, "web")["status"].get("phase") == "Running", 30, "Running")
    live.wait_for(lambda: any(e["reason"] == "Unhealthy" and "Readiness probe failed" in e["message"]
                              for e in live.json("-n", ns, "get", "events")["items"]), 30, "a failed probe")
    assert not live.server.get_object("Endpoints", ns, "web").get("subsets")
    live.kubectl("-n", ns, "exec", "web", "--", "touch", "/tmp/ready")
    live.wait_for(lambda: live.server.get_object("Endpoints", ns, "web").get("subsets"), 30, "endpoints")
    pod = live.pod(ns, "web")
    assert live.server.get_object("Endpoints", ns, "web")["subsets"][0]["addresses"][0]["ip"] == pod["status"]["podIP"]


def test_failed_liveness_probe_restarts_the_container(live):
    ns = live.namespace()
    probe = {"httpGet": {"path": "/", "port": 9999}, "periodSeconds": 1, "failureThreshold": 2}
    live.apply(ns, busybox_pod("sick", "echo started; sleep 3600", livenessProbe=probe))
    live.wait_for(lambda: live.pod(ns, "sick")["status"]["containerStatuses"][0]["restartCount"] >= 1, 30,
                  "a restart")
    messages = [e["message"] for e in live.json("-n", ns, "get", "events")["items"]]
    assert any(m.startswith("Liveness probe failed: Get \"http://") and "connection refused" in m for m in messages), \
        messages
    assert "Container main failed liveness probe, will be restarted" in messages


def test_rollout_waits_for_new_pods_and_keeps_the_old_ones_serving(live):
    ns = live.namespace()
    good = {"name": "main", "image": "busybox:1.36", "command": ["sh", "-c", web_command()],
            "ports": [{"containerPort": 8080}]}
    live.apply(ns, deployment("web", [good]))
    live.ready(ns)
    assert "successfully rolled out" in live.kubectl("-n", ns, "rollout", "status", "deploy/web").stdout
    old = live.pod(ns, "web")["metadata"]["name"]
    live.kubectl("-n", ns, "patch", "deploy/web", "--type=json", "-p",
                 '[{"op":"replace","path":"/spec/template/spec/containers/0/command","value":["sh","-c","exit 1"]}]')
    stuck = live.kubectl("-n", ns, "rollout", "status", "deploy/web", "--timeout=3s", check=False)
    assert stuck.returncode != 0 and "Waiting for deployment \"web\" rollout to finish" in stuck.stdout
    names = [p["metadata"]["name"] for p in live.server.list_objects("Pod", ns)]
    assert old in names and len(names) == 2  # the old pod still serves while the new one crashes
    live.kubectl("-n", ns, "rollout", "undo", "deploy/web")
    done = live.kubectl("-n", ns, "rollout", "status", "deploy/web", "--timeout=30s")
    assert "successfully rolled out" in done.stdout


def test_a_server_without_a_runtime_still_says_it_runs_no_pods(tmp_path):
    from pytest_netarena.kube import EmbeddedAPIServer, kubectl_env, kubectl_path

    with EmbeddedAPIServer() as server:
        assert server.mode == "api-only"
        server.apply_object(busybox_pod("box", "sleep 3600"))
        env = kubectl_env(server, tmp_path)
        import subprocess

        result = subprocess.run([kubectl_path(), "exec", "box", "--", "true"], env=env, capture_output=True,
                                text=True, timeout=60)
        assert result.returncode != 0 and "not supported by this embedded Kubernetes API server" in result.stderr


def test_mode_is_live_while_attached(live):
    assert live.server.mode == "live"
    assert live.server.runtime is live.cluster
