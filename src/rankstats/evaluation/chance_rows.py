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
from rankstats.chance import ChanceTerms, exact_difference
from rankstats.evaluation.scores import RANK_EXPECTED
from rankstats.evaluation.tables import CellStatistics, SideStatistics, Table

__all__ = ["exact_cell_difference", "exact_group_differences", "has_exact_difference"]


def has_exact_difference(metric: RankBasedMetric) -> bool:
    """Whether a metric is a mean of per-task terms whose :math:`M - E` can be summed exactly."""
    return metric._chance_terms() is not None


def exact_cell_difference(
    metric: RankBasedMetric, cell: CellStatistics, rank_type: str
) -> Callable[[], float] | None:
    r""":math:`M - \mathbb{E}` of a mean-type metric as one exact sum over a cell's rows.

    ``None`` where there is no such sum: a metric that is no mean of per-task terms, no candidate
    counts, or the expectation over ties (whose per-row terms are not split into their gaps).
    """
    terms = metric._chance_terms()
    if terms is None or cell.candidates is None or rank_type == RANK_EXPECTED:
        return None
    chance_terms = terms

    def exact() -> float:
        values, weights = cell.histogram(rank_type)
        tasks = cell.tasks
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

    return exact


def exact_group_differences(
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
    gone). The result has an entry for each of ``groups``. ``rank_type`` is not the expectation
    over ties.
    """
    assert stats.candidates is not None
    assert rank_type != RANK_EXPECTED
    table = stats.ranks.get(rank_type, stats.pairs)
    assert table is not None
    rank_rows, rank_groups = _rows_of(row_ranges(table), groups)
    candidates = stats.candidates
    candidate_rows, candidate_groups = _rows_of(row_ranges(candidates), groups)
    differences: FloatArray = exact_difference(
        terms,
        _ranks(table, rank_type, rank_rows),
        table.weights()[rank_rows],
        candidates.columns["num_candidates"][candidate_rows].astype(np.int64),
        candidates.weights()[candidate_rows],
        total[groups],
        rank_groups,
        candidate_groups,
        groups.size,
    )
    return differences


def _rows_of(indptr: IntArray, groups: IntArray) -> tuple[IntArray, IntArray]:
    """The rows of ``groups`` given each group's row range, and each row's index in ``groups``."""
    starts = indptr[groups].astype(np.int64)
    lengths = indptr[groups + 1] - starts
    # each row's position within its group's run, added to the run's start
    local = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.repeat(starts, lengths) + local, np.repeat(np.arange(groups.size), lengths)


def _ranks(table: Table, rank_type: str, rows: IntArray) -> FloatArray:
    """The ranks of one type of the given rows (float64)."""
    if "rank" in table.columns:
        return table.columns["rank"][rows].astype(np.float64)
    optimistic = table.columns["optimistic"][rows].astype(np.float64)
    pessimistic = table.columns["pessimistic"][rows].astype(np.float64)
    if rank_type == "optimistic":
        return optimistic
    if rank_type == "pessimistic":
        return pessimistic
    return 0.5 * (optimistic + pessimistic)
