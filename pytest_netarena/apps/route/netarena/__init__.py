"""NetArena's route profile (--compat netarena): its rules as data, its verdicts, its environment and its prompt."""
