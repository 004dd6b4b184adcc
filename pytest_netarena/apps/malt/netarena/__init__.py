"""NetArena's MALT profile (--compat netarena): its rules, environment, prompt, grading, ground truth and data readers."""
