"""NetArena's K8s profile (--compat netarena): its rules as data, its verdicts, its environment and its prompt."""
