r"""Each metric as a statistic of the queries, evaluated on whole blocks of resamples at once.

A comparison needs every metric of every model on thousands of resampled query sets: bootstrap
resamples (queries drawn with replacement) and randomization resamples (the two models' ranks
swapped on a random subset of queries). Both are evaluated here, block by block, without a Python
loop over resamples.

Most metrics are a monotone *link* :math:`h` of a weighted mean of per-query terms,

.. math::

    M = \alpha \, h\Big(\sum_i a_i \, g(r_i)\Big) + \beta, \qquad a_i = \frac{w_i}{\sum_j w_j},

with :math:`g(r) = r` and :math:`h` the identity for the mean rank (MR), :math:`g = 1/r` for the
mean reciprocal rank (MRR), :math:`g = \mathbb{I}[r \le k]` for Hits@k, :math:`g = \ln r` and
:math:`h = \exp` for the geometric mean rank, :math:`h(x) = 1/x` for the harmonic and inverse
arithmetic mean ranks, :math:`h(x) = e^{-x}` for the inverse geometric mean rank, and
:math:`(\alpha, \beta)` the coefficients of a derived (adjusted or z-scored) metric, which depend on
the candidate counts only. For the rank type ``"expected"`` the term is the expectation over
tie-breaking of the query's own term (:mod:`rankstats.evaluation.ties`). Such a *terms* statistic
is evaluated on a block of resamples by one matrix product: the bootstrap multiplies the matrix of
how often each query was drawn, the randomization test the matrix of swapped queries, with the
matrix of weighted terms of all metrics and models.

The other metrics (the median and its inverse, the variance, standard deviation and median absolute
deviation of the ranks) are evaluated on the resampled ranks themselves: a *ranks* statistic.
The count is refused, being the same for every model.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from rankstats.arrays import FloatArray, IntArray
from rankstats.base import RankBasedMetric
from rankstats.compare.inputs import PairedRanks
from rankstats.errors import NoClosedFormError
from rankstats.evaluation.scores import RANK_EXPECTED
from rankstats.evaluation.ties import log_power_mean, reciprocal_sum
from rankstats.metrics.central import (
    ArithmeticMeanRank,
    GeometricMeanRank,
    HarmonicMeanRank,
    InverseArithmeticMeanRank,
    InverseGeometricMeanRank,
    InverseHarmonicMeanRank,
)
from rankstats.metrics.derived import DerivedRankBasedMetric
from rankstats.metrics.dispersion import Count
from rankstats.metrics.hits import HitsAtK
from rankstats.null.tasks import Tasks

__all__ = ["Link", "MetricStatistic", "StatisticSet"]

Link = Literal["identity", "exp", "exp_neg", "reciprocal"]

_LINKS: dict[str, Callable[[FloatArray], FloatArray]] = {
    "identity": lambda x: x,
    "exp": np.exp,
    "exp_neg": lambda x: np.exp(-x),
    "reciprocal": np.reciprocal,
}
#: the sign of each link's derivative
_LINK_SIGN = {"identity": 1.0, "exp": 1.0, "exp_neg": -1.0, "reciprocal": -1.0}


@dataclass(frozen=True)
class MetricStatistic:
    """One metric prepared for resampling: per-query terms or ranks of every model.

    ``data`` has one row per model: the per-query terms :math:`g(r_i)` of a *terms* statistic
    (``link`` set), or the ranks of a *ranks* statistic (``link`` is ``None``).
    """

    metric: RankBasedMetric
    base: RankBasedMetric
    data: FloatArray
    link: Link | None
    scale: float
    offset: float

    @property
    def has_terms(self) -> bool:
        """Whether the metric is a link of a weighted mean of per-query terms."""
        return self.link is not None

    @property
    def direction(self) -> float:
        """+1 if the metric grows with the mean of its terms, -1 if it shrinks."""
        return _LINK_SIGN[self.link or "identity"] * (1.0 if self.scale >= 0 else -1.0)


def _expected_terms(
    base: RankBasedMetric, data: PairedRanks, key: str
) -> tuple[FloatArray, Link] | None:
    assert data.bounds is not None
    optimistic, pessimistic = data.bounds
    length = (pessimistic - optimistic + 1).astype(np.float64)
    kind = type(base)
    if kind is ArithmeticMeanRank:
        return 0.5 * (optimistic + pessimistic).astype(np.float64), "identity"
    if kind is InverseHarmonicMeanRank:
        return reciprocal_sum(optimistic, pessimistic) / length, "identity"
    if kind is HitsAtK:
        assert isinstance(base, HitsAtK)
        hits = np.clip(base.cutoff - optimistic + 1, 0, pessimistic - optimistic + 1)
        return hits / length, "identity"
    if kind in (GeometricMeanRank, InverseGeometricMeanRank):
        if data.weights is not None:
            raise ValueError(
                f"{key} in expectation over tie-breaking is not a mean of per-query terms for "
                f"weighted queries; compare it without weights or with another rank type"
            )
        n = data.num_queries
        sign = 1.0 if kind is GeometricMeanRank else -1.0
        return n * log_power_mean(optimistic, pessimistic, sign / n), "exp"
    return None


def _plain_terms(base: RankBasedMetric, ranks: FloatArray) -> tuple[FloatArray, Link] | None:
    kind = type(base)
    if kind is ArithmeticMeanRank:
        return ranks, "identity"
    if kind is InverseArithmeticMeanRank:
        return ranks, "reciprocal"
    if kind is InverseHarmonicMeanRank:
        return np.reciprocal(ranks), "identity"
    if kind is HarmonicMeanRank:
        return np.reciprocal(ranks), "reciprocal"
    if kind is GeometricMeanRank:
        return np.log(ranks), "exp"
    if kind is InverseGeometricMeanRank:
        return np.log(ranks), "exp_neg"
    if kind is HitsAtK:
        assert isinstance(base, HitsAtK)
        return (ranks <= base.cutoff).astype(np.float64), "identity"
    return None


def _coefficients(metric: RankBasedMetric, data: PairedRanks) -> tuple[float, float]:
    if not isinstance(metric, DerivedRankBasedMetric):
        return 1.0, 0.0
    if data.num_candidates is None:
        raise ValueError(
            f"{metric.key} needs num_candidates, the number of candidates of each query"
        )
    try:
        scale, offset = metric._coefficients(Tasks(data.num_candidates, data.weights))
    except NoClosedFormError as error:
        raise ValueError(f"{metric.key} cannot be compared here: {error}") from error
    return float(scale), float(offset)


def _check_rank_type(metric: RankBasedMetric, rank_type: str) -> None:
    supported = tuple(metric.supported_rank_types)
    wanted = "realistic" if rank_type == RANK_EXPECTED else rank_type
    if wanted not in supported:
        raise ValueError(
            f"{metric.key} supports only the rank types {supported}"
            + (" (and 'expected')" if "realistic" in supported else "")
            + f", got rank_type={rank_type!r}"
        )


def build_statistic(metric: RankBasedMetric, data: PairedRanks) -> MetricStatistic:
    """Prepare ``metric`` for resampling on ``data``, or say clearly why it cannot be."""
    base = metric.base if isinstance(metric, DerivedRankBasedMetric) else metric
    if isinstance(base, Count):
        raise ValueError(f"{metric.key} is the same for every model and cannot be compared")
    if base.needs_candidates:
        raise ValueError(f"{metric.key} needs candidate counts per rank and cannot be compared")
    _check_rank_type(metric, data.rank_type)
    if data.weights is not None and not metric.supports_weights:
        raise ValueError(f"{metric.key} does not support weights; compare it without weights")
    scale, offset = _coefficients(metric, data)
    if data.rank_type == RANK_EXPECTED:
        found = _expected_terms(base, data, metric.key)
        if found is None:
            raise ValueError(
                f"{metric.key} has no per-query expectation over tie-breaking; compare it with "
                f"the rank type 'realistic', 'optimistic' or 'pessimistic'"
            )
    else:
        found = _plain_terms(base, data.ranks)
    if found is None:
        if data.weights is not None:
            raise ValueError(
                f"{metric.key} is not a mean of per-query terms, and compare resamples such "
                f"metrics without weights only; compare it without weights"
            )
        return MetricStatistic(metric, base, data.ranks, None, scale, offset)
    terms, link = found
    return MetricStatistic(metric, base, np.ascontiguousarray(terms), link, scale, offset)


def _counts(index: IntArray, n: int) -> FloatArray:
    """How often each of the ``n`` queries occurs in each row of ``index``, shape (rows, n)."""
    rows = index.shape[0]
    flat = (index + (np.arange(rows, dtype=np.int64) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=rows * n).reshape(rows, n).astype(np.float64)


class StatisticSet:
    """All metrics of a comparison on one set of queries, for every model and pair of models.

    The statistics of a block come out in one layout, metric by metric: first the value of every
    model, then the difference (first minus second) of every pair, in the order of :attr:`pairs`.

    Parameters
    ----------
    data : PairedRanks
        The models' ranks on the queries.
    metrics : sequence of RankBasedMetric
        The metrics.
    """

    def __init__(self, data: PairedRanks, metrics: Sequence[RankBasedMetric]) -> None:
        self.data = data
        self.statistics = [build_statistic(metric, data) for metric in metrics]
        self.num_models = len(data.names)
        self.num_queries = data.num_queries
        self.pairs: list[tuple[int, int]] = list(itertools.combinations(range(self.num_models), 2))
        weights = data.weights
        self.weights = (
            np.ones(self.num_queries) if weights is None else np.asarray(weights, np.float64)
        )
        self.normalized = self.weights / self.weights.sum()
        self._term_positions = [i for i, s in enumerate(self.statistics) if s.has_terms]
        self._rank_positions = [i for i, s in enumerate(self.statistics) if not s.has_terms]
        self._terms = [self.statistics[i] for i in self._term_positions]
        # (n, T * m) weighted terms and (n, T * P) weighted differences (second minus first)
        if self._terms:
            stacked = np.stack([s.data for s in self._terms])  # (T, m, n)
            self._weighted = (stacked * self.weights).reshape(-1, self.num_queries).T.copy()
            first = np.array([a for a, _ in self.pairs])
            second = np.array([b for _, b in self.pairs])
            differences = (stacked[:, second, :] - stacked[:, first, :]) * self.normalized
            self._swap = differences.reshape(-1, self.num_queries).T.copy()
            self._means = np.einsum("tmn,n->tm", stacked, self.normalized)  # (T, m)

    @property
    def num_outputs(self) -> int:
        """The number of statistics per metric: every model's value and every pair's difference."""
        return self.num_models + len(self.pairs)

    def terms(self, position: int) -> FloatArray | None:
        """The per-query terms (one row per model) of the metric at ``position``, if it has them."""
        statistic = self.statistics[position]
        return statistic.data if statistic.has_terms else None

    # --- bootstrap ---------------------------------------------------------------------------

    def resampled(self, index: IntArray) -> FloatArray:
        """Every statistic on the query sets ``index`` (rows of query indices).

        Parameters
        ----------
        index : numpy.ndarray of int, shape (..., k)
            Query indices; each row along the last axis is one resampled query set.

        Returns
        -------
        numpy.ndarray of shape (num_metrics * num_outputs, ...)
            The statistics in the layout of the class docstring.
        """
        index = np.asarray(index, dtype=np.int64)
        leading = index.shape[:-1]
        rows = index.reshape(-1, index.shape[-1])
        values = np.empty((len(self.statistics), self.num_models, rows.shape[0]))
        with np.errstate(invalid="ignore", divide="ignore"):
            if self._terms:
                counts = _counts(rows, self.num_queries)
                sums = counts @ self._weighted  # (B, T * m)
                total = counts @ self.weights  # (B,)
                means = (sums / total[:, None]).T.reshape(len(self._terms), self.num_models, -1)
                for position, at in enumerate(self._term_positions):
                    values[at] = self._finish(self.statistics[at], means[position])
            for at in self._rank_positions:
                statistic = self.statistics[at]
                ranks = statistic.data[:, rows]  # (m, B, k)
                evaluated = np.stack(
                    [np.asarray(statistic.base._evaluate(row, None, None)) for row in ranks]
                )
                values[at] = statistic.scale * evaluated + statistic.offset
        return self._with_differences(values).reshape(-1, *leading)

    def _finish(self, statistic: MetricStatistic, means: FloatArray) -> FloatArray:
        assert statistic.link is not None
        linked = _LINKS[statistic.link](means)
        return np.asarray(statistic.scale * linked + statistic.offset, dtype=np.float64)

    def _with_differences(self, values: FloatArray) -> FloatArray:
        """Append the pairs' differences to the models' values, shape (M, m + P, B)."""
        first = [a for a, _ in self.pairs]
        second = [b for _, b in self.pairs]
        return np.concatenate([values, values[:, first] - values[:, second]], axis=1)

    def observed(self) -> FloatArray:
        """Every statistic on the queries as given, shape (num_metrics, num_outputs)."""
        return self.resampled(np.arange(self.num_queries)).reshape(len(self.statistics), -1)

    # --- randomization -----------------------------------------------------------------------

    def swapped_differences(self, swaps: FloatArray) -> FloatArray:
        """Each pair's difference with its two models' ranks swapped on some queries.

        Parameters
        ----------
        swaps : numpy.ndarray of shape (B, n)
            1.0 where the pair's ranks are swapped, 0.0 where not (the same swaps for every pair
            and metric).

        Returns
        -------
        numpy.ndarray of shape (num_metrics, num_pairs, B)
            The difference of each pair on each metric, first model minus second.
        """
        num_pairs = len(self.pairs)
        result = np.empty((len(self.statistics), num_pairs, swaps.shape[0]))
        first = np.array([a for a, _ in self.pairs])
        second = np.array([b for _, b in self.pairs])
        if self._terms:
            shift = (swaps @ self._swap).T.reshape(len(self._terms), num_pairs, -1)
            for position, at in enumerate(self._term_positions):
                statistic = self.statistics[at]
                base = self._means[position]
                mean_first = base[first][:, None] + shift[position]
                mean_second = base[second][:, None] - shift[position]
                result[at] = self._finish(statistic, mean_first) - self._finish(
                    statistic, mean_second
                )
        if self._rank_positions:
            mask = swaps.astype(bool)
            for at in self._rank_positions:
                statistic = self.statistics[at]
                for p, (a, b) in enumerate(self.pairs):
                    ranks_a, ranks_b = statistic.data[a], statistic.data[b]
                    evaluate = statistic.base._evaluate
                    value_a = np.asarray(evaluate(np.where(mask, ranks_b, ranks_a), None, None))
                    value_b = np.asarray(evaluate(np.where(mask, ranks_a, ranks_b), None, None))
                    result[at, p] = statistic.scale * (value_a - value_b)
        return result
