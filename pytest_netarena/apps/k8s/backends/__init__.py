"""Where K8s episodes run: the embedded API server (default) or a real cluster, and how each is read and probed."""
