"""The route app's built-in agents: oracle, expert, reckless (builtin.py registers them)."""
