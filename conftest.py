"""Collection settings for the doctests in ``src``: optional dependencies may be missing."""

import importlib.util

#: modules whose examples need an optional extra (their tests in tests/ skip too)
_NEEDS = {
    "src/rankstats/plot.py": "matplotlib",
    "src/rankstats/distributed/torch.py": "torch",
    "src/rankstats/distributed/dask.py": "dask",
    "src/rankstats/distributed/torchmetrics.py": "torchmetrics",
}
collect_ignore = [path for path, module in _NEEDS.items() if not importlib.util.find_spec(module)]
