"""The pytest-free core: queries, query spaces, the episode loop, seeding and statistics."""
