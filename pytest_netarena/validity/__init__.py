"""`netarena validity`: a validity card, each item of the Agentic Benchmark Checklist with evidence measured now.

measure.py plays the reference agents and the isolation check on an app; card.py turns the measurements into
the card's items and writes validity.md and validity.json; cli.py is the subcommand.
"""
