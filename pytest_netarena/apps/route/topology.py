"""Names and addresses of one route network (pure values: no Mininet, no system calls)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

#: Linux's limit on interface (and bridge) names
IFNAMSIZ_MAX = 15
MAX_SUBNETS = 64
MAX_HOSTS = 16


def subnet_octet(index: int) -> int:
    """Third octet of subnet index (1-based): 192.168.<index>.0/24."""
    return index


@dataclass(frozen=True)
class Topology:
    """One router r0, `subnets` subnets of `hosts` hosts, every name carrying `prefix`.

    Subnet k (1-based) is 192.168.k.0/24 on switch s<k> and router interface r0-eth<k> with
    address 192.168.k.1; its hosts h<(k-1)*H+j> have 192.168.k.<100+j-1> and a default route via
    192.168.k.1 (NetArena's plan).
    """

    prefix: str
    subnets: int
    hosts: int

    def __post_init__(self) -> None:
        if not 1 <= self.subnets <= MAX_SUBNETS or not 1 <= self.hosts <= MAX_HOSTS:
            raise ValueError(f"unsupported size {self.subnets}x{self.hosts}")
        longest = max(len(self.intf(self.host(self.subnets, self.hosts))), len(self.router_intf(self.subnets)))
        longest = max(longest, len(self.switch(self.subnets)) + len("-eth") + len(str(self.hosts + 1)))
        if longest > IFNAMSIZ_MAX:
            raise ValueError(f"prefix {self.prefix!r} too long for {self.subnets}x{self.hosts}")

    @property
    def router(self) -> str:
        return f"{self.prefix}r0"

    def router_intf(self, subnet: int) -> str:
        return f"{self.router}-eth{subnet}"

    @property
    def fabric(self) -> str:
        """The node whose network namespace holds the switches (never shown to agents)."""
        return f"{self.prefix}f0"

    def switch(self, subnet: int) -> str:
        return f"{self.prefix}s{subnet}"

    def host(self, subnet: int, j: int) -> str:
        """Host j (1-based) of subnet (1-based)."""
        return f"{self.prefix}h{(subnet - 1) * self.hosts + j}"

    @staticmethod
    def intf(host: str) -> str:
        return f"{host}-eth0"

    @staticmethod
    def network(subnet: int) -> str:
        return f"192.168.{subnet_octet(subnet)}.0/24"

    @staticmethod
    def gateway(subnet: int) -> str:
        return f"192.168.{subnet_octet(subnet)}.1"

    @staticmethod
    def host_ip(subnet: int, j: int) -> str:
        return f"192.168.{subnet_octet(subnet)}.{99 + j}"

    @cached_property
    def host_names(self) -> tuple[str, ...]:
        return tuple(self.host(k, j) for k in range(1, self.subnets + 1) for j in range(1, self.hosts + 1))

    @cached_property
    def nodes(self) -> tuple[str, ...]:
        """Every node probed by the pingmesh: hosts in order, then the router (as NetArena)."""
        return (*self.host_names, self.router)

    @cached_property
    def address(self) -> dict[str, str]:
        """The address each node is probed at (the router: its first interface's, as NetArena)."""
        table = {
            self.host(k, j): self.host_ip(k, j)
            for k in range(1, self.subnets + 1)
            for j in range(1, self.hosts + 1)
        }
        table[self.router] = self.gateway(1)
        return table

    @cached_property
    def owners(self) -> dict[str, str]:
        """Interface names and addresses that exist on exactly one node: name or address -> node."""
        table = {}
        for k in range(1, self.subnets + 1):
            table[self.router_intf(k)] = table[self.gateway(k)] = self.router
            for j in range(1, self.hosts + 1):
                host = self.host(k, j)
                table[self.intf(host)] = table[self.host_ip(k, j)] = host
        return table

    def subnet_of(self, node: str) -> int | None:
        """The subnet index of a host, None for the router."""
        if node == self.router:
            return None
        return (self.host_names.index(node)) // self.hosts + 1

    def strip(self, name: str) -> str:
        """A name without the episode prefix (for stable transcripts and tests)."""
        return name.removeprefix(self.prefix)

    def describe(self, addresses: dict[str, str] | None = None) -> str:
        """The topology facts an agent needs, shown in the first observation (`addresses`: where each node is
        probed, when an episode moved one; else `address`)."""
        table = addresses or self.address
        lines = [
            f"Router {self.router} (IP forwarding router between all subnets); hosts use it as their default gateway.",
        ]
        for k in range(1, self.subnets + 1):
            members = ", ".join(f"{self.host(k, j)} ({table[self.host(k, j)]})" for j in range(1, self.hosts + 1))
            lines.append(
                f"Subnet {self.network(k)}: switch {self.switch(k)}, router interface "
                f"{self.router_intf(k)} (gateway {self.gateway(k)}), hosts {members}"
            )
        lines.append(
            f"The pingmesh probes every node from every other node; {self.router} is probed at "
            f"{table[self.router]}."
        )
        return "\n".join(lines)
