"""Repository-local pytest configuration (intentionally near empty: the plugin lives in pytest_netarena)."""
