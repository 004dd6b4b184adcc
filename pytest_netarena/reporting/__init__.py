"""Reports: JUnit properties, run folders, summaries with confidence intervals, terminal tables."""
