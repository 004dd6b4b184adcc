"""The route benchmark suite (a package, so `pytest --pyargs pytest_netarena.suites.route` finds it in an installed wheel)."""
