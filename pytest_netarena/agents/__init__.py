"""Agents under test: specs; model-backed (litellm, plain HTTP), A2A and no-op agents; prompt styles; recordings."""
