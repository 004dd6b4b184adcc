"""The command-line options of a listener's limits (`serve-green`, `serve-purple`, `netarena mcp --http`)."""

from __future__ import annotations

import argparse

from .guard import ConnectionLimits


def add_limit_arguments(parser: argparse.ArgumentParser) -> None:
    """--max-connections, --max-connections-per-peer and --request-deadline, defaulting to ConnectionLimits()."""
    limits = ConnectionLimits()
    parser.add_argument("--max-connections", type=int, default=limits.connections, metavar="N",
                        help=f"connections open at once (default {limits.connections}; never over half the "
                             "descriptor limit); past it the oldest unfinished request makes room, or a new one is closed")
    parser.add_argument("--max-connections-per-peer", type=int, default=limits.per_peer, metavar="N",
                        help=f"connections open at once from one address (default {limits.per_peer}); past it that "
                             "address's oldest unfinished request makes room, or the new one is closed")
    parser.add_argument("--request-deadline", type=float, default=limits.request_s, metavar="SECONDS",
                        help=f"a request's head and body must arrive within it, or the connection is closed "
                             f"(default {limits.request_s:g})")


def limits_from(args: argparse.Namespace) -> ConnectionLimits:
    """The limits the options ask for; ValueError when one is not positive."""
    return ConnectionLimits(args.request_deadline, args.max_connections, args.max_connections_per_peer)
