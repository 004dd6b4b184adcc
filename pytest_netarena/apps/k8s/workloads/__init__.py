"""The microservice application an episode runs: Online Boutique or a synthetic app, and its flows."""
