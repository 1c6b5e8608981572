r""":math:`M - \mathbb{E}` of a mean-type metric as one exact sum over the rows of the tables.

Where the rounded :math:`M - \mathbb{E}` of an adjusted or z-scored metric may have lost digits
(:func:`~rankstats.chance.ill_conditioned`), it is taken again as one exact sum over the rows of
the ranks (or pairs) and of the candidate counts (:func:`~rankstats.chance.exact_difference`):
for one cell (:func:`exact_cell_difference`), or for the groups that need it, all at once
(:func:`exact_group_differences`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rankstats.arrays import FloatArray, IntArray
from rankstats.base import RankBasedMetric
from rankstats.chance import ChanceTerms, ExactDifference, Ratio, exact_difference, sums_exact
from rankstats.evaluation.scores import RANK_EXPECTED
from rankstats.evaluation.tables import (
    WEIGHT,
    CellStatistics,
    SideStatistics,
    Table,
    pair_ranks,
)
from rankstats.evaluation.terms import tie_ratios, tie_terms

__all__ = [
    "exact_cell_difference",
    "exact_group_differences",
    "has_exact_difference",
    "integral_tables",
]


def has_exact_difference(metric: RankBasedMetric) -> bool:
    """Whether a metric is a mean of per-task terms whose :math:`M - E` can be summed exactly."""
    return metric._chance_terms() is not None


def integral_tables(stats: CellStatistics | SideStatistics, rank_type: str) -> bool:
    """Whether sums of terms that keep multiples of 1/2 over these tables are exact.

    :func:`~rankstats.chance.sums_exact` of the rank type's ranks (the pairs' for the
    expectation over tie-breaking, whose terms are means of two of them), the weights (integer
    counts where the tables have no weights), the total count and the largest candidate count:
    a metric whose terms keep such multiples (:attr:`~rankstats.chance.ChanceTerms.halves`)
    then has :math:`M` and :math:`E` as exact sums, each rounded once.
    """
    table = stats.ranks.get(rank_type, stats.pairs)
    candidates = stats.candidates
    if table is None or candidates is None:
        return False
    names = ("rank", "optimistic", "pessimistic")
    largest = candidates.columns["num_candidates"]
    return sums_exact(
        [table.columns[name] for name in names if name in table.columns],
        WEIGHT not in table.columns and WEIGHT not in candidates.columns,
        float(table.count.sum()),
        float(largest.max()) if largest.size else 0.0,
    )


def exact_cell_difference(
    metric: RankBasedMetric, cell: CellStatistics, rank_type: str
) -> ExactDifference | None:
    r""":math:`M - \mathbb{E}` of a mean-type metric as one exact sum over a cell's rows.

    ``None`` where there is no such sum: a metric that is no mean of per-task terms, or no
    candidate counts.
    """
    terms = metric._chance_terms()
    if terms is None or cell.candidates is None:
        return None
    chance_terms = terms

    def exact() -> float:
        tasks = cell.tasks
        if rank_type == RANK_EXPECTED:
            assert cell.pairs is not None
            tie_values, tie_ratio = _tie_terms(metric, cell.pairs, slice(None))
            return float(
                exact_difference(
                    chance_terms,
                    None,
                    cell.pairs.weights(),
                    tasks.candidates,
                    tasks.row_weights,
                    tasks.total_weight,
                    rank_terms=tie_values,
                    rank_ratio=tie_ratio,
                )
            )
        values, weights = cell.histogram(rank_type)
        return float(
            exact_difference(
                chance_terms,
                values,
                weights,
                tasks.candidates,
                tasks.row_weights,
                tasks.total_weight,
            )
        )

    return ExactDifference(exact, lambda: chance_terms.halves and integral_tables(cell, rank_type))


def _tie_terms(
    metric: RankBasedMetric, pairs: Table, rows: IntArray | slice
) -> tuple[tuple[FloatArray, FloatArray], Ratio | None]:
    r"""The expectations over tie-breaking of a metric's terms on rows of the pairs, and gaps.

    The gap is ``1 - t`` by subtraction: it is taken only where it is the smaller, where
    :math:`t \ge 1/2` and the subtraction is exact (Sterbenz). Returned with the terms as
    ratios of integers where they are (``rank_terms`` and ``rank_ratio`` of
    :func:`~rankstats.chance.exact_difference`).
    """
    tie = tie_terms(metric)
    assert tie is not None  # the mean-type metrics with chance terms
    optimistic = pairs.columns["optimistic"][rows].astype(np.int64)
    pessimistic = pairs.columns["pessimistic"][rows].astype(np.int64)
    values = tie(optimistic, pessimistic)
    ratio = tie_ratios(metric)
    return (values, 1.0 - values), None if ratio is None else ratio(optimistic, pessimistic)


def exact_group_differences(
    metric: RankBasedMetric,
    terms: ChanceTerms,
    stats: SideStatistics,
    rank_type: str,
    groups: IntArray,
    total: FloatArray,
    row_ranges: Callable[[Table], IntArray],
) -> FloatArray:
    r""":math:`M - \mathbb{E}` in each of ``groups``, exact sums over their rows of ``stats``.

    ``total`` is the total weight of every group; ``row_ranges(table)`` gives each group's range
    of rows of a table sorted by group, as an index pointer (so the group ids themselves may be
    gone). The result has an entry for each of ``groups``.
    """
    assert stats.candidates is not None
    table = stats.ranks.get(rank_type, stats.pairs)
    assert table is not None
    rank_rows, rank_groups = _rows_of(row_ranges(table), groups)
    candidates = stats.candidates
    candidate_rows, candidate_groups = _rows_of(row_ranges(candidates), groups)
    expected = rank_type == RANK_EXPECTED
    tie_values, tie_ratio = _tie_terms(metric, table, rank_rows) if expected else (None, None)
    differences: FloatArray = exact_difference(
        terms,
        None if expected else _ranks(table, rank_type, rank_rows),
        _weights_of(table, rank_rows),
        candidates.columns["num_candidates"][candidate_rows].astype(np.int64),
        _weights_of(candidates, candidate_rows),
        total[groups],
        rank_groups,
        candidate_groups,
        groups.size,
        rank_terms=tie_values,
        rank_ratio=tie_ratio,
    )
    return differences


def _weights_of(table: Table, rows: IntArray) -> FloatArray:
    """The total weight of the given rows, as :meth:`Table.weights` (not built for every row)."""
    weights: FloatArray = table.count[rows].astype(np.float64)
    if WEIGHT in table.columns:
        weights *= table.columns[WEIGHT][rows]
    return weights


def _rows_of(indptr: IntArray, groups: IntArray) -> tuple[IntArray, IntArray]:
    """The rows of ``groups`` given each group's row range, and each row's index in ``groups``."""
    starts = indptr[groups].astype(np.int64)
    lengths = indptr[groups + 1] - starts
    # each row's position within its group's run, added to the run's start
    local = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.repeat(starts, lengths) + local, np.repeat(np.arange(groups.size), lengths)


def _ranks(table: Table, rank_type: str, rows: IntArray) -> FloatArray:
    """The ranks of one type of the given rows (float64)."""
    columns = table.columns
    if "rank" in columns:
        return columns["rank"][rows].astype(np.float64)
    return pair_ranks(columns["optimistic"][rows], columns["pessimistic"][rows], rank_type)
