"""Collection settings for the doctests in ``src``: optional dependencies may be missing."""

import importlib.util

#: the plotting module's examples need matplotlib, an optional extra (tests/test_plot.py skips too)
collect_ignore = [] if importlib.util.find_spec("matplotlib") else ["src/rankstats/plot.py"]
