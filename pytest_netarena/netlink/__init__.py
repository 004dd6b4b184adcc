"""The one rtnetlink client of the harness: links, addresses, routes, qdiscs and filters of one network namespace.

`messages.py` is the wire format (headers, attributes, the kernel's numbers); `client.py` the client, one socket made
inside a namespace, so no `ip` process runs per step. The cluster's pod network and the routing app's networks both
configure and read their namespaces through it.
"""

from .client import Filter, Link, Netlink, Qdisc, open_socket

__all__ = ["Filter", "Link", "Netlink", "Qdisc", "open_socket"]
