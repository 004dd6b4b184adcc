"""Harbor: our episodes as Harbor task folders (`netarena export harbor`), the episode service their sidecar runs, and
a Harbor environment provider that runs them and k3s-layout tasks without Docker (docs/harbor.md)."""
