"""The K8s app's built-in agents: oracle, expert, chatty, reckless (builtin.py registers them)."""
