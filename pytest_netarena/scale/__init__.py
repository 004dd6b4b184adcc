"""Runs that outgrow one process or one machine: the controller link, scheduling, shards, episodes in flight."""
