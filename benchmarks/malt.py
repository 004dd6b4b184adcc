"""MALT speed figures beside NetArena's: topology load, graph comparison, the box's cost per answer, oracle throughput.

    python benchmarks/malt.py [--topology PATH|synthetic[:NODES]] [--iso-nodes N] [--repeat N] [--queries N]

Uses the real topology (../shared/data/malt/malt-graph.textproto.txt beside the checkout, or
$NETARENA_MALT_TOPOLOGY) when present, otherwise
the synthetic one of the same size (and says so).
"""

from __future__ import annotations

import argparse
import json
import statistics
import os
import sys
import time
from pathlib import Path

REAL = Path(
    os.environ.get("NETARENA_MALT_TOPOLOGY")
    or Path(__file__).resolve().parents[2] / "shared" / "data" / "malt" / "malt-graph.textproto.txt"
)


BEST: dict[str, float] = {}


def timed(function, repeat: int, name: str = "") -> tuple[float, object]:
    """Median wall time of `repeat` calls (the best one goes to BEST[name]), and the last result."""
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - started)
    BEST[name] = min(times)
    return statistics.median(times), result


def ms(seconds: float, name: str, digits: int = 0) -> str:
    """Median and best of a timing, in milliseconds (other processes on the machine add noise)."""
    return f"{seconds * 1000:.{digits}f} ({BEST[name] * 1000:.{digits}f}) ms"


def row(metric: str, netarena: str, ours: str, target: str) -> None:
    print(f"{metric:<44} {netarena:>16} {ours:>18} {target:>12}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topology", default=str(REAL) if REAL.exists() else "synthetic")
    parser.add_argument("--iso-nodes", type=int, default=600, help="graph size for the nx.is_isomorphic timing")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--queries", type=int, default=3, help="oracle queries per category (default 3)")
    args = parser.parse_args()

    started = time.perf_counter()
    import networkx as nx

    import_s = time.perf_counter() - started
    from pytest_netarena.agents.prompting import build_system_prompt
    from pytest_netarena.apps.malt import APP, canon, runtime, safety
    from pytest_netarena.apps.malt import topology as topo
    from pytest_netarena.apps.malt.answers import parse_answer
    from pytest_netarena.core.app import RunOptions
    from pytest_netarena.core.episode import EpisodeConfig, run_episode
    from pytest_netarena.core.types import Outcome, Task, new_episode_id

    real = args.topology != "synthetic" and not args.topology.startswith("synthetic:")
    print(f"topology: {args.topology}" + ("" if real else "  (the real file is absent: synthetic, same size)"))
    print(f"python {sys.version.split()[0]}, networkx {nx.__version__}; `import networkx` took {import_s:.2f} s")
    print()
    print("times: median (best) of several runs")
    row("metric", "NetArena", "pytest-netarena", "target")
    row("-" * 44, "-" * 16, "-" * 18, "-" * 12)

    if real:
        load_s, graph = timed(lambda: topo.load_textproto(args.topology), args.repeat, "load")
        row("load real topology (parse + DiGraph)", "7.6 s", ms(load_s, "load"), "< 500 ms")
    else:
        size = args.topology.partition(":")[2].split(":")[0]  # synthetic:NODES, a smaller graph
        load_s, graph = timed(lambda: topo.synthetic_topology(nodes=int(size) if size else None), args.repeat, "load")
        row("generate synthetic topology", "n/a", ms(load_s, "load"), "< 500 ms")
    print(f"{'':<44} nodes {graph.number_of_nodes()}, edges {graph.number_of_edges()} (NetArena: 5493 / 6424)")

    # one graph answer as the grader meets it: node-link JSON text from the sandbox
    changed = graph.copy()
    port = next(n for n, kinds in changed.nodes(data="type") if "EK_PORT" in kinds)
    changed.nodes[port]["physical_capacity_bps"] = 7
    answer_json = json.dumps({"type": "graph", "updated_graph": nx.node_link_data(changed, edges="edges")})
    expected = canon.from_networkx(graph)

    decode_s, _ = timed(lambda: parse_answer(json.loads(answer_json)), args.repeat, "decode")
    parsed = parse_answer(json.loads(answer_json)).graph
    compare_s, problems = timed(lambda: canon.diff(expected, parsed), args.repeat * 2, "compare")
    assert len(problems) == 1, problems
    row("graph answer comparison (one attribute off)", "53-64 s", ms(compare_s, "compare", 1), "< 50 ms")
    row("  + decoding the answer's node-link JSON", "~160 ms", ms(decode_s, "decode", 1), "")
    from pytest_netarena.sandbox import zygote

    answer = json.loads(answer_json)
    dumps_s, _ = timed(lambda: json.dumps(answer, allow_nan=False), args.repeat, "dumps")
    payload_s, _ = timed(lambda: zygote.result_payload(answer), args.repeat, "payload")
    row("in the box: the answer's JSON (json.dumps)", "n/a", ms(dumps_s, "dumps", 1), "")
    row("  with notes on tuples, sets, numpy (scan)", "n/a", ms(payload_s, "payload", 1), "")
    # the default: the graph goes as its changes to the box's copy, rebuilt on the grader's own copy
    from pytest_netarena.sandbox import graph_diff
    from pytest_netarena.sandbox.forkserver import node_link_json

    graph_json = node_link_json(graph)
    box_graph = nx.node_link_graph(json.loads(graph_json), directed=True, multigraph=False, edges="edges")
    inner, base = zygote.Base(box_graph, graph_json), graph_diff.GraphBase(graph_json)
    box_graph.nodes[port]["physical_capacity_bps"] = 7
    roomy = {"output_bytes": 1 << 30, "output_items": 1 << 30}
    diff_answer = {"type": "graph", "updated_graph": box_graph}
    diff_s, sent = timed(lambda: zygote.result_payload(diff_answer, inner, roomy), args.repeat, "diff")
    marker = json.loads(sent[1:].partition(b"\n")[0])["updated_graph"]
    rebuild_s, _ = timed(lambda: canon.from_diff(graph_diff.read(json.loads(json.dumps(marker)), base)),
                         args.repeat, "rebuild")
    row("  sent as its changes instead (diff + JSON)", "n/a", ms(diff_s, "diff", 1), "")
    row("  grader: changes read and graph rebuilt", "n/a", ms(rebuild_s, "rebuild", 1), "")
    safety_s, _ = timed(lambda: safety.check(parsed), args.repeat, "safety")
    row("safety check of a returned graph", "~80 ms", ms(safety_s, "safety", 1), "")

    small = topo.load_topology(f"synthetic:{args.iso_nodes}")
    small_changed = small.copy()
    iso_s, _ = timed(
        lambda: nx.is_isomorphic(nx.Graph(small), nx.Graph(small_changed), node_match=lambda a, b: a == b), 1
    )
    ours_small_s, _ = timed(lambda: canon.diff(canon.from_networkx(small), canon.from_networkx(small_changed)), args.repeat)
    row(f"  nx.is_isomorphic, {small.number_of_nodes()} nodes (NetArena's way)",
        f"{iso_s * 1000:.0f} ms", f"{ours_small_s * 1000:.2f} ms", "")
    print(f"{'':<44} ratio on that graph: {iso_s / max(ours_small_s, 1e-9):,.0f}x")

    options = RunOptions(seed=1, queries=args.queries, extra={"malt_topology": args.topology})
    small_code = "def process_graph(graph_data):\n    return {'type': 'text', 'data': 1}"
    graph_code = "def process_graph(graph_data):\n    return {'type': 'graph', 'updated_graph': graph_data}"
    oracle_code = APP.builtin_agent("oracle", APP.generate(options)[0], None).code  # type: ignore[union-attr]
    per_answer = {}
    for boxed in (False, True):
        label = "boxed" if boxed else "unboxed"
        sandbox = runtime.box(graph, boxed=boxed, diff=True)  # as the environment makes it
        try:
            start_s, _ = timed(lambda: sandbox.run(small_code), 1, f"start-{label}")  # starts the zygote
            for name, code, repeat in (("small", small_code, 4), ("whole", graph_code, 2), ("oracle", oracle_code, 2)):
                per_answer[name, boxed] = timed(lambda: sandbox.run(code), args.repeat * repeat, f"{name}-{label}")[0]
        finally:
            sandbox.close()
        row(f"zygote start ({label}, first answer included)", "", ms(start_s, f"start-{label}"), "")
    for name, what in (("small", "small answer"), ("whole", "whole graph returned"), ("oracle", "oracle's answer")):
        unboxed_s, boxed_s = per_answer[name, False], per_answer[name, True]
        row(f"per answer, {what}: unboxed", "0 (in-process)", ms(unboxed_s, f"{name}-unboxed"), "")
        row(f"  boxed (added: {(boxed_s - unboxed_s) * 1000:+.1f} ms, x{boxed_s / unboxed_s:.2f})", "",
            ms(boxed_s, f"{name}-boxed"), "< 50 ms added")

    queries = APP.generate(options)
    step_times(queries, args.topology, args.repeat)
    system = build_system_prompt(APP.prompt(), "zero-shot")
    all_resolved = True
    for sandboxed in (False, True):
        env = APP.make_environment(RunOptions(seed=1, queries=args.queries, extra=options.extra, sandboxed=sandboxed))
        try:
            started = time.perf_counter()
            outcomes = []
            for query in queries:
                agent = APP.builtin_agent("oracle", query, env)
                task = Task("malt", new_episode_id(), system, "zero-shot", 1)
                outcomes.append(run_episode(env, agent, query, task, EpisodeConfig(max_steps=1), "builtin:oracle").outcome)
            suite_s = time.perf_counter() - started
        finally:
            env.close()
        resolved = sum(outcome is Outcome.RESOLVED for outcome in outcomes)
        all_resolved &= resolved == len(queries)
        label = "boxed" if sandboxed else "unboxed"
        row(f"oracle, default suite ({len(queries)} queries, {label})", "n/a", f"{len(queries) / suite_s:.1f} queries/s", "")
        print(f"{'':<44} {resolved}/{len(queries)} resolved, {suite_s:.1f} s in all "
              f"({suite_s / len(queries) * 1000:.0f} ms per query, zygote start, box and checks included)")
    return 0 if all_resolved else 1


def step_times(queries, topology: str, repeat: int) -> None:
    """Per category, the oracle's step in the box (the answer's run: code in, value out, decoded within
    the bounds) and its checks (parsing, comparison, safety): median wall and the grader's CPU time."""
    from collections import defaultdict

    from pytest_netarena.apps.malt import APP
    from pytest_netarena.core.app import RunOptions
    from pytest_netarena.sandbox import forkserver

    env = APP.make_environment(RunOptions(seed=1, queries=3, extra={"malt_topology": topology}))
    boxed: dict[str, list[float]] = defaultdict(list)
    cpu: dict[str, list[float]] = defaultdict(list)
    child_cpu: dict[str, list[float]] = defaultdict(list)
    checks: dict[str, list[float]] = defaultdict(list)
    env.sandbox.run("def process_graph(graph_data):\n    return 1")  # the zygote's start is not a step's
    run = forkserver.ForkServer.run

    def timed_run(self, code):
        started, cpu_started = time.perf_counter(), time.process_time()
        result = run(self, code)
        boxed[category].append(time.perf_counter() - started)
        cpu[category].append(time.process_time() - cpu_started)
        child_cpu[category].append(result.cpu_s)
        return result

    forkserver.ForkServer.run = timed_run
    try:
        for _ in range(max(1, repeat // 2)):
            for query in queries:
                category = query.category
                env.reset(query)
                code = APP.builtin_agent("oracle", query, env).code
                outcome = env.step(f"```python\n{code}\n```")
                checks[category].append(outcome.check_s)
    finally:
        forkserver.ForkServer.run = run
        env.close()
    print()
    print("oracle step per category, boxed: median ms (wall in the box, the grader's CPU in it, the answer's CPU, the checks)")
    for category in sorted(boxed):
        print(f"  {category:<28} box {statistics.median(boxed[category]) * 1000:6.1f}  "
              f"grader CPU {statistics.median(cpu[category]) * 1000:6.1f}  "
              f"answer CPU {statistics.median(child_cpu[category]) * 1000:6.1f}  checks {statistics.median(checks[category]) * 1000:6.1f}")
    print()


if __name__ == "__main__":
    sys.exit(main())
