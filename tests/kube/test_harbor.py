"""Harbor-layout live-cluster tasks of our own (fixtures/harbor/), written as for k3s, run by `netarena kube task`:
each task's broken state fails its verifier and its solution passes, run on the host as the oracle or in the
agent's box; the runner maps Harbor's mount points for the host phases and binds them for the boxed ones, and
reads the reward only as the verifier wrote it (the attacks are tests/security/test_harbor_agent.py)."""

from __future__ import annotations

import json
import subprocess
from concurrent.futures import ThreadPoolExecutor
import sys
from pathlib import Path

import pytest
import yaml

from pytest_netarena.cluster import live_support
from pytest_netarena.kube.cli import pods_starter
from pytest_netarena.kube.harbor import TaskError, load_task, read_reward, rewrite, run_task

TASKS = Path(__file__).resolve().parents[2] / "fixtures" / "harbor"
#: tasks whose bootstrap and verifier need pods that run (kubectl exec, logs, workloads that complete or get ready)
LIVE = {"storefront-api-policy", "checkout-service-port", "payments-dns-egress", "orders-config-key",
        "catalog-plugin-init", "inference-gpu-toleration", "shop-node-drain-budget", "nightly-export-job",
        "weekly-digest-cronjob", "session-store-peers", "node-exporter-daemonset", "checkout-autoscaler-target",
        "shop-ingress-backend", "stock-sync-api-access", "invoice-bad-release"}
#: the network tasks whose servers' readiness is a tcpSocket probe on their named port
SERVED = ("storefront-api-policy", "checkout-service-port", "payments-dns-egress")
PODS = pods_starter("auto")


def tasks() -> list[str]:
    return sorted(p.name for p in TASKS.iterdir() if (p / "task.toml").is_file())


def test_the_fixtures_are_complete_harbor_tasks():
    assert len(tasks()) >= 3
    assert set(tasks()) > LIVE
    for name in tasks():
        folder = TASKS / name
        config = load_task(folder)
        assert config["task"]["name"] == f"netarena/{name}"
        assert config["environment"]["env"]["KUBECONFIG"] == "/kube/kubeconfig.yaml"
        for part in ("instruction.md", "environment/docker-compose.yaml", "solution/solve.sh", "tests/test.sh"):
            assert (folder / part).is_file(), (name, part)
        text = (folder / "environment/scripts/bootstrap-cluster").read_text()
        assert "/bootstrap/" in text and "write-agent-kubeconfig" in text  # written for k3s's mount points
        manifests = "".join(p.read_text() for p in (folder / "environment/workspace/bootstrap").glob("*.yaml"))
        for kind in ("ServiceAccount", "kubernetes.io/service-account-token", "kind: Role", "kind: RoleBinding"):
            assert kind in manifests, (name, kind)


@pytest.mark.parametrize("name", SERVED)
def test_a_live_tasks_servers_are_ready_only_once_they_listen(name):
    # a container is Ready when its process starts unless a probe says otherwise; a bootstrap that probes a Service
    # right after `rollout status` then races the server's start (checkout-service-port failed so, once in four runs)
    folder = TASKS / name / "environment/workspace/bootstrap"
    documents = [doc for path in sorted(folder.glob("*.yaml")) for doc in yaml.safe_load_all(path.read_text()) if doc]
    servers = [container for doc in documents if doc["kind"] == "Deployment"
               for container in doc["spec"]["template"]["spec"]["containers"] if "httpd" in " ".join(container["command"])]
    assert servers, name
    for container in servers:
        assert container.get("readinessProbe", {}).get("tcpSocket", {}).get("port") == container["ports"][0]["name"], \
            (name, container["name"])


def check_task(name: str) -> None:
    """The task's broken state fails its verifier; its solution passes, run by the oracle and as the boxed agent."""
    broken = run_task(TASKS / name, pods=PODS)
    assert [p.name for p in broken.phases] == ["bootstrap", "verifier"], broken.phases[0].log
    assert broken.phases[0].returncode == 0, broken.phases[0].log
    assert broken.reward == 0, broken.phases[-1].log
    assert broken.mode == ("live" if live_support().ok else "api-only")
    fixed = run_task(TASKS / name, solution=True, pods=PODS)
    assert [p.name for p in fixed.phases] == ["bootstrap", "solution", "verifier"], fixed.phases[0].log
    assert fixed.phases[1].returncode == 0, fixed.phases[1].log
    assert fixed.reward == 1, (fixed.phases[1].log, fixed.phases[-1].log)
    # the same commands sent as an agent's: they run in its box, through its kubeconfig, and score the same
    agent = run_task(TASKS / name, agent=(TASKS / name / "solution/solve.sh").read_text(), pods=PODS)
    assert [p.name for p in agent.phases] == ["bootstrap", "agent", "verifier"], agent.phases[0].log
    assert agent.phases[1].returncode == 0, agent.phases[1].log
    assert agent.reward == 1, (agent.phases[1].log, agent.phases[-1].log)


#: tasks checked at once, each on a cluster of its own: a run mostly waits (rollouts, and the broken states'
#: verifiers waiting out their timeouts), so one after another they took 13 minutes of a worker, mostly asleep;
#: more at once than this, beside the other workers' tests, and a loaded CI machine starved a fixture's pods (six:
#: stock-sync's readiness flapped; four: catalog-plugin-init failed its verifier once)
AT_ONCE = 2


def test_the_broken_state_fails_and_the_solution_passes_run_by_the_oracle_or_the_boxed_agent(kubectl_bin, subtests):
    """Every task, each reported as a subtest of its own."""
    with ThreadPoolExecutor(AT_ONCE) as pool:
        checks = {name: pool.submit(check_task, name) for name in tasks() if name not in LIVE or live_support().ok}
        for name in tasks():
            with subtests.test(msg=name):
                if name not in checks:
                    pytest.skip(f"needs pods that run (kubectl exec): {live_support().reason}")
                checks[name].result()


def test_a_fix_that_widens_the_role_is_refused_and_scores_nothing(kubectl_bin):
    wide = ("kubectl -n release patch role release-bot --type json -p "
            "'[{\"op\": \"replace\", \"path\": \"/rules/1\", \"value\": "
            "{\"apiGroups\": [\"apps\"], \"resources\": [\"deployments/scale\"], \"verbs\": [\"*\"]}}]'")
    result = run_task(TASKS / "release-bot-scale", agent=wide)
    agent = result.phases[1]
    assert agent.returncode == 1 and "attempting to grant RBAC permissions not currently held" in agent.log
    assert result.reward == 0


def test_the_agent_box_holds_harbors_paths_its_workspace_and_kubeconfig_only(kubectl_bin, tmp_path):
    look = ("test -w /app && test -r /kube/kubeconfig.yaml && ! test -w /kube/kubeconfig.yaml "
            "&& for p in /tests /solution /admin-kube /logs /bootstrap; do ! test -e $p || exit 9; done "
            "&& kubectl get pods >/dev/null && ! kubectl get secret registry-credentials "
            "&& command -v prepare-kubeconfig && echo scaled-by-agent > /app/notes.txt")
    result = run_task(TASKS / "release-bot-scale", agent=look, keep=True, work=str(tmp_path / "work"))
    assert result.phases[1].returncode == 0, result.phases[1].log
    assert "/usr/local/bin/prepare-kubeconfig" in result.phases[1].log
    assert result.reward == 0
    kept = tmp_path / "work"
    assert (kept / "app/notes.txt").read_text() == "scaled-by-agent\n"  # the workspace is what the verifier sees
    # the host's phases see their mount points rewritten to the work folder; the boxes see Harbor's own
    assert f"{kept}/kube/kubeconfig.yaml" in (kept / "task/environment/scripts/write-agent-kubeconfig").read_text()
    assert "/kube/kubeconfig.yaml" in (kept / "local/bin/write-agent-kubeconfig").read_text()
    assert str(kept) not in (kept / "local/bin/write-agent-kubeconfig").read_text()
    assert "bash /tests/verify.sh" in (kept / "hidden/tests/test.sh").read_text()
    assert (kept / "verdict/verifier/reward.txt").read_text().strip() == "0"
    audit = [json.loads(line) for line in (kept / "logs/audit.jsonl").read_text().splitlines()]
    assert audit[-1]["objectRef"]["name"] == "registry-credentials"  # the server's refusals of the run
    assert audit[-1]["user"]["username"] == "system:serviceaccount:release:task-operator"


def test_a_reward_that_is_no_number_or_no_file_is_none(tmp_path):
    assert read_reward(tmp_path) is None
    for text, reward in (("1\n", 1.0), ("0.5", 0.5), ("nan", None), ("inf", None), ("one", None)):
        (tmp_path / "reward.txt").write_text(text)
        assert read_reward(tmp_path) == reward, text
    (tmp_path / "reward.txt").unlink()
    (tmp_path / "elsewhere").write_text("1")
    (tmp_path / "reward.txt").symlink_to(tmp_path / "elsewhere")
    assert read_reward(tmp_path) is None


def test_only_whole_mount_points_are_rewritten(tmp_path):
    text = ('kubectl apply -f /bootstrap/app.yaml; cat > /kube/kubeconfig.yaml; kubectl get --raw=/readyz; '
            '/tests/verify.sh > /logs/verifier/test.log; ls /kubectl /testsuite /usr/bin/kube; '
            'KUBECONFIG="/admin-kube/admin-kubeconfig.yaml"; cd /app')
    assert rewrite(text, tmp_path) == (
        f'kubectl apply -f {tmp_path}/task/environment/workspace/bootstrap/app.yaml; '
        f'cat > {tmp_path}/kube/kubeconfig.yaml; kubectl get --raw=/readyz; '
        f'{tmp_path}/task/tests/verify.sh > {tmp_path}/logs/verifier/test.log; ls /kubectl /testsuite /usr/bin/kube; '
        f'KUBECONFIG="{tmp_path}/admin-kube/admin-kubeconfig.yaml"; cd {tmp_path}/app')


def test_the_cli_reports_the_reward_and_refuses_a_folder_that_is_no_task(tmp_path, kubectl_bin):
    root = Path(__file__).resolve().parents[2]
    run = [sys.executable, "-m", "pytest_netarena.cli", "kube", "task"]
    done = subprocess.run([*run, str(TASKS / "release-bot-scale"), "--solution"], capture_output=True, text=True,
                          timeout=300, cwd=root)
    assert done.returncode == 0 and done.stdout.strip().endswith("reward: 1"), done.stdout + done.stderr
    empty = subprocess.run([*run, str(tmp_path)], capture_output=True, text=True, timeout=60, cwd=root)
    assert empty.returncode == 2 and "no task.toml" in empty.stderr
    with pytest.raises(TaskError):
        load_task(tmp_path)
