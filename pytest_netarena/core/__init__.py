"""The pytest-free core: the App and Agent contracts, queries, query spaces, the episode loop, seeding, statistics."""
