"""AsyncVectorEnv of route environments: each sub-environment in its own process, nothing left behind."""

from __future__ import annotations

import os

import numpy as np



def test_four_route_environments_run_20_random_steps_and_leave_nothing(gym, route_backend, host) -> None:
    from pytest_netarena.training.vector import make_vector

    links_before, netns_before = host.links(), host.netns()
    children_before = host.descendants(os.getpid())
    envs = make_vector("netarena/Route-v0", 4, max_steps=5, levels=(1,), app_options={"route-size": "2x1"})
    prefixes: set[str] = set()
    rewards, refused, steps = [], 0, 0
    try:
        observations, infos = envs.reset(seed=11)
        envs.action_space.seed(11)
        for observation in observations:
            prefixes.update(host.prefix_re.findall(observation))
        assert len(prefixes) == 4, f"each sub-environment builds its own network: {prefixes}"
        assert len(host.descendants(os.getpid())) > len(children_before) + 4  # 4 workers and their Mininet nodes
        for _ in range(20):  # four episodes each: resets build new networks
            observations, reward, terminated, truncated, infos = envs.step(envs.action_space.sample())
            steps += len(reward)
            rewards.extend(reward.tolist())
            if "refused" in infos:  # absent when every copy autoresets on this step
                refused += int(np.sum(infos["refused"][infos["_refused"]]))
            for observation in observations:
                prefixes.update(host.prefix_re.findall(observation))
    finally:
        envs.close()
    assert steps == 80
    assert refused > 0 and min(rewards) < 0  # random text is refused, and refusals cost
    assert len(prefixes) > 4, "episodes ended and new networks were built on reset"
    ours = {p for p in prefixes if not host.leased_by_another(p)}  # others' runs may reuse a released prefix
    assert ours
    leftover_links = {link for link in host.links() - links_before if any(p in link for p in ours)}
    assert not leftover_links
    assert not {ns for ns in host.netns() - netns_before if any(p in ns for p in ours)}
    assert host.descendants(os.getpid()) <= children_before
    assert not host.processes_naming(ours)


def test_k8s_copies_each_run_their_own_api_server(gym, host, monkeypatch) -> None:
    from pytest_netarena.training.vector import make_vector

    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)  # k8s leases no names: a stand-in id is harmless here
    children_before = host.descendants(os.getpid())
    envs = make_vector("netarena/K8s-v0", 2, max_steps=3)
    assert os.environ.get("PYTEST_XDIST_WORKER") == worker  # only the copies' processes drop it
    try:
        observations, infos = envs.reset(seed=[1, 2], options={"category": "remove_ingress"})
        assert all("Intended connectivity" in observation for observation in observations)
        # an unsafe change in one copy must not show in the other: each has its own cluster
        wipe = "```\nkubectl delete networkpolicy --all\n```"
        observations, reward, _, _, infos = envs.step((wipe, "```\nkubectl get networkpolicy\n```"))
        assert not infos["safe"][0] and infos["safe"][1]
        assert reward[0] <= -1.0 and reward[1] == 0.0
        assert "No resources found" not in observations[1]
    finally:
        envs.close()
    assert host.descendants(os.getpid()) <= children_before
