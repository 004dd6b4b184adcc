"""One episode's Mininet network: building it, its netlink view, the agent's kernel objects, leases and the pingmesh."""
