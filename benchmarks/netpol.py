"""Prints NetworkPolicy engine timings: Online Boutique matrix, a 1,000-pod/1,000-policy matrix, incremental updates,
each with and without the listening-port model, and the least-privilege comparison (netpol.privilege)."""

from __future__ import annotations

import argparse
import random
import time

from pytest_netarena.netpol import ConnectivityModel, ContainerPort, Namespace, Pod, Probe, Service, ServicePort

# service name -> (service port, target port); loadgenerator has no service.
BOUTIQUE = {
    "frontend": (80, 8080), "adservice": (9555, 9555), "cartservice": (7070, 7070), "checkoutservice": (5050, 5050),
    "currencyservice": (7000, 7000), "emailservice": (5000, 8080), "paymentservice": (50051, 50051),
    "productcatalogservice": (3550, 3550), "recommendationservice": (8080, 8080), "shippingservice": (50051, 50051),
    "redis-cart": (6379, 6379),
}
INGRESS_FROM = {
    "adservice": ["frontend"], "cartservice": ["frontend", "checkoutservice"], "checkoutservice": ["frontend"],
    "currencyservice": ["frontend", "checkoutservice"], "emailservice": ["checkoutservice"],
    "paymentservice": ["checkoutservice"], "productcatalogservice": ["frontend", "checkoutservice", "recommendationservice"],
    "recommendationservice": ["frontend"], "redis-cart": ["cartservice"], "shippingservice": ["frontend", "checkoutservice"],
}


def boutique() -> tuple[list, list, list, list]:
    workloads = [*BOUTIQUE, "loadgenerator"]
    pods = [Pod("default", f"{name}-0", {"app": name}, f"10.0.0.{i + 1}",
                (ContainerPort(BOUTIQUE[name][1], "TCP", "grpc"),) if name in BOUTIQUE else ())
            for i, name in enumerate(workloads)]
    services = [Service("default", name, {"app": name}, (ServicePort(port, target),)) for name, (port, target) in BOUTIQUE.items()]
    policies = []
    for name in workloads:
        spec = {"podSelector": {"matchLabels": {"app": name}}, "policyTypes": ["Ingress", "Egress"], "egress": [{}]}
        if name == "frontend":
            spec["ingress"] = [{}]
        elif name in INGRESS_FROM:
            spec["ingress"] = [{"from": [{"podSelector": {"matchLabels": {"app": s}}} for s in INGRESS_FROM[name]],
                                "ports": [{"port": BOUTIQUE[name][1], "protocol": "TCP"}]}]
        else:
            spec["policyTypes"] = ["Egress"]  # loadgenerator: egress only
        policies.append({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                         "metadata": {"name": name, "namespace": "default"}, "spec": spec})
    probes = [Probe.to_svc(pod.key, f"default/{svc}", port) for pod in pods for svc, (port, _) in BOUTIQUE.items()]
    return [Namespace("default")], pods, policies, [services, probes]


def large_cluster(pods_count: int, policy_count: int, seed: int = 7) -> tuple[list, list, list]:
    rng = random.Random(seed)
    namespace_count = 20
    namespaces = [Namespace(f"ns{i}", {"team": f"t{i % 5}", "env": rng.choice(["prod", "dev"])}) for i in range(namespace_count)]
    ports = (ContainerPort(80, "TCP", "http"), ContainerPort(443, "TCP", "https"), ContainerPort(53, "UDP", "dns"))
    pods = [Pod(f"ns{i % namespace_count}", f"pod{i}", {"app": f"app{i % 100}", "tier": rng.choice(["web", "api", "db"])},
                f"10.{i // 250}.{i % 250}.1", ports) for i in range(pods_count)]
    policies = []
    for i in range(policy_count):
        namespace = f"ns{i % namespace_count}"
        peers = [{"podSelector": {"matchLabels": {"app": f"app{rng.randrange(100)}"}}},
                 {"namespaceSelector": {"matchLabels": {"team": f"t{rng.randrange(5)}"}},
                  "podSelector": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["web", "api"]}]}}]
        if i % 10 == 0:
            peers.append({"ipBlock": {"cidr": "10.0.0.0/8", "except": [f"10.{rng.randrange(4)}.0.0/16"]}})
        # Pod i lives in ns(i % 20) with app(i % 100): pick an app that exists in this namespace.
        target_app = f"app{rng.randrange(5) * namespace_count + i % namespace_count}"
        spec = {"podSelector": {"matchLabels": {"app": target_app}},
                "ingress": [{"from": peers, "ports": [{"port": rng.choice([80, "http", 443]), "protocol": "TCP"}]}]}
        if i % 3 == 0:
            spec["policyTypes"] = ["Ingress", "Egress"]
            spec["egress"] = [{"to": [{"namespaceSelector": {"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["dev"]}]}}]},
                              {"ports": [{"port": 53, "protocol": "UDP"}]}]
        policies.append({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                         "metadata": {"name": f"policy{i}", "namespace": namespace}, "spec": spec})
    return namespaces, pods, policies


def timed(function):
    start = time.perf_counter()
    result = function()
    return result, time.perf_counter() - start


def best_of(repeats, function):
    return min(timed(function)[1] for _ in range(repeats))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--policies", type=int, default=1000)
    args = parser.parse_args()

    namespaces, pods, policies, (services, probes) = boutique()
    cold = best_of(20, lambda: ConnectivityModel(namespaces, pods, policies, services).matrix(probes))
    model = ConnectivityModel(namespaces, pods, policies, services)
    model.matrix(probes)
    warm = best_of(20, lambda: model.matrix(probes))
    allowed = sum(model.matrix(probes).values())
    print(f"online boutique: {len(pods)} pods x {len(services)} service ports = {len(probes)} probes, {allowed} allowed")
    print(f"  from scratch (compile policies + index + matrix): {cold * 1e3:.2f} ms   (target < 5 ms)")
    print(f"  warm matrix:                                        {warm * 1e3:.2f} ms")

    namespaces, pods, policies = large_cluster(args.pods, args.policies)
    keys = [pod.key for pod in pods]
    probes, build = timed(lambda: [Probe(s, d, 80, "TCP") for s in keys for d in keys])
    (model, matrix), scratch = timed(lambda: (lambda m: (m, m.matrix(probes)))(ConnectivityModel(namespaces, pods, policies)))
    print(f"large cluster: {len(pods)} pods, {len(policies)} policies, {len(probes):,} probes on 80/TCP, "
          f"{sum(matrix.values()):,} allowed")
    print(f"  full matrix from scratch: {scratch:.2f} s   (target < 10 s on one core; building the probe list took {build:.2f} s)")
    handful = [Probe(s, d, port, proto) for s in keys[:200] for d in keys for port, proto in (("https", "TCP"), (53, "UDP"), (8080, "TCP"))]
    _, handful_time = timed(lambda: model.matrix(handful))
    print(f"  {len(handful):,} more probes on https/TCP, 53/UDP, 8080/TCP (warm index): {handful_time:.2f} s")

    view, view_time = timed(lambda: model.watch(probes))
    changed_policy = dict(policies[3], spec={**policies[3]["spec"], "ingress": [{}]})
    update_times, changes = [], []
    for policy in (changed_policy, policies[3]) * 3:
        changed, seconds = timed(lambda: (model.set_policy(policy), view.refresh())[1])
        update_times.append(seconds)
        changes.append(len(changed))
    incremental = max(update_times)
    print(f"  incremental: one policy changed, live view of {len(probes):,} probes refreshed: {incremental * 1e3:.1f} ms "
          f"(worst of {len(update_times)}; {changes[0]:,} verdicts changed; view set-up {view_time:.2f} s)")
    print(f"  from scratch / incremental = {scratch / incremental:,.0f}x")

    listening(args)
    privilege(args)


def listening(args) -> None:
    """The same matrices with listening_ports=True (what the k8s app uses) beside the policy-only model."""
    namespaces, pods, policies, (services, probes) = boutique()
    print("listening ports (a pod accepts only on its declared container ports):")
    for flag in (False, True):
        cold = best_of(20, lambda: ConnectivityModel(namespaces, pods, policies, services, flag).matrix(probes))
        model = ConnectivityModel(namespaces, pods, policies, services, flag)
        model.matrix(probes)
        warm = best_of(20, lambda: model.matrix(probes))
        print(f"  online boutique, listening_ports={flag!s:5}: from scratch {cold * 1e3:.2f} ms, warm {warm * 1e3:.2f} ms")
    namespaces, pods, policies = large_cluster(args.pods, args.policies)
    keys = [pod.key for pod in pods][:300]
    probes = [Probe(s, d, port, proto) for s in keys for d in keys for port, proto in ((80, "TCP"), (8080, "TCP"))]
    for flag in (False, True):
        (_, seconds) = timed(lambda: ConnectivityModel(namespaces, pods, policies, (), flag).matrix(probes))
        print(f"  large cluster, {len(probes):,} pod probes on 80 and 8080 (8080 not declared), "
              f"listening_ports={flag!s:5}: {seconds:.2f} s")


def privilege(args) -> None:
    """wider_than(): healthy policies against the same set with one policy widened, and unchanged."""
    from pytest_netarena.netpol import compile_policy
    from pytest_netarena.netpol.privilege import wider_than

    for label, (namespaces, pods, policies) in (
            ("online boutique", boutique()[:3]), (f"large cluster ({args.pods} pods, {args.policies} policies)",
                                                  large_cluster(args.pods, args.policies))):
        spaces = {ns.name: ns for ns in namespaces}
        reference = [compile_policy(p) for p in policies]
        widened = [compile_policy(dict(policies[3], spec={**policies[3]["spec"], "ingress": [{}]}))
                   if i == 3 else p for i, p in enumerate(reference)]
        narrowed = [compile_policy(dict(policies[3], spec={**policies[3]["spec"], "ingress": []}))
                    if i == 3 else p for i, p in enumerate(reference)]
        for name, actual in (("unchanged", reference), ("one policy opened to all", widened),
                             ("one policy closed (wider nowhere)", narrowed)):
            found, seconds = timed(lambda: wider_than(pods, spaces, reference, actual))
            print(f"  least privilege, {label}, {name}: {seconds * 1e3:.1f} ms, wider: {bool(found)}")


if __name__ == "__main__":
    main()
