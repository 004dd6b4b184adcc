"""A2A servers: the green agent that exposes the suites to AgentBeats, and a purple-agent wrapper for tests."""
