"""NetArena's route profile (--compat netarena): its rules as data, its environment and its prompt."""
