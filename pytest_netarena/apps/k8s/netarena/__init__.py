"""NetArena's K8s profile (--compat netarena): its rules as data, its environment and its prompt."""
