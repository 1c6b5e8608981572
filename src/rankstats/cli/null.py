"""``rankstats null``: a metric's expected value and standard deviation under the null model.

The numbers come from the metric classes (:meth:`~rankstats.RankBasedMetric.expected_value`,
:meth:`~rankstats.RankBasedMetric.variance`) or, without closed forms, from the library's
streamed Monte-Carlo (:func:`~rankstats.null.sampling.null_moments_monte_carlo`),
the z-score from :class:`~rankstats.evaluation.results.ResultRow` and the adjusted index from
the adjusted metric of the same base (:meth:`~rankstats.DerivedRankBasedMetric.adjust`).
"""

from __future__ import annotations

import argparse
import math
from typing import Any

import numpy as np

from rankstats.base import RankBasedMetric
from rankstats.cli.common import (
    CliError,
    UsageError,
    add_format,
    add_progress,
    candidate_count,
    finite_float,
    parse_metrics,
    positive_int,
    progress_setting,
    sample_count,
    seed,
    write_output,
)
from rankstats.errors import NoClosedFormError
from rankstats.evaluation.report import tabulate
from rankstats.evaluation.results import ResultRow
from rankstats.metrics.derived import ReindexedMetric
from rankstats.metrics.dispersion import Count, MedianAbsoluteDeviation, StandardDeviation, Variance
from rankstats.null.sampling import MonteCarloEstimate, null_moments_monte_carlo
from rankstats.registry import metric_resolver

__all__ = ["DEFAULT_NULL_METRICS", "register"]

#: the metrics ``rankstats null`` reports when none are named
DEFAULT_NULL_METRICS = ("mrr", "hits@1", "hits@3", "hits@10", "mr")
#: rank vectors of one Monte-Carlo block at most, as numbers (bounded memory)
_MAX_N = 10**8


def _moments(
    metric: RankBasedMetric, candidates: Any, args: argparse.Namespace
) -> tuple[float, float, float | None]:
    """E, V and the standard error of E (``None`` when exact): closed forms, else Monte-Carlo."""
    try:
        return metric.expected_value(candidates), metric.variance(candidates), None
    except NoClosedFormError:
        if args.samples is None:
            raise CliError(
                f"{metric.key} has no closed-form null model for this input; pass --samples N "
                f"(e.g. --samples 10000) for a Monte-Carlo estimate"
            ) from None
    estimate = null_moments_monte_carlo(
        metric,
        candidates,
        args.samples,
        seed=args.seed,
        progress=progress_setting(args),
    )
    assert isinstance(estimate, MonteCarloEstimate)
    return estimate.expected_value, estimate.variance, estimate.standard_error


def _check_observed(metric: RankBasedMetric, value: float, candidates: Any) -> None:
    """Refuse a ``--value`` that no ranks of these tasks can give.

    Parameters
    ----------
    metric : RankBasedMetric
        The metric of ``--metric``.
    value : float
        The observed value given with ``--value``.
    candidates : numpy.ndarray
        The candidate count of each task (``--num-candidates``, ``--n`` times).

    Raises
    ------
    UsageError
        If ``value`` is not in ``metric.value_range``, or, for a metric that every rank moves
        one way (the means, Hits@k, the median and the indices and z-scores built on them), not
        between its values at the best and the worst ranks: no result of the metric can be it,
        so its z-score and adjusted index would be meaningless (a mean rank of 10.5 among 10
        candidates had got a z-score).
    """
    if value not in metric.value_range:
        raise UsageError(
            f"--value must be a value of {metric.key}, in {metric.value_range.notate()}, "
            f"got {value!r}"
        )
    if isinstance(metric, Variance | StandardDeviation | MedianAbsoluteDeviation | Count):
        return  # not monotone in each rank (the count is the number of tasks)
    best, worst = np.ones(candidates.size), candidates.astype(np.float64)
    try:
        ends = sorted((metric(best, candidates), metric(worst, candidates)))
    except ValueError:  # undefined here (an adjusted index with one candidate per task)
        return
    slack = 1e-12 * max(abs(ends[0]), abs(ends[1]), 1.0)  # the values' own rounding
    if not ends[0] - slack <= value <= ends[1] + slack:
        raise UsageError(
            f"--value: {metric.key} of {candidates.size:,} tasks of {candidates[0]:,} candidates "
            f"lies between {ends[0]:.6g} and {ends[1]:.6g} (its values with every rank 1 and "
            f"every rank {candidates[0]:,}), got {value!r}"
        )


def _adjusted(metric: RankBasedMetric, value: float, candidates: Any) -> float | None:
    """The adjusted index of ``value`` by the library's adjusted metric of the same base."""
    for cls in metric_resolver:
        if issubclass(cls, ReindexedMetric) and cls.base_cls is type(metric):
            try:
                return cls(**metric._params()).adjust(value, candidates)
            except ValueError:  # no closed form, or undefined (every task has one candidate)
                return None
    return None


def run(args: argparse.Namespace) -> int:
    """Print the null-model statistics of the metrics."""
    text = args.metric if args.metric is not None else ",".join(DEFAULT_NULL_METRICS)
    metrics = parse_metrics(text, option="--metric")
    if args.value is not None and len(metrics) != 1:
        raise UsageError(f"--value needs exactly one --metric, got {len(metrics)}")
    if args.seed is not None and args.samples is None and args.plot is None:
        raise UsageError("--seed needs --samples N or --plot (the seed of their samples)")
    if args.plot is not None and len(metrics) != 1:
        raise UsageError(f"--plot needs exactly one --metric, got {len(metrics)}")
    if args.n > _MAX_N:
        raise UsageError(f"--n must be at most {_MAX_N:,}, got {args.n:,}")
    figure = None if args.plot is None else _new_figure(args.plot)
    candidates = np.full(args.n, args.num_candidates, dtype=np.int64)
    if args.value is not None:
        _check_observed(metrics[0], args.value, candidates)
    rows = [_row(metric, candidates, args) for metric in metrics]
    columns = ["metric", "expected", "std", "exact"]
    if args.value is not None:
        columns += ["value", "z", "adjusted"]
    if args.format != "table":
        columns[1:1] = ["num_candidates", "n"]
        columns.insert(columns.index("exact") + 1, "standard_error")
    write_output(tabulate(rows, columns, args.format))
    if figure is not None:
        _save_plot(figure, metrics[0], candidates, args)
    return 0


def _row(metric: RankBasedMetric, candidates: Any, args: argparse.Namespace) -> dict[str, Any]:
    """The null-model statistics of one metric (and of the observed ``--value``)."""
    expected, variance, standard_error = _moments(metric, candidates, args)
    row: dict[str, Any] = {
        "metric": metric.key,
        "num_candidates": args.num_candidates,
        "n": args.n,
        "expected": expected,
        "std": math.sqrt(variance),
        "exact": standard_error is None,
        "standard_error": standard_error,
    }
    if args.value is not None:
        result = ResultRow("both", "realistic", metric, args.value, expected, variance)
        row.update(
            value=args.value,
            z=result.z_score,
            adjusted=_adjusted(metric, args.value, candidates),
        )
    return row


def _new_figure(path: str) -> Any:
    """The figure of ``--plot``, once its path is known to be one it can be saved to."""
    from rankstats.cli.plot import check_image_path, new_figure

    figure = new_figure()
    check_image_path(figure, path, "--plot")
    return figure


def _save_plot(
    figure: Any, metric: RankBasedMetric, candidates: Any, args: argparse.Namespace
) -> None:
    from rankstats.cli.plot import save_figure
    from rankstats.plot import plot_null_distribution

    plot_null_distribution(
        metric,
        candidates,
        observed=args.value,
        num_samples=args.samples or 10_000,
        generator=args.seed,
        ax=figure.subplots(),
    )
    save_figure(figure, args.plot, "--plot")


def register(commands: Any) -> None:
    """Add the ``null`` command to the subparsers ``commands``."""
    parser = commands.add_parser(
        "null",
        help="the expected value and standard deviation of metrics under the null model",
        description="The expected value and standard deviation of metrics when each of n ranks is "
        "uniform on 1..C; with --value, the z-score and adjusted index of an observed result.",
    )
    parser.add_argument(
        "--metric",
        "--metrics",
        metavar="LIST",
        help=f"comma-separated metric names (default: {','.join(DEFAULT_NULL_METRICS)})",
    )
    parser.add_argument(
        "--num-candidates",
        type=candidate_count,
        required=True,
        metavar="C",
        help="the number of candidates of every ranking task",
    )
    parser.add_argument(
        "--n",
        type=positive_int,
        default=1,
        help="the number of ranking tasks (default: %(default)s)",
    )
    parser.add_argument(
        "--value",
        type=finite_float,
        metavar="X",
        help="an observed value of the metric, e.g. a published result, to compare with chance",
    )
    parser.add_argument(
        "--plot", metavar="PNG", help="also draw the null distribution to this image file"
    )
    parser.add_argument(
        "--samples",
        type=sample_count,
        metavar="N",
        help="estimate from N Monte-Carlo samples what has no closed form (and the --plot)",
    )
    parser.add_argument(
        "--seed", type=seed, help="the seed of the Monte-Carlo samples, for reproducible output"
    )
    add_format(parser)
    add_progress(parser)
    parser.set_defaults(handler=run)
