r"""Plots of null models: how a metric is distributed when the ranks are random.

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
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from rankstats.base import RankBasedMetric
from rankstats.errors import NoClosedFormError
from rankstats.registry import metric_resolver

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes  # type: ignore[import-not-found, unused-ignore]

    from rankstats.null.sampling import Seed

__all__ = ["plot_null_distribution"]


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
) -> tuple[float, float, bool]:
    """The null mean and standard deviation: closed forms where known, else from the samples."""
    try:
        mean = metric.expected_value(num_candidates, weights=weights)
        std = metric.std(num_candidates, weights=weights)
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

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.

    Raises
    ------
    ImportError
        If matplotlib is not installed.
    """
    if ax is None:
        _, ax = _import_pyplot().subplots()
    else:
        _import_pyplot()
    instance = metric_resolver.make(metric)
    samples = instance.get_sampled_values(num_candidates, num_samples, weights, generator)
    mean, std, exact = _null_moments(instance, num_candidates, weights, samples)

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
    ax.set_xlabel(instance.name)
    ax.set_ylabel("density under the null")
    n = np.size(num_candidates)
    ax.set_title(f"{instance.name} under the null model, {n:,} tasks")
    ax.legend(loc="best", fontsize="small")
    return ax
