"""The `netarena` command line: subcommands that work without pytest (servers, engines, reports)."""

from __future__ import annotations

import argparse
import importlib
import sys

# Each subcommand lives in its own module, imported only when it is used, so
# `netarena --help` stays fast. The module exposes register(subparsers).
SUBCOMMAND_MODULES = (
    "pytest_netarena.kube.cli",
    "pytest_netarena.netpol.cli",
    "pytest_netarena.reporting.cli",
    "pytest_netarena.agentbeats.cli",
    "pytest_netarena.agentbeats.purple_cli",
    "pytest_netarena.run.cli",
    "pytest_netarena.training.cli",
    "pytest_netarena.audit.cli",
    "pytest_netarena.mcp.cli",
    "pytest_netarena.validity.cli",
    "pytest_netarena.harbor.cli",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="netarena", description=__doc__)
    subparsers = parser.add_subparsers(dest="command", required=True)
    for module_name in SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name and module_name.startswith(error.name):
                continue  # that part of the package is not built yet
            raise
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return int(args.handler(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
