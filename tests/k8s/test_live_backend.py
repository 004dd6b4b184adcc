"""The k8s app on the embedded backend with its pods running (`k8s_pods=live`): the agent's kubectl exec and logs
work from its box, and the app's connectivity matrix (the engine's) equals what real packets reach."""

from __future__ import annotations

import pytest

from pytest_netarena.cluster import live_support

pytestmark = pytest.mark.skipif(not live_support().ok, reason=f"pods cannot run here: {live_support().reason}")


@pytest.fixture(scope="module")
def env():
    from pytest_netarena.apps.k8s import APP
    from pytest_netarena.core.app import RunOptions

    options = RunOptions(seed=5, queries=1, extra={"k8s_pods": "live"})
    environment = APP.make_environment(options)
    yield environment, APP.generate(options)
    environment.close()


def packets_matrix(backend) -> dict:
    """Each flow of the app probed from its client's pod to the Service's ClusterIP, answered with proof."""
    server, live, namespace = backend.server, backend.live, backend.namespace
    pods = {}
    for pod in server.list_objects("Pod", namespace):
        pods.setdefault(pod["metadata"]["labels"]["app"], []).append(pod["metadata"]["name"])
    flows = list(backend.observe().matrix)
    probes = []
    for flow in flows:
        address = server.get_object("Service", namespace, flow.service)["spec"]["clusterIP"]
        probes.append((f"{namespace}/{pods[flow.source][0]}", address, flow.port, flow.protocol))
    reached = live.probe_many(probes, timeout=0.5)
    # A dropped flow never answers however long it is given; an open one can miss a short wait on a loaded
    # machine. So the flows without an answer are asked once more, with a longer wait, before they count as blocked.
    unanswered = [index for index, reach in enumerate(reached) if reach.pod is None]
    for index, reach in zip(unanswered, live.probe_many([probes[index] for index in unanswered], timeout=3.0)):
        reached[index] = reach
    found = {}
    for flow, reach in zip(flows, reached):
        backends = {f"{namespace}/{name}" for name in pods.get(flow.service, ())}
        assert reach.pod is None or reach.pod in backends, (flow, reach)
        found[flow] = reach.pod is not None
    return found


def test_the_matrix_equals_real_packets_in_every_faulted_state(env):
    environment, queries = env
    backend = environment.backend
    assert backend.mode == "live" and backend.server.mode == "live"
    assert len(queries) >= 4
    for query in queries[:4]:
        environment.reset(query)
        expected = dict(backend.observe().matrix)
        assert packets_matrix(backend) == expected, query.id


def test_the_agent_probes_and_reads_logs_from_its_box(env):
    environment, queries = env
    environment.reset(queries[0])
    matrix = environment.backend.observe().matrix
    open_flow = next(f for f, allowed in matrix.items() if allowed and f.service == "frontend")
    closed_flow = next(f for f, allowed in matrix.items() if not allowed and f.protocol == "TCP")
    step = environment.step(f"```bash\nkubectl exec deploy/{open_flow.source} -- wget -qO- -T 2 http://frontend:80/\n```")
    assert "<title>Online Boutique</title>" in str(step.observation)
    step = environment.step(f"```bash\nkubectl exec deploy/{closed_flow.source} -- wget -qO- -T 1 "
                            f"http://{closed_flow.service}:{closed_flow.port}/\n```")
    assert "wget: download timed out" in str(step.observation)  # dropped by a policy, as the matrix says
    # netcat's port test, as the live prompt shows it (Debian's busybox nc has no -z of its own)
    step = environment.step(f"```bash\nkubectl exec deploy/{open_flow.source} -- nc -zv -w 2 frontend 80 "
                            "&& echo REACHED\n```")
    assert "REACHED" in str(step.observation) and "frontend (80) open" in str(step.observation)
    step = environment.step(f"```bash\nkubectl exec deploy/{closed_flow.source} -- nc -z -w 1 "
                            f"{closed_flow.service} {closed_flow.port} || echo BLOCKED\n```")
    assert "BLOCKED" in str(step.observation) and "nc: timed out" in str(step.observation)
    step = environment.step("```bash\nkubectl exec deploy/frontend -- sh -c 'exit 5'\n```")
    assert "command terminated with exit code 5" in str(step.observation)
    step = environment.step("```bash\nkubectl logs deploy/cartservice\n```")
    assert "starting gRPC server at :7070" in str(step.observation)


def test_the_oracle_resolves_with_pods_running(env):
    from pytest_netarena.agents.prompting import build_system_prompt
    from pytest_netarena.apps.k8s import APP
    from pytest_netarena.core.episode import EpisodeConfig, run_episode
    from pytest_netarena.core.types import Outcome, Task, new_episode_id

    environment, queries = env
    query = queries[1]
    task = Task("k8s", new_episode_id(), build_system_prompt(APP.prompt(), "zero-shot"), "zero-shot", 10)
    result = run_episode(environment, APP.builtin_agent("oracle", query, environment), query, task,
                         EpisodeConfig(10), "oracle")
    assert result.outcome is Outcome.RESOLVED
    assert packets_matrix(environment.backend) == dict(environment.backend.observe().matrix)
