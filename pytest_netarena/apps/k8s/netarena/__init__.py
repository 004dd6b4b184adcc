"""NetArena's K8s rules (--compat netarena): its rules as data, its verdicts, its environment and its prompt."""
