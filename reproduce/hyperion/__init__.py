"""The hyperion study: plot and compare (python -m reproduce.hyperion.plot|compare)."""
