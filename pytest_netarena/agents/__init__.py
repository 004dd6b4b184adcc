"""Agents under test: the protocol, spec parsing, built-in agents and model-backed agents."""
