r"""Results of many groups at once: one column per row of the table, over all groups.

With thousands of groups (relations, queries, ...), a Python pass per group costs far more than
the arithmetic. Here every group is computed together: for a mean-type metric
:math:`M_g = \sum_{i \in g} a_i t(r_i)` (the mean rank, MRR, Hits@k, and through :math:`\ln r` the
geometric mean) the value of every group is a sum over each group's run of rows in the tables
(sorted by group), and so are the null moments
:math:`\mathbb{E}_g = \sum_{i \in g} a_i \mathbb{E}[t(r_i)]` and
:math:`\mathbb{V}_g = \sum_{i \in g} a_i^2 \mathbb{V}[t(r_i)]` from the per-task terms of
:mod:`rankstats.null.harmonic` and :func:`rankstats.metrics.hits.hit_probability`. A term depends
on the rank (or the candidate count) only, so it is evaluated once per value of the ranks' range
(or per distinct count), and all terms of a rank type (all null moments of a side) are summed in
one product with a sparse (groups x values) matrix of the rows' weights. Where a group has more
than 128 rows, ``np.add.reduceat`` sums each term pairwise instead, as :func:`numpy.sum` does.
The ranks' variance takes two such passes. Derived metrics (adjusted, z-scored) transform their
base's columns element-wise. Only metrics without such a form (the median, the MAD, ...) take a
pass per group, through the same code as a single cell.

The micro average (all groups as one) sums the groups' sums: no second pass over the tables for
the mean-type metrics, whose sums then differ from the ungrouped evaluation's by rounding only
(a few ulps); the others are computed from the merged tables, built only for them.

The result for each group is built only when it is looked up (:class:`LazyGroups`), so a table
of 10,000 groups costs a few vectorised passes until someone reads a group.

The per-task terms of each mean-type metric are in :mod:`rankstats.evaluation.terms`. This module
stays one piece, longer than most, because its builder caches the sums that the columns of all
metrics of a side share (values, gaps, squared weights, and the sums behind the micro average):
split, the cache would have to be passed between modules.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Collection, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from rankstats.arrays import FloatArray, IntArray
from rankstats.base import RankBasedMetric
from rankstats.evaluation.cells import NO_CANDIDATES, NullModels, base_value, base_value_gap
from rankstats.evaluation.results import (
    METHOD_EXACT,
    METHOD_MONTE_CARLO,
    EvaluationResults,
    ResultRow,
)
from rankstats.evaluation.scores import RANK_EXPECTED
from rankstats.evaluation.tables import GROUP, WEIGHT, CellStatistics, SideStatistics, Table
from rankstats.evaluation.terms import (
    Transform,
    identity,
    null_gap_term,
    null_terms,
    tie_terms,
    value_gap_terms,
    value_terms,
)
from rankstats.metrics.derived import (
    DerivedRankBasedMetric,
    ExpectationNormalizedMetric,
    ReindexedMetric,
    ZMetric,
)
from rankstats.metrics.dispersion import Count, StandardDeviation, Variance
from rankstats.null.grouping import distinct_inverse
from rankstats.progress import progress_bar

__all__ = ["Column", "LazyGroups", "group_columns", "macro_rows"]

#: groups of at most this many table rows are summed in sequence (numpy.sum's unrolled block)
_SEQUENTIAL_ROWS = 128

Plan = Sequence[tuple[str, Sequence[RankBasedMetric]]]
#: a metric, a per-task term of the ranks (or of the optimistic and pessimistic ranks) and the
#: transform of its mean that gives the metric's value (or its gap 1 - M)
MeanEntry = tuple[RankBasedMetric, Callable[..., FloatArray], Transform]
BoolArray = npt.NDArray[np.bool_]
CodeArray = npt.NDArray[np.int8]
#: a row's method by its code in a column: no statistics, closed forms, Monte-Carlo
METHODS: tuple[str | None, ...] = (None, METHOD_EXACT, METHOD_MONTE_CARLO)
_NONE, _EXACT, _MONTE_CARLO = 0, 1, 2
#: a base metric's null moments in every group: E, V, method, standard error, notes by group,
#: and the gap 1 - E computed directly (NaN where it is not)
NullColumn = tuple[FloatArray, FloatArray, CodeArray, FloatArray, dict[int, str], FloatArray]


class DerivedColumn(NamedTuple):
    """What a derived metric's columns of every rank type share, in every group."""

    scale: FloatArray
    offset: FloatArray
    expected: FloatArray
    variance: FloatArray
    #: the base's gap 1 - E
    gap: FloatArray
    methods: CodeArray
    notes: dict[int, str]
    #: the groups where the metric is undefined (NaN coefficients)
    undefined: IntArray
    #: the base's null standard deviation (z-scores only)
    std: FloatArray | None


@dataclass
class Column:
    """One row of the table (side, rank type, metric) for every group, as arrays of length G.

    ``expected_value`` and ``variance`` are NaN where there is none (``None`` in a row);
    ``present`` marks the groups that have tasks of positive weight on this side.
    """

    side: str
    rank_type: str
    metric: RankBasedMetric
    present: BoolArray
    value: FloatArray
    expected_value: FloatArray
    variance: FloatArray
    method: CodeArray
    standard_error: FloatArray
    note: dict[int, str] = field(default_factory=dict)

    def row(self, g: int) -> ResultRow:
        """The result row of group ``g``."""
        expected = float(self.expected_value[g])
        variance = float(self.variance[g])
        error = float(self.standard_error[g])
        return ResultRow(
            self.side,
            self.rank_type,
            self.metric,
            float(self.value[g]),
            None if math.isnan(expected) else expected,
            None if math.isnan(variance) else variance,
            method=METHODS[self.method[g]],
            standard_error=None if math.isnan(error) else error,
            note=self.note.get(g),
        )


class _TieSplit(NamedTuple):
    """The rows of a pairs table as untied (optimistic = pessimistic) and tied ones.

    An untied row has one rank for every rank type, so each mean-type term of it is the same
    for all four; its terms are evaluated once per value of the optimistic ranks' range
    (``keys``, the row's index into them ``inverse``) and summed with ``untied_weights`` (0 for
    the tied rows). The tied rows (a few, in practice) are summed row by row.
    """

    ids: IntArray
    keys: FloatArray
    inverse: IntArray
    untied_weights: FloatArray
    #: the groups with tied rows, each one's first tied row, each tied row's index into them,
    #: and whether a group has more than 128 tied rows (then summed pairwise)
    tied_groups: IntArray
    tied_starts: IntArray
    tied_local: IntArray
    tied_long: bool
    tied_weights: FloatArray
    tied_optimistic: IntArray
    tied_pessimistic: IntArray


class _Side:
    """The group-wise sums of one side's tables."""

    def __init__(
        self,
        stats: SideStatistics | Callable[[], SideStatistics],
        size: int,
        total: FloatArray | None = None,
        like: SideStatistics | None = None,
    ) -> None:
        """The sums over ``size`` groups of the tables ``stats``.

        ``stats`` may be a function that builds the tables when first needed; ``total`` is
        then the total weight of each group, and ``like`` tables of the same layout.
        """
        self._source = stats
        self.size = size
        layout = stats if isinstance(stats, SideStatistics) else like
        assert layout is not None
        self.has_pairs = layout.pairs is not None
        self.has_candidates = layout.candidates is not None
        # per table column of group ids: the start of each group's run of rows, the groups
        # present, the longest run, and each group's row range (a CSR index pointer)
        self._starts: dict[int, tuple[IntArray, IntArray, IntArray, int, IntArray]] = {}
        if total is None:
            base = self.stats.pairs or next(iter(self.stats.ranks.values()))
            total = self._sum(base.columns[GROUP], base.weights())
        self.total = total
        self.present = self.total > 0
        self._cells: dict[int, CellStatistics] = {}
        self._rows: dict[str, tuple[IntArray, FloatArray, FloatArray]] = {}
        self._distinct: dict[str, tuple[IntArray, FloatArray, IntArray | None, FloatArray]] = {}
        self._squared: dict[int, tuple[Table, FloatArray]] = {}
        self._matrices: dict[tuple[int, int, int], tuple[Any, ...]] = {}

    @functools.cached_property
    def stats(self) -> SideStatistics:
        """The side's tables."""
        return self._source if isinstance(self._source, SideStatistics) else self._source()

    def _layout(self, ids: IntArray) -> tuple[IntArray, IntArray, int, IntArray]:
        """Each group's first row, the groups present, the longest run, the row ranges."""
        key = id(ids)
        found = self._starts.get(key)
        if found is None or found[0] is not ids:
            starts = np.flatnonzero(np.concatenate(([True], ids[1:] != ids[:-1])))
            longest = int(np.diff(starts, append=ids.size).max()) if ids.size else 0
            indptr = np.searchsorted(ids, np.arange(self.size + 1))
            found = self._starts[key] = (ids, starts, ids[starts], longest, indptr)
        return found[1], found[2], found[3], found[4]

    def weighted_sums(
        self,
        ids: IntArray,
        weights: FloatArray,
        terms: Sequence[FloatArray],
        inverse: IntArray | None = None,
    ) -> list[FloatArray]:
        r"""Per-group sums of ``weights * t[inverse]`` for every ``t`` of ``terms``.

        With ``inverse``, each term holds one value per distinct key (rank or candidate count)
        and ``inverse`` gives each row's key; without, one value per row.

        The same sums as :meth:`_sum` of each product, in the same order: where every group has
        at most 128 rows, one product of a sparse (groups x keys) matrix of the weights, built
        once per table, with all terms side by side (each group's products added in row order,
        as ``np.bincount`` does, at a fifth of its cost for ten terms); otherwise by
        :meth:`_sum`, pairwise within each group.
        """
        if not terms:
            return []
        if ids.size and self._layout(ids)[2] <= _SEQUENTIAL_ROWS:
            stacked = np.empty((terms[0].size, len(terms)))
            for j, term in enumerate(terms):
                stacked[:, j] = term
            matrix = self._matrix(ids, weights, inverse, stacked.shape[0])
            summed = np.asarray(matrix @ stacked, dtype=np.float64)
            return list(summed.T)  # views: callers derive new arrays from them
        rows = terms if inverse is None else [t[inverse] for t in terms]
        return [self._sum(ids, t * weights) for t in rows]

    def _matrix(
        self, ids: IntArray, weights: FloatArray, inverse: IntArray | None, width: int
    ) -> Any:
        """The sparse (groups x keys) matrix of the rows' weights, built once per table."""
        key = (id(ids), id(weights), id(inverse))
        found = self._matrices.get(key)
        if found is None or any(
            a is not b for a, b in zip(found[:3], (ids, weights, inverse), strict=True)
        ):
            from scipy import sparse

            indptr = self._layout(ids)[3]
            columns = np.arange(ids.size) if inverse is None else inverse
            matrix = sparse.csr_matrix((weights, columns, indptr), shape=(self.size, width))
            found = self._matrices[key] = (ids, weights, inverse, matrix)
        return found[3]

    def _sum(self, ids: IntArray, values: FloatArray) -> FloatArray:
        r"""Per-group sums of ``values`` over rows sorted by group id ``ids``.

        As accurate as :func:`numpy.sum` of each group: where every group has at most 128 rows
        (numpy's own unrolled block, summed in sequence), one ``np.bincount``; otherwise
        ``np.add.reduceat`` over each group's run of rows, which sums pairwise (error
        :math:`O(\log n)` ulps where a sequential sum has :math:`O(n)`).
        """
        starts, present, longest, _ = self._layout(ids)
        values = np.asarray(values, dtype=np.float64)
        if longest <= _SEQUENTIAL_ROWS:
            summed = np.bincount(ids, weights=values, minlength=self.size)
            return np.asarray(summed[: self.size], dtype=np.float64)
        total = np.zeros(self.size)
        total[present] = np.add.reduceat(values, starts)
        return total

    def cell(self, g: int) -> CellStatistics:
        found = self._cells.get(g)
        if found is None:
            found = self._cells[g] = self.stats.cell(g)
        return found

    def rows(self, rank_type: str) -> tuple[IntArray, FloatArray, FloatArray]:
        """Group id, rank and total weight of each table row of a rank type."""
        found = self._rows.get(rank_type)
        if found is None:
            found = self._rows[rank_type] = self._compute_rows(rank_type)
        return found

    def _compute_rows(self, rank_type: str) -> tuple[IntArray, FloatArray, FloatArray]:
        if rank_type in self.stats.ranks:
            table = self.stats.ranks[rank_type]
            return table.columns[GROUP], table.columns["rank"], table.weights()
        ids, distinct, inverse, weights = self.distinct_rows(rank_type)
        return ids, distinct if inverse is None else distinct[inverse], weights

    def distinct_rows(self, rank_type: str) -> tuple[IntArray, Any, IntArray | None, FloatArray]:
        """Group id and total weight of each table row, the ranks' keys, each row's key.

        Terms are evaluated once per key and summed through each row's index into the keys: the
        keys are every value of the ranks' range where it is narrow (no wider than the rows).
        Where the ranks are not integers (given directly) or spread wider, the keys are the
        rows' own ranks (index ``None``); for ``"expected"``, a pair ``(optimistic,
        pessimistic)`` of the rows' arrays (the pairs' untied rows share the optimistic keys
        through :attr:`tie_split` instead).
        """
        found = self._distinct.get(rank_type)
        if found is None:
            found = self._distinct[rank_type] = self._compute_distinct_rows(rank_type)
        return found

    def _compute_distinct_rows(
        self, rank_type: str
    ) -> tuple[IntArray, Any, IntArray | None, FloatArray]:
        if rank_type in self.stats.ranks:
            table = self.stats.ranks[rank_type]
            return table.columns[GROUP], table.columns["rank"], None, table.weights()
        assert self.stats.pairs is not None
        pairs = self.stats.pairs
        optimistic, pessimistic = pairs.columns["optimistic"], pairs.columns["pessimistic"]
        ids, weights = pairs.columns[GROUP], pairs.weights()
        if rank_type == RANK_EXPECTED:
            return ids, (optimistic, pessimistic), None, weights
        if rank_type == "optimistic":
            key, scale = optimistic, 1.0
        elif rank_type == "pessimistic":
            key, scale = pessimistic, 1.0
        else:
            key, scale = optimistic + pessimistic, 0.5
        spread = _value_range(key)
        if spread is None:
            return ids, scale * key.astype(np.float64), None, weights
        low, high = spread
        return ids, scale * np.arange(low, high + 1, dtype=np.float64), key - low, weights

    @functools.cached_property
    def tie_split(self) -> _TieSplit | None:
        """The pairs' rows split into untied and tied ones, or ``None``.

        ``None`` without pairs (ranks given directly) or where the optimistic ranks spread wider
        than the rows.
        """
        if not self.has_pairs:
            return None
        ids, keys, inverse, weights = self.distinct_rows("optimistic")
        if inverse is None:
            return None
        pairs = self.stats.pairs
        assert pairs is not None
        optimistic, pessimistic = pairs.columns["optimistic"], pairs.columns["pessimistic"]
        tied = np.flatnonzero(optimistic != pessimistic)
        untied_weights = weights.copy()
        untied_weights[tied] = 0.0  # adds an exact 0 in the untied rows' sums
        tied_ids = ids[tied]  # sorted, as the rows
        new = np.empty(tied_ids.size, dtype=np.bool_)
        new[:1] = True
        np.not_equal(tied_ids[1:], tied_ids[:-1], out=new[1:])
        starts = np.flatnonzero(new)
        longest = int(np.diff(starts, append=tied_ids.size).max()) if tied_ids.size else 0
        return _TieSplit(
            ids,
            keys,
            inverse,
            untied_weights,
            tied_ids[starts],
            starts,
            np.cumsum(new) - 1,
            longest > _SEQUENTIAL_ROWS,
            weights[tied],
            optimistic[tied],
            pessimistic[tied],
        )

    def mean(self, ids: IntArray, terms: FloatArray, weights: FloatArray) -> FloatArray:
        """The weighted mean of per-row terms in every group (NaN where a group is empty)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.weighted_sums(ids, weights, [terms])[0] / self.total

    def squared_weights(self, table: Table) -> FloatArray:
        """Each row's count times its squared weight, the weight of a variance term."""
        if WEIGHT not in table.columns:
            return table.weights()  # the counts
        found = self._squared.get(id(table))
        if found is None or found[0] is not table:
            squared = table.count.astype(np.float64) * table.columns[WEIGHT] ** 2
            found = self._squared[id(table)] = (table, squared)
        return found[1]

    @functools.cached_property
    def squared_total(self) -> FloatArray:
        """The square of each group's total weight."""
        return self.total * self.total


class _Builder:
    """Computes the columns of one side."""

    def __init__(
        self, side: str, data: _Side, null: NullModels, size: int, progress: bool | None = False
    ) -> None:
        self.side = side
        self.progress = progress
        self.data = data
        self.null = null
        self.size = size
        self._nulls: dict[RankBasedMetric, NullColumn] = {}
        self._derived_columns: dict[RankBasedMetric, DerivedColumn] = {}
        self._values: dict[tuple[RankBasedMetric, str], FloatArray] = {}
        # 1 - M computed directly, or None where there is no such form (then 1 - M)
        self._value_gaps: dict[tuple[RankBasedMetric, str], FloatArray | None] = {}
        self._groups = np.flatnonzero(data.present)
        self._distinct: tuple[IntArray, IntArray] | None = None
        # NaN in every group, shared (read-only) by the columns without standard errors or gaps
        self._nan = np.full(size, math.nan)
        self._nan.flags.writeable = False
        # the per-group sums behind the values, gaps and null moments, for the micro average:
        # the values' and gaps' by (metric, rank type) with the transform of the mean (None for a
        # sum), the null moments' (E, V, gap 1 - E or None) by metric
        self._value_sums: dict[tuple[RankBasedMetric, str], tuple[FloatArray, Transform | None]]
        self._value_sums = {}
        self._gap_sums: dict[tuple[RankBasedMetric, str], tuple[FloatArray, Transform]] = {}
        self._null_sums: dict[RankBasedMetric, tuple[FloatArray, FloatArray, FloatArray | None]]
        self._null_sums = {}

    # --- values ------------------------------------------------------------------------------

    def value(self, metric: RankBasedMetric, rank_type: str) -> FloatArray:
        key = (metric, rank_type)
        found = self._values.get(key)
        if found is None:
            found = self._values[key] = self._compute_value(metric, rank_type)
        return found

    def _compute_value(self, metric: RankBasedMetric, rank_type: str) -> FloatArray:
        data = self.data
        kind = type(metric)
        if kind is Count:
            table = data.stats.pairs or next(iter(data.stats.ranks.values()))
            counts = data._sum(table.columns[GROUP], table.count.astype(np.float64))
            self._value_sums[(metric, rank_type)] = (counts, None)
            return counts
        if rank_type == RANK_EXPECTED:
            tie = tie_terms(metric)
            if tie is not None:
                return self._means(rank_type, [(metric, tie, identity)])[0]
        else:
            terms_of = value_terms(metric)
            if terms_of is not None:
                return self._means(rank_type, [(metric, *terms_of)])[0]
            if kind in (Variance, StandardDeviation):
                ids, ranks, weights = data.rows(rank_type)
                mean = data.mean(ids, ranks, weights)
                deviation = ranks - mean[ids]
                variance = data.mean(ids, deviation * deviation, weights)
                return variance if kind is Variance else np.sqrt(variance)
        values = np.full(self.size, math.nan)
        desc = f"{self.side}: {metric.key} ({rank_type}) group by group"
        with progress_bar(self._groups.size, desc, self.progress) as bar:
            for g in self._groups:
                values[g] = base_value(metric, data.cell(int(g)), rank_type)
                bar.update(1)
        return values

    def _means(
        self,
        rank_type: str,
        values: Sequence[MeanEntry],
        gaps: Sequence[MeanEntry] = (),
    ) -> list[FloatArray]:
        """``f(mean of t)`` in every group for each ``(metric, t, f)``, in one batch.

        ``values`` give the metrics' values, ``gaps`` their gaps ``1 - M``. ``t`` is a per-task
        term of the ranks, or of the optimistic and pessimistic ranks for the expectation over
        tie-breaking; it is evaluated once per distinct rank where the ranks are integers (or
        half-integers) of a narrow range. The sums are kept for the micro average.
        """
        data = self.data
        if data.tie_split is not None:
            return self._pair_means({rank_type: (values, gaps)})[rank_type]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            ids, keys, inverse, weights = data.distinct_rows(rank_type)
            expected = rank_type == RANK_EXPECTED
            terms = [term(*keys) if expected else term(keys) for _, term, _ in (*values, *gaps)]
            sums = data.weighted_sums(ids, weights, terms, inverse)
            means: list[FloatArray] = []
            for (metric, _, finish), summed in zip((*values, *gaps), sums, strict=True):
                if len(means) < len(values):
                    self._value_sums[(metric, rank_type)] = (summed, finish)
                else:
                    self._gap_sums[(metric, rank_type)] = (summed, finish)
                means.append(finish(summed / data.total))
            return means

    def _pair_means(
        self, requests: Mapping[str, tuple[Sequence[MeanEntry], Sequence[MeanEntry]]]
    ) -> dict[str, list[FloatArray]]:
        """:meth:`_means` of several rank types of the pairs, two batches of sums in all.

        ``requests`` gives each rank type's values and gaps as :meth:`_means` takes them. The
        untied rows' terms are the same for every rank type (the term of a rank ``r`` for the
        optimistic, pessimistic and realistic rank ``r``, and over ties broken in ``[r, r]``):
        one batch sums each distinct term over the untied rows, one sums every rank type's terms
        over the tied rows, and a group's sum is the two added.
        """
        data = self.data
        split = data.tie_split
        assert split is not None
        integer_keys = split.keys.astype(np.int64)
        low, high = split.tied_optimistic, split.tied_pessimistic
        tied_ranks = {
            "optimistic": low.astype(np.float64),
            "pessimistic": high.astype(np.float64),
            "realistic": 0.5 * (low + high).astype(np.float64),
        }
        untied: dict[tuple[RankBasedMetric, bool], int] = {}
        untied_terms: list[FloatArray] = []
        tied_terms: list[FloatArray] = []
        # per rank type: (metric, is gap, transform, index of the untied sum), in the order of
        # tied_terms
        entries: dict[str, list[tuple[RankBasedMetric, bool, Transform, int]]] = {}
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            for rank_type, (values, gaps) in requests.items():
                expected = rank_type == RANK_EXPECTED
                listed = entries[rank_type] = []
                for is_gap, chosen in ((False, values), (True, gaps)):
                    for metric, term, finish in chosen:
                        index = untied.get((metric, is_gap))
                        if index is None:
                            index = untied[(metric, is_gap)] = len(untied_terms)
                            untied_terms.append(
                                term(integer_keys, integer_keys) if expected else term(split.keys)
                            )
                        tied_terms.append(
                            term(low, high) if expected else term(tied_ranks[rank_type])
                        )
                        listed.append((metric, is_gap, finish, index))
            untied_sums = data.weighted_sums(
                split.ids, split.untied_weights, untied_terms, split.inverse
            )
            # the few tied rows, only for the groups that have some: each group's in row order
            # (as np.bincount adds), pairwise where a group has more than 128 (as _sum)
            groups, local, count = split.tied_groups, split.tied_local, split.tied_groups.size
            tied_terms.reverse()
            means: dict[str, list[FloatArray]] = {}
            for rank_type, listed in entries.items():
                means[rank_type] = []
                for metric, is_gap, finish, index in listed:
                    summed = untied_sums[index]
                    tied_term = tied_terms.pop()
                    if count:
                        weighted = tied_term * split.tied_weights
                        summed = summed.copy()
                        if split.tied_long:
                            summed[groups] += np.add.reduceat(weighted, split.tied_starts)
                        else:
                            summed[groups] += np.bincount(local, weights=weighted, minlength=count)
                    if is_gap:
                        self._gap_sums[(metric, rank_type)] = (summed, finish)
                    else:
                        self._value_sums[(metric, rank_type)] = (summed, finish)
                    means[rank_type].append(finish(summed / data.total))
        return means

    def prefetch(self, plan: Plan) -> None:
        """The values (and gaps ``1 - M``) of every mean-type base metric: one batch per type."""
        gapped = {m.base for _, ms in plan for m in ms if isinstance(m, DerivedRankBasedMetric)}
        requests: dict[str, tuple[list[MeanEntry], list[MeanEntry]]] = {}
        for rank_type, chosen in plan:
            if rank_type == RANK_EXPECTED and not self.data.has_pairs:
                continue
            bases = dict.fromkeys(
                m.base if isinstance(m, DerivedRankBasedMetric) else m for m in chosen
            )
            values: list[MeanEntry] = []
            gaps: list[MeanEntry] = []
            for metric in bases:
                key = (metric, rank_type)
                if rank_type == RANK_EXPECTED:
                    tie = tie_terms(metric)
                    if tie is not None and key not in self._values:
                        values.append((metric, tie, identity))
                    continue
                terms_of = value_terms(metric)
                if terms_of is not None and key not in self._values:
                    values.append((metric, *terms_of))
                gap_terms = value_gap_terms(metric) if metric in gapped else None
                if gap_terms is not None and key not in self._value_gaps:
                    gaps.append((metric, *gap_terms))
            if values or gaps:
                requests[rank_type] = (values, gaps)
        if not requests:
            return
        if self.data.tie_split is not None:
            found = self._pair_means(requests)
        else:
            found = {rt: self._means(rt, *request) for rt, request in requests.items()}
        for rank_type, (values, gaps) in requests.items():
            means = iter(found[rank_type])
            for target, entries in ((self._values, values), (self._value_gaps, gaps)):
                target.update(((metric, rank_type), next(means)) for metric, _, _ in entries)

    def value_gap(self, metric: RankBasedMetric, rank_type: str) -> FloatArray:
        """``1 - M`` of a base metric in every group, computed directly where it can be."""
        key = (metric, rank_type)
        if key not in self._value_gaps:
            self._value_gaps[key] = self._compute_value_gap(metric, rank_type)
        found = self._value_gaps[key]
        return 1.0 - self.value(metric, rank_type) if found is None else found

    def _compute_value_gap(self, metric: RankBasedMetric, rank_type: str) -> FloatArray | None:
        """``1 - M`` computed directly, or ``None`` where no group has such a form."""
        if rank_type == RANK_EXPECTED:
            return None
        terms_of = value_gap_terms(metric)
        if terms_of is not None:
            return self._means(rank_type, [], [(metric, *terms_of)])[0]
        if value_terms(metric) is not None or type(metric) in (Count, Variance, StandardDeviation):
            return None  # vectorised values without a gap form
        gaps = np.full(self.size, math.nan)
        for g in self._groups:
            gaps[g] = _nan(base_value_gap(metric, self.data.cell(int(g)), rank_type))
        missing = np.isnan(gaps)  # 1 - M where a group's metric has no direct form
        gaps[missing] = 1.0 - self.value(metric, rank_type)[missing]
        return gaps

    # --- null moments ------------------------------------------------------------------------

    def prepare(self, metrics: Sequence[RankBasedMetric]) -> None:
        """Compute the null columns of the base metrics; sample once per group for the rest."""
        if not self.data.has_candidates:
            return
        bases = list(
            dict.fromkeys(m.base if isinstance(m, DerivedRankBasedMetric) else m for m in metrics)
        )
        # the bases whose gap 1 - E a derived metric uses
        gapped = {m.base for m in metrics if isinstance(m, DerivedRankBasedMetric)}
        vectorised = [
            m
            for m in bases
            if m not in self._nulls and (type(m) is Count or null_terms(m) is not None)
        ]
        self._nulls.update(self._vectorised_nulls(vectorised, gapped))
        looped = [m for m in bases if m not in self._nulls]
        if not looped:
            return
        columns: dict[RankBasedMetric, NullColumn] = {
            metric: (
                np.full(self.size, math.nan),
                np.full(self.size, math.nan),
                np.zeros(self.size, dtype=np.int8),
                np.full(self.size, math.nan),
                {},
                np.full(self.size, math.nan),
            )
            for metric in looped
        }
        desc = f"{self.side}: null models group by group"
        with progress_bar(self._groups.size, desc, self.progress) as bar:
            for g in self._groups:
                self._null_of_group(int(g), looped, columns)
                bar.update(1)
        self._nulls.update(columns)

    def _null_of_group(
        self, g: int, looped: Sequence[RankBasedMetric], columns: dict[RankBasedMetric, NullColumn]
    ) -> None:
        cell = self.data.cell(g)
        self.null.prepare(looped, cell)
        for metric in looped:
            found = self.null.get(metric, cell)
            expected, variance, methods, errors, notes, gaps = columns[metric]
            gaps[g] = _nan(found.gap)
            expected[g] = _nan(found.expected_value)
            variance[g] = _nan(found.variance)
            methods[g] = METHODS.index(found.method)
            errors[g] = _nan(found.standard_error)
            if found.note is not None:
                notes[g] = found.note

    def _vectorised_nulls(
        self, metrics: Sequence[RankBasedMetric], gapped: Collection[RankBasedMetric]
    ) -> dict[RankBasedMetric, NullColumn]:
        """The null columns of the count and the mean-type metrics, from one batch of sums.

        The per-task terms are evaluated once per distinct candidate count; the gap ``1 - E`` is
        summed for the bases in ``gapped`` only.
        """
        if not metrics:
            return {}
        data = self.data
        table = data.stats.candidates
        assert table is not None
        ids = table.columns[GROUP]
        distinct, inverse = self._distinct_candidates()
        weights, squared = table.weights(), data.squared_weights(table)
        # E and gap terms (summed with the weights), V terms (with the squared weights)
        first: list[FloatArray] = []
        second: list[FloatArray] = []
        for metric in metrics:
            terms = null_terms(metric)
            if terms is None:
                continue  # the count
            mean_of, variance_of = terms
            first.append(mean_of(distinct))
            second.append(variance_of(distinct))
            gap_of = null_gap_term(metric) if metric in gapped else None
            if gap_of is not None:
                first.append(gap_of(distinct))
        if squared is weights:  # unweighted: one batch
            sums = data.weighted_sums(ids, weights, first + second, inverse)
            first_sums, second_sums = sums[: len(first)], sums[len(first) :]
        else:
            first_sums = data.weighted_sums(ids, weights, first, inverse)
            second_sums = data.weighted_sums(ids, squared, second, inverse)
        # every column shares its methods and standard errors (read-only)
        methods = np.full(self.size, _EXACT, dtype=np.int8)
        methods.flags.writeable = False
        errors = no_gaps = self._nan
        columns: dict[RankBasedMetric, NullColumn] = {}
        sums_of, variances_of = iter(first_sums), iter(second_sums)
        with np.errstate(invalid="ignore", divide="ignore"):
            for metric in metrics:
                if null_terms(metric) is None:
                    counts = data._sum(ids, table.count.astype(np.float64))
                    columns[metric] = (counts, np.zeros(self.size), methods, errors, {}, no_gaps)
                    continue
                expected_sum, variance_sum, gap_sum = next(sums_of), next(variances_of), None
                gaps = no_gaps
                if metric in gapped and null_gap_term(metric) is not None:
                    gap_sum = next(sums_of)
                    gaps = gap_sum / data.total
                self._null_sums[metric] = (expected_sum, variance_sum, gap_sum)
                expected = expected_sum / data.total
                variance = variance_sum / data.squared_total
                columns[metric] = (expected, variance, methods, errors, {}, gaps)
        return columns

    def _distinct_candidates(self) -> tuple[IntArray, IntArray]:
        """The distinct candidate counts over all groups, and each table row's index into them."""
        if self._distinct is None:
            table = self.data.stats.candidates
            assert table is not None
            candidates = table.columns["num_candidates"]
            spread = _value_range(candidates)
            if spread is None:
                self._distinct = distinct_inverse(candidates)
            else:  # every count of a narrow range: no lookup table to build
                low, high = spread
                self._distinct = np.arange(low, high + 1, dtype=candidates.dtype), candidates - low
        return self._distinct

    def null_column(self, metric: RankBasedMetric) -> NullColumn:
        """E, V, method, standard error and notes of a metric in every group."""
        if not self.data.has_candidates:
            note = NO_CANDIDATES.note
            assert note is not None
            return (
                np.full(self.size, math.nan),
                np.full(self.size, math.nan),
                np.zeros(self.size, dtype=np.int8),
                np.full(self.size, math.nan),
                dict.fromkeys(self._groups.tolist(), note),
                np.full(self.size, math.nan),
            )
        return self._nulls[metric]

    # --- the micro average ---------------------------------------------------------------------

    def micro(self, merged: Callable[[], SideStatistics]) -> _Builder:
        """The builder of the one group of all tasks (the micro average), from this one's sums.

        Each mean-type value, gap and null moment is a sum over the tasks: the sum over the
        groups of this builder's per-group sums (pairwise, as :func:`numpy.sum`), with no second
        pass over the tables. Anything else (the median, the variance of the ranks, ...) is
        computed from ``merged()``, the tables of all groups merged, built when first needed.
        """
        total = np.array([self.data.total.sum()])
        micro = _Builder(self.side, _Side(merged, 1, total, self.data.stats), self.null, 1)
        squared_total = micro.data.squared_total
        methods = np.full(1, _EXACT, dtype=np.int8)
        methods.flags.writeable = False

        def summed(sums: FloatArray) -> FloatArray:
            return np.array([sums.sum()])

        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            for key, (sums, finish) in self._value_sums.items():
                micro._values[key] = (
                    summed(sums) if finish is None else finish(summed(sums) / total)
                )
            for key, (sums, finish) in self._gap_sums.items():
                micro._value_gaps[key] = finish(summed(sums) / total)
            for metric, (expected, variance, gap) in self._null_sums.items():
                micro._nulls[metric] = (
                    summed(expected) / total,
                    summed(variance) / squared_total,
                    methods,
                    micro._nan,
                    {},
                    micro._nan if gap is None else summed(gap) / total,
                )
            for metric, column in self._nulls.items():
                if type(metric) is Count:
                    count = summed(column[0])
                    micro._nulls[metric] = (count, np.zeros(1), methods, micro._nan, {}, micro._nan)
        return micro

    # --- columns -----------------------------------------------------------------------------

    def column(self, rank_type: str, metric: RankBasedMetric) -> Column:
        present = self.data.present
        if not isinstance(metric, DerivedRankBasedMetric):
            expected, variance, methods, errors, notes, _ = self.null_column(metric)
            return Column(
                self.side,
                rank_type,
                metric,
                present,
                self.value(metric, rank_type),
                expected,
                variance,
                methods,
                errors,
                notes,
            )
        derived = self._derived(metric)
        with np.errstate(divide="ignore", invalid="ignore"):
            # the metric's own transformation, from the gaps 1 - M and 1 - E (which carry the
            # digits M and E share with 1) where it uses them
            if isinstance(metric, ReindexedMetric) and metric._uses_value_gap:
                value = 1.0 - self.value_gap(metric.base, rank_type) / derived.gap
                value[derived.undefined] = math.nan
            elif isinstance(metric, ZMetric) and metric._uses_value_gap:
                assert derived.std is not None
                sign = 1.0 if metric.base.increasing else -1.0
                difference = derived.gap - self.value_gap(metric.base, rank_type)
                value = sign * difference / derived.std + 0.0
                value[derived.undefined] = math.nan
            else:
                value = derived.scale * self.value(metric.base, rank_type) + derived.offset
        return Column(
            self.side,
            rank_type,
            metric,
            present,
            value,
            derived.expected,
            derived.variance,
            derived.methods,
            self._nan,
            derived.notes,
        )

    def _derived(self, metric: DerivedRankBasedMetric) -> DerivedColumn:
        """What a derived metric's columns of every rank type share (the same null moments)."""
        found = self._derived_columns.get(metric)
        if found is None:
            found = self._derived_columns[metric] = self._compute_derived(metric)
        return found

    def _compute_derived(self, metric: DerivedRankBasedMetric) -> DerivedColumn:
        base_expected, base_variance, base_methods, _, base_notes, base_gap = self.null_column(
            metric.base
        )
        gap = np.where(np.isnan(base_gap), 1.0 - base_expected, base_gap)
        scale, offset, expected, variance, undefined = _affine(
            metric, base_expected, base_variance, gap, self._groups
        )
        methods = base_methods.copy()
        notes = dict(base_notes)
        for g, reason in undefined.items():
            methods[g] = _NONE
            notes[g] = reason
        if (base_methods == _MONTE_CARLO).any():
            for g in np.flatnonzero(methods == _MONTE_CARLO).tolist():
                if g not in undefined:
                    notes[g] = (
                        f"coefficients from a Monte-Carlo estimate of the null moments of "
                        f"{metric.base.key}"
                    )
        std = np.sqrt(base_variance) if isinstance(metric, ZMetric) else None
        undefined_groups = np.flatnonzero(np.isnan(scale))
        return DerivedColumn(
            scale, offset, expected, variance, gap, methods, notes, undefined_groups, std
        )


def _value_range(values: IntArray) -> tuple[int, int] | None:
    """The least and greatest of integers spread over at most as many values as there are."""
    if not values.size:
        return None
    low, high = int(values.min()), int(values.max())
    return (low, high) if high - low < values.size else None


def _nan(value: float | None) -> float:
    return math.nan if value is None else value


def _affine(
    metric: DerivedRankBasedMetric,
    base_expected: FloatArray,
    base_variance: FloatArray,
    base_gap: FloatArray,
    groups: IntArray,
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, dict[int, str]]:
    r"""The coefficients and null moments of a derived metric in every group, element-wise.

    ``base_gap`` is :math:`1 - \mathbb{E}` of the base, computed directly where it can be.

    The array form of the metric's ``_coefficients_from`` / ``_moments_from``; a group where
    these are undefined (or the base has no moments) gets NaN and, in the returned mapping, the
    reason the scalar form gives. Derived classes other than the three adjustments fall back to
    the scalar form group by group.
    """
    size = base_expected.size
    with np.errstate(divide="ignore", invalid="ignore"):
        if isinstance(metric, ReindexedMetric):
            bad = base_gap == 0.0
            scale = 1.0 / base_gap
            offset = -scale * base_expected
            expected = np.zeros(size)
            variance = scale * scale * base_variance
        elif isinstance(metric, ZMetric):
            bad = ~(base_variance > 0)
            sign = 1.0 if metric.base.increasing else -1.0
            scale = sign / np.sqrt(base_variance)
            offset = -scale * base_expected
            expected, variance = np.zeros(size), np.ones(size)
        elif isinstance(metric, ExpectationNormalizedMetric):
            bad = base_expected == 0.0
            scale = 1.0 / base_expected
            offset = np.zeros(size)
            expected = np.ones(size)
            variance = scale * scale * base_variance
        else:
            scale, offset = np.full(size, math.nan), np.full(size, math.nan)
            expected, variance = np.full(size, math.nan), np.full(size, math.nan)
            bad = np.zeros(size, dtype=bool)
            for g in groups:
                mean, var = float(base_expected[g]), float(base_variance[g])
                variance_g = None if math.isnan(var) else var
                gap_g = float(base_gap[g])
                try:
                    scale[g], offset[g] = metric._coefficients_from(mean, variance_g, gap_g)
                    e, v = metric._moments_from(mean, variance_g, gap_g)
                except ValueError:
                    bad[g] = True
                    continue
                expected[g], variance[g] = e, _nan(v)
    missing = np.isnan(base_expected) | (
        np.isnan(base_variance) if metric._coefficients_use_variance else False
    )
    undefined: dict[int, str] = {}
    for g in groups[bad[groups] & ~missing[groups]]:
        try:
            metric._coefficients_from(
                float(base_expected[g]), float(base_variance[g]), float(base_gap[g])
            )
        except ValueError as error:
            undefined[int(g)] = str(error)
        else:  # pragma: no cover - the array form and the scalar form disagree
            raise AssertionError(f"{metric!r}: group {g} undefined in array form only")
    dropped = bad | missing
    for array in (scale, offset, expected, variance):
        array[dropped] = math.nan
    variance[np.isnan(base_variance)] = math.nan
    return scale, offset, expected, variance, undefined


def group_columns(
    stats: Mapping[str, SideStatistics],
    size: int,
    plan: Plan,
    null: NullModels,
    progress: bool | None = False,
    *,
    micro: bool = False,
) -> tuple[list[Column], list[ResultRow]]:
    """Every column (side, rank type, metric) over ``size`` groups, in table order.

    With ``micro``, also the rows of all groups together (the micro average), in table order;
    otherwise no rows.
    """
    metrics = list(dict.fromkeys(m for _, ms in plan for m in ms))
    columns: list[Column] = []
    builders = []
    for side, side_stats in stats.items():
        builder = _Builder(side, _Side(side_stats, size), null, size, progress)
        builder.prepare(metrics)
        builder.prefetch(plan)
        for rank_type, chosen in plan:
            columns.extend(builder.column(rank_type, metric) for metric in chosen)
        builders.append(builder)
    rows: list[ResultRow] = []
    # after every side's groups, as Monte-Carlo estimates draw from one generator in turn
    for builder, side_stats in zip(builders, stats.values(), strict=True) if micro else ():
        everything = builder.micro(side_stats.merged_one_group)
        if everything.data.present[0]:
            everything.prepare(metrics)
            everything.prefetch(plan)
            for rank_type, chosen in plan:
                rows.extend(everything.column(rank_type, m).row(0) for m in chosen)
    return columns, rows


class LazyGroups(Mapping[Hashable, EvaluationResults]):
    """The results of each group, by label, each built when first looked up."""

    def __init__(
        self,
        labels: Sequence[Hashable],
        columns: Sequence[Column],
        present: BoolArray,
        make: Callable[[list[ResultRow]], EvaluationResults],
    ) -> None:
        self._columns = list(columns)
        self._labels = list(labels)  # the results stay as they are if the caller changes these
        self._present = present.copy()
        self._make = make
        self._built: dict[int, EvaluationResults] = {}

    @functools.cached_property
    def _ids(self) -> dict[Hashable, int]:
        """The id of each label's group, built on first use (thousands of labels)."""
        ids = np.flatnonzero(self._present).tolist()
        return dict(zip([self._labels[g] for g in ids], ids, strict=True))

    def __getitem__(self, label: Hashable) -> EvaluationResults:
        g = self._ids[label]
        found = self._built.get(g)
        if found is None:
            rows = [column.row(g) for column in self._columns if column.present[g]]
            found = self._built.setdefault(g, self._make(rows))
        return found

    def __iter__(self) -> Iterator[Hashable]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, label: object) -> bool:
        try:
            return label in self._ids
        except TypeError:
            return False


def macro_rows(columns: Sequence[Column]) -> list[ResultRow]:
    r"""Average every column over its groups (each group counts once).

    The value and :math:`\mathbb{E}` average, and :math:`\mathbb{V}` becomes
    :math:`\sum_g \mathbb{V}_g / G^2`: groups hold disjoint tasks, independent under the null.
    Groups where a metric is undefined (an adjusted index of a group whose tasks all have a
    single candidate) are left out of that metric's average, and its row says so.
    """
    rows = []
    every_group = slice(None)  # every group, in order: a view of each array, the same sums
    # the columns of a side share one array of the groups present, and the columns of a metric's
    # rank types its arrays of null moments and methods: each is reduced once
    found: dict[int, tuple[BoolArray, IntArray]] = {}
    reduced: dict[tuple[int, int, str], tuple[Any, Any, Any]] = {}

    def reduce(array: Any, chosen: slice | IntArray, how: str) -> Any:
        key = (id(array), id(chosen), how)
        known = reduced.get(key)
        if known is None or known[0] is not array or known[1] is not chosen:
            part = array[chosen]
            result: Any
            if how == "sum":  # NaN where any entry is
                result = float(part.sum())
            elif how == "method":
                low, high = int(part.min()), int(part.max())
                result = METHODS[_MONTE_CARLO if high == _MONTE_CARLO else int(low > _NONE)]
            else:  # the standard errors of Monte-Carlo estimates, where there are
                errors = part[~np.isnan(part)]
                result = math.sqrt(float((errors * errors).sum())) if errors.size else None
            known = reduced[key] = (array, chosen, result)
        return known[2]

    for column in columns:
        known = found.get(id(column.present))
        if known is None or known[0] is not column.present:
            known = found[id(column.present)] = (column.present, np.flatnonzero(column.present))
        groups = known[1]
        if groups.size == 0:
            continue
        chosen: slice | IntArray = every_group if groups.size == column.value.size else groups
        value = reduce(column.value, chosen, "sum")
        defined, left_out = groups, groups[:0]
        if math.isnan(value):  # the value is undefined (NaN) in some groups
            undefined = np.isnan(column.value[chosen])
            if undefined.any():
                defined, left_out = groups[~undefined], groups[undefined]
                chosen = defined
                value = float(column.value[chosen].sum())
        key = (column.side, column.rank_type, column.metric)
        if defined.size == 0:
            reasons = "; ".join(dict.fromkeys(column.note.values()))
            rows.append(
                ResultRow(
                    *key,
                    math.nan,
                    None,
                    None,
                    method=None,
                    note=f"undefined in every one of the {groups.size} groups: {reasons}",
                )
            )
            continue
        count = defined.size
        expected = reduce(column.expected_value, chosen, "sum")
        variance = reduce(column.variance, chosen, "sum")
        method = reduce(column.method, chosen, "method")
        error = (
            reduce(column.standard_error, chosen, "errors")
            if method == METHOD_MONTE_CARLO
            else None
        )
        note = None
        if column.note or left_out.size:
            note = _macro_note(column, groups, defined, left_out)
        rows.append(
            ResultRow(
                *key,
                value / count,
                None if math.isnan(expected) else expected / count,
                None if math.isnan(variance) else variance / count**2,
                method=method,
                standard_error=None if error is None else error / count,
                note=note,
            )
        )
    return rows


def _macro_note(
    column: Column, groups: IntArray, defined: IntArray, left_out: IntArray
) -> str | None:
    """The note of a macro-averaged row: the groups' notes, and those left out and why."""
    is_defined = np.zeros(column.value.size, dtype=bool)
    is_defined[defined] = True
    note = "; ".join(dict.fromkeys(n for g, n in column.note.items() if is_defined[g]))
    if left_out.size:
        reasons = "; ".join(
            dict.fromkeys(
                n for g, n in column.note.items() if column.present[g] and not is_defined[g]
            )
        )
        note = (
            f"macro average over the {defined.size} of {groups.size} groups where it is "
            f"defined; {left_out.size} left out ({reasons})" + (f"; {note}" if note else "")
        )
    return note or None
