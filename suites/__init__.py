"""The benchmark suites, one folder per app (installed as pytest_netarena.suites: `netarena run`)."""
