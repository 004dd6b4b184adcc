"""Harbor: our episodes as Harbor task folders, the episode service their sidecar runs, a provider without Docker.

`netarena export harbor` writes the tasks; the provider runs them and k3s-layout tasks (docs/harbor.md)."""
