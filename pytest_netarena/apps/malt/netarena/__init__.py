"""NetArena's MALT profile (--compat netarena): its rules as data, environment, grading, ground-truth ops and data readers."""
