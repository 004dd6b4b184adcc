"""The cluster's network: a node namespace that routes between pods, and one namespace per pod joined to it by a veth.

Routed like Calico, not bridged: each pod holds its address as a /32 on `eth0` and reaches everything
through 169.254.1.1, an address of the node namespace; the node holds a /32 route to each pod over the
pod's veth. So every packet between pods crosses the node namespace's IP layer, where the Services'
DNAT and the NetworkPolicies' filter rules see it (iptables, `firewall.py`), and a pod can only ever send
from the veth that is its own. Nothing is made in the host's namespace: closing the namespaces (and
ending the processes in them) takes every interface with them.
"""

from __future__ import annotations

import hashlib
import ipaddress
import queue
import socket
import threading
from dataclasses import dataclass

from ..kube.addresses import parse_ip
from ..netlink import Netlink, open_socket
from ..sandbox import NetNamespace

#: the node's address pods are routed through (their default gateway, answered by the node's ARP)
GATEWAY = "169.254.1.1"
#: the node's own address in the pod network: kubelet probes come from here
NODE_ADDRESS = "10.244.0.1"
#: pod namespaces kept made ahead
SPARES = 16
#: the Service ClusterIP range; delivered to the node itself, where an address no DNAT rule took is refused
SERVICE_RANGE = ("10.96.0.0", 12)
#: the pods' addresses (the scheduler's range, kube/node.py POD_CIDR)
POD_RANGE = ipaddress.IPv4Network("10.244.0.0/16")


def _write_sysctl(values: dict[str, str]) -> None:
    """Write /proc/sys/net keys as the calling thread sees them (its namespace's, not the host's)."""
    for key, value in values.items():
        with open(f"/proc/sys/{key.replace('.', '/')}", "w") as handle:
            handle.write(value)


def _node_inside():
    _write_sysctl(NODE_SYSCTL)
    return open_socket()


def _pod_inside():
    _write_sysctl(POD_SYSCTL)
    return open_socket()


NODE_SYSCTL = {"net.ipv4.ip_forward": "1",
               # every packet from a pod must come from its own address on its own veth
               "net.ipv4.conf.all.rp_filter": "1", "net.ipv4.conf.default.rp_filter": "1",
               "net.ipv6.conf.all.disable_ipv6": "1", "net.ipv6.conf.default.disable_ipv6": "1"}
#: a container's user is not root: let it bind :80 and ping, as a container's root could
POD_SYSCTL = {"net.ipv4.ip_unprivileged_port_start": "0", "net.ipv4.ping_group_range": "0 2147483647",
              "net.ipv6.conf.all.disable_ipv6": "1"}


@dataclass
class PodNetwork:
    """One pod's network namespace and the node side of its veth."""

    namespace: NetNamespace
    address: str
    veth: str  #: the interface's name in the node namespace
    uid: str = ""

    def close(self) -> None:
        self.namespace.close()


def pod_address(text: object) -> ipaddress.IPv4Address:
    """The address a pod's status names, parsed: an IPv4 address of the pod range other than the node's (ValueError)."""
    address = parse_ip(text)
    if not isinstance(address, ipaddress.IPv4Address) or address not in POD_RANGE \
            or str(address) in (NODE_ADDRESS, GATEWAY) or address in (POD_RANGE.network_address,
                                                                      POD_RANGE.broadcast_address):
        raise ValueError(f"the pod address {text!r} is not one of the pod network {POD_RANGE}")
    return address


def veth_name(uid: str) -> str:
    """A stable interface name for a pod (Calico's cali + hash pattern, 15 characters at most)."""
    return "cali" + hashlib.sha256(uid.encode()).hexdigest()[:11]


class ClusterNetwork:
    """The node namespace; pods are added and removed as they start and stop."""

    def __init__(self, spares: int = SPARES) -> None:
        self.node, sock = NetNamespace.create_with(_node_inside)
        self._link = Netlink(sock)
        self._spares: queue.Queue = queue.Queue()
        self._wanted = spares
        self._closed = False
        self._wake = threading.Event()
        self.addresses: dict[str, ipaddress.IPv4Address] = {}  #: pod uid -> the address its eth0 holds
        if spares:
            threading.Thread(target=self._fill, name="netarena-netns-spares", daemon=True).start()
        try:
            index = self._link.index("lo")  # Linux answers ARP for any local address (no dummy module needed)
            self._link.add_address(index, GATEWAY)
            self._link.add_address(index, NODE_ADDRESS)
            self._link.add_route(*SERVICE_RANGE, index, local=True, replace=True)
        except BaseException:
            self.close()
            raise

    def api_socket(self, address: str, port: int) -> socket.socket:
        """A TCP socket of the node bound to address:port (the API server's endpoint as pods reach it through the
        `kubernetes` Service); the address is the node's own, so nothing outside the cluster's namespaces sees it."""
        self._link.add_address(self._link.index("lo"), address)
        sock = self.node.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((address, port))
        except OSError:
            sock.close()
            raise
        return sock

    def add_pod(self, uid: str, address: str) -> PodNetwork:
        """A new namespace for the pod, with eth0 holding `address`, routed by the node; ValueError when the address
        is not one of the pod network, or another pod's."""
        parsed = pod_address(address)
        if parsed in self.addresses.values():
            raise ValueError(f"the pod address {address} is another running pod's")
        address = str(parsed)
        try:
            namespace, sock = self._spares.get_nowait()
        except queue.Empty:
            namespace, sock = NetNamespace.create_with(_pod_inside)
        self._wake.set()
        veth = veth_name(uid)
        try:
            with Netlink(sock) as inside:
                self._link.add_veth(veth, "eth0", namespace)
                index = self._link.index(veth)
                self._link.set_up(index)
                self._link.add_route(address, 32, index, replace=True)  # a pod gone before may have left its route
                eth0 = inside.index("eth0")
                inside.add_address(eth0, address)
                inside.set_up(eth0)
                inside.add_route(GATEWAY, 32, eth0, replace=True)
                inside.add_route("0.0.0.0", 0, eth0, gateway=GATEWAY, replace=True)
        except BaseException:
            namespace.close()
            raise
        self.addresses[uid] = parsed
        return PodNetwork(namespace, address, veth, uid)

    def remove_pod(self, pod: PodNetwork) -> None:
        """Delete the pod's veth (whatever still holds its namespace, the pod is cut off) and let the namespace go."""
        self.addresses.pop(pod.uid, None)
        try:
            self._link.delete_link(self._link.index(pod.veth))
        except OSError:
            pass  # gone already
        pod.close()

    def _fill(self) -> None:
        """Keep spare pod namespaces made ahead (making one costs the kernel milliseconds; a pod should not wait)."""
        while not self._closed:
            while self._spares.qsize() < self._wanted and not self._closed:
                self._spares.put(NetNamespace.create_with(_pod_inside))
            self._wake.wait()
            self._wake.clear()
        self._drain()

    def _drain(self) -> None:
        while True:
            try:
                namespace, sock = self._spares.get_nowait()
            except queue.Empty:
                return
            sock.close()
            namespace.close()

    def close(self) -> None:
        self._closed = True
        self._wake.set()
        self._drain()
        self._link.close()
        self.node.close()
