"""Batches with weights or counts, for the accumulator: tables of counts and exact weight sums.

:class:`~rankstats.evaluation.streaming.RankAccumulator` keeps, for weighted input, the rank
tables with counts only and, beside them, the exact weight sum of each row in integer limbs
(:mod:`~rankstats.evaluation.weight_sums`). This module builds those from a validated batch
(:func:`counted_tables`) and turns them back into the weighted tables that
:func:`~rankstats.evaluation.evaluate.compute_results` takes (:func:`with_weights`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from rankstats.evaluation.inputs import prepare_input
from rankstats.evaluation.tables import WEIGHT, SideStatistics, Table
from rankstats.evaluation.weight_sums import add_limbs, weigh, weight_limbs
from rankstats.validation import as_array, check_weight_spread

__all__ = [
    "CANDIDATE_SUMS",
    "MAX_TASKS",
    "check_num_tasks",
    "check_squared_range",
    "combine_sums",
    "counted_tables",
    "rank_tables",
    "rows_within",
    "with_weights",
]

#: the names of the exact sums of the weights and of their squares per candidate-table row, kept
#: beside the rank tables' sums when every null model needs only those
#: (:func:`~rankstats.evaluation.evaluate.weight_sums_suffice`)
CANDIDATE_SUMS = ("candidates", "candidates.squared")
#: the largest weight whose square is finite with room to add many (2**1000 < float64 max)
_MAX_SQUARED_WEIGHT = 2.0**500
#: the least positive weight whose square is normal with room to spare (2**-1000 > 2**-1022)
_MIN_SQUARED_WEIGHT = 2.0**-500
#: the most ranks an accumulator holds per side (their counts add up in int64)
MAX_TASKS = 2**62


def check_num_tasks(total: float, name: str) -> None:
    """Refuse a number of tasks of :data:`MAX_TASKS` or more.

    Parameters
    ----------
    total : float
        The number of tasks (the sum of the counts).
    name : str
        What adds up to ``total``, for the message.

    Raises
    ------
    ValueError
        If ``total`` is :data:`MAX_TASKS` or more (their int64 sums could overflow).
    """
    if total >= MAX_TASKS:
        raise ValueError(
            f"{name} must add up to fewer than 2**62 ranks (an accumulator counts them in "
            f"int64), got {int(total)}"
        )


def rank_tables(stats: SideStatistics) -> dict[str, Table]:
    """The tables that hold ranks (for weighted input, those with exact weight sums)."""
    return {
        name: t for name, t in stats.tables().items() if name not in ("candidates", "tie_pairs")
    }


def _rebuild(stats: SideStatistics, tables: Mapping[str, Table]) -> SideStatistics:
    return SideStatistics(
        pairs=tables.get("pairs"),
        ranks={name.removeprefix("ranks."): t for name, t in tables.items() if name != "pairs"},
        candidates=stats.candidates,
        tie_pairs=stats.tie_pairs,
    )


def _row_values(value: Any, name: str, sides: Sequence[str], sizes: Mapping[str, int]) -> Any:
    """``counts`` or ``weights`` as a flat array per side, checked for length."""
    if value is None:
        return dict.fromkeys(sides)
    if isinstance(value, Mapping):
        unknown = [key for key in value if key not in sides]
        if unknown or len(value) != len(sides):
            raise ValueError(f"{name} must give one array for each side {list(sides)}")
        values = dict(value)
    elif len(sides) == 1:
        values = {sides[0]: value}
    else:
        values = dict.fromkeys(sides, value)
    out = {}
    for side, item in values.items():
        array = as_array(item, name).reshape(-1)
        if array.size != sizes[side]:
            raise ValueError(
                f"{name} must have one entry per rank ({sizes[side]}), got {array.size}"
            )
        out[side] = array
    return out


def _check_counts(array: npt.NDArray[Any]) -> npt.NDArray[np.int64]:
    if array.dtype == np.bool_ or array.dtype.kind not in "iuf":
        raise TypeError(f"counts must be integers, got an array of dtype {array.dtype}")
    with np.errstate(invalid="ignore"):
        bad = ~(array >= 0) | ~(array <= 2**53) | (array != np.floor(array))
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise ValueError(
            "counts must be non-negative integers of at most 2**53, got "
            f"{array[index].item()!r} at index {index}"
        )
    check_num_tasks(float(array.astype(np.float64).sum()), "counts")
    return array.astype(np.int64)


def _check_batch_weights(array: npt.NDArray[Any]) -> npt.NDArray[np.float64]:
    if array.dtype == np.bool_ or array.dtype.kind not in "iuf":
        raise TypeError(f"weights must be numbers, got an array of dtype {array.dtype}")
    clean = array.astype(np.float64)
    bad = ~((clean >= 0) & np.isfinite(clean))
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"weights must be finite and non-negative, got {array[index].item()!r} at index {index}"
        )
    # each weight is kept (or its square summed): within float64's normal range, as evaluate's
    # are after their rescaling, and within the spread evaluate allows (between batches too,
    # with_weights); the ratios of weights are all that matter, so a user may rescale them
    check_squared_range(clean)
    check_weight_spread(clean)
    return clean


def check_squared_range(weights: npt.NDArray[np.float64]) -> None:
    """Refuse weights whose squares would overflow, or (if positive) underflow, float64.

    Zero weights are fine; the others and their squares (summed exactly, or each kept) stay
    normal. An accumulator cannot rescale its batches' weights as :func:`~rankstats.evaluate`
    rescales its own: a later batch may hold larger ones.
    """
    positive = weights[weights > 0]
    if not positive.size:
        return
    if float(positive.max()) > _MAX_SQUARED_WEIGHT:
        raise ValueError(
            f"weights must be at most 2**500 for an accumulator (their squares must stay "
            f"normal in float64), got "
            f"{float(positive.max())!r}; only their ratios matter, so rescale them"
        )
    if float(positive.min()) < _MIN_SQUARED_WEIGHT:
        raise ValueError(
            f"positive weights must be at least 2**-500 for an accumulator (their squares must "
            f"stay normal in float64), got "
            f"{float(positive.min())!r}; only their ratios matter, so rescale them"
        )


def counted_tables(
    ranks: Any,
    num_candidates: Any,
    codes: Any,
    weights: Any,
    counts: Any,
    sizes: Mapping[str, int],
    weight_sums: bool = False,
    tie_weights: bool = False,
) -> tuple[dict[str, SideStatistics], dict[str, dict[str, Table]], list[Hashable] | None]:
    """The tables of a batch with weights or counts: rank tables count, weights summed exactly.

    Every row is validated by :func:`prepare_input`, with its index as a (unique) weight, so the
    tables keep one row per input row and say which; then counts and weights are put in. The
    candidate table keeps each weight as a key, or with ``weight_sums`` the exact sums of the
    weights and of their squares per row (:data:`CANDIDATE_SUMS`). With ``tie_weights`` the
    rank pairs are kept with each task's weight too (``tie_pairs``), for the expectations over
    ties that need it.
    """
    names = list(sizes)
    side_counts = _row_values(counts, "counts", names, sizes)
    side_weights = _row_values(weights, "weights", names, sizes)
    ids = {side: np.arange(1, size + 1, dtype=np.float64) for side, size in sizes.items()}
    prepared = prepare_input(
        ranks, num_candidates, ids if len(ids) > 1 else ids[names[0]], codes, weights_as_keys=True
    )
    if prepared.sides.keys() != sizes.keys():  # pragma: no cover - sides are named alike
        raise ValueError(f"unexpected sides {list(prepared.sides)}")
    sides: dict[str, SideStatistics] = {}
    sums: dict[str, dict[str, Table]] = {}
    checked = {
        side: None if side_counts[side] is None else _check_counts(side_counts[side])
        for side in names
    }
    zero = [side for side, count in checked.items() if count is not None and not count.any()]
    if zero and len(zero) == len(names):
        return {}, {}, None  # every count of the batch is zero: nothing to add
    if zero:
        raise ValueError(f"counts must not all be zero for side {zero[0]!r} but not the others")
    for side, stats in prepared.sides.items():
        count = checked[side]
        weight = None if side_weights[side] is None else _check_batch_weights(side_weights[side])
        tables: dict[str, Table] = {}
        side_sums: dict[str, Table] = {}
        for name, table in stats.tables().items():
            row = table.columns[WEIGHT].astype(np.int64) - 1
            row_count = np.ones(row.size, dtype=np.int64) if count is None else count[row]
            keep = row_count > 0
            row, row_count = row[keep], row_count[keep]
            keys = {key: c[keep] for key, c in table.columns.items() if key != WEIGHT}
            if name != "candidates" and weight is not None:
                side_sums[name] = weight_limbs(keys, weight[row], row_count)
            elif weight is not None and weight_sums:
                task_weights = weight[row]
                check_squared_range(task_weights)
                side_sums[CANDIDATE_SUMS[0]] = weight_limbs(keys, task_weights, row_count)
                squares = task_weights * task_weights
                side_sums[CANDIDATE_SUMS[1]] = weight_limbs(keys, squares, row_count)
            elif weight is not None:
                keys[WEIGHT] = weight[row]
            tables[name] = Table.build(keys, row_count)
            if name == "pairs" and weight is not None and tie_weights:
                tables["tie_pairs"] = Table.build({**keys, WEIGHT: weight[row]}, row_count)
        tie_pairs = tables.pop("tie_pairs", None)
        candidates = tables.pop("candidates", None)
        sides[side] = _rebuild(SideStatistics(candidates=candidates, tie_pairs=tie_pairs), tables)
        sums[side] = side_sums
    return sides, sums if weights is not None else {}, prepared.labels


def combine_sums(
    parts: Sequence[Mapping[str, dict[str, Table]]],
) -> dict[str, dict[str, Table]]:
    """The exact weight sums of all parts together (sides already checked by :func:`_combine`)."""
    parts = [part for part in parts if part]
    if not parts:
        return {}
    return {
        side: {name: add_limbs([part[side][name] for part in parts]) for name in tables}
        for side, tables in parts[0].items()
    }


def with_weights(stats: SideStatistics, sums: Mapping[str, Table]) -> SideStatistics:
    """The tables :func:`compute_results` takes: each distinct rank once, weighing its sum.

    Each task's weight, where kept, is checked against the largest of every batch
    (:func:`~rankstats.validation.check_weight_spread`, as :func:`~rankstats.evaluate`'s).
    """
    if stats.candidates is not None and WEIGHT in stats.candidates.columns:
        check_weight_spread(
            stats.candidates.columns[WEIGHT], "weights (of every batch)", located=False
        )
    tables = {name: weigh(table, sums[name]) for name, table in rank_tables(stats).items()}
    weighed = _rebuild(stats, tables)
    if stats.candidates is None or CANDIDATE_SUMS[0] not in sums:
        return weighed
    total, squared = (sums[name] for name in CANDIDATE_SUMS)
    return dataclasses.replace(weighed, candidates=weigh(stats.candidates, total, squared))


def total_weight(stats: SideStatistics) -> float:
    """The total weight of a side's tasks (from :func:`with_weights`' tables)."""
    return float(next(iter(rank_tables(stats).values())).weights().sum())


def rows_within(rows: Mapping[str, npt.NDArray[Any]], target: Mapping[str, Any]) -> bool:
    """Whether every row of ``rows`` (distinct rows) is a row of ``target``."""
    names = list(target)
    size = next(iter(target.values())).size
    count = next(iter(rows.values())).size
    if not count:
        return True
    tag = np.concatenate([np.zeros(size, dtype=np.int64), np.ones(count, dtype=np.int64)])
    combined = [np.concatenate([target[name], rows[name]]) for name in names]
    order = np.lexsort((tag, *reversed(combined)))
    positions = np.flatnonzero(tag[order] == 1)
    previous = order[np.maximum(positions - 1, 0)]
    ok = (positions > 0) & (tag[previous] == 0)
    for column in combined:
        ok &= column[previous] == column[order[positions]]
    return bool(ok.all())
