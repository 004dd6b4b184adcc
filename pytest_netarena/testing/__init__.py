"""Reusable test helpers for suites that drive model-backed agents without a real provider."""
