"""The cam study: plot and compare (python -m reproduce.cam.plot|compare)."""
