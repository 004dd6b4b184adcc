"""NetArena's route rules (--compat netarena): its rules as data, its verdicts, its environment and its prompt."""
