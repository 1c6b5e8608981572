r"""Figures of ranks and results, with the null model drawn in.

- :func:`plot_null_distribution`: how a metric is distributed when the ranks are random, with an
  observed value and its z-score;
- :func:`plot_hits_at_k`: the Hits@k curve (k = 1..K) of one or more results, with the null
  model's expected value and a band of two standard deviations around it;
- :func:`plot_rank_histogram`: the histogram of ranks on a log scale;
- :func:`plot_comparison`: models compared on a metric (:func:`rankstats.compare`), each value
  with its confidence interval and the significantly different pairs joined.

This module needs matplotlib, an optional dependency (``pip install "rankstats[plot]"``). It is
not imported by ``import rankstats``, and it imports matplotlib only when a plot is drawn, so
importing it is cheap and a missing matplotlib is reported when it is first needed.

Examples
--------
>>> from matplotlib.figure import Figure
>>> from rankstats.plot import plot_null_distribution
>>> ax = Figure().subplots()
>>> ax = plot_null_distribution("mrr", [10] * 50, observed=0.45, ax=ax, generator=0)
>>> ax.get_xlabel()
'Mean Reciprocal Rank (MRR)'
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from rankstats.base import RankBasedMetric
from rankstats.errors import NoClosedFormError
from rankstats.evaluation.report import metric_label
from rankstats.metrics.hits import HitsAtK
from rankstats.registry import metric_resolver
from rankstats.validation import (
    check_positive_int,
    check_ranks,
    check_variance_samples,
    num_entries,
)

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes  # type: ignore[import-not-found, unused-ignore]

    from rankstats.compare.results import Comparison
    from rankstats.evaluation.results import EvaluationResults
    from rankstats.null.sampling import Seed

__all__ = [
    "hits_metrics",
    "plot_comparison",
    "plot_hits_at_k",
    "plot_null_distribution",
    "plot_rank_histogram",
]


def _import_pyplot() -> ModuleType:
    """Import :mod:`matplotlib.pyplot`, or explain how to install it."""
    try:
        import matplotlib.pyplot as plt  # type: ignore[import-not-found, unused-ignore]
    except ImportError as error:
        raise ImportError(
            "rankstats.plot needs matplotlib, an optional dependency; install it with "
            "pip install 'rankstats[plot]'"
        ) from error
    module: ModuleType = plt  # typed whether or not matplotlib's stubs are installed
    return module


def _null_moments(
    metric: RankBasedMetric,
    num_candidates: npt.ArrayLike,
    weights: npt.ArrayLike | None,
    samples: npt.NDArray[np.float64],
    num_ranks: int | None = None,
) -> tuple[float, float, bool]:
    """The null mean and standard deviation: closed forms where known, else from the samples."""
    try:
        mean = metric.expected_value(num_candidates, weights=weights, num_ranks=num_ranks)
        std = metric.std(num_candidates, weights=weights, num_ranks=num_ranks)
    except NoClosedFormError:
        return float(samples.mean()), float(samples.std(ddof=1)), False
    return mean, std, True


def plot_null_distribution(
    metric: str | RankBasedMetric,
    num_candidates: npt.ArrayLike,
    *,
    observed: float | None = None,
    weights: npt.ArrayLike | None = None,
    num_samples: int = 10_000,
    generator: Seed = None,
    bins: int | str = "auto",
    ax: Axes | None = None,
    num_ranks: int | None = None,
) -> Axes:
    r"""Draw the distribution of a metric under the null model, optionally with an observed value.

    The histogram shows the metric evaluated on ``num_samples`` rank vectors drawn with
    :math:`r_i \sim \mathcal{U}\{1, \dots, C_i\}`. A dashed line marks the expected value; where
    the metric has closed-form null moments, the normal density with that mean and variance is
    drawn over the histogram (by the central limit theorem, mean-type metrics of many ranks are
    close to normal). An observed value is marked with its z-score
    :math:`(M - \mathbb{E}[M]) / \sqrt{\mathbb{V}[M]}`, as in the results of
    :func:`rankstats.evaluate`: for a metric where lower is better, such as the mean rank, a
    better-than-chance value has a negative z-score.

    Parameters
    ----------
    metric : str or RankBasedMetric
        The metric, as a name understood by :data:`rankstats.metric_resolver` (``"mrr"``,
        ``"hits@10"``, ...) or an instance.
    num_candidates : array-like of shape (n,)
        The number of candidates of each ranking task.
    observed : float, optional
        A value of the metric to mark, e.g. a model's result on these tasks.
    weights : array-like of shape (n,), optional
        Non-negative weights of the tasks, as for the metric itself.
    num_samples : int, default=10000
        The number of rank vectors drawn from the null model.
    generator : int or numpy.random.Generator, optional
        Seed or generator of the random draws, for a reproducible figure.
    bins : int or str, default="auto"
        Passed to :meth:`matplotlib.axes.Axes.hist`.
    ax : matplotlib.axes.Axes, optional
        The axes to draw on; by default a new figure is created with :mod:`matplotlib.pyplot`.
    num_ranks : int, optional
        The number of tasks, with one ``num_candidates`` for all of them.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.

    Raises
    ------
    ImportError
        If matplotlib is not installed.
    """
    instance = metric_resolver.make(metric)
    given: object = observed
    if given is not None:
        if isinstance(given, bool) or not isinstance(given, numbers.Real):
            raise TypeError(f"observed must be a real number, got {given!r}")
        if not math.isfinite(given):
            raise ValueError(f"observed must be finite, got {given!r}")
    # two draws at least: the sampled spread (the standard deviation of one draw had warned)
    num_samples = check_variance_samples(num_samples)
    if ax is None:
        _, ax = _import_pyplot().subplots()
    else:
        _import_pyplot()
    samples = instance.get_sampled_values(
        num_candidates, num_samples, weights, generator, num_ranks=num_ranks
    )
    mean, std, exact = _null_moments(instance, num_candidates, weights, samples, num_ranks)

    ax.hist(samples, bins=bins, density=True, color="0.75", label=f"null ({num_samples:,} draws)")
    if exact and std > 0:
        low, high = ax.get_xlim()
        grid = np.linspace(low, high, 400)
        density = np.exp(-0.5 * ((grid - mean) / std) ** 2) / (std * math.sqrt(2 * math.pi))
        ax.plot(grid, density, color="0.3", linewidth=1.0, label="normal approximation")
    source = "exact" if exact else "Monte-Carlo"
    ax.axvline(mean, color="0.2", linestyle="--", label=f"expected value {mean:.4g} ({source})")
    if observed is not None:
        label = f"observed {observed:.4g}"
        if std > 0:
            label += f" (z = {(observed - mean) / std:+.1f})"
        ax.axvline(observed, color="tab:red", linewidth=2.0, label=label)
    label = metric_label(instance)
    ax.set_xlabel(label)
    ax.set_ylabel("density under the null")
    n = num_entries(num_candidates)
    ax.set_title(f"{label} under the null model, {n:,} tasks")
    ax.legend(loc="best", fontsize="small")
    return ax


def _axes(ax: Axes | None) -> Axes:
    if ax is None:
        _, ax = _import_pyplot().subplots()
        return ax
    _import_pyplot()
    return ax


def hits_metrics(max_k: int) -> list[HitsAtK]:
    """The metrics of a Hits@k curve, Hits@1 to Hits@``max_k``, to pass to ``evaluate``.

    Examples
    --------
    >>> hits_metrics(3)
    [HitsAtK(k=1), HitsAtK(k=2), HitsAtK(k=3)]
    """
    if isinstance(max_k, bool) or not isinstance(max_k, int | np.integer) or max_k < 1:
        raise ValueError(f"max_k must be a positive integer, got {max_k!r}")
    return [HitsAtK(k=k) for k in range(1, int(max_k) + 1)]


def plot_hits_at_k(
    results: EvaluationResults | Mapping[str, EvaluationResults],
    *,
    rank_type: str = "realistic",
    side: str = "both",
    band: float = 2.0,
    ax: Axes | None = None,
) -> Axes:
    r"""Draw Hits@k against k for one or more results, with the null model's band.

    Every Hits@k row of the results (for the side and rank type) is a point of the curve; evaluate
    with ``metrics=hits_metrics(K)`` to have k = 1..K. For each result set, the null model's
    expected value :math:`\mathbb{E}[\mathrm{H@}k]` is drawn dashed, and the band
    :math:`\mathbb{E} \pm` ``band`` standard deviations shaded: a curve inside its band is
    indistinguishable from random ranking.

    Parameters
    ----------
    results : EvaluationResults or mapping of str to EvaluationResults
        One result set, or several by label (one curve each).
    rank_type : str, default="realistic"
        The rank type to draw.
    side : str, default="both"
        The side to draw.
    band : float, default=2.0
        The half-width of the band, in null standard deviations.
    ax : matplotlib.axes.Axes, optional
        The axes to draw on; by default a new figure with :mod:`matplotlib.pyplot`.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.

    Raises
    ------
    ValueError
        If a result set has no Hits@k rows for the side and rank type.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from rankstats import evaluate
    >>> results = evaluate([1, 2, 8, 3], [10, 10, 20, 20], metrics=hits_metrics(5))
    >>> ax = plot_hits_at_k(results, ax=Figure().subplots())
    >>> ax.get_title(), ax.get_xlabel(), ax.get_ylabel()
    ('Hits@k for k = 1..5 (realistic ranks)', 'k', 'Hits@k')
    """
    from rankstats.evaluation.results import EvaluationResults

    sets: dict[str, EvaluationResults] = (
        {"": results} if isinstance(results, EvaluationResults) else dict(results)
    )
    if not sets:
        raise ValueError("results must hold at least one result set, got an empty mapping")
    given: object = band  # typed float; users pass anything
    if (
        isinstance(given, bool)
        or not isinstance(given, numbers.Real)
        or not 0.0 <= float(given) < math.inf
    ):
        raise ValueError(f"band must be a finite number of standard deviations >= 0, got {band!r}")
    ax = _axes(ax)
    largest = 0
    for index, (name, result) in enumerate(sets.items()):
        rows = sorted(
            (
                row
                for row in result.rows
                if isinstance(row.metric, HitsAtK)
                and row.rank_type == rank_type
                and row.side == side
            ),
            key=lambda row: int(row.metric._params()["k"]),
        )
        if not rows:
            raise ValueError(
                f"results{f' {name!r}' if name else ''} have no Hits@k rows for side {side!r} "
                f"and rank type {rank_type!r}; evaluate with metrics=hits_metrics(K)"
            )
        ks = np.array([int(row.metric._params()["k"]) for row in rows])
        values = np.array([row.value for row in rows])
        color = f"C{index}"
        ax.plot(ks, values, marker="o", color=color, label=name or "Hits@k")
        if all(row.expected_value is not None and row.std is not None for row in rows):
            expected = np.array([row.expected_value for row in rows], dtype=float)
            std = np.array([row.std for row in rows], dtype=float)
            prefix = f"{name}: " if name else ""
            ax.plot(ks, expected, linestyle="--", color=color, label=f"{prefix}null expectation")
            ax.fill_between(
                ks,
                np.clip(expected - band * std, 0, 1),
                np.clip(expected + band * std, 0, 1),
                color=color,
                alpha=0.2,
                label=f"{prefix}null \u00b1{band:g} std",
            )
        largest = max(largest, int(ks.max()))
    ax.set_xlabel("k")
    ax.set_ylabel("Hits@k")
    ax.set_ylim(0, 1.02)
    ax.set_title(f"Hits@k for k = 1..{largest} ({rank_type} ranks)")
    ax.legend(loc="best", fontsize="small")
    return ax


def plot_rank_histogram(
    ranks: npt.ArrayLike | Mapping[str, npt.ArrayLike],
    *,
    bins: int = 30,
    rank_type: str = "realistic",
    ax: Axes | None = None,
) -> Axes:
    """Draw the histogram of ranks on a log scale: log-spaced bins on a logarithmic x axis.

    Parameters
    ----------
    ranks : array-like of shape (n,), or mapping of str to array-like
        The ranks, from 1 to 2**53, or several arrays by label (one outlined histogram each).
    bins : int, default=30
        The number of log-spaced bins between 1 and the largest rank.
    rank_type : str, default="realistic"
        The rank type, for the axis label.
    ax : matplotlib.axes.Axes, optional
        The axes to draw on; by default a new figure with :mod:`matplotlib.pyplot`.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.

    Raises
    ------
    ValueError
        If ``bins`` is not a positive integer, or some ranks are empty, not numbers, below 1 or
        above 2**53 (checked by :func:`rankstats.validation.check_ranks`, as
        :func:`rankstats.evaluate` checks them).

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = plot_rank_histogram([1, 1, 2, 5, 40, 300], ax=Figure().subplots())
    >>> ax.get_xscale(), ax.get_xlabel()
    ('log', 'realistic rank (log scale)')
    """
    sets: dict[str, Any] = dict(ranks) if isinstance(ranks, Mapping) else {"": ranks}
    if not sets:
        raise ValueError("ranks must hold at least one array of ranks, got an empty mapping")
    bins = check_positive_int(bins, "bins")
    # validated as evaluate validates ranks: non-empty, from 1 to 2**53 (flattened)
    arrays = {
        name: check_ranks(values, f"ranks[{name!r}]" if name else "ranks")
        for name, values in sets.items()
    }
    ax = _axes(ax)
    top = max(float(array.max()) for array in arrays.values())
    edges = np.geomspace(1.0, max(top, 2.0) * 1.0001, bins + 1)
    for name, array in arrays.items():
        ax.hist(
            array,
            bins=edges.tolist(),
            histtype="stepfilled" if len(arrays) == 1 else "step",
            alpha=0.8,
            label=name or None,
        )
    ax.set_xscale("log")
    ax.set_xlabel(f"{rank_type} rank (log scale)")
    ax.set_ylabel("number of ranking tasks")
    count = sum(array.size for array in arrays.values())
    ax.set_title(f"Histogram of {count:,} {rank_type} ranks")
    if len(arrays) > 1:
        ax.legend(loc="best", fontsize="small")
    return ax


def plot_comparison(
    comparison: Comparison,
    metric: str | RankBasedMetric | None = None,
    *,
    alpha: float = 0.05,
    ax: Axes | None = None,
) -> Axes:
    """Models compared on one metric: each value with its interval, significant pairs joined.

    Parameters
    ----------
    comparison : Comparison
        The result of :func:`rankstats.compare`.
    metric : str or RankBasedMetric, optional
        The metric; by default the comparison's first.
    alpha : float, default=0.05
        The significance level of the corrected p-values that join a pair with a bar and a star.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure by default.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.
    """
    from rankstats.compare.correction import CORRECTIONS
    from rankstats.compare.inputs import check_fraction

    alpha = check_fraction(alpha, "alpha", 0.05)
    chosen = comparison.metrics[0] if metric is None else comparison.metric_of(metric)
    ax = _axes(ax)
    models = list(comparison.models)
    values = [comparison.value(chosen, model) for model in models]
    centre = [v.value for v in values]
    lower = [v.value if v.lower is None else v.lower for v in values]
    upper = [v.value if v.upper is None else v.upper for v in values]
    positions = list(range(len(models)))
    # a bootstrap interval need not hold its estimate (BCa; or by an ulp, where the estimate is
    # the largest value a resample can take): the bars reach the interval's ends, at least 0
    ax.errorbar(
        positions,
        centre,
        yerr=[
            np.maximum(np.subtract(centre, lower), 0.0).tolist(),
            np.maximum(np.subtract(upper, centre), 0.0).tolist(),
        ],
        fmt="o",
        capsize=4,
    )
    ax.set_xticks(positions, models)
    ax.set_ylabel(metric_label(chosen))
    settings = comparison.settings
    drawn = any(v.lower is not None for v in values)
    intervals = f"{settings.confidence_level:.0%} intervals, " if drawn else ""
    ax.set_title(
        f"{metric_label(chosen, short=True)}: {intervals}* p < {alpha:g} "
        f"({CORRECTIONS.get(settings.correction, settings.correction)})"
    )
    top, bottom = max(upper), min(lower)
    step = 0.08 * ((top - bottom) or 1.0)
    level = top + step
    for pair in comparison.pairs:
        if pair.metric != chosen.key or not pair.significant(alpha):
            continue
        a, b = models.index(pair.model_a), models.index(pair.model_b)
        ax.plot([a, a, b, b], [level - step / 3, level, level, level - step / 3], color="black")
        ax.text((a + b) / 2, level, "*", ha="center", va="bottom")
        level += step
    return ax
