"""`netarena netpol reach`: evaluate probes against manifests or a live API server, one JSON line per probe."""

from __future__ import annotations

import argparse
import json
import sys

from .errors import NetpolError


def register(subparsers) -> None:
    netpol = subparsers.add_parser("netpol", help="NetworkPolicy engine: evaluate reachability")
    commands = netpol.add_subparsers(dest="netpol_command", required=True)
    reach = commands.add_parser(
        "reach", help="decide probes from manifests (-f) or a live cluster (--kubeconfig)",
        description="Print one JSON object per probe, in input order: "
                    '{"from", "to", "port", "protocol", "allowed"}. Exit 2 on bad input, including input '
                    "over 8 MiB per file, nested over 100 levels or over a million values once YAML "
                    "aliases are expanded.")
    reach.add_argument("-f", "--filename", action="append", default=[], metavar="FILE",
                       help="manifest file (multi-document YAML or a v1 List); repeatable")
    reach.add_argument("--probes", required=True, metavar="FILE", help="YAML list of {from, to, port, protocol}")
    reach.add_argument("--kubeconfig", metavar="PATH", help="read objects from this kubeconfig's API server instead")
    reach.add_argument("--context", help="kubeconfig context (default: current-context)")
    reach.add_argument("--explain", action="store_true", help="add an 'explanation' text to every line")
    reach.add_argument("--listening-ports", action="store_true",
                       help="a pod accepts only on its declared container ports (as agnhost stand-ins do); "
                            "by default only the policies decide")
    reach.set_defaults(handler=run_reach)


def run_reach(args: argparse.Namespace) -> int:
    from .live import fetch_cluster
    from .manifests import load_cluster, load_yaml_documents, parse_probes

    try:
        if args.kubeconfig and args.filename:
            raise NetpolError("use either -f manifests or --kubeconfig, not both")
        if not args.kubeconfig and not args.filename:
            raise NetpolError("no cluster given: pass -f FILE (repeatable) or --kubeconfig PATH")
        documents = load_yaml_documents(args.probes)
        if len(documents) != 1:
            raise NetpolError(f"{args.probes}: expected one YAML document holding a list of probes")
        probes = parse_probes(documents[0], args.probes)
        cluster = fetch_cluster(args.kubeconfig, args.context) if args.kubeconfig else load_cluster(args.filename)
        model = cluster.model(listening_ports=args.listening_ports)
        lines = []
        for probe in probes:
            record = {"from": probe.source, "to": probe.destination, "port": probe.port,
                      "protocol": probe.protocol, "allowed": model.allowed(probe)}
            if args.explain:
                record["explanation"] = str(model.explain(probe))
            lines.append(json.dumps(record))
    except NetpolError as error:
        print(f"netarena netpol reach: error: {error}", file=sys.stderr)
        return 2
    except RecursionError:  # a last line: the input checks refuse deep input before this can happen
        print("netarena netpol reach: error: input nested too deeply", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0
