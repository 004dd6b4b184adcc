"""The malt benchmark suite (a package, so `pytest --pyargs pytest_netarena.suites.malt` finds it in an installed wheel)."""
