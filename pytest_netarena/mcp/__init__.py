"""Agents through MCP: one episode's tools served over MCP (`netarena mcp`), and CLI agents (Codex, Claude Code) boxed against it."""
