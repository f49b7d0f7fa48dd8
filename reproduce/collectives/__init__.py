"""The collectives study: plot and compare (python -m reproduce.collectives.plot|compare)."""
