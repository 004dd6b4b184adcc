"""Shared fixtures of the project's own tests."""

pytest_plugins = ["pytester"]
