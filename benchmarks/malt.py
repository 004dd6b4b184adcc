"""MALT speed figures beside NetArena's: topology load, graph comparison, sandbox overhead, oracle throughput.

    python benchmarks/malt.py [--topology PATH] [--iso-nodes N] [--repeat N]

Uses the real topology at /work/shared/data/malt/malt-graph.textproto.txt when present, otherwise
the synthetic one of the same size (and says so).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REAL = Path("/work/shared/data/malt/malt-graph.textproto.txt")


def timed(function, repeat: int) -> tuple[float, object]:
    """Median wall time of `repeat` calls, and the last result."""
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def row(metric: str, netarena: str, ours: str, target: str) -> None:
    print(f"{metric:<44} {netarena:>16} {ours:>18} {target:>12}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topology", default=str(REAL) if REAL.exists() else "synthetic")
    parser.add_argument("--iso-nodes", type=int, default=600, help="graph size for the nx.is_isomorphic timing")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    started = time.perf_counter()
    import networkx as nx

    import_s = time.perf_counter() - started
    from pytest_netarena.agents.prompting import build_system_prompt
    from pytest_netarena.apps.malt import APP, canon, safety
    from pytest_netarena.apps.malt import topology as topo
    from pytest_netarena.apps.malt.answers import parse_answer
    from pytest_netarena.core.app import RunOptions
    from pytest_netarena.core.episode import EpisodeConfig, run_episode
    from pytest_netarena.core.types import Outcome, Task

    real = args.topology != "synthetic" and not args.topology.startswith("synthetic:")
    print(f"topology: {args.topology}" + ("" if real else "  (the real file is absent: synthetic, same size)"))
    print(f"python {sys.version.split()[0]}, networkx {nx.__version__}; `import networkx` took {import_s:.2f} s")
    print()
    row("metric", "NetArena", "pytest-netarena", "target")
    row("-" * 44, "-" * 16, "-" * 18, "-" * 12)

    if real:
        load_s, graph = timed(lambda: topo.load_textproto(args.topology), args.repeat)
        row("load real topology (parse + DiGraph)", "7.6 s", f"{load_s * 1000:.0f} ms", "< 500 ms")
    else:
        load_s, graph = timed(lambda: topo.synthetic_topology(), args.repeat)
        row("generate synthetic topology", "n/a", f"{load_s * 1000:.0f} ms", "< 500 ms")
    print(f"{'':<44} nodes {graph.number_of_nodes()}, edges {graph.number_of_edges()} (NetArena: 5493 / 6424)")

    # one graph answer as the grader meets it: node-link JSON text from the sandbox
    changed = graph.copy()
    port = next(n for n, kinds in changed.nodes(data="type") if "EK_PORT" in kinds)
    changed.nodes[port]["physical_capacity_bps"] = 7
    answer_json = json.dumps({"type": "graph", "updated_graph": nx.node_link_data(changed, edges="edges")})
    expected = canon.from_networkx(graph)

    def compare() -> list[str]:
        answer = parse_answer(json.loads(answer_json))
        return canon.diff(expected, answer.graph)

    compare_s, problems = timed(compare, args.repeat)
    assert len(problems) == 1, problems
    row("graph answer comparison (decode+compare)", "53-64 s", f"{compare_s * 1000:.1f} ms", "< 50 ms")
    parsed = parse_answer(json.loads(answer_json)).graph
    safety_s, _ = timed(lambda: safety.check(parsed), args.repeat)
    row("safety check of a returned graph", "~80 ms", f"{safety_s * 1000:.1f} ms", "")

    small = topo.load_topology(f"synthetic:{args.iso_nodes}")
    small_changed = small.copy()
    iso_s, _ = timed(
        lambda: nx.is_isomorphic(nx.Graph(small), nx.Graph(small_changed), node_match=lambda a, b: a == b), 1
    )
    ours_small_s, _ = timed(lambda: canon.diff(canon.from_networkx(small), canon.from_networkx(small_changed)), args.repeat)
    row(f"  nx.is_isomorphic, {small.number_of_nodes()} nodes (NetArena's way)",
        f"{iso_s * 1000:.0f} ms", f"{ours_small_s * 1000:.2f} ms", "")
    print(f"{'':<44} ratio on that graph: {iso_s / max(ours_small_s, 1e-9):,.0f}x")

    options = RunOptions(seed=1, queries=3, extra={"malt_topology": args.topology})
    env = APP.make_environment(options)
    try:
        env.sandbox.run("def process_graph(g):\n    return None")  # start the zygote once
        small_code = "def process_graph(graph_data):\n    return {'type': 'text', 'data': 1}"
        read_s, _ = timed(lambda: env.sandbox.run(small_code, readonly=False), args.repeat * 4)
        check_s, _ = timed(lambda: env.sandbox.run(small_code, readonly=True), args.repeat * 4)
        graph_code = "def process_graph(graph_data):\n    return {'type': 'graph', 'updated_graph': graph_data}"
        whole_s, _ = timed(lambda: env.sandbox.run(graph_code), args.repeat * 2)
        row("sandbox overhead, small answer", "0 (in-process)", f"{read_s * 1000:.0f} ms", "< 300 ms")
        row("  + read-only mutation check", "none", f"{check_s * 1000:.0f} ms", "< 300 ms")
        row("sandbox overhead, whole graph returned", "0 (in-process)", f"{whole_s * 1000:.0f} ms", "< 300 ms")

        queries = APP.generate(options)
        system = build_system_prompt(APP.prompt(), "zero-shot")
        started = time.perf_counter()
        outcomes = []
        for query in queries:
            agent = APP.builtin_agent("oracle", query, env)
            task = Task("malt", query.id, query.level, query.category, system, "zero-shot", 1)
            outcomes.append(run_episode(env, agent, query, task, EpisodeConfig(max_steps=1), "builtin:oracle").outcome)
        suite_s = time.perf_counter() - started
    finally:
        env.close()
    resolved = sum(outcome is Outcome.RESOLVED for outcome in outcomes)
    row(f"oracle, full default suite ({len(queries)} queries)", "n/a",
        f"{len(queries) / suite_s:.1f} queries/s", "")
    print(f"{'':<44} {resolved}/{len(queries)} resolved, {suite_s:.1f} s in all "
          f"({suite_s / len(queries) * 1000:.0f} ms per query, sandbox and checks included)")
    return 0 if resolved == len(queries) else 1


if __name__ == "__main__":
    sys.exit(main())
