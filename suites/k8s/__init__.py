"""The k8s benchmark suite (a package, so `pytest --pyargs pytest_netarena.suites.k8s` finds it in an installed wheel)."""
