r"""Evaluation of ranks held in Dask collections: one accumulator per partition, a tree reduction.

Each partition (a Parquet file, a chunk of an array) is compressed, where it lives, into a
:class:`~rankstats.RankAccumulator`: the distinct (rank, candidate count, group) cells with their
counts and exact weight sums, kilobytes whatever the partition's size. The accumulators are
merged pairwise up a tree (``split_every`` at a time), which adds integers, so the result does
not depend on the partitioning or on the order in which tasks finish, and equals
:func:`~rankstats.evaluate` on all the ranks at once, to the last bit. A worker holds one
partition and a few accumulators at a time; the driver receives one accumulator.

Works with any Dask scheduler: the default threaded one, processes, or a
:class:`distributed.Client` (then the cluster runs the tasks).

Examples
--------
>>> import numpy as np, pandas as pd
>>> import dask.dataframe as dd
>>> from rankstats import evaluate
>>> frame = pd.DataFrame({"rank": [1, 3, 2, 10, 1, 4], "candidates": [10, 10, 20, 20, 5, 5],
...                       "relation": ["a", "a", "b", "b", "a", "c"]})
>>> data = dd.from_pandas(frame, npartitions=3)
>>> results = evaluate_dataframe(data, "rank", "candidates", metrics=["mrr", "amri"])
>>> results.to_dict() == evaluate(frame["rank"], frame["candidates"],
...                               metrics=["mrr", "amri"]).to_dict()
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rankstats.distributed import check_rank_arguments, require
from rankstats.evaluation.evaluate import Average, MetricHint
from rankstats.evaluation.results import EvaluationResults
from rankstats.evaluation.streaming import RankAccumulator
from rankstats.validation import is_scalar

__all__ = ["accumulate_arrays", "accumulate_dataframe", "evaluate_arrays", "evaluate_dataframe"]

#: how many accumulators one task of the tree reduction merges
SPLIT_EVERY = 8


def _config(
    metrics: Sequence[MetricHint] | MetricHint | None,
    rank_types: Sequence[str] | str | None,
    average: Average,
) -> dict[str, Any]:
    config: dict[str, Any] = {"metrics": metrics, "rank_types": rank_types, "average": average}
    RankAccumulator(**config)  # check the configuration once, up front, on the driver
    return config


def _accumulate_block(
    config: dict[str, Any],
    ranks: Any,
    optimistic: Any,
    pessimistic: Any,
    num_candidates: Any,
    groups: Any,
    weights: Any,
) -> RankAccumulator:
    """One partition's accumulator (runs on a worker)."""
    accumulator = RankAccumulator(**config)
    batch = ranks if ranks is not None else {"optimistic": optimistic, "pessimistic": pessimistic}
    accumulator.update(batch, num_candidates, groups=groups, weights=weights)
    return accumulator


def _accumulate_partition(
    config: dict[str, Any], frame: Any, columns: dict[str, str | None]
) -> RankAccumulator:
    values = {
        name: None if column is None else frame[column].to_numpy()
        for name, column in columns.items()
    }
    return _accumulate_block(config, **values)


def _merge(*accumulators: RankAccumulator) -> RankAccumulator:
    return RankAccumulator.merged(accumulators)


def _tree(parts: list[Any], split_every: int) -> Any:
    """Merge delayed accumulators ``split_every`` at a time until one is left."""
    dask = require("dask", "dask")
    if not isinstance(split_every, int) or isinstance(split_every, bool) or split_every < 2:
        raise ValueError(f"split_every must be an integer of at least 2, got {split_every!r}")
    merge = dask.delayed(_merge, pure=True)
    while len(parts) > 1:
        parts = [
            merge(*parts[start : start + split_every])
            for start in range(0, len(parts), split_every)
        ]
    return parts[0]


def accumulate_dataframe(
    frame: Any,
    rank: str | None = None,
    num_candidates: str | None = None,
    *,
    optimistic: str | None = None,
    pessimistic: str | None = None,
    group: str | None = None,
    weight: str | None = None,
    metrics: Sequence[MetricHint] | MetricHint | None = None,
    rank_types: Sequence[str] | str | None = None,
    average: Average = "micro",
    split_every: int = SPLIT_EVERY,
) -> Any:
    """A lazy accumulator of the ranks in a Dask DataFrame (a :class:`dask.delayed.Delayed`).

    Parameters
    ----------
    frame : dask.dataframe.DataFrame
        The ranks, one task per row, e.g. from :func:`dask.dataframe.read_parquet`.
    rank : str, optional
        The column of realistic ranks (integers or half-integers); or give ``optimistic`` and
        ``pessimistic``.
    num_candidates : str, optional
        The column of candidate counts (needed for the null model and adjusted metrics).
    optimistic, pessimistic : str, optional
        The columns of optimistic and pessimistic ranks, instead of ``rank``: then every rank
        type, ``expected`` included, is computed.
    group : str, optional
        The column of group labels (any hashable values; categoricals are fine).
    weight : str, optional
        The column of task weights.
    metrics, rank_types, average
        As for :func:`~rankstats.evaluate`.
    split_every : int, default=8
        How many accumulators each task of the tree reduction merges.

    Returns
    -------
    dask.delayed.Delayed
        Computes to a :class:`~rankstats.RankAccumulator` holding every rank.
    """
    dask = require("dask", "dask")
    check_rank_arguments(rank, optimistic, pessimistic, "rank")
    columns = {
        "ranks": rank,
        "optimistic": optimistic,
        "pessimistic": pessimistic,
        "num_candidates": num_candidates,
        "groups": group,
        "weights": weight,
    }
    used = [column for column in columns.values() if column is not None]
    for column in used:
        if not isinstance(column, str):
            raise TypeError(
                f"column names must be strings, got {column!r} (the frame's columns: "
                f"{list(frame.columns)}; frame.rename(columns=str) gives them string names)"
            )
        if column not in frame.columns:
            raise ValueError(f"{column!r} is not a column of the frame: {list(frame.columns)}")
    if len(set(used)) != len(used):
        raise ValueError(f"each column may be used once, got {used}")
    config = _config(metrics, rank_types, average)
    accumulate = dask.delayed(_accumulate_partition, pure=True)
    parts = [accumulate(config, part, columns) for part in frame[used].to_delayed()]
    if not parts:
        raise ValueError("the frame has no partitions")
    return _tree(parts, split_every)


def evaluate_dataframe(
    frame: Any,
    rank: str | None = None,
    num_candidates: str | None = None,
    *,
    optimistic: str | None = None,
    pessimistic: str | None = None,
    group: str | None = None,
    weight: str | None = None,
    metrics: Sequence[MetricHint] | MetricHint | None = None,
    rank_types: Sequence[str] | str | None = None,
    average: Average = "micro",
    split_every: int = SPLIT_EVERY,
    **compute_kwargs: Any,
) -> EvaluationResults:
    """Evaluate the ranks in a Dask DataFrame: :func:`accumulate_dataframe`, then ``compute()``.

    Keyword arguments not listed are passed to :func:`dask.compute` (e.g. ``scheduler=``); with
    a :class:`distributed.Client` active, the cluster computes. Returns the results of
    :func:`~rankstats.evaluate` on all the rows at once.
    """
    dask = require("dask", "dask")
    lazy = accumulate_dataframe(
        frame,
        rank,
        num_candidates,
        optimistic=optimistic,
        pessimistic=pessimistic,
        group=group,
        weight=weight,
        metrics=metrics,
        rank_types=rank_types,
        average=average,
        split_every=split_every,
    )
    (accumulator,) = dask.compute(lazy, **compute_kwargs)
    result: EvaluationResults = accumulator.compute()
    return result


def _unknown(chunks: Any) -> bool:
    """Whether some chunk sizes are unknown (NaN), as after ``DataFrame.to_dask_array()``."""
    return any(np.isnan(size) for size in chunks[0])


def _blocks(name: str, array: Any, chunks: Any) -> list[Any]:
    """The delayed 1-D blocks of a Dask array, rechunked like the ranks; or repeated ``None``.

    Arrays whose chunk sizes are unknown cannot be rechunked: when both the ranks' and the
    array's are, the blocks are paired as they are (the columns of one frame), and each pair's
    lengths are checked where it is accumulated.
    """
    da = require("dask.array", "dask")
    if array is None:
        return [None] * len(chunks[0])
    if not isinstance(array, da.Array):
        if name == "num_candidates" and is_scalar(array):
            return [array] * len(chunks[0])
        raise TypeError(f"{name} must be a dask array, got {type(array).__name__}")
    if array.ndim == 1 and (_unknown(chunks) or _unknown(array.chunks)):
        if _unknown(chunks) and _unknown(array.chunks) and array.numblocks[0] == len(chunks[0]):
            return list(array.to_delayed().ravel())
        raise ValueError(
            f"{name} (chunks {array.chunks}) cannot be aligned with the ranks (chunks "
            f"{chunks}): arrays of unknown chunk sizes (NaN) cannot be rechunked, only paired "
            "block by block with as many blocks of unknown sizes; compute the sizes first, with "
            "array.compute_chunk_sizes() or DataFrame.to_dask_array(lengths=True)"
        )
    if array.ndim != 1 or array.shape[0] != sum(chunks[0]):
        raise ValueError(
            f"{name} must be a 1-D array of {sum(chunks[0])} entries like the ranks, got shape "
            f"{array.shape}"
        )
    return list(array.rechunk(chunks).to_delayed().ravel())


def accumulate_arrays(
    ranks: Any = None,
    num_candidates: Any = None,
    *,
    optimistic: Any = None,
    pessimistic: Any = None,
    groups: Any = None,
    weights: Any = None,
    metrics: Sequence[MetricHint] | MetricHint | None = None,
    rank_types: Sequence[str] | str | None = None,
    average: Average = "micro",
    split_every: int = SPLIT_EVERY,
) -> Any:
    """A lazy accumulator of ranks held in 1-D Dask arrays (a :class:`dask.delayed.Delayed`).

    The other arrays are rechunked like the ranks (or the optimistic ranks); ``num_candidates``
    may also be one integer. Arrays of unknown chunk sizes (from
    ``DataFrame.to_dask_array()``), which cannot be rechunked, are paired block by block, so
    they must all have unknown sizes and as many blocks, each as long as the ranks' (as the
    columns of one frame have); otherwise compute their sizes first
    (``array.compute_chunk_sizes()``). See :func:`accumulate_dataframe` for the rest.
    """
    da = require("dask.array", "dask")
    check_rank_arguments(ranks, optimistic, pessimistic, "ranks")
    lead = ranks if ranks is not None else optimistic
    name = "ranks" if ranks is not None else "optimistic"
    if not isinstance(lead, da.Array):
        raise TypeError(f"{name} must be a dask array, got {type(lead).__name__}")
    if lead.ndim != 1:
        raise ValueError(f"{name} must be a 1-D dask array, got shape {lead.shape}")
    chunks = lead.chunks
    config = _config(metrics, rank_types, average)
    blocks = {
        # the leading array is split as it is (its chunk sizes may be unknown)
        "ranks": _blocks("ranks", ranks, chunks) if name != "ranks" else lead.to_delayed().ravel(),
        "optimistic": (
            _blocks("optimistic", optimistic, chunks)
            if name != "optimistic"
            else lead.to_delayed().ravel()
        ),
        "pessimistic": _blocks("pessimistic", pessimistic, chunks),
        "num_candidates": _blocks("num_candidates", num_candidates, chunks),
        "groups": _blocks("groups", groups, chunks),
        "weights": _blocks("weights", weights, chunks),
    }
    dask = require("dask", "dask")
    accumulate = dask.delayed(_accumulate_block, pure=True)
    parts = [
        accumulate(config, *values) for values in zip(*(blocks[key] for key in blocks), strict=True)
    ]
    return _tree(parts, split_every)


def evaluate_arrays(
    ranks: Any = None,
    num_candidates: Any = None,
    *,
    optimistic: Any = None,
    pessimistic: Any = None,
    groups: Any = None,
    weights: Any = None,
    metrics: Sequence[MetricHint] | MetricHint | None = None,
    rank_types: Sequence[str] | str | None = None,
    average: Average = "micro",
    split_every: int = SPLIT_EVERY,
    **compute_kwargs: Any,
) -> EvaluationResults:
    """Evaluate ranks held in Dask arrays: :func:`accumulate_arrays`, then ``compute()``.

    Examples
    --------
    >>> import dask.array as da
    >>> ranks = da.from_array(np.array([1, 2, 1, 7, 3]), chunks=2)
    >>> evaluate_arrays(ranks, 10, metrics="mrr")["mrr"]
    0.5952380952380952
    """
    dask = require("dask", "dask")
    lazy = accumulate_arrays(
        ranks,
        num_candidates,
        optimistic=optimistic,
        pessimistic=pessimistic,
        groups=groups,
        weights=weights,
        metrics=metrics,
        rank_types=rank_types,
        average=average,
        split_every=split_every,
    )
    (accumulator,) = dask.compute(lazy, **compute_kwargs)
    result: EvaluationResults = accumulator.compute()
    return result
