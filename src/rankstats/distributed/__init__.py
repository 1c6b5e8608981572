"""Evaluation beyond one process: adapters of the accumulator to torch.distributed and Dask.

Every adapter works the same way: each worker compresses its shard of ranks into a
:class:`~rankstats.RankAccumulator` (distinct ranks and candidate counts with their counts, and
exact weight sums), the small accumulators are merged (exact integer additions, so the order and
grouping of the merges do not matter), and the merged accumulator gives the results of
:func:`~rankstats.evaluate` on all the ranks at once.

- :mod:`rankstats.distributed.torch`: one call reduces an accumulator across the processes of a
  :mod:`torch.distributed` process group (gloo or NCCL); ranks held in tensors, on a GPU too,
  are compressed where they are.
- :mod:`rankstats.distributed.dask`: ranks held in a Dask DataFrame (e.g. read from Parquet) or
  Dask arrays, one accumulator per partition and a tree reduction.
- :mod:`rankstats.distributed.torchmetrics`: the accumulator as a :class:`torchmetrics.Metric`,
  for Lightning's loops (``pip install 'rankstats[torchmetrics]'``).

Neither :mod:`torch` nor :mod:`dask` is imported until one of these modules is; each says how to
install its engine if it is missing (``pip install 'rankstats[torch]'`` or
``pip install 'rankstats[dask]'``).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

__all__: list[str] = []


def require(module: str, extra: str) -> ModuleType:
    """Import an optional engine, or raise an :class:`ImportError` saying how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ImportError(
            f"this part of rankstats.distributed needs {module.split('.')[0]}, an optional "
            f"dependency; install it with pip install 'rankstats[{extra}]'"
        ) from error


def check_rank_arguments(ranks: Any, optimistic: Any, pessimistic: Any, name: str) -> None:
    """One kind of ranks: ``name`` alone, or the optimistic and pessimistic ranks together.

    For the torch and the Dask functions alike (the Dask ones had taken a rank beside one bound
    and ignored the bound).
    """
    pair = {"optimistic": optimistic, "pessimistic": pessimistic}
    bounds = [label for label, value in pair.items() if value is not None]
    if ranks is not None and bounds:
        raise ValueError(
            f"give either {name}, or both optimistic and pessimistic, not both: got {name} and "
            + " and ".join(bounds)
        )
    if ranks is None and len(bounds) < 2:
        raise ValueError(
            f"give either {name}, or both optimistic and pessimistic; got "
            + (f"{bounds[0]} only" if bounds else "none of them")
        )
