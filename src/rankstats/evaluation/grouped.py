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
(or per distinct count), and all the values of a side (all its null moments) are summed in one
batch (:mod:`rankstats.evaluation.group_sums`): an untied pair of optimistic and pessimistic
ranks has one rank for every rank type, so the untied rows are summed once for all four and the
few tied rows apart. The ranks' variance takes two such passes. The geometric mean rank's and
its inverse's null moments are exponentials of such sums (of :math:`K_C(\pm 1/n_g)` over each
group's rows, :func:`~rankstats.null.powers.log_moment_terms`; weighted, of
:math:`K_C(\pm w / W_g)`, each task at its own share, the tables keeping each task's weight).
Derived metrics (adjusted,
z-scored) transform their base's columns element-wise, for the groups read only
(:class:`~rankstats.evaluation.group_rows.Elementwise`): a scale per group is all they store.
The reciprocal-of-mean metrics (the inverse arithmetic and the harmonic mean rank) run the single
group's quadrature for every group together (:mod:`rankstats.null.reciprocal_groups`; weighted
input, each task at its own argument: :mod:`rankstats.null.reciprocal_weighted`, groups of up to
64 distinct pairs). Only metrics without such a form (the median's null moments, Monte-Carlo
estimates) and weighted groups of more pairs take a pass per group, through the same code as a
single cell.

The micro average (all groups as one) sums the groups' sums: no second pass over the tables for
the mean-type metrics, whose sums then differ from the ungrouped evaluation's by rounding only
(a few ulps); the others are computed from the merged tables, built only for them.

The result for each group is built only when it is looked up
(:class:`~rankstats.evaluation.group_rows.LazyGroups`), so a table of 10,000 groups costs a few
vectorised passes until someone reads a group; :mod:`rankstats.evaluation.group_rows` also
holds the macro average.

The per-task terms of each mean-type metric are in :mod:`rankstats.evaluation.terms`. This module
(the builder of a side's columns) stays one piece, a little longer than most, because the
builder caches what the columns of all metrics of a side share (values, gaps, null moments, and
the sums behind the micro average): split, the cache would have to be passed between modules.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from rankstats.arrays import BoolArray, FloatArray, IntArray
from rankstats.base import RankBasedMetric
from rankstats.chance import CONDITION_LIMIT, EXACT_SUMS_LIMIT, ChanceTerms, condition_threshold
from rankstats.evaluation.cells import NO_CANDIDATES, NullModels, base_value
from rankstats.evaluation.chance_rows import (
    exact_group_differences,
    has_exact_difference,
    integral_tables,
)
from rankstats.evaluation.group_medians import group_medians
from rankstats.evaluation.group_rows import (
    CODE_EXACT,
    CODE_MONTE_CARLO,
    CODE_NONE,
    METHODS,
    CodeArray,
    Column,
    Elementwise,
    LazyGroups,
    Values,
    macro_rows,
    rows_of_group,
)
from rankstats.evaluation.group_sums import GroupSums, TieSplit, offsets, stacked, value_range
from rankstats.evaluation.results import ResultRow
from rankstats.evaluation.scores import RANK_EXPECTED
from rankstats.evaluation.tables import GROUP, WEIGHT, WEIGHT_SQUARED, SideStatistics, Table
from rankstats.evaluation.terms import (
    Transform,
    exact_chance_sums,
    has_value_gap,
    identity,
    null_gap_term,
    null_terms,
    sums_only,
    tie_terms,
    value_gap_terms,
    value_terms,
)
from rankstats.evaluation.ties import log_power_mean
from rankstats.metrics.central import (
    GeometricMeanRank,
    HarmonicMeanRank,
    InverseArithmeticMeanRank,
    InverseGeometricMeanRank,
    InverseMedianRank,
    MedianRank,
)
from rankstats.metrics.derived import (
    DerivedRankBasedMetric,
    ExpectationNormalizedMetric,
    ReindexedMetric,
    ZMetric,
    chance_difference,
    index_of_difference,
    takes_difference,
    z_of_difference,
)
from rankstats.metrics.dispersion import (
    MAD_NORMAL_SCALE,
    Count,
    MedianAbsoluteDeviation,
    StandardDeviation,
    Variance,
)
from rankstats.null.grouping import distinct_inverse
from rankstats.null.median_small_groups import grouped_median_moments
from rankstats.null.powers import log_moment_terms
from rankstats.null.reciprocal_groups import (
    grouped_harmonic_moments,
    grouped_inverse_arithmetic_moments,
)
from rankstats.null.reciprocal_weighted import weighted_grouped_moments
from rankstats.progress import progress_bar

__all__ = ["Column", "LazyGroups", "group_columns", "macro_rows"]

Plan = Sequence[tuple[str, Sequence[RankBasedMetric]]]
#: a metric, a per-task term of the ranks (or of the optimistic and pessimistic ranks) and the
#: transform of its mean that gives the metric's value (or its gap 1 - M)
MeanEntry = tuple[RankBasedMetric, Callable[..., FloatArray], Transform]
#: a base metric's null moments in every group: E, V, method, standard error, notes by group,
#: and the gap 1 - E computed directly (NaN where it is not)
NullColumn = tuple[FloatArray, FloatArray, CodeArray, FloatArray, dict[int, str], FloatArray]


class DerivedColumn(NamedTuple):
    """What a derived metric's columns of every rank type share, in every group.

    Only the scale and the gaps are arrays; the rest are computed from them (and the base's
    null moments) for the groups read.
    """

    scale: FloatArray
    offset: Values
    expected: Values
    variance: Values
    #: the base's gap 1 - E
    gap: FloatArray
    #: the same, NaN in the groups where the metric is undefined
    defined_gap: FloatArray
    methods: CodeArray
    notes: dict[int, str]
    #: the base's null standard deviation (z-scores only)
    std: Values | None


#: empty stand-ins for a tie split's untied rows, once their sums are in
_NO_ROWS: IntArray = np.zeros(0, dtype=np.int64)
_NO_VALUES: FloatArray = np.zeros(0)


#: the metrics whose group values :meth:`_Builder._medians` takes from one sort of the rows
_MEDIANS = (MedianRank, InverseMedianRank, MedianAbsoluteDeviation)


#: the reciprocal-of-mean metrics' null moments for every group at once (unweighted input;
#: weighted input through :meth:`_Builder._weighted_reciprocal_nulls`)
_GROUPED_RECIPROCAL: dict[type[RankBasedMetric], Callable[..., tuple[FloatArray, FloatArray]]] = {
    InverseArithmeticMeanRank: grouped_inverse_arithmetic_moments,
    HarmonicMeanRank: grouped_harmonic_moments,
}


def _no_closed_form(metric: RankBasedMetric) -> bool:
    """Whether the metric's class defines no closed-form null moments at all (the MAD)."""
    kind = type(metric)
    hooks = ("_expected_value", "_variance", "_moments", "_moments_and_gap")
    return all(getattr(kind, name) is getattr(RankBasedMetric, name) for name in hooks)


def _geometric(metric: RankBasedMetric) -> bool:
    """Whether the metric is the geometric mean rank or its inverse (their closed forms)."""
    return type(metric) in (GeometricMeanRank, InverseGeometricMeanRank)


class _Builder:
    """Computes the columns of one side."""

    def __init__(
        self, side: str, data: GroupSums, null: NullModels, size: int, progress: bool | None = False
    ) -> None:
        self.side = side
        self.progress = progress
        self.data = data
        self.null = null
        self.size = size
        self._nulls: dict[RankBasedMetric, NullColumn] = {}
        self._derived_columns: dict[RankBasedMetric, DerivedColumn] = {}
        self._base_gaps: dict[RankBasedMetric, FloatArray] = {}
        #: per base metric: where M - E is taken directly, not from the gaps
        self._direct: dict[RankBasedMetric, BoolArray] = {}
        self._forms: dict[RankBasedMetric, BoolArray | bool] = {}
        #: whether every group's columns are read (the macro average): then the derived
        #: metrics share one array of M - E per base and rank type
        self.eager = False
        self._differences_of: dict[tuple[RankBasedMetric, str], Values] = {}
        #: a base's terms, E and 1 - E, and the thresholds below which |M - E| is suspect
        self._screens: dict[RankBasedMetric, tuple[ChanceTerms, FloatArray, FloatArray] | None] = {}
        self._bounds: dict[RankBasedMetric, FloatArray] = {}
        #: per table of ranks (by id): whether sums of multiples of 1/2 over it are exact
        self._integral: dict[int, bool] = {}
        self._values: dict[tuple[RankBasedMetric, str], FloatArray] = {}
        # 1 - M computed directly, or None where there is no such form (then 1 - M)
        self._value_gaps: dict[tuple[RankBasedMetric, str], FloatArray | None] = {}
        self._groups = np.flatnonzero(data.present)
        self._distinct: tuple[IntArray, IntArray] | None = None
        # NaN in every group, shared (read-only) by the columns without standard errors or gaps
        self._nan = np.full(size, math.nan)
        self._nan.flags.writeable = False
        # the sums over all groups (as (1,) arrays, :func:`_total`) of the per-group sums behind
        # the values, gaps and null moments, for the micro average: the values' and gaps' by
        # (metric, rank type) with the transform of the mean (None for a sum), the null moments'
        # (E, V, gap 1 - E or None) by metric. Only these totals are kept, not the per-group
        # sums: each group's mean is divided in place, and the call's peak memory stays lower.
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
            counts = data._sum(table.columns[GROUP], data.counts(table))
            self._value_sums[(metric, rank_type)] = (_total(counts), None)
            return counts
        if rank_type == RANK_EXPECTED:
            tie = tie_terms(metric)
            if tie is not None:
                return self._means(rank_type, [(metric, tie, identity)])[0]
            found = None
            if _geometric(metric):
                found = self._geometric_over_ties(metric)
            elif kind is Variance:
                found = self._variance_over_ties()
            if found is not None:
                return found
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
            if kind in _MEDIANS and self._unweighted_rows(rank_type):
                return self._medians(kind, rank_type)
        values = np.full(self.size, math.nan)
        desc = f"{self.side}: {metric.key} ({rank_type}) group by group"
        with progress_bar(self._groups.size, desc, self.progress) as bar:
            for g in self._groups:
                values[g] = base_value(metric, data.cell(int(g)), rank_type)
                bar.update(1)
        return values

    def _weighted(self) -> bool:
        """Whether the tasks have weights (the candidate counts' tables keep them)."""
        table = self.data.layout.candidates
        return table is not None and WEIGHT in table.columns

    def _unweighted_rows(self, rank_type: str) -> bool:
        """Whether the table of a rank type's rows holds counts only (unweighted input)."""
        stats = self.data.stats
        table = stats.ranks.get(rank_type, stats.pairs)
        return table is not None and WEIGHT not in table.columns

    def _medians(self, kind: type[RankBasedMetric], rank_type: str) -> FloatArray:
        r"""The median rank, its inverse or the MAD of every group, from one sort of the rows.

        As each group's :meth:`~rankstats.base.RankBasedMetric._evaluate` on its histogram
        (:func:`~rankstats.weighting.weighted_median` with the rows' counts), for unweighted
        input: :func:`~rankstats.evaluation.group_medians.group_medians`, and for the MAD again
        over each row's distance from its group's median (10,000 groups had taken 0.35 s a rank
        type in a pass per group).
        """
        data = self.data
        ids, ranks, counts = data.rows(rank_type)
        medians = group_medians(ids, ranks, counts, self.size)
        if kind is MedianRank:
            return medians
        if kind is InverseMedianRank:
            with np.errstate(divide="ignore", invalid="ignore"):
                inverse: FloatArray = np.reciprocal(medians)
            return inverse
        deviation = np.abs(ranks - medians[ids])
        return MAD_NORMAL_SCALE * group_medians(ids, deviation, counts, self.size)

    def _pair_shares(self) -> tuple[IntArray, IntArray, IntArray, FloatArray, FloatArray] | None:
        r"""The pairs' group ids, optimistic and pessimistic ranks (int64), counts and shares.

        The rows of the expectation over ties, with :math:`m` tasks each of the share :math:`a`
        of its group: unweighted, the rows of :meth:`GroupSums.distinct_rows` and
        :math:`a = 1/n_g`; weighted, the rows that keep each task's weight (``tie_pairs``, as
        a single group's rule takes them: :func:`~rankstats.evaluation.ties.tie_expectation`)
        and :math:`a = w / W_g`, :math:`W_g = \sum m w` over the group's rows. ``None``
        without pairs, or for weighted input without each task's weight.
        """
        stats = self.data.stats
        if stats.pairs is None:
            return None
        if WEIGHT not in stats.pairs.columns:
            ids, (low, high), _, counts = self.data.distinct_rows(RANK_EXPECTED)
            return ids, low, high, counts, self._shares(ids)
        table = stats.tie_pairs
        if table is None:
            return None
        ids, m, _, shares, _ = self._weighted_rows(table)
        low = table.columns["optimistic"].astype(np.int64, copy=False)
        high = table.columns["pessimistic"].astype(np.int64, copy=False)
        return ids, low, high, m, shares

    def _weighted_rows(
        self, table: Table
    ) -> tuple[IntArray, FloatArray, FloatArray, FloatArray, FloatArray]:
        r"""A table that keeps each task's weight: its rows' group ids, tasks, weights, shares.

        Each row holds :math:`m` tasks of weight :math:`w`, each with the share
        :math:`w / W_g` of its group, :math:`W_g = \sum m w` over the group's rows (last, per
        group). The share is 0 in a group of weight 0 (left out of the results), where it
        would be NaN.
        """
        ids = table.columns[GROUP]
        m = table.count.astype(np.float64)
        weights = table.columns[WEIGHT]
        totals = self.data._sum(ids, m * weights)
        at_rows = totals[ids]
        shares: FloatArray = np.divide(
            weights, at_rows, out=np.zeros(ids.size), where=at_rows > 0.0
        )
        return ids, m, weights, shares, totals

    def _shares(self, ids: IntArray) -> FloatArray:
        """Each row's share of its group, :math:`1/n_g` (unweighted; its group has tasks)."""
        with np.errstate(divide="ignore"):
            share: FloatArray = (1.0 / self.data.total)[ids]
        return share

    def _geometric_over_ties(self, metric: RankBasedMetric) -> FloatArray | None:
        r"""GMR or IGMR in expectation over tie-breaking, every group from one pass over the pairs.

        :math:`\exp \sum m \ln \mathbb{E}[r^{\pm 1/n_g}]` over each group's rows, :math:`r`
        uniform on the row's ranks (:func:`~rankstats.evaluation.ties.log_power_mean`, one
        exponent per row): the rule of a single group, for all groups at once (10,000 groups had
        taken 0.63 s, one call each); weighted, with the exponents :math:`\pm w / W_g`
        (:meth:`_pair_shares`). ``None`` where there are no such rows.
        """
        pairs = self._pair_shares()
        if pairs is None:
            return None
        data = self.data
        ids, low, high, counts, shares = pairs
        sign = 1.0 if type(metric) is GeometricMeanRank else -1.0
        terms = log_power_mean(low, high, sign * shares)
        values: FloatArray = np.exp(data._sum(ids, counts * terms))
        values[data.total == 0.0] = math.nan
        return values

    def _variance_over_ties(self) -> FloatArray | None:
        r"""The ranks' variance in expectation over tie-breaking, every group from the pairs.

        The rule of :mod:`rankstats.evaluation.ties` with :math:`a = 1/n_g`: a tied rank
        uniform on :math:`o..p` has mean :math:`(o + p)/2` and variance :math:`(L^2 - 1)/12`,
        so :math:`\sum m (a - a^2) (L^2 - 1)/12 + \sum m a (\bar r - \bar{\bar r})^2` over each
        group's rows, :math:`a` each task's share (:meth:`_pair_shares`, weighted too). ``None``
        where there are no such rows.
        """
        pairs = self._pair_shares()
        if pairs is None:
            return None
        data = self.data
        ids, low, high, m, a = pairs
        mean = 0.5 * (low + high).astype(np.float64)
        length = (high - low + 1).astype(np.float64)
        spread = (length * length - 1.0) / 12.0
        deviation = mean - data._sum(ids, m * a * mean)[ids]
        values = data._sum(ids, m * (a - a * a) * spread) + data._sum(
            ids, m * a * (deviation * deviation)
        )
        values[data.total == 0.0] = math.nan
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
                    self._value_sums[(metric, rank_type)] = (_total(summed), finish)
                else:
                    self._gap_sums[(metric, rank_type)] = (_total(summed), finish)
                # divided in place: the sums are this call's own
                means.append(finish(np.divide(summed, data.total, out=summed)))
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
        # the terms, evaluated when stacked (one term's array at a time)
        untied_terms: list[Callable[[], FloatArray]] = []
        tied_terms: list[Callable[[], FloatArray]] = []
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
                                functools.partial(term, integer_keys, integer_keys)
                                if expected
                                else functools.partial(term, split.keys)
                            )
                        tied_terms.append(
                            functools.partial(term, low, high)
                            if expected
                            else functools.partial(term, tied_ranks[rank_type])
                        )
                        listed.append((metric, is_gap, finish, index))
            # one row per term, a view of the (groups x terms) product: each rank type's block
            # below copies its entries' rows, so a contiguous transpose would be a third copy
            untied_sums = data.weighted_sums_array(
                split.ids,
                split.untied_weights,
                stacked(split.keys.size, untied_terms),
                split.inverse,
                by_group=True,
            ).T
            # the pairs' per-row caches (tie split, sparse matrix, weights) and the untied rows'
            # arrays are not needed for what is left (the tied rows' sums read the split's tied
            # rows only): freed before the tied rows' terms and the entries' blocks are made,
            # their memory serves them, and the peak memory of a call is lower
            split = split._replace(
                ids=_NO_ROWS, keys=_NO_VALUES, inverse=_NO_ROWS, untied_weights=_NO_VALUES
            )
            del untied_terms, integer_keys
            data.release_pairs()
            # each entry's sums: its untied sums with the few tied rows' sums added in the groups
            # that have some
            groups = split.tied_groups
            tied_sums = (
                _tied_sums(split, stacked(split.tied_weights.size, tied_terms))
                if groups.size
                else None
            )
            del split, tied_terms
            # each rank type's entries in one (entries x groups) block, a row each, in the order
            # of tied_sums' columns: its untied sums, with the few tied rows' sums added in the
            # groups that have some; each group's mean divided in place. A block per rank type,
            # not one for all: blocks of a few hundred kB are reused from the heap call after
            # call, where one of several MB was a new mapping, faulted in page by page
            first = 0
            means: dict[str, list[FloatArray]] = {}
            for rank_type, listed in entries.items():
                # a contiguous copy of the entries' rows (gathered from the groups' rows)
                block = untied_sums[[index for *_, index in listed]]
                if tied_sums is not None:
                    block[:, groups] += tied_sums[:, first : first + len(listed)].T
                first += len(listed)
                totals = block.sum(axis=1)  # pairwise along each row, as numpy.sum of each
                np.divide(block, data.total, out=block)
                means[rank_type] = []
                for j, (metric, is_gap, finish, _) in enumerate(listed):
                    target = self._gap_sums if is_gap else self._value_sums
                    target[(metric, rank_type)] = (totals[j : j + 1], finish)
                    means[rank_type].append(finish(block[j]))
        return means

    def prefetch(self, plan: Plan) -> None:
        """The values (and gaps ``1 - M``) of every mean-type base metric: one batch per type."""
        # the bases of adjusted and z-scored metrics whose M - E some group takes from the gaps
        # 1 - M and 1 - E: only those need 1 - M computed directly
        derived_bases = dict.fromkeys(
            m.base for _, ms in plan for m in ms if isinstance(m, DerivedRankBasedMetric)
        )
        gapped = {base for base in derived_bases if self._reads_value_gaps(base)}
        # the counts first: the pairs' sums may release the tables' group ids they read
        for rank_type, chosen in plan:
            for metric in chosen:
                if type(metric) is Count:
                    self.value(metric, rank_type)
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
                # the bases' own z-scores too, where no exact sum of M - E is exact (weighted
                # rows: each rank's weight sum is rounded; the geometric means: none): the
                # gaps must carry the digits near 1
                own = (
                    self.data.has_candidates
                    and has_value_gap(metric)
                    and (self._weighted() or not exact_chance_sums(metric))
                )
                gap_terms = (
                    value_gap_terms(metric)
                    if metric in gapped or (own and self._reads_value_gaps(metric))
                    else None
                )
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

    # --- null moments ------------------------------------------------------------------------

    def prepare(self, metrics: Sequence[RankBasedMetric]) -> None:
        """Compute the null columns of the base metrics; sample once per group for the rest."""
        if not self.data.has_candidates:
            return
        bases = list(
            dict.fromkeys(m.base if isinstance(m, DerivedRankBasedMetric) else m for m in metrics)
        )
        # the bases whose gap 1 - E a derived metric uses (weighted, every base's: its own
        # z-score takes M - E from the gaps, see prefetch)
        gapped = (
            set(bases)
            if self._weighted()
            else {m.base for m in metrics if isinstance(m, DerivedRankBasedMetric)}
        )
        vectorised = [
            m
            for m in bases
            if m not in self._nulls and (type(m) is Count or null_terms(m) is not None)
        ]
        self._nulls.update(self._vectorised_nulls(vectorised, gapped))
        self._nulls.update(
            self._geometric_nulls([m for m in bases if m not in self._nulls and _geometric(m)])
        )
        self._nulls.update(
            self._variance_nulls([m for m in bases if m not in self._nulls and type(m) is Variance])
        )
        for kind, moments in _GROUPED_RECIPROCAL.items():
            self._nulls.update(
                self._reciprocal_nulls(
                    [m for m in bases if m not in self._nulls and type(m) is kind], moments
                )
            )
        self._nulls.update(
            self._median_nulls(
                [m for m in bases if m not in self._nulls and type(m) in _MEDIANS[:2]]
            )
        )
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
        constant = self._constant_nulls(looped, columns)
        looped = [m for m in looped if m not in constant]
        if looped:
            desc = f"{self.side}: null models group by group"
            with progress_bar(self._groups.size, desc, self.progress) as bar:
                for g in self._groups:
                    self._null_of_group(int(g), looped, columns)
                    bar.update(1)
        self._nulls.update(columns)

    def _constant_nulls(
        self, looped: Sequence[RankBasedMetric], columns: dict[RankBasedMetric, NullColumn]
    ) -> list[RankBasedMetric]:
        """Fill the columns of the metrics whose answer is the same in every group, and list them.

        A metric without any closed form (the MAD) has no null moments in any group unless a
        Monte-Carlo plan samples them; for unweighted input every group's answer (no moments,
        and the note saying why) is then the first group's, taken once rather than in a pass
        per group (10,000 groups: 0.9 s had gone to that pass).
        """
        constant = [m for m in looped if _no_closed_form(m)]
        if not constant or self.null.samples or self._unweighted_table() is None:
            return []
        groups = self._groups
        first = int(groups[0])
        self._null_of_group(first, constant, columns)
        for metric in constant:
            expected, variance, methods, errors, notes, gaps = columns[metric]
            for array in (expected, variance, methods, errors, gaps):
                array[groups] = array[first]
            note = notes.get(first)
            if note is not None:
                notes.update(dict.fromkeys(groups.tolist(), note))
        return constant

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

    def _unweighted_candidates(
        self, metrics: Sequence[RankBasedMetric]
    ) -> tuple[Table, IntArray, IntArray, IntArray] | None:
        """The candidate counts' table, its group ids, distinct counts and each row's index.

        For the closed forms whose tasks share their group's :math:`1/n_g`: ``None`` without
        metrics, without counts, or for weighted input (:meth:`_weighted_candidates` has those
        rows, each with its tasks' share).
        """
        table = self._unweighted_table() if metrics else None
        if table is None:
            return None
        distinct, inverse = self._distinct_candidates()
        return table, table.columns[GROUP], distinct, inverse

    def _weighted_candidates(
        self, metrics: Sequence[RankBasedMetric]
    ) -> tuple[IntArray, IntArray, FloatArray, FloatArray, FloatArray, FloatArray] | None:
        r"""Weighted input: each candidate-count row's group id, count, tasks, weight and share.

        The rows of weighted input keep each task's weight :math:`w` (a key column, the tasks
        of equal count and weight one row of :math:`m` tasks), so each task's share of its
        group, :math:`w / W_g` with :math:`W_g = \sum m w` over the group's rows, is known per
        row: the exponents of the geometric means' closed forms
        (:func:`~rankstats.null.powers.log_moment_terms`). ``None`` without metrics, without
        counts, for unweighted input, or where the table keeps the sums of the weights per
        count only (no task's own weight). Last, each group's total weight :math:`W_g`
        (:meth:`_weighted_rows`).
        """
        table = self.data.stats.candidates if metrics else None
        if table is None or WEIGHT not in table.columns or WEIGHT_SQUARED in table.columns:
            return None
        ids, m, weights, shares, totals = self._weighted_rows(table)
        return ids, table.columns["num_candidates"], m, weights, shares, totals

    def _unweighted_table(self) -> Table | None:
        """The candidate counts' table, unless there is none or the input is weighted."""
        table = self.data.stats.candidates
        return None if table is None or WEIGHT in table.columns else table

    def _candidate_rows(
        self, metrics: Sequence[RankBasedMetric]
    ) -> tuple[IntArray, IntArray, FloatArray] | None:
        """Each row of :meth:`_unweighted_candidates`' table: group id, count, number of tasks."""
        rows = self._unweighted_candidates(metrics)
        if rows is None:
            return None
        table, ids, distinct, inverse = rows
        return ids, distinct[inverse], self.data.counts(table)

    def _geometric_nulls(
        self, metrics: Sequence[RankBasedMetric]
    ) -> dict[RankBasedMetric, NullColumn]:
        r"""The null columns of the geometric mean rank and its inverse, every group at once.

        Unweighted, each task of group :math:`g` has the exponent :math:`\pm 1 / n_g`, so
        :math:`\ln \mathbb{E}_g = \sum m\, K_C(\pm 1/n_g)` and the log dispersion likewise,
        over the group's rows (its distinct counts, :math:`m` tasks each;
        :func:`~rankstats.null.powers.log_moment_terms`, both signs at once): the closed forms of
        :func:`~rankstats.null.powers.geometric_mean_moments`, for every group in one pass over
        the rows, not one call per group (464 groups of 50 tasks: 115 ms had gone to that loop).
        The same sums as a single group's, to a few ulps (pairwise per group). Weighted, each
        row's tasks take their own exponent :math:`\pm w / W_g` (:meth:`_weighted_candidates`):
        the terms one per row, not per distinct pair.
        """
        data = self.data
        rows = self._unweighted_candidates(metrics)
        if rows is not None:
            table, ids, distinct, inverse = rows
            # the terms depend on the count and the group's size only: one per distinct pair (a
            # thousand counts and a few dozen sizes, where the rows of 10,000 groups are 1e5)
            sizes = data.total.astype(np.int64)
            radix = int(sizes.max()) + 1
            pairs, row_pair = distinct_inverse(inverse.astype(np.int64) * radix + sizes[ids])
            count_of, size_of = np.divmod(pairs, radix)
            terms = log_moment_terms(distinct[count_of].astype(np.float64), 1.0 / size_of)
            sums = data.weighted_sums(ids, data.counts(table), terms, row_pair)
        else:
            weighted = self._weighted_candidates(metrics)
            if weighted is None:
                return {}
            # each row's tasks take their own exponent w / W_g: the terms one per row
            ids, candidates, m, _, shares, _ = weighted
            terms = log_moment_terms(candidates.astype(np.float64), shares)
            sums = data.weighted_sums(ids, m, terms)
        methods = np.full(self.size, CODE_EXACT, dtype=np.int8)
        methods.flags.writeable = False
        empty = data.total == 0.0
        columns: dict[RankBasedMetric, NullColumn] = {}
        for metric in metrics:
            # the geometric mean takes the exponents 1 / n_g, its inverse -1 / n_g
            first = 0 if type(metric) is GeometricMeanRank else 2
            log_mean, log_dispersion = sums[first], sums[first + 1]
            expected = np.exp(log_mean)
            variance = expected * expected * np.expm1(log_dispersion)
            gap = -np.expm1(log_mean)
            for array in (expected, variance, gap):
                array[empty] = math.nan
            columns[metric] = (expected, variance, methods, self._nan, {}, gap)
        return columns

    def _variance_nulls(
        self, metrics: Sequence[RankBasedMetric]
    ) -> dict[RankBasedMetric, NullColumn]:
        r"""The null moments of the ranks' variance in every group, from sums over the rows.

        The closed form of :func:`~rankstats.null.dispersion.weighted_variance_moments`, with
        :math:`a = 1/n_g` (unweighted input) or :math:`a = w / W_g` (weighted input whose rows
        keep each task's weight, :meth:`_weighted_candidates`): each of its sums over tasks
        becomes a sum over each group's rows (a distinct count, :math:`m` tasks), the offsets
        :math:`d` taken from
        an integer near each group's mean count, and :math:`\sum_{i \ne j} u_i u_j` as
        :math:`\sum_i u_i` times the others' sum, nonnegative terms only (prefix sums over all
        rows, less the sum before each group, had cancelled: 2e-10 on a group of counts 3 and
        110,795 behind groups of counts up to 1e9).
        """
        data = self.data
        rows = self._candidate_rows(metrics)
        if rows is not None:
            ids, candidates, m = rows
            a = self._shares(ids)
            with np.errstate(divide="ignore", invalid="ignore"):
                one_minus_a = ((data.total - 1.0) / data.total)[ids]
        else:
            weighted = self._weighted_candidates(metrics)
            if weighted is None:
                return {}
            ids, candidates, m, weights, a, totals = weighted
            one_minus_a = self._other_shares(ids, m, weights, a, totals)
        c = candidates.astype(np.float64)
        share = m * a
        sigma2 = (c - 1.0) * (c + 1.0) / 12.0
        var_x2 = sigma2 * ((c - 2.0) * (c + 2.0) / 15.0)
        starts, present, _, _ = data._layout(ids)
        reference = np.zeros(self.size, dtype=np.int64)
        near = np.round(data._sum(ids, share * c)[present]).astype(np.int64)
        low = np.minimum.reduceat(candidates, starts)
        high = np.maximum.reduceat(candidates, starts)
        reference[present] = np.minimum(np.maximum(near, low), high)
        offsets = (candidates - reference[ids]).astype(np.float64)
        d = 0.5 * (offsets - data._sum(ids, share * offsets)[ids])
        d2 = d * d
        diagonal = a * one_minus_a
        u = a * a * sigma2
        mu = m * u
        # the sum over pairs of distinct tasks, sum_k m u (U - u): each task times the others'
        # sum, which is U - m u for a row of at most half of U and, for the one row above half
        # (U - m u would cancel), the sum of the other rows itself: every term nonnegative
        total_u = data._sum(ids, mu)
        largest = np.zeros(self.size)
        largest[present] = np.maximum.reduceat(mu, starts)
        dominant = (mu == largest[ids]) & (mu > 0.5 * total_u[ids])
        rest = data._sum(ids, np.where(dominant, 0.0, mu))
        others = np.where(dominant, rest[ids], total_u[ids] - mu)
        pairs = data._sum(ids, mu * (others + (m - 1.0) * u))
        expected = data._sum(ids, m * diagonal * sigma2) + data._sum(ids, share * d2)
        variance = (
            data._sum(ids, m * (diagonal * diagonal) * var_x2)
            + 2.0 * pairs
            + 4.0 * data._sum(ids, mu * d2)
        )
        return self._exact_columns(metrics, expected, variance)

    def _other_shares(
        self, ids: IntArray, m: FloatArray, weights: FloatArray, a: FloatArray, totals: FloatArray
    ) -> FloatArray:
        r""":math:`1 - a` of each row's tasks, weighted input (:meth:`_weighted_candidates`).

        By subtraction, but for the one task of a group whose share exceeds one half, where
        it would cancel: there the sum of the group's other rows' weights :math:`m w` over
        :math:`W_g` (``totals``), as
        :func:`~rankstats.null.dispersion.weighted_variance_moments` takes it.
        """
        one_minus_a = 1.0 - a
        dominant = a > 0.5  # a row of one task: the shares of a group add up to one
        if dominant.any():
            row_weights = m * weights
            others = self.data._sum(ids, np.where(dominant, 0.0, row_weights))
            groups = ids[dominant]  # each of positive weight
            one_minus_a[dominant] = others[groups] / totals[groups]
        return one_minus_a

    def _exact_columns(
        self, metrics: Sequence[RankBasedMetric], expected: FloatArray, variance: FloatArray
    ) -> dict[RankBasedMetric, NullColumn]:
        """The metrics' null columns from exact moments (no gap), NaN in groups without tasks."""
        empty = self.data.total == 0.0
        expected[empty] = math.nan
        variance[empty] = math.nan
        methods = np.full(self.size, CODE_EXACT, dtype=np.int8)
        methods.flags.writeable = False
        return {
            metric: (expected, variance, methods, self._nan, {}, self._nan) for metric in metrics
        }

    def _reciprocal_nulls(
        self,
        metrics: Sequence[RankBasedMetric],
        moments: Callable[..., tuple[FloatArray, FloatArray]],
    ) -> dict[RankBasedMetric, NullColumn]:
        r"""The null moments of the inverse arithmetic or the harmonic mean rank in every group.

        ``metrics`` are of one of the two kinds, and ``moments`` its grouped function
        (:data:`_GROUPED_RECIPROCAL`). Unweighted, each task of group :math:`g` has the share
        :math:`1/n_g`: the quadrature of
        :func:`~rankstats.null.reciprocal.inverse_arithmetic_mean_moments` runs for all groups
        together over the candidate counts' rows
        (:func:`~rankstats.null.reciprocal_groups.grouped_inverse_arithmetic_moments`,
        :func:`~rankstats.null.reciprocal_groups.grouped_harmonic_moments`), where one call per
        group had taken 4.5 s (IAMR) and 10 s (HMR) for 10,000 groups of ten tasks. Weighted,
        each task has its own share :math:`w / W_g` and so its own argument: the quadrature runs
        for all groups of at most :data:`~rankstats.null.reciprocal_weighted.PAIRS_MAX` pairs
        together, each pair at its own argument
        (:func:`~rankstats.null.reciprocal_weighted.weighted_grouped_moments`; 1,000 groups of
        ten tasks: 0.57 -> 0.06 s for the inverse arithmetic mean rank, 1.2 -> 0.6 s for the
        harmonic mean rank, whose Euler-Maclaurin values per pair and node remain), and larger
        groups keep a call each (:meth:`_weighted_reciprocal_nulls`).
        """
        rows = self._candidate_rows(metrics)
        if rows is None:
            return self._weighted_reciprocal_nulls(metrics)
        data = self.data
        ids, counts, multiplicity = rows
        spread = counts > 1
        certain = data._sum(ids, np.where(spread, 0.0, multiplicity))
        expected, variance = moments(
            counts[spread].astype(np.float64),
            multiplicity[spread],
            ids[spread].astype(np.int64, copy=False),
            data.total,
            certain,
        )
        return self._exact_columns(metrics, expected, variance)

    def _median_nulls(
        self, metrics: Sequence[RankBasedMetric]
    ) -> dict[RankBasedMetric, NullColumn]:
        """The null moments of the median and its inverse, the groups of a few tasks together.

        Unweighted, the groups of 3 to :data:`~rankstats.null.median_small.SMALL_N` tasks are
        summed together (:func:`~rankstats.null.median_small_groups.grouped_median_moments`,
        the same sums as a call per group, one pass per group size); the others take a call
        each (:meth:`_null_of_group`). Weighted medians have no closed form (``{}``: they stay
        in the pass per group).
        """
        rows = self._candidate_rows(metrics)
        if rows is None:
            return {}
        ids, counts, multiplicity = rows
        moments, done = grouped_median_moments(
            counts.astype(np.int64, copy=False),
            multiplicity.astype(np.int64),
            ids.astype(np.int64, copy=False),
            self.size,
        )
        found = {}
        for metric in metrics:
            at = 0 if type(metric) is MedianRank else 2
            found[metric] = (moments[:, at].copy(), moments[:, at + 1].copy())
        return self._exact_or_called(found, done)

    def _weighted_reciprocal_nulls(
        self, metrics: Sequence[RankBasedMetric]
    ) -> dict[RankBasedMetric, NullColumn]:
        """:meth:`_reciprocal_nulls` for weighted input: the rows that keep each task's weight.

        The groups of more than :data:`~rankstats.null.reciprocal_weighted.PAIRS_MAX` pairs
        take a call each (:meth:`_null_of_group`); where the table keeps only the sums of the
        weights per count (``{}``), the metrics stay in the pass per group.
        """
        rows = self._weighted_candidates(metrics)
        if rows is None:
            return {}
        ids, counts, multiplicity, _, shares, _ = rows
        harmonic = type(metrics[0]) is HarmonicMeanRank
        expected, variance, done = weighted_grouped_moments(
            harmonic,
            counts.astype(np.int64, copy=False),
            shares,
            multiplicity,
            ids.astype(np.int64, copy=False),
            self.size,
        )
        return self._exact_or_called(dict.fromkeys(metrics, (expected, variance)), done)

    def _exact_or_called(
        self, moments: Mapping[RankBasedMetric, tuple[FloatArray, FloatArray]], done: BoolArray
    ) -> dict[RankBasedMetric, NullColumn]:
        """Null columns from each metric's exact (E, V) in the groups ``done``, a call elsewhere.

        Where every group with tasks is done, :meth:`_exact_columns`; otherwise writable
        columns, the groups left filled by a call each (:meth:`_null_of_group`).
        """
        rest = self._groups[~done[self._groups]]
        if not rest.size:
            columns: dict[RankBasedMetric, NullColumn] = {}
            for metric, (expected, variance) in moments.items():
                columns.update(self._exact_columns([metric], expected, variance))
            return columns
        columns = {
            metric: (
                expected,
                variance,
                np.full(self.size, CODE_EXACT, dtype=np.int8),
                np.full(self.size, math.nan),
                {},
                np.full(self.size, math.nan),
            )
            for metric, (expected, variance) in moments.items()
        }
        metrics = list(moments)
        for g in rest.tolist():
            self._null_of_group(g, metrics, columns)
        return columns

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
        # E and gap terms (summed with the weights), V terms (with the squared weights), each
        # evaluated as it is copied into its column (stacked): one term's array at a time
        first: list[Callable[[], FloatArray]] = []
        second: list[Callable[[], FloatArray]] = []
        for metric in metrics:
            terms = null_terms(metric)
            if terms is None:
                continue  # the count
            mean_of, variance_of = terms
            first.append(functools.partial(mean_of, distinct))
            second.append(functools.partial(variance_of, distinct))
            gap_of = null_gap_term(metric) if metric in gapped else None
            if gap_of is not None:
                first.append(functools.partial(gap_of, distinct))
        if squared is weights:  # unweighted: one batch
            both = data.weighted_sums_array(
                ids, weights, stacked(distinct.size, first + second), inverse
            )
            first_sums, second_sums = both[: len(first)], both[len(first) :]
        else:
            first_sums = data.weighted_sums_array(
                ids, weights, stacked(distinct.size, first), inverse
            )
            second_sums = data.weighted_sums_array(
                ids, squared, stacked(distinct.size, second), inverse
            )
        # each sum over all groups (pairwise, as numpy.sum) for the micro average, then each
        # group's mean, divided in place: the sums are this call's own
        first_totals = iter([_total(summed) for summed in first_sums])
        second_totals = iter([_total(summed) for summed in second_sums])
        with np.errstate(invalid="ignore", divide="ignore"):
            np.divide(first_sums, data.total, out=first_sums)
            np.divide(second_sums, data.squared_total, out=second_sums)
        # every column shares its methods and standard errors (read-only)
        methods = np.full(self.size, CODE_EXACT, dtype=np.int8)
        methods.flags.writeable = False
        errors = no_gaps = self._nan
        columns: dict[RankBasedMetric, NullColumn] = {}
        means, variances = iter(first_sums), iter(second_sums)
        for metric in metrics:
            if null_terms(metric) is None:
                counts = data._sum(ids, data.counts(table))
                columns[metric] = (counts, np.zeros(self.size), methods, errors, {}, no_gaps)
                continue
            expected, variance, gaps = next(means), next(variances), no_gaps
            expected_total, variance_total = next(first_totals), next(second_totals)
            gap_total = None
            if metric in gapped and null_gap_term(metric) is not None:
                gaps, gap_total = next(means), next(first_totals)
            self._null_sums[metric] = (expected_total, variance_total, gap_total)
            columns[metric] = (expected, variance, methods, errors, {}, gaps)
        return columns

    def _distinct_candidates(self) -> tuple[IntArray, IntArray]:
        """The distinct candidate counts over all groups, and each table row's index into them."""
        if self._distinct is None:
            table = self.data.stats.candidates
            assert table is not None
            candidates = table.columns["num_candidates"]
            spread = value_range(candidates)
            # the distinct counts in int64 (the terms may take products of them), whatever the
            # table's counts are in (int32 for a narrow table, Table.build)
            if spread is None:
                distinct, inverse = distinct_inverse(candidates)
                self._distinct = distinct.astype(np.int64, copy=False), inverse
            else:  # every count of a narrow range: no lookup table to build
                low, high = spread
                distinct = np.arange(low, high + 1, dtype=np.int64)
                self._distinct = distinct, offsets(candidates, low, high)
            if self.data.owns_keys and not self.data.keeps_rows:  # read through the index now
                table.release_keys(("num_candidates",))
        return self._distinct

    def release_candidates(self) -> None:
        """Drop what is cached per row of the candidate counts, once the null moments are in.

        The results of every group then take the memory these held (the peak memory of a call
        is lower); anything needed again is rebuilt.
        """
        self._distinct = None
        self.data.release_candidates()

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
        micro = _Builder(self.side, GroupSums(merged, 1, total, self.data.stats), self.null, 1)
        squared_total = micro.data.squared_total
        methods = np.full(1, CODE_EXACT, dtype=np.int8)
        methods.flags.writeable = False

        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            # each a sum over every group already (a (1,) array)
            for key, (summed, finish) in self._value_sums.items():
                micro._values[key] = summed if finish is None else finish(summed / total)
            for key, (summed, finish) in self._gap_sums.items():
                micro._value_gaps[key] = finish(summed / total)
            for metric, (expected, variance, gap) in self._null_sums.items():
                micro._nulls[metric] = (
                    expected / total,
                    variance / squared_total,
                    methods,
                    micro._nan,
                    {},
                    micro._nan if gap is None else gap / total,
                )
            for metric, column in self._nulls.items():
                if type(metric) is Count:
                    count = _total(column[0])
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
                # the z-score's M - E, from the gaps 1 - M and 1 - E where computed and exact
                # where the rounded one lost digits
                self._difference(metric, rank_type)
                if self._screen(metric) is not None
                or self._value_gaps.get((metric, rank_type)) is not None
                else None,
            )
        derived = self._derived(metric)
        # the metric's own transformation, with M - E from M and E or from the gaps 1 - M and
        # 1 - E, whichever carry the digits (chance_difference) where it uses them; NaN where
        # the metric is undefined (through the NaN in the gap, the standard deviation or the
        # scale there)
        value: Elementwise
        if isinstance(metric, ReindexedMetric | ZMetric) and metric._uses_value_gap:
            # M - E of the base, shared with the base's other derived metric
            difference = self._difference(metric.base, rank_type)
            if isinstance(metric, ReindexedMetric):
                value = Elementwise(index_of_difference, (difference, derived.defined_gap))
            else:
                assert derived.std is not None
                sign = 1.0 if metric.base.increasing else -1.0
                value = Elementwise(
                    _defined_z, (difference, derived.std, derived.defined_gap), sign
                )
        else:
            base = self.value(metric.base, rank_type)
            value = Elementwise(_affine_value, (base, derived.scale, derived.offset))
        ratio_difference = None
        if isinstance(metric, ExpectationNormalizedMetric) and (
            self._screen(metric.base) is not None
            or self._value_gaps.get((metric.base, rank_type)) is not None
        ):
            # the z-score's M / E - 1 = (M - E) / E, from the base's M - E as the base's own
            ratio_difference = Elementwise(
                _scaled_difference, (self._difference(metric.base, rank_type), derived.scale)
            )
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
            ratio_difference,
        )

    def _exact_differences(
        self, base: RankBasedMetric, rank_type: str, known_gaps: FloatArray | None
    ) -> FloatArray | None:
        r""":math:`M - E` of a base as an exact sum where the rounded one lost digits, else NaN.

        ``None`` where no group's did, or where the base has no exact form. Which groups may
        have lost digits is screened by :math:`|M - E|` against the threshold of
        :func:`~rankstats.chance.ill_conditioned`, then by the rounded :math:`M - E` of the
        suspects. ``known_gaps`` is :math:`1 - M` where computed directly.
        """
        screen = self._screen(base)
        if screen is None:
            return None
        _, expected, gap = screen
        values = self.value(base, rank_type)
        if values.size == 1:  # one group (the micro average's): the screen in Python's floats
            chance = float(expected[0])
            limit = _float_threshold(chance, float(gap[0]) if known_gaps is not None else chance)
            if not abs(float(values[0]) - chance) <= _widened(limit, chance):
                return None
        # the groups within the base's bound of chance (M and E finite or NaN: no warning),
        # then those within the screen's own threshold (element-wise at those only: the same
        # values as over every group)
        suspect = np.flatnonzero(np.abs(values - expected) <= self._bound(base))
        if not suspect.size:
            return None
        with np.errstate(invalid="ignore"):
            mean, null_gap = expected[suspect], gap[suspect]
            threshold = condition_threshold(mean, null_gap if known_gaps is not None else mean)
            near = np.abs(values[suspect] - mean) <= _widened(threshold, mean)
            suspect, mean, null_gap, threshold = (
                array[near] for array in (suspect, mean, null_gap, threshold)
            )
            if not suspect.size:
                return None
            value = values[suspect]
            value_gap = 1.0 - value if known_gaps is None else known_gaps[suspect]
            direct = self._direct[base][suspect]
            difference = chance_difference(value, mean, value_gap, null_gap, direct)
            lost = np.abs(difference) < threshold
            groups = self._still_lost(
                base, rank_type, suspect[lost], difference[lost], threshold[lost]
            )
        if not groups.size:
            return None
        found = np.full(self.size, math.nan)
        found[groups] = self._exact_sums(base, rank_type, groups)
        return found

    def _difference(self, base: RankBasedMetric, rank_type: str) -> Values:
        r""":math:`M - E` of a base in every group, exact where the rounded one lost digits.

        Rounded by :func:`chance_difference`, from :math:`M` and :math:`E` or from the gaps
        :math:`1 - M` and :math:`1 - E`, whichever carry the digits; exact sums where those
        lost them (:meth:`_exact_differences`). An array where every group is read (the macro
        average, :attr:`eager`), else computed for the groups read.
        """
        key = (base, rank_type)
        found = self._differences_of.get(key)
        if found is None:
            expected = self.null_column(base)[0]
            gap = self._base_gap(base)
            direct = self._direct_form(base)
            # 1 - M where computed directly (for the bases of adjusted and z-scored metrics),
            # else by subtraction (and the screen's threshold is |E| alone)
            values = self.value(base, rank_type)
            known_gaps = self._value_gaps.get(key)
            if self.eager:  # every group's rounded M - E, then exact where it lost digits
                found = self._eager_difference(base, rank_type, values, expected, known_gaps, gap)
            else:
                moments = (
                    values,
                    expected,
                    Elementwise(_gap_by_subtraction, (values,))
                    if known_gaps is None
                    else known_gaps,
                    gap,
                    direct,
                )
                exact = self._exact_differences(base, rank_type, known_gaps)
                if exact is None:
                    found = Elementwise(chance_difference, moments)
                else:
                    found = Elementwise(_exact_difference, (*moments, exact))
            self._differences_of[key] = found
        return found

    def _direct_form(self, base: RankBasedMetric) -> BoolArray:
        """Where a base's :math:`M - E` is taken directly, not from the gaps (every rank type)."""
        direct = self._direct.get(base)
        if direct is None:
            expected = self.null_column(base)[0]
            direct = self._direct[base] = takes_difference(expected, self._base_gap(base))
        return direct

    def _one_form(self, base: RankBasedMetric) -> BoolArray | bool:
        """:meth:`_direct_form`, or the one form every group takes, found once per base.

        :func:`~rankstats.metrics.derived.chance_difference` takes a bool for every element:
        it then need not look through the array again for each rank type.
        """
        found = self._forms.get(base)
        if found is None:
            direct = self._direct_form(base)
            every = bool(direct.all())
            found = self._forms[base] = every if every or not direct.any() else direct
        return found

    def _reads_value_gaps(self, base: RankBasedMetric) -> bool:
        r"""Whether some group takes a base's :math:`M - E` from the gaps of M and E.

        :func:`~rankstats.metrics.derived.chance_difference` takes :math:`M - E` itself where
        :math:`|E| \le |1 - E|` (the MRR and Hits@k against many candidates), and NaN where the
        gap :math:`1 - E` is NaN: where every group does one or the other, :math:`1 - M` is not
        read, and is not computed (nor are the screens' thresholds changed:
        :math:`\min(|E|, |1 - E|) = |E|` there).
        """
        if not self.data.has_candidates:
            return True
        with np.errstate(invalid="ignore"):
            return bool(np.any(~self._direct_form(base) & ~np.isnan(self._base_gap(base))))

    def _eager_difference(
        self,
        base: RankBasedMetric,
        rank_type: str,
        values: FloatArray,
        expected: FloatArray,
        known_gaps: FloatArray | None,
        gap: FloatArray,
    ) -> FloatArray:
        """:meth:`_difference` as an array: the rounded difference is its own screen."""
        # differences and comparisons of finite or NaN values: no warning
        found = chance_difference(values, expected, known_gaps, gap, self._one_form(base))
        screen = self._screen(base)
        if screen is None:
            return found
        # ill_conditioned: the groups within the base's bound, then its threshold at those
        lost = np.flatnonzero(np.abs(found) < self._bound(base))
        if not lost.size:
            return found
        with np.errstate(invalid="ignore"):
            _, expected_at, gap_at = screen
            mean = expected_at[lost]
            threshold = condition_threshold(mean, gap_at[lost] if known_gaps is not None else mean)
            kept = np.abs(found[lost]) < threshold
            lost = self._still_lost(base, rank_type, lost[kept], found[lost[kept]], threshold[kept])
        if lost.size:
            found[lost] = self._exact_sums(base, rank_type, lost)
        return found

    def _still_lost(
        self,
        base: RankBasedMetric,
        rank_type: str,
        groups: IntArray,
        differences: FloatArray,
        thresholds: FloatArray,
    ) -> IntArray:
        r"""Those of ``groups`` (flagged at the default limit) whose :math:`M - E` lost digits.

        All of them, unless the base's :math:`M` and :math:`E` are exact sums, rounded once
        (:func:`~rankstats.evaluation.chance_rows.integral_tables`): then only those below
        the higher limit, :data:`~rankstats.chance.EXACT_SUMS_LIMIT`. ``differences`` are their
        rounded differences, ``thresholds`` their default thresholds.
        """
        screen = self._screen(base)
        assert screen is not None
        if not groups.size or not screen[0].halves:
            return groups
        # the tables of the rank type (all groups' rows, whatever this builder's groups), once
        # per table (the pairs serve every rank type)
        layout = self.data.layout
        table = id(layout.ranks.get(rank_type, layout.pairs))
        exact = self._integral.get(table)
        if exact is None:
            exact = self._integral[table] = integral_tables(layout, rank_type)
        if not exact:
            return groups
        # the threshold at the higher limit (a power of 2 apart: exactly the one it gives)
        scale = CONDITION_LIMIT / EXACT_SUMS_LIMIT
        return groups[np.abs(differences) < scale * thresholds]

    def _exact_sums(self, base: RankBasedMetric, rank_type: str, groups: IntArray) -> FloatArray:
        """:math:`M - E` of a base in ``groups`` (sorted), exact sums over their rows."""
        screen = self._screen(base)
        assert screen is not None
        return exact_group_differences(
            base,
            screen[0],
            self.data.stats,
            rank_type,
            groups,
            self.data.total,
            self.data.row_ranges,
        )

    def _screen(self, base: RankBasedMetric) -> tuple[ChanceTerms, FloatArray, FloatArray] | None:
        """A base's terms, E and 1 - E, for the screen of :math:`|M - E|`.

        ``None`` where the base has no exact form of :math:`M - E`, or there are no candidates.
        """
        if base in self._screens:
            return self._screens[base]
        found = None
        terms = base._chance_terms()
        if terms is not None and self.data.has_candidates:
            found = (terms, self.null_column(base)[0], self._base_gap(base))
        self._screens[base] = found
        return found

    def _bound(self, base: RankBasedMetric) -> FloatArray:
        r"""A bound of :math:`|M - E|` of a base, below which a group may have lost digits.

        :math:`|E| \, 2^{-8} (1 + 2^{-18})`, computed once per base: above every threshold the
        groups are compared with, :func:`~rankstats.chance.condition_threshold` (at most
        :math:`|E| / L`, :math:`L` = :data:`~rankstats.chance.CONDITION_LIMIT` = 256) and the
        micro average's screen of it (:func:`_widened`: wider by :math:`2^{-20}` of itself and
        :math:`2^{-44} |E|`), with room for their roundings. Only the few groups within it
        take those thresholds, element-wise: they flag the groups they flagged over all groups.
        """
        found = self._bounds.get(base)
        if found is None:
            screen = self._screen(base)
            assert screen is not None
            found = self._bounds[base] = np.abs(screen[1]) * _SCREEN_BOUND
        return found

    def _derived(self, metric: DerivedRankBasedMetric) -> DerivedColumn:
        """What a derived metric's columns of every rank type share (the same null moments)."""
        found = self._derived_columns.get(metric)
        if found is None:
            found = self._derived_columns[metric] = self._compute_derived(metric)
        return found

    def _base_gap(self, base: RankBasedMetric) -> FloatArray:
        """``1 - E`` of a base metric in every group: computed directly where it can be."""
        found = self._base_gaps.get(base)
        if found is None:
            column = self.null_column(base)
            expected, gap = column[0], column[5]
            if gap is self._nan:  # no direct form in any group
                found = 1.0 - expected
            else:
                missing = np.isnan(gap)
                found = np.where(missing, 1.0 - expected, gap) if missing.any() else gap
            self._base_gaps[base] = found
        return found

    def _compute_derived(self, metric: DerivedRankBasedMetric) -> DerivedColumn:
        base_expected, base_variance, base_methods, _, base_notes, _ = self.null_column(metric.base)
        gap = self._base_gap(metric.base)
        scale, offset, expected, variance, undefined = _affine(
            metric, base_expected, base_variance, gap, self._groups
        )
        # the base's methods (shared, read only) unless some group's metric is undefined
        methods = base_methods.copy() if undefined else base_methods
        notes = dict(base_notes)
        for g, reason in undefined.items():
            methods[g] = CODE_NONE
            notes[g] = reason
        if (base_methods == CODE_MONTE_CARLO).any():
            for g in np.flatnonzero(methods == CODE_MONTE_CARLO).tolist():
                if g not in undefined:
                    notes[g] = (
                        f"coefficients from a Monte-Carlo estimate of the null moments of "
                        f"{metric.base.key}"
                    )
        std = Elementwise(np.sqrt, (base_variance,)) if isinstance(metric, ZMetric) else None
        undefined_groups = np.flatnonzero(np.isnan(scale))
        defined_gap = gap
        if undefined_groups.size:
            defined_gap = gap.copy()
            defined_gap[undefined_groups] = math.nan
        return DerivedColumn(
            scale,
            offset,
            expected,
            variance,
            gap,
            defined_gap,
            methods,
            notes,
            std,
        )


def _defined_z(
    difference: FloatArray, std: FloatArray, defined_gap: FloatArray, sign: float
) -> FloatArray:
    """A z-score from ``M - E``, NaN where the metric is undefined (where ``defined_gap`` is)."""
    return z_of_difference(difference, std, sign) + defined_gap * 0.0


def _gap_by_subtraction(values: FloatArray) -> FloatArray:
    """``1 - M`` from ``M`` (where no direct form was computed)."""
    return 1.0 - values


def _exact_difference(
    values: FloatArray,
    mean: FloatArray,
    value_gaps: FloatArray,
    gap: FloatArray,
    direct: BoolArray,
    exact: FloatArray,
) -> FloatArray:
    """``M - E`` by :func:`chance_difference`, or ``exact`` where that is not NaN."""
    difference = chance_difference(values, mean, value_gaps, gap, direct)
    return np.asarray(np.where(np.isnan(exact), difference, exact), dtype=np.float64)


def _zero_where_defined(scale: FloatArray) -> FloatArray:
    """0 where the scale is defined, NaN where it is not."""
    return scale * 0.0 + 0.0


def _one_where_defined(scale: FloatArray) -> FloatArray:
    """1 where the scale is defined, NaN where it is not."""
    return scale * 0.0 + 1.0


def _offset(scale: FloatArray, expected: FloatArray) -> FloatArray:
    """The offset ``-scale E`` of an adjustment that centres the metric on its expectation."""
    return -scale * expected


def _scaled_variance(scale: FloatArray, variance: FloatArray) -> FloatArray:
    """The variance of ``scale M + offset``."""
    return scale * (scale * variance)  # as DerivedRankBasedMetric._moments_of


def _scaled_difference(difference: FloatArray, scale: FloatArray) -> FloatArray:
    """A base's ``M - E`` times the scale ``1 / E``: ``M / E - 1``."""
    return difference * scale


def _affine_value(value: FloatArray, scale: FloatArray, offset: FloatArray) -> FloatArray:
    """A derived metric's value from its base's: ``scale M + offset``."""
    return scale * value + offset


def _nan(value: float | None) -> float:
    return math.nan if value is None else value


def _float_threshold(mean: float, gap: float) -> float:
    """:func:`~rankstats.chance.condition_threshold` of one group, in Python's floats."""
    if math.isnan(mean) or math.isnan(gap):
        return math.nan
    return min(abs(mean), abs(gap)) / CONDITION_LIMIT


def _widened(threshold: Any, expected: Any) -> Any:
    r"""The micro average's screen of :math:`|M - E|` from the comparison's threshold.

    Wider by the roundings of :math:`M` and :math:`E` (:math:`2^{-44} |E|`, up to 256 units of
    :math:`2^{-53}` of each, the longest sum in sequence being 128 rows) and by as much of the
    threshold (:math:`2^{-20}`) as the difference in the gaps' form may differ from it, so that
    no group the comparison flags escapes the screen (the macro average, which compares every
    group, flags the same).
    """
    return threshold * (1.0 + 2.0**-20) + 2.0**-44 * abs(expected)


#: :meth:`_Builder._bound`'s factor of :math:`|E|`: above :func:`_widened`'s, at most
#: :math:`(1 + 2^{-20}) / L + 2^{-44}` (:math:`L` = :data:`~rankstats.chance.CONDITION_LIMIT`,
#: 256), by more than its roundings
_SCREEN_BOUND = (1.0 + 2.0**-18) / CONDITION_LIMIT


def _total(sums: FloatArray) -> FloatArray:
    """The sum of per-group sums over the groups (pairwise, as :func:`numpy.sum`), as ``(1,)``."""
    return np.array([sums.sum()])


def _tied_sums(split: TieSplit, terms: FloatArray) -> FloatArray:
    """Each term's sum over the tied rows of each group with some, as ``(groups, terms)``.

    ``terms`` holds the terms of the tied rows side by side, one column each; so do the sums
    (each term's a strided column, not copied into a row of its own).

    Each group's weighted terms are added in row order from 0 (as :func:`numpy.bincount` adds),
    all terms in one product with a sparse (groups x tied rows) matrix of the weights, or
    pairwise (as :meth:`~rankstats.evaluation.group_sums.GroupSums._sum`) where a group has more
    than 128 tied rows.
    """
    if split.tied_long:  # pairwise within each group, term by term
        terms *= split.tied_weights[:, np.newaxis]
        summed: FloatArray = np.add.reduceat(
            np.ascontiguousarray(terms.T), split.tied_starts, axis=1
        )
        transposed: FloatArray = summed.T  # a view
        return transposed
    from scipy import sparse

    size = split.tied_weights.size
    indptr = np.append(split.tied_starts, size)
    matrix = sparse.csr_matrix(
        (split.tied_weights, np.arange(size), indptr), shape=(indptr.size - 1, size)
    )
    return np.asarray(matrix @ terms, dtype=np.float64)


def _affine(
    metric: DerivedRankBasedMetric,
    base_expected: FloatArray,
    base_variance: FloatArray,
    base_gap: FloatArray,
    groups: IntArray,
) -> tuple[FloatArray, Values, Values, Values, dict[int, str]]:
    r"""The coefficients and null moments of a derived metric in every group, element-wise.

    ``base_gap`` is :math:`1 - \mathbb{E}` of the base, computed directly where it can be.

    The array form of the metric's ``_coefficients_from`` / ``_moments_from``; a group where
    these are undefined (or the base has no moments) gets NaN and, in the returned mapping, the
    reason the scalar form gives. For the three adjustments only the scale is an array, NaN
    where the metric is undefined; the offset and the null moments follow from it when read
    (:class:`~rankstats.evaluation.group_rows.Elementwise`). Derived classes other than these
    fall back to the scalar form group by group.
    """
    size = base_expected.size
    offset: Values
    expected: Values
    variance: Values
    with np.errstate(divide="ignore", invalid="ignore"):
        if isinstance(metric, ReindexedMetric):
            bad = base_gap == 0.0
            scale = 1.0 / base_gap
            offset = Elementwise(_offset, (scale, base_expected))
            expected = Elementwise(_zero_where_defined, (scale,))
            variance = Elementwise(_scaled_variance, (scale, base_variance))
        elif isinstance(metric, ZMetric):
            bad = ~(base_variance > 0)
            sign = 1.0 if metric.base.increasing else -1.0
            scale = sign / np.sqrt(base_variance)
            offset = Elementwise(_offset, (scale, base_expected))
            expected = Elementwise(_zero_where_defined, (scale,))
            variance = Elementwise(_one_where_defined, (scale,))
        elif isinstance(metric, ExpectationNormalizedMetric):
            bad = base_expected == 0.0
            scale = 1.0 / base_expected
            offset = Elementwise(_zero_where_defined, (scale,))
            expected = Elementwise(_one_where_defined, (scale,))
            variance = Elementwise(_scaled_variance, (scale, base_variance))
        else:
            scale, offsets = np.full(size, math.nan), np.full(size, math.nan)
            expectations, variances = np.full(size, math.nan), np.full(size, math.nan)
            bad = np.zeros(size, dtype=bool)
            for g in groups:
                mean, var = float(base_expected[g]), float(base_variance[g])
                variance_g = None if math.isnan(var) else var
                gap_g = float(base_gap[g])
                try:
                    scale[g], offsets[g] = metric._coefficients_from(mean, variance_g, gap_g)
                    e, v = metric._moments_from(mean, variance_g, gap_g)
                except ValueError:
                    bad[g] = True
                    continue
                expectations[g], variances[g] = e, _nan(v)
            offset, expected, variance = offsets, expectations, variances
    missing = np.isnan(base_expected) | (
        np.isnan(base_variance) if metric._coefficients_use_variance else False
    )
    undefined: dict[int, str] = {}
    failed = bad & ~missing
    # the groups where the array form fails with the base's moments known (none, mostly)
    for g in groups[failed[groups]] if failed.any() else groups[:0]:
        try:
            metric._coefficients_from(
                float(base_expected[g]), float(base_variance[g]), float(base_gap[g])
            )
        except ValueError as error:
            undefined[int(g)] = str(error)
        else:  # pragma: no cover - the array form and the scalar form disagree
            raise AssertionError(f"{metric!r}: group {g} undefined in array form only")
    dropped = bad | missing
    scale[dropped] = math.nan
    if isinstance(variance, np.ndarray):  # the scalar form's arrays: NaN where undefined
        for array in (offset, expected, variance):
            assert isinstance(array, np.ndarray)
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
    own_tables: bool = False,
) -> tuple[list[Column], list[ResultRow]]:
    """Every column (side, rank type, metric) over ``size`` groups, in table order.

    With ``micro``, also the rows of all groups together (the micro average), in table order;
    otherwise no rows. With ``own_tables`` (tables built for this call only), the key columns
    of the pairs and the candidate counts are dropped from the tables once every column's sums
    are in, where no metric reads them again (:func:`~rankstats.evaluation.terms.sums_only`):
    the call's peak memory is lower. Where an adjusted or z-scored metric's :math:`M - E`
    may have to be summed again, exactly, from the rows of a few groups, only the group ids are
    dropped (their row ranges kept).
    """
    metrics = list(dict.fromkeys(m for _, ms in plan for m in ms))
    release = own_tables and sums_only(metrics)
    # M - E may be summed again from the rows of a few groups where the rounded one lost
    # digits: the rows' values are then kept, only their group ids released
    keep_rows = any(
        has_exact_difference(m.base if isinstance(m, DerivedRankBasedMetric) else m)
        for m in metrics
    )
    columns: list[Column] = []
    builders = []
    for side, side_stats in stats.items():
        builder = _Builder(side, GroupSums(side_stats, size), null, size, progress)
        builder.data.owns_keys = release
        builder.data.keeps_rows = keep_rows
        builder.eager = not micro  # the macro average reads every group
        builder.prepare(metrics)
        builder.release_candidates()
        builder.prefetch(plan)
        builder.data.release_pairs()
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
            micro_columns = [everything.column(rt, m) for rt, chosen in plan for m in chosen]
            rows.extend(rows_of_group(micro_columns, 0))
    return columns, rows
