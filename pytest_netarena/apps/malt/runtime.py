"""What the MALT box holds: networkx and numpy beside Python's standard library, single-threaded BLAS, the topology."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...sandbox.forkserver import BoxHolds, ChildLimits, ForkServer, node_link_json

if TYPE_CHECKING:
    import networkx as nx

#: numpy's BLAS starts no threads: the zygote imports numpy before it forks, and an answer may not start threads
THREADS_ENV = (("OPENBLAS_NUM_THREADS", "1"), ("OMP_NUM_THREADS", "1"), ("MKL_NUM_THREADS", "1"))
#: networkx is what answers work on (the zygote needs it); numpy is there when installed
HOLDS = BoxHolds(packages=("networkx", "numpy"), env=THREADS_ENV, hostname="malt", label="MALT")


def box(graph: nx.DiGraph, limits: ChildLimits = ChildLimits(), boxed: bool = True, diff: bool = False) -> ForkServer:
    """The fork server that runs this topology's answers (started on its first answer); with diff, a returned
    DiGraph comes back as its changes to the topology (sandbox/graph_diff.py)."""
    return ForkServer(HOLDS, node_link_json(graph), limits, boxed=boxed, diff=diff)
