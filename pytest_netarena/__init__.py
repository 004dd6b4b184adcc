"""pytest-netarena: a pytest plugin that benchmarks AI agents on network operations."""

__version__ = "0.1.0"
