"""The data plane with real packets: cluster DNS, Services (ClusterIP DNAT), NetworkPolicies enforced by the kernel."""

from __future__ import annotations

from .conftest import busybox_pod, needs_live, service, web_command

pytestmark = needs_live


def wget(live, ns: str, pod: str, url: str, timeout: int = 1):
    return live.kubectl("-n", ns, "exec", pod, "--", "wget", "-qO-", "-T", str(timeout), url, check=False)


def two_webs(live, ns: str) -> None:
    """A web pod serving two ports (8080 named http, 9090 unnamed), a Service mapping 80 and 81 to them, a client."""
    web = busybox_pod("web", f"{web_command(8080, 'eighty')} & mkdir -p /w2 && echo ninety > /w2/index.html && "
                             "httpd -f -p 9090 -h /w2",
                      ports=[{"containerPort": 8080, "name": "http"}, {"containerPort": 9090}])
    live.apply(ns, web, busybox_pod("client", "sleep 3600"),
               service("web", {"app": "web"}, [{"name": "a", "port": 80, "targetPort": "http"},
                                               {"name": "b", "port": 81, "targetPort": 9090}]))
    live.ready(ns)


def test_dns_names_services_with_search_domains(live):
    ns = live.namespace()
    two_webs(live, ns)
    address = live.server.get_object("Service", ns, "web")["spec"]["clusterIP"]
    fqdn = live.kubectl("-n", ns, "exec", "client", "--", "nslookup", f"web.{ns}.svc.cluster.local").stdout
    assert f"Name:\tweb.{ns}.svc.cluster.local\nAddress: {address}" in fqdn
    # busybox (1.28 and later) asks every search domain and fails when one has no answer, as on any cluster
    short = live.kubectl("-n", ns, "exec", "client", "--", "nslookup", "web", check=False)
    assert f"Name:\tweb.{ns}.svc.cluster.local\nAddress: {address}" in short.stdout
    assert "** server can't find web.svc.cluster.local: NXDOMAIN" in short.stdout
    # the C library's resolver takes the first answer of the search list
    assert wget(live, ns, "client", "http://web").stdout == "eighty\n"
    assert "Address: 10.96.0.10" in live.kubectl("-n", ns, "exec", "client", "--", "nslookup",
                                                 "kube-dns.kube-system.svc.cluster.local").stdout
    missing = live.kubectl("-n", ns, "exec", "client", "--", "nslookup", "nothing-here", check=False)
    assert missing.returncode != 0 and "NXDOMAIN" in missing.stdout + missing.stderr
    dns = live.server.get_object("Service", "kube-system", "kube-dns")
    assert dns["spec"]["clusterIP"] == "10.96.0.10"


def test_services_map_named_and_numeric_target_ports(live):
    ns = live.namespace()
    two_webs(live, ns)
    assert wget(live, ns, "client", "http://web").stdout == "eighty\n"
    assert wget(live, ns, "client", "http://web:81").stdout == "ninety\n"
    pod_ip = live.pod(ns, "web")["status"]["podIP"]
    assert wget(live, ns, "client", f"http://{pod_ip}:9090").stdout == "ninety\n"
    environment = live.kubectl("-n", ns, "exec", "client", "--", "env").stdout
    assert "WEB_SERVICE_PORT=80" in environment


def test_a_service_without_ready_endpoints_refuses(live):
    ns = live.namespace()
    live.apply(ns, busybox_pod("client", "sleep 3600"), service("nobody", {"app": "nobody"}, [{"port": 80}]))
    live.ready(ns)
    refused = wget(live, ns, "client", "http://nobody", timeout=5)
    assert refused.returncode == 1 and "Connection refused" in refused.stderr


def deny_ingress(name: str, selector: dict, allow_from: list | None = None, ports: list | None = None) -> dict:
    rule = {}
    if allow_from is not None:
        rule["from"] = allow_from
    if ports is not None:
        rule["ports"] = ports
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": name},
            "spec": {"podSelector": {"matchLabels": selector}, "policyTypes": ["Ingress"],
                     "ingress": [rule] if rule else []}}


def test_network_policies_drop_real_packets_and_follow_every_write(live):
    ns = live.namespace()
    two_webs(live, ns)
    live.apply(ns, busybox_pod("other", "sleep 3600", labels={"app": "other"}))
    live.ready(ns)
    assert wget(live, ns, "other", "http://web").returncode == 0
    live.apply(ns, deny_ingress("web", {"app": "web"}))
    blocked = wget(live, ns, "client", "http://web")
    assert blocked.returncode == 1 and "download timed out" in blocked.stderr
    # a policy written just before the probe is in force for it (exec waits for the rules to follow the store)
    live.apply(ns, deny_ingress("web", {"app": "web"}, [{"podSelector": {"matchLabels": {"app": "client"}}}],
                                [{"port": "http"}]))
    assert wget(live, ns, "client", "http://web").stdout == "eighty\n"
    assert wget(live, ns, "client", "http://web:81").returncode == 1  # only the named port is admitted
    assert wget(live, ns, "other", "http://web").returncode == 1
    live.server.delete_object("NetworkPolicy", ns, "web")
    assert wget(live, ns, "other", "http://web:81").stdout == "ninety\n"


def test_egress_policies_need_dns_admitted(live):
    ns = live.namespace()
    two_webs(live, ns)
    web_ip = live.pod(ns, "web")["status"]["podIP"]
    egress_only_web = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "client"},
                       "spec": {"podSelector": {"matchLabels": {"app": "client"}}, "policyTypes": ["Egress"],
                                "egress": [{"to": [{"ipBlock": {"cidr": f"{web_ip}/32"}}]}]}}
    live.apply(ns, egress_only_web)
    assert wget(live, ns, "client", f"http://{web_ip}:8080").stdout == "eighty\n"
    by_name = wget(live, ns, "client", "http://web", timeout=3)  # DNS to kube-dns is not admitted
    assert by_name.returncode == 1
    dns_rule = {"to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
                        "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}],
                "ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}]}
    service_rule = {"to": [{"podSelector": {"matchLabels": {"app": "web"}}}]}
    egress_only_web["spec"]["egress"] += [dns_rule, service_rule]
    live.apply(ns, egress_only_web)
    assert wget(live, ns, "client", "http://web").stdout == "eighty\n"


def test_ip_block_except_decides_on_pod_addresses(live):
    ns = live.namespace()
    two_webs(live, ns)
    client_ip = live.pod(ns, "client")["status"]["podIP"]
    block = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "web"},
             "spec": {"podSelector": {"matchLabels": {"app": "web"}}, "policyTypes": ["Ingress"],
                      "ingress": [{"from": [{"ipBlock": {"cidr": "10.244.0.0/16", "except": [f"{client_ip}/32"]}}]}]}}
    live.apply(ns, block, busybox_pod("third", "sleep 3600", labels={"app": "third"}))
    live.ready(ns)
    assert wget(live, ns, "client", "http://web").returncode == 1
    assert wget(live, ns, "third", "http://web").stdout == "eighty\n"


def test_wget_timeout_holds_when_the_harness_ignores_sigint(live):
    """A harness started as a background job (`pytest ... &` in a script, some CI runners) ignores SIGINT, and
    every pod process inherits that: `wget -T 1` to a dropped destination must still end after about a second."""
    import signal
    import time

    ns = live.namespace()
    two_webs(live, ns)
    live.apply(ns, deny_ingress("web", {"app": "web"}))
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        started = time.monotonic()
        blocked = wget(live, ns, "client", "http://web")
        took = time.monotonic() - started
    finally:
        signal.signal(signal.SIGINT, previous)
    assert blocked.returncode == 1 and "download timed out" in blocked.stderr
    assert took < 15, took  # TCP alone gives up after minutes; the exec limit is longer than this too
