"""NetArena's MALT rules (--compat netarena): its rules, environment, prompt, grading, ground truth and data readers."""
