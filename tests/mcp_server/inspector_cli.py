"""The MCP Inspector's CLI (`@modelcontextprotocol/inspector`, pinned), installed from npm into the cache of the CLI
agents (`mcp/install.py`, outside the checkout, no install script run)."""

from __future__ import annotations

from pathlib import Path

INSPECTOR = ("@modelcontextprotocol/inspector", "2.12.0")


def inspector_cli() -> Path:
    """The `mcp-inspector` program (UsageError when npm is missing or the install fails)."""
    from pytest_netarena.mcp.install import install

    return install(*INSPECTOR) / "node_modules" / ".bin" / "mcp-inspector"


if __name__ == "__main__":
    print(inspector_cli())
