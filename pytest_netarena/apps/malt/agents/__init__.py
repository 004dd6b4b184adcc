"""The MALT app's built-in agents: oracle, expert, chatty, reckless (builtin.py registers them)."""
