"""The pytest-free core: the App and Agent contracts, queries, query catalogues, the episode loop, seeding, statistics."""
