r"""Comparing models on the same queries: :func:`compare`.

For every metric it gives each model's value with a bootstrap confidence interval, and for every
pair of models the difference with its interval, an effect size and a p-value, corrected for the
number of comparisons. The pieces live in their own modules: input checking
(:mod:`~rankstats.compare.inputs`), the metrics as resampling statistics
(:mod:`~rankstats.compare.statistics`), the randomization test
(:mod:`~rankstats.compare.randomization`), the bootstrap (:mod:`~rankstats.compare.bootstrap`),
the corrections (:mod:`~rankstats.compare.correction`), the results
(:mod:`~rankstats.compare.results`) and their rendering (:mod:`~rankstats.compare.report`).
"""

from __future__ import annotations

import itertools
import numbers
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy import stats

from rankstats.arrays import FloatArray, IntArray
from rankstats.base import RankBasedMetric
from rankstats.compare.bootstrap import INTERVALS, Interval, bootstrap_pvalues, paired_bootstrap
from rankstats.compare.correction import Correction, check_correction, correct_pvalues
from rankstats.compare.inputs import (
    PairedRanks,
    check_confidence_level,
    group_members,
    prepare_paired_ranks,
)
from rankstats.compare.randomization import RELATIVE_TOLERANCE, block_rows, randomization_test
from rankstats.compare.results import (
    Comparison,
    ComparisonSettings,
    ModelValue,
    PairComparison,
)
from rankstats.compare.statistics import StatisticSet
from rankstats.evaluation.evaluate import MetricHint, resolve_metrics
from rankstats.evaluation.labels import weightless_groups_note
from rankstats.evaluation.scores import Ranks
from rankstats.evaluation.ties import expected_over_ties
from rankstats.null.sampling import Seed
from rankstats.validation import check_positive_int

__all__ = ["DEFAULT_COMPARE_METRICS", "MIN_RESAMPLES", "TESTS", "Test", "compare"]

Test = Literal["randomization", "t", "wilcoxon", "bootstrap"]
#: the tests :func:`compare` offers
TESTS: tuple[str, ...] = ("randomization", "t", "wilcoxon", "bootstrap")
#: the metrics compared when none are named
DEFAULT_COMPARE_METRICS: tuple[str, ...] = ("mrr", "hits@1", "hits@3", "hits@10")
#: the fewest resamples: one bootstrap resample has no spread (scipy's standard error, with
#: ddof=1, is undefined) and its "interval" is that one resampled value, estimate or not
MIN_RESAMPLES = 2


@dataclass
class _Analysis:
    """The raw arrays of one comparison, per metric: (M, m) values and (M, P) pair results."""

    values: FloatArray
    value_low: FloatArray
    value_high: FloatArray
    differences: FloatArray
    difference_low: FloatArray
    difference_high: FloatArray
    effect: FloatArray
    statistic: FloatArray
    pvalue: FloatArray
    pvalue_se: FloatArray
    n_resamples: int | None
    exact: bool | None


def _no_spread(mean: float, spread: float) -> bool:
    """Whether differences of this mean and spread are equal on every query, up to rounding."""
    return spread <= RELATIVE_TOLERANCE * abs(mean)


def _effect_sizes(statistics: StatisticSet) -> FloatArray:
    r"""Cohen's :math:`d_z` of the per-query term differences, signed like the difference.

    Undefined (NaN) where the differences have no spread.
    """
    result = np.full((len(statistics.statistics), len(statistics.pairs)), np.nan)
    a = statistics.normalized
    spread = 1.0 - float(np.dot(a, a))  # reliability-weights correction; n - 1 over n unweighted
    if spread <= 0:
        return result
    for position, statistic in enumerate(statistics.statistics):
        if not statistic.has_terms:
            continue
        for p, (first, second) in enumerate(statistics.pairs):
            d = statistic.data[first] - statistic.data[second]
            mean = float(np.dot(a, d))
            variance = float(np.dot(a, (d - mean) ** 2)) / spread
            if not _no_spread(mean, np.sqrt(variance)):
                result[position, p] = statistic.direction * mean / np.sqrt(variance)
    return result


def _spawned(rng: np.random.Generator) -> np.random.Generator:
    """An independent generator from ``rng``'s seed sequence, without drawing from ``rng``."""
    bits = rng.bit_generator
    sequence = getattr(bits, "seed_seq", None) or getattr(bits, "_seed_seq", None)
    if isinstance(sequence, np.random.SeedSequence):
        return np.random.default_rng(sequence.spawn(1)[0])
    return np.random.default_rng(rng.integers(0, 2**63))  # a generator of no seed sequence


def _analytic_test(
    statistics: StatisticSet, test: Literal["t", "wilcoxon"]
) -> tuple[FloatArray, FloatArray]:
    """The paired t-test or Wilcoxon signed-rank test on the per-query terms, by scipy.

    Differences 0 on every query give the statistic 0 and the p-value 1 (no evidence of a
    difference). Differences equal on every query (up to rounding) but not 0 have no spread: the
    t statistic is infinite, signed like the difference, and its p-value 0, the limit as the spread
    goes to 0 (scipy would warn of precision loss); the Wilcoxon test needs no such case. With a
    single query the t-test has no degrees of freedom: its statistic and p-value are NaN (as
    scipy's), not the no-spread limit. The t statistic is signed like the metric's difference:
    for a metric that falls as its terms' mean grows (AMRI of the ranks, IAMR), ``ttest_rel`` of
    the terms is negated, as it is of the metric's per-query values where those exist.
    """
    if statistics.data.weights is not None:
        raise ValueError(
            f"the {'paired t-test' if test == 't' else 'Wilcoxon signed-rank test'} takes no "
            f"weights; use test='randomization' or 'bootstrap' (--test on the command line) for "
            f"weighted queries"
        )
    shape = (len(statistics.statistics), len(statistics.pairs))
    statistic_values, pvalues = np.full(shape, np.nan), np.full(shape, np.nan)
    for position, statistic in enumerate(statistics.statistics):
        if not statistic.has_terms:
            raise ValueError(
                f"{statistic.metric.key} is not a mean of per-query values, so the "
                f"{test!r} test does not apply; use test='randomization' or 'bootstrap' (--test on "
                f"the command line)"
            )
        for p, (first, second) in enumerate(statistics.pairs):
            x, y = statistic.data[first], statistic.data[second]
            d = x - y
            if not d.any():  # identical on every query: no evidence of a difference
                statistic_values[position, p], pvalues[position, p] = 0.0, 1.0
                continue
            if test == "t" and d.size < 2:  # no degrees of freedom: undefined, as in scipy
                continue
            mean = float(np.mean(d))
            # the t statistic of the metric's direction (Wilcoxon's has no sign)
            sign = statistic.direction if test == "t" else 1.0
            if test == "t" and _no_spread(mean, float(np.max(np.abs(d - mean)))):
                statistic_values[position, p] = sign * np.copysign(np.inf, mean)
                pvalues[position, p] = 0.0
                continue
            with np.errstate(all="ignore"):
                result = stats.ttest_rel(x, y) if test == "t" else stats.wilcoxon(x, y)
            statistic_values[position, p] = sign * float(result.statistic)
            pvalues[position, p] = float(result.pvalue)
    return statistic_values, pvalues


def _analyse(
    data: PairedRanks,
    metrics: Sequence[RankBasedMetric],
    *,
    strata: Sequence[IntArray] | None,
    test: Test,
    n_resamples: int,
    exact: bool | None,
    interval: Interval | None,
    confidence_level: float,
    rng: np.random.Generator,
    batch: int | None,
) -> _Analysis:
    statistics = StatisticSet(data, metrics)
    num_metrics, num_models = len(statistics.statistics), statistics.num_models
    num_pairs = len(statistics.pairs)
    observed = statistics.observed().reshape(num_metrics, statistics.num_outputs)
    values, differences = observed[:, :num_models], observed[:, num_models:]
    nan_models = np.full(values.shape, np.nan)
    nan_pairs = np.full(differences.shape, np.nan)
    n_used: int | None = None
    exact_used: bool | None = None
    pvalue_se = np.full((num_metrics, num_pairs), np.nan)
    test_statistic = differences.copy()
    bootstrap = None
    # the test draws from a stream of its own, spawned from the seed: its p-values do not
    # depend on whether intervals were drawn first; the bootstrap keeps the seed's own stream
    # (the resamples scipy.stats.bootstrap draws from the same seed)
    test_rng = _spawned(rng)
    if (interval is not None or test == "bootstrap") and statistics.num_queries >= 2:
        bootstrap = paired_bootstrap(
            statistics.resampled,
            statistics.num_queries,
            strata=strata,
            n_resamples=n_resamples,
            confidence_level=confidence_level,
            method=interval or "percentile",
            rng=rng,
            batch=block_rows(statistics.num_queries, batch),
        )
    if test == "randomization":
        result = randomization_test(statistics, n_resamples, exact=exact, rng=test_rng, batch=batch)
        pvalue, pvalue_se = result.pvalue, result.standard_error
        n_used, exact_used = result.n_resamples, result.exact
    elif test == "bootstrap":
        if bootstrap is None:
            pvalue = np.full((num_metrics, num_pairs), np.nan)
        else:
            estimate = bootstrap.estimate.reshape(num_metrics, -1)[:, num_models:]
            distribution = bootstrap.distribution.reshape(num_metrics, -1, n_resamples)
            pvalue = bootstrap_pvalues(
                estimate.reshape(-1), distribution[:, num_models:].reshape(-1, n_resamples)
            ).reshape(num_metrics, num_pairs)
            pvalue_se = np.sqrt(pvalue * (1.0 - pvalue) / n_resamples)
        n_used, exact_used = n_resamples, False
    else:
        test_statistic, pvalue = _analytic_test(statistics, test)
    if bootstrap is not None and interval is not None:
        low = bootstrap.low.reshape(num_metrics, -1)
        high = bootstrap.high.reshape(num_metrics, -1)
        bounds = (
            low[:, :num_models],
            high[:, :num_models],
            low[:, num_models:],
            high[:, num_models:],
        )
    else:
        bounds = (nan_models, nan_models, nan_pairs, nan_pairs)
    return _Analysis(
        values=values,
        value_low=bounds[0],
        value_high=bounds[1],
        differences=differences,
        difference_low=bounds[2],
        difference_high=bounds[3],
        effect=_effect_sizes(statistics),
        statistic=test_statistic,
        pvalue=pvalue,
        pvalue_se=pvalue_se,
        n_resamples=n_used,
        exact=exact_used,
    )


def _none(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def _build(
    data: PairedRanks,
    metrics: Sequence[RankBasedMetric],
    analysis: _Analysis,
    adjusted: FloatArray,
    settings: ComparisonSettings,
) -> Comparison:
    names = data.names
    pairs = list(itertools.combinations(range(len(names)), 2))
    values, comparisons = [], []
    for position, metric in enumerate(metrics):
        # each model's value as the metric itself gives it (the resampling statistics' sums,
        # by matrix products, may differ in the last bits); the differences of those
        own = [_model_value(metric, data, j) for j in range(len(names))]
        for j, model in enumerate(names):
            values.append(
                ModelValue(
                    metric.key,
                    model,
                    own[j],
                    _none(analysis.value_low[position, j]),
                    _none(analysis.value_high[position, j]),
                )
            )
        for p, (a, b) in enumerate(pairs):
            comparisons.append(
                PairComparison(
                    metric=metric.key,
                    model_a=names[a],
                    model_b=names[b],
                    difference=own[a] - own[b],
                    lower=_none(analysis.difference_low[position, p]),
                    upper=_none(analysis.difference_high[position, p]),
                    effect_size=_none(analysis.effect[position, p]),
                    statistic=_none(analysis.statistic[position, p]),
                    p_value=_none(analysis.pvalue[position, p]),
                    p_value_se=None
                    if settings.test in ("t", "wilcoxon")
                    else _none(analysis.pvalue_se[position, p]),
                    p_adjusted=_none(adjusted[position, p]),
                )
            )
    return Comparison(tuple(names), tuple(metrics), values, comparisons, settings)


def _model_value(metric: RankBasedMetric, data: PairedRanks, model: int) -> float:
    """One model's value of ``metric`` on the queries of ``data``, from the metric itself."""
    if data.bounds is not None:  # the expectation over tie-breaking
        ranks = Ranks(data.bounds[0][model], data.bounds[1][model], data.num_candidates)
        return float(expected_over_ties(metric, ranks, weights=data.weights))
    return float(metric(data.ranks[model], data.num_candidates, data.weights))


def _positive_weights(data: PairedRanks, per_group: bool) -> tuple[PairedRanks, list[str]]:
    """The queries of positive weight only, and notes on those of weight 0 left out.

    A query of weight 0 contributes nothing to any weighted metric (:func:`numpy.average` leaves
    it out), but a resample of such queries only has no value (0 / 0): they are left out before
    resampling and permuting, so that the intervals and p-values are those of the queries of
    positive weight. For per-group results, a group whose queries all have weight 0 is left out, as
    :func:`~rankstats.evaluate` leaves it out.
    """
    weights = data.weights
    if weights is None or weights.all():
        return data, []
    keep = np.flatnonzero(weights)
    notes = [
        f"{weights.size - keep.size} of {weights.size} queries left out because their weight is 0"
    ]
    if per_group and data.groups is not None:
        labels, members = group_members(data.groups)
        weightless = [
            label for label, index in zip(labels, members, strict=True) if not weights[index].any()
        ]
        if weightless:
            notes.append(weightless_groups_note(weightless))
    return data.subset(keep), notes


def _seed_label(seed: Seed) -> int | str | None:
    if seed is None:
        return None
    if isinstance(seed, np.random.Generator):
        return "a numpy Generator"
    return int(seed)


def _check_options(
    test: Any, interval: Any, n_resamples: Any, exact: Any, batch: Any, seed: Any
) -> None:
    if test not in TESTS:
        raise ValueError(f"test must be one of {list(TESTS)}, got {test!r}")
    if interval is not None and interval not in INTERVALS:
        raise ValueError(f"interval must be one of {list(INTERVALS)} or None, got {interval!r}")
    if (
        not isinstance(n_resamples, bool)
        and isinstance(n_resamples, numbers.Integral)
        and n_resamples < MIN_RESAMPLES
    ):
        raise ValueError(
            f"n_resamples must be at least {MIN_RESAMPLES} (a bootstrap of one resample has no "
            f"spread), got {n_resamples!r}"
        )
    check_positive_int(n_resamples, "n_resamples")  # the type
    if exact not in (None, True, False):
        raise TypeError(f"exact must be True, False or None, got {exact!r}")
    if batch is not None:
        check_positive_int(batch, "batch")
    if (
        seed is not None
        and not isinstance(seed, np.random.Generator)
        and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0)
    ):
        raise ValueError(
            f"seed must be a non-negative integer, a numpy Generator or None, got {seed!r}"
        )


def compare(
    ranks: Any,
    num_candidates: Any = None,
    *,
    metrics: Sequence[MetricHint] | MetricHint | None = None,
    rank_type: str = "realistic",
    weights: Any = None,
    groups: Any = None,
    query_ids: Any = None,
    test: Test = "randomization",
    n_resamples: int = 10_000,
    exact: bool | None = None,
    interval: Interval | None = "bca",
    confidence_level: float = 0.95,
    correction: Correction = "holm",
    per_group: bool = False,
    batch: int | None = None,
    seed: Seed = None,
) -> Comparison:
    r"""Compare two or more models on the same queries: values, intervals, tests, corrections.

    Parameters
    ----------
    ranks : mapping or sequence
        The models' ranks: a mapping from model name to ranks, or a sequence of ranks (named
        ``"model 1"``, ``"model 2"``, ...), or a 2-D array with one row per model. Each model's
        ranks take any single-side form of :func:`~rankstats.evaluate`: a
        :class:`~rankstats.Ranks` (every rank type, ``"expected"`` included), an array of
        realistic ranks, or a mapping from rank type to arrays. All models rank the same queries.
    num_candidates : array-like of shape (n,) or mapping, optional
        The candidates of each query, one array for all models or a mapping per model; not
        needed for :class:`~rankstats.Ranks` that carry theirs. Where two models give candidate
        counts they must agree query by query. Needed by the adjusted and z-scored metrics.
    metrics : sequence of str or metric, optional
        The metrics, by any name the :data:`~rankstats.metric_resolver` knows; by default
        :data:`DEFAULT_COMPARE_METRICS` (MRR, ``Hits@1``, ``Hits@3``, ``Hits@10``).
    rank_type : str, default="realistic"
        ``"optimistic"``, ``"realistic"``, ``"pessimistic"`` or ``"expected"`` (each metric in
        expectation over breaking ties at random, for the means of per-query terms and the
        geometric mean rank).
    weights : array-like of shape (n,), optional
        Non-negative query weights, as in :func:`~rankstats.evaluate` (in the first model's
        query order). Queries of weight 0, which contribute nothing to a weighted metric, are left
        out before resampling (and groups whose queries all have weight 0 from the per-group
        results); the result's ``notes`` say so.
    groups : array-like of shape (n,), optional
        A label per query (e.g. the relation). The bootstrap then resamples within each group;
        with ``per_group=True`` every group is also compared on its own.
    query_ids : array-like of shape (n,) or mapping, optional
        Query ids, one array per model (as a mapping) to check that the models hold the same
        queries and align them to the first model's order; or one array for all.
    test : {"randomization", "t", "wilcoxon", "bootstrap"}, default="randomization"
        The paired test of each difference: the randomization (permutation) test, the paired
        t-test or the Wilcoxon signed-rank test (:mod:`scipy.stats`, on per-query terms, without
        weights), or the bootstrap test (from the shifted bootstrap distribution). Where a pair's
        per-query differences are equal on every query (up to rounding) but not 0, the t
        statistic is infinite and its p-value 0; differences 0 on every query give the statistic
        0 and the p-value 1 (t and Wilcoxon).
    n_resamples : int, default=10000
        The resamples of the randomization test and of the bootstrap, at least 2.
    exact : bool, optional
        Whether the randomization test enumerates all :math:`2^n` swap patterns; by default
        when :math:`2^n \le` ``n_resamples``.
    interval : {"bca", "percentile"} or None, default="bca"
        The bootstrap confidence interval, or ``None`` for no intervals.
    confidence_level : float, default=0.95
        The intervals' coverage, a fraction in (0, 1).
    correction : {"holm", "bonferroni", "bh", "by", "none"}, default="holm"
        The multiple-comparison correction over the pairs of each metric (and, for per-group
        results, over all groups and pairs of a metric). ``"bh"`` is Benjamini-Hochberg.
    per_group : bool, default=False
        Whether to compare the models within each group as well (needs ``groups``).
    batch : int, optional
        The resamples per block; by default blocks of about 32 MiB. The draws are made block by
        block, so the Monte-Carlo p-values and the stratified intervals of a seed depend on it
        too (within their Monte-Carlo error); the default depends on the data's size only.
    seed : int or numpy.random.Generator, optional
        The seed of every random draw; the same seed (and ``batch``) gives the same results.

    Returns
    -------
    Comparison
        Values, intervals, differences, effect sizes and p-values, with report methods.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> good = rng.integers(1, 5, size=200)
    >>> bad = good + rng.integers(0, 3, size=200)
    >>> result = compare({"good": good, "bad": bad}, metrics=["mrr"], seed=0)
    >>> pair = result.pair("mrr", "good", "bad")
    >>> pair.difference > 0, pair.p_value < 0.01
    (True, True)
    """
    _check_options(test, interval, n_resamples, exact, batch, seed)
    n_resamples = int(n_resamples)  # a numpy integer as Python's (settings, JSON)
    batch = None if batch is None else int(batch)
    level = check_confidence_level(confidence_level)
    method = check_correction(correction)
    if per_group and groups is None:
        raise ValueError("per_group=True needs groups, a label per query")
    data = prepare_paired_ranks(
        ranks,
        num_candidates,
        rank_type=rank_type,
        weights=weights,
        groups=groups,
        query_ids=query_ids,
    )
    data, notes = _positive_weights(data, per_group)
    resolved, _ = resolve_metrics(DEFAULT_COMPARE_METRICS if metrics is None else metrics)
    rng = np.random.default_rng(seed)
    labels: list[Hashable] = []
    members: list[IntArray] = []
    if data.groups is not None:
        labels, members = group_members(data.groups)
    options: dict[str, Any] = {
        "test": test,
        "n_resamples": n_resamples,
        "exact": exact,
        "interval": interval,
        "confidence_level": level,
        "rng": rng,
        "batch": batch,
    }
    if members and (interval is not None or test == "bootstrap") and max(map(len, members)) < 2:
        # every resample within the groups would be the data itself: intervals of width 0
        raise ValueError(
            f"groups: the bootstrap resamples the queries within each group, and each of the "
            f"{len(members)} groups holds one query, so every resample is the data itself; pass "
            "coarser groups, or interval=None with a test other than 'bootstrap'"
        )
    analysis = _analyse(data, resolved, strata=members or None, **options)
    adjusted = np.stack([correct_pvalues(row, method) for row in analysis.pvalue])

    def settings(
        analysis: _Analysis, num_queries: int, stratified: bool, family_groups: int = 0
    ) -> ComparisonSettings:
        return ComparisonSettings(
            test=test,
            n_resamples=analysis.n_resamples,
            exact=analysis.exact,
            seed=_seed_label(seed),
            interval=interval,
            confidence_level=level,
            n_bootstrap=n_resamples if interval is not None or test == "bootstrap" else None,
            stratified=stratified,
            correction=method,
            rank_type=rank_type,
            num_queries=num_queries,
            weighted=data.weights is not None,
            family_groups=family_groups,
        )

    result = _build(
        data, resolved, analysis, adjusted, settings(analysis, data.num_queries, bool(members))
    )
    result.notes.extend(notes)
    if per_group:
        parts = [data.subset(index) for index in members]
        analyses = [_analyse(part, resolved, strata=None, **options) for part in parts]
        # one family per metric: every group and pair
        stacked = np.stack([a.pvalue for a in analyses], axis=1)  # (M, G, P)
        corrected = np.stack([correct_pvalues(row.ravel(), method) for row in stacked])
        corrected = corrected.reshape(stacked.shape)
        for g, (label, part, part_analysis) in enumerate(zip(labels, parts, analyses, strict=True)):
            result.by_group[label] = _build(
                part,
                resolved,
                part_analysis,
                corrected[:, g, :],
                settings(part_analysis, part.num_queries, False, len(labels)),
            )
    return result
