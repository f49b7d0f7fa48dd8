"""movebench's reproduction studies and their shared helpers (mbresults).

The scripts run as modules from the repository root, e.g.
``python -m reproduce.cam.plot -o fig RESULTS``; run.sh does so.
"""
