"""Speed of NetArena's MALT verdict under --compat netarena: our isomorphism verdict beside networkx's search.

    python benchmarks/malt_compat.py [--topology SPEC] [--iso-nodes N] [--repeat N]

NetArena compares graph answers with nx.is_isomorphic on undirected copies (about a minute per
answer on the real topology); apps/malt/netarena/grade.same_graph gives the same verdict without the search
when node attributes identify nodes. Prints both on a graph small enough for networkx, and ours on
the full-size topology (--topology: a textproto path or synthetic[:NODES], default synthetic).
"""

from __future__ import annotations

import argparse

from malt import timed  # benchmarks/malt.py, beside this script


def changed_copy(graph):
    """The graph with one port's capacity off: the verdict must be False."""
    from pytest_netarena.apps.malt import schema as s

    other = graph.copy()
    port = next(n for n, kinds in other.nodes(data="type") if s.PORT in kinds)
    other.nodes[port][s.CAPACITY] = 7  # copy() gave the copy its own attribute dicts
    return other


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topology", default="synthetic")
    parser.add_argument("--iso-nodes", type=int, default=600)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    import networkx as nx

    from pytest_netarena.apps.malt.netarena.grade import same_graph
    from pytest_netarena.apps.malt.netarena.data import in_netarena_conventions
    from pytest_netarena.apps.malt.topology import load_topology

    def networkx_verdict(a, b):
        return nx.is_isomorphic(nx.Graph(a), nx.Graph(b), node_match=lambda x, y: x == y)

    small = in_netarena_conventions(load_topology(f"synthetic:{args.iso_nodes}"))
    print(f"graph of {small.number_of_nodes()} nodes, {small.number_of_edges()} edges")
    for label, other in (("equal", small.copy()), ("one attribute off", changed_copy(small))):
        theirs_s, theirs = timed(lambda: networkx_verdict(small, other), 1)
        ours_s, ours = timed(lambda: same_graph(small, other), args.repeat)
        print(f"  {label:<18} nx.is_isomorphic {theirs_s * 1000:9.1f} ms  same_graph {ours_s * 1000:7.2f} ms  "
              f"ratio {theirs_s / max(ours_s, 1e-9):8.0f}x  same verdict: {theirs == ours}")
    big = in_netarena_conventions(load_topology(args.topology))
    print(f"{args.topology}: {big.number_of_nodes()} nodes, {big.number_of_edges()} edges "
          "(NetArena measured 53-64 s per comparison on the real one)")
    for label, other in (("equal", big.copy()), ("one attribute off", changed_copy(big))):
        ours_s, verdict = timed(lambda: same_graph(big, other), args.repeat)
        print(f"  {label:<18} same_graph {ours_s * 1000:7.1f} ms  verdict {verdict}")


if __name__ == "__main__":
    main()
