"""One benchmark run's life: settings resolved, queries drawn or read, budget kept, episodes played, gates checked."""
