r"""Evaluation in one call: every metric, rank type, side and group from shared statistics.

:func:`evaluate` validates the input once, compresses it to tables of distinct values
(:mod:`rankstats.evaluation.tables`) and computes the whole results table from them:

- each metric's value from the histogram of the ranks (distinct ranks weighted by their counts,
  which the metrics' weight semantics make exact), so a table of many metrics costs one pass
  over the ranks, not one per metric;
- each null-model quantity once per distinct multiset of candidate counts, shared by all rank
  types, by sides with the same candidates, and by the metrics derived from the same base
  (AMR, AMRI and zMR all use the mean rank's :math:`\mathbb{E}` and :math:`\mathbb{V}`);
- with groups, every group at once, in a few vectorised passes
  (:mod:`rankstats.evaluation.grouped`);
- where a metric has no closed-form null model on the input, a Monte-Carlo estimate when
  ``num_samples`` is given, one shared draw per cell (:mod:`rankstats.evaluation.cells`), and
  otherwise a note in the row saying why its null statistics are missing.
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from rankstats.base import RANK_TYPES, RankBasedMetric
from rankstats.evaluation.cells import MonteCarloPlan, NullModels, cell_rows
from rankstats.evaluation.grouped import Column, LazyGroups, group_columns, macro_rows
from rankstats.evaluation.inputs import prepare_input
from rankstats.evaluation.labels import weightless_groups_note
from rankstats.evaluation.results import (
    SIDE_BOTH,
    EvaluationResults,
    ResultRow,
)
from rankstats.evaluation.scores import EVALUATION_RANK_TYPES, RANK_EXPECTED
from rankstats.evaluation.tables import (
    SideStatistics,
)
from rankstats.evaluation.terms import sums_only
from rankstats.evaluation.ties import has_tie_expectation
from rankstats.metrics.derived import DerivedRankBasedMetric
from rankstats.null.sampling import Seed
from rankstats.progress import check_progress
from rankstats.registry import metric_resolver
from rankstats.validation import check_variance_samples

__all__ = ["DEFAULT_METRICS", "PYKEEN_METRICS", "Average", "evaluate"]

AnyArray = npt.NDArray[Any]
Average = Literal["micro", "macro"]
MetricHint = str | RankBasedMetric | type[RankBasedMetric]

#: the metrics evaluated when none are named
DEFAULT_METRICS: tuple[str, ...] = (
    "mrr",
    "hits@1",
    "hits@3",
    "hits@5",
    "hits@10",
    "mr",
    "amri",
    "amrr",
    "adjusted_hits_at_10",
    "zmrr",
    "zmr",
    "z_hits_at_10",
)
#: PyKEEN's rank-based metrics, the set its evaluator computes by default: with
#: ``evaluate(..., metrics=PYKEEN_METRICS)`` the flat dictionary
#: (:meth:`~rankstats.evaluation.results.EvaluationResults.to_flat_dict`) has every key PyKEEN's has
PYKEEN_METRICS: tuple[str, ...] = (
    "arithmetic_mean_rank",
    "adjusted_arithmetic_mean_rank",
    "adjusted_arithmetic_mean_rank_index",
    "z_arithmetic_mean_rank",
    "inverse_arithmetic_mean_rank",
    "geometric_mean_rank",
    "adjusted_geometric_mean_rank_index",
    "z_geometric_mean_rank",
    "inverse_geometric_mean_rank",
    "harmonic_mean_rank",
    "inverse_harmonic_mean_rank",
    "adjusted_inverse_harmonic_mean_rank",
    "z_inverse_harmonic_mean_rank",
    "median_rank",
    "inverse_median_rank",
    "hits_at_1",
    "hits_at_3",
    "hits_at_5",
    "hits_at_10",
    "adjusted_hits_at_10",
    "z_hits_at_10",
    "variance",
    "standard_deviation",
    "median_absolute_deviation",
    "count",
)
_AVERAGES = ("micro", "macro")


# --- metrics and rank types ----------------------------------------------------------------------


def weight_sums_suffice(metrics: Sequence[RankBasedMetric]) -> bool:
    """Whether every metric's null model needs only weight sums per candidate count.

    Then weighted tables keep the sums of the weights and of their squares per candidate count
    instead of each weight (:class:`~rankstats.null.tasks.Tasks`), so an accumulator's state
    stays bounded however many distinct weights it sees.
    """
    return all(metric._null_from_weight_sums for metric in metrics)


def resolve_metrics(
    metrics: Sequence[MetricHint] | MetricHint | None,
) -> tuple[list[RankBasedMetric], bool]:
    """Instantiate the metrics (without duplicates); also say whether they were the defaults."""
    if metrics is None:
        hints: Sequence[MetricHint] = DEFAULT_METRICS
    elif isinstance(metrics, str | RankBasedMetric | type):
        hints = [metrics]
    else:
        hints = list(metrics)
    resolved = [metric_resolver.make(hint) for hint in hints]
    if not resolved:
        raise ValueError("metrics must name at least one metric")
    for metric in resolved:
        base = metric.base if isinstance(metric, DerivedRankBasedMetric) else metric
        if base.needs_candidates:
            raise ValueError(
                f"{metric!r} needs the candidate count of each task next to its rank, which the "
                f"shared tables of evaluate do not keep; call the metric directly"
            )
    return list(dict.fromkeys(resolved)), metrics is None


def resolve_rank_types(
    rank_types: Sequence[str] | str | None, available: Sequence[str]
) -> list[str]:
    """Check the requested rank types against those the input allows."""
    if rank_types is None:
        return list(available)
    requested = [rank_types] if isinstance(rank_types, str) else list(rank_types)
    if not requested:
        raise ValueError(
            "rank_types must name at least one rank type, got none; leave it out (None) for "
            f"every rank type the input gives: {list(available)}"
        )
    for rank_type in requested:
        if rank_type not in EVALUATION_RANK_TYPES:
            raise ValueError(f"rank_types must be among {EVALUATION_RANK_TYPES}, got {rank_type!r}")
        if rank_type not in available:
            need = (
                "needs the optimistic and pessimistic ranks (a Ranks object)"
                if rank_type == RANK_EXPECTED
                else "was not given"
            )
            raise ValueError(f"rank type {rank_type!r} {need}; the input has {list(available)}")
    return list(dict.fromkeys(requested))


def available_rank_types(stats: SideStatistics) -> list[str]:
    """The rank types the tables of a side can give."""
    if stats.pairs is not None:
        return list(EVALUATION_RANK_TYPES)
    return [t for t in RANK_TYPES if t in stats.ranks]


def _supports(metric: RankBasedMetric, rank_type: str) -> str | None:
    """``None`` if the metric is computed for the rank type, else the reason it is not."""
    supported = tuple(metric.supported_rank_types)
    if rank_type == RANK_EXPECTED:
        if "realistic" not in supported:
            return f"{metric.key} supports only the rank types {supported}"
        if not has_tie_expectation(metric):
            return f"{metric.key} has no exact expectation over tie-breaking"
        return None
    if rank_type not in supported:
        return (
            f"{metric.key} supports only the rank types {supported} (and 'expected' where an "
            f"exact expectation over tie-breaking exists)"
        )
    return None


# --- computing -----------------------------------------------------------------------------------


def _monte_carlo_plan(
    num_samples: int | None, seed: Seed, progress: bool | None
) -> tuple[MonteCarloPlan | None, int | None]:
    """Check the Monte-Carlo arguments; also return the integer seed to report, if any."""
    given: Any = seed
    if given is not None and not isinstance(given, np.random.Generator):
        if isinstance(given, bool) or not isinstance(given, numbers.Integral):
            raise TypeError(
                f"seed must be an integer, a numpy.random.Generator or None, got {seed!r}"
            )
        if given < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    reported = None if seed is None or isinstance(seed, np.random.Generator) else int(seed)
    if num_samples is None:
        return None, None
    count = check_variance_samples(num_samples)
    return MonteCarloPlan(count, np.random.default_rng(seed), progress), reported


def compute_results(
    sides: Mapping[str, SideStatistics],
    labels: Sequence[Hashable] | None,
    metrics: Sequence[RankBasedMetric],
    rank_types: Sequence[str] | None,
    average: Average,
    *,
    weighted: bool = False,
    default_metrics: bool = False,
    num_samples: int | None = None,
    seed: Seed = None,
    progress: bool | None = False,
    own_tables: bool = False,
) -> EvaluationResults:
    """Compute the results table from the statistics of each side (and group).

    With ``own_tables``, the tables of ``sides`` were built for this call only: columns no
    longer needed are dropped from them as the call goes (a lower peak memory).
    """
    if average not in _AVERAGES:
        raise ValueError(f"average must be 'micro' or 'macro', got {average!r}")
    progress = check_progress(progress)
    monte_carlo, reported_seed = _monte_carlo_plan(num_samples, seed, progress)
    stats = dict(sides)
    first = next(iter(stats.values()))
    types = resolve_rank_types(rank_types, available_rank_types(first))
    has_candidates = first.candidates is not None
    chosen = []
    for metric in metrics:
        if metric.needs_candidates and not has_candidates:
            if default_metrics:
                continue
            raise ValueError(f"{metric!r} needs num_candidates, the number of candidates per task")
        if weighted and not metric.supports_weights:
            if default_metrics:
                continue
            raise ValueError(f"{metric!r} does not support weights; evaluate it without weights")
        chosen.append(metric)
    skipped: dict[tuple[str, str], str] = {}
    plan: list[tuple[str, list[RankBasedMetric]]] = []
    for rank_type in types:
        supported = []
        for metric in chosen:
            reason = _supports(metric, rank_type)
            if reason is None:
                supported.append(metric)
            else:
                skipped[(metric.key, rank_type)] = reason
        plan.append((rank_type, supported))
    if len(stats) > 1:
        stats[SIDE_BOTH] = SideStatistics.concatenate(list(stats.values()))
    # a metric asked for and left out of a rank type is said under the table (its rows had
    # vanished without a word: a table of the expected rank type could be a header alone)
    notes: list[str] = [
        f"no {rank_type} row for {key}: {reason}" for (key, rank_type), reason in skipped.items()
    ]
    null = NullModels(
        None
        if monte_carlo is None
        else MonteCarloPlan(
            monte_carlo.num_samples,
            monte_carlo.generator,
            # with groups, the bar counts groups, not each group's sampling blocks
            progress=False if labels is not None else monte_carlo.progress,
        )
    )
    used_samples = None if monte_carlo is None else monte_carlo.num_samples
    by_group: Mapping[Hashable, EvaluationResults] = {}
    columns: list[Column] = []
    micro_rows: list[ResultRow] = []
    if labels is not None:
        # the groups with tasks, before group_columns may drop the tables' group ids
        with_tasks = np.zeros(len(labels), dtype=bool)
        for side_stats in stats.values():
            side_stats.mark_groups(with_tasks)
        # bars over the groups where a metric has to be computed group by group
        columns, micro_rows = group_columns(
            stats,
            len(labels),
            plan,
            null,
            progress,
            micro=average == "micro",
            own_tables=own_tables,
        )
        present = np.zeros(len(labels), dtype=bool)
        for column in columns:
            present |= column.present
        # a group whose tasks all have weight 0 is left out, as numpy.average leaves out a task
        # of weight 0; the results' notes list it
        weightless = [labels[gid] for gid in np.flatnonzero(with_tasks & ~present).tolist()]
        if weightless:
            notes.append(weightless_groups_note(weightless))

        make = functools.partial(
            EvaluationResults, skipped=skipped, num_samples=used_samples, seed=reported_seed
        )  # a partial, not a closure: results stay picklable
        by_group = LazyGroups(labels, columns, present, make)
    if labels is not None and average == "macro":
        rows = macro_rows(columns)
    elif labels is not None:
        # the micro average is the one group of all tasks, from the sums over the groups
        rows = micro_rows
    else:
        rows = [
            row for side, s in stats.items() for row in cell_rows(side, s.cell(None), plan, null)
        ]
    return EvaluationResults(
        rows,
        average=None if labels is None else average,
        by_group=by_group,
        skipped=skipped,
        notes=notes,
        num_samples=used_samples,
        seed=reported_seed,
    )


def evaluate(
    ranks: Any,
    num_candidates: Any = None,
    *,
    metrics: Sequence[MetricHint] | MetricHint | None = None,
    rank_types: Sequence[str] | str | None = None,
    weights: Any = None,
    groups: Any = None,
    average: Average = "micro",
    num_samples: int | None = None,
    seed: Seed = None,
    progress: bool | None = False,
) -> EvaluationResults:
    r"""Evaluate ranks with many metrics at once, with their null-model statistics.

    Parameters
    ----------
    ranks : Ranks, array-like or mapping
        The ranks, in one of these forms:

        - a :class:`~rankstats.evaluation.scores.Ranks` (from
          :func:`~rankstats.ranks_from_scores`): all rank types, ``"expected"`` included;
        - an array-like of shape (n,): realistic ranks;
        - a mapping from rank type (``"optimistic"``, ``"realistic"``, ``"pessimistic"``) to
          arrays of shape (n,); with both optimistic and pessimistic ranks, ``"expected"`` too;
        - a mapping from side name (e.g. ``"head"``, ``"tail"``) to any of the above; the side
          ``"both"`` then holds all sides' ranks together.

        A single side without a name is the side ``"both"``.
    num_candidates : int, array-like of shape (n,) or mapping, optional
        The number of candidates of each task (per side, as a mapping, for several sides); a
        single integer stands for the same count for every task (as in PyKEEN); not
        needed for :class:`~rankstats.evaluation.scores.Ranks`, which carry theirs. Needed by the
        adjusted and z-scored metrics and for the null-model statistics.
    metrics : sequence of str, metric or metric class, optional
        The metrics, by any name :data:`~rankstats.metric_resolver` knows. By default
        :data:`DEFAULT_METRICS`, leaving out those needing candidate counts when none are given.
    rank_types : sequence of str, optional
        Some of ``"optimistic"``, ``"realistic"``, ``"pessimistic"``, ``"expected"``; by default
        all the input allows. ``"expected"`` is each metric's exact expectation over breaking ties
        uniformly at random (see :mod:`rankstats.evaluation.ties`), offered for the metrics that
        have one. Metrics are computed for the rank types they support
        (:attr:`~rankstats.RankBasedMetric.supported_rank_types`). Derived metrics are computed for
        every rank type, as PyKEEN does; the null model has no ties, so for tied scores their
        optimistic and pessimistic values are biased (see :doc:`/guide/rank-types`), and the
        ``"expected"`` rank type is the exact alternative.
    weights : array-like of shape (n,) or mapping, optional
        Non-negative task weights (see :class:`~rankstats.RankBasedMetric`); one array for all
        sides or a mapping per side.
    groups : array-like of shape (n,) or mapping, optional
        A label per task (a relation, a query, ...); one array for all sides (of equal length) or
        a mapping per side. Each group's results are in ``results.by_group``.
    average : {"micro", "macro"}, default="micro"
        How groups combine into the main results: ``"micro"`` evaluates all ranks together (each
        rank counts once), ``"macro"`` averages the groups' results (each group counts once; the
        null variance is then :math:`\sum_g \mathbb{V}_g / G^2`). A group where a metric is
        undefined (an adjusted index of a group whose tasks all have one candidate) is left out
        of that metric's macro average, and the row's ``note`` says so; a group whose tasks all
        have weight 0 is left out entirely (as a task of weight 0 is), and ``results.notes``
        says so.
    num_samples : int, optional
        For metrics without a closed-form null model on this input (the standard deviation or
        MAD of the ranks, a weighted median, ...): the number of rank vectors to draw for a
        Monte-Carlo estimate of the expected value and variance (at least 2). Every metric of a
        cell shares the draws, which are made in blocks of bounded memory; each such row has
        ``method == "monte-carlo"`` and the ``standard_error`` of its expected value. Without
        it those rows have no expected value, and their ``note`` says why.
    seed : int or numpy.random.Generator, optional
        Seed or generator for the Monte-Carlo samples; the same seed gives the same results.
    progress : bool or None, default=False
        Show a progress bar over the Monte-Carlo blocks, or over the groups where a metric is
        computed group by group (``True`` needs
        tqdm: ``pip install rankstats[progress]``); ``None`` shows one only when ``stderr`` is a
        terminal. See :mod:`rankstats.progress`.

    Returns
    -------
    EvaluationResults
        Values, expected values, standard deviations and z-scores, by key.

    Examples
    --------
    >>> import numpy as np
    >>> from rankstats import ranks_from_scores
    >>> scores = np.array([[0.9, 0.1, 0.1, 0.3], [0.2, 0.2, 0.2, 0.2], [0.1, 0.5, 0.7, 0.3]])
    >>> ranks = ranks_from_scores(scores, targets=[0, 1, 2])
    >>> print(evaluate(ranks, metrics=["mrr", "hits@1", "amrr"]))
    side  rank type    metric                                  value  expected       std  z-score
    both  optimistic   inverse_harmonic_mean_rank                  1  0.520833  0.167964   2.8528
    both  optimistic   hits_at_1                                   1      0.25      0.25        3
    both  optimistic   adjusted_inverse_harmonic_mean_rank         1         0  0.350533   2.8528
    both  realistic    inverse_harmonic_mean_rank                0.8  0.520833  0.167964  1.66207
    both  realistic    hits_at_1                            0.666667      0.25      0.25  1.66667
    both  realistic    adjusted_inverse_harmonic_mean_rank  0.582609         0  0.350533  1.66207
    both  pessimistic  inverse_harmonic_mean_rank               0.75  0.520833  0.167964  1.36438
    both  pessimistic  hits_at_1                            0.666667      0.25      0.25  1.66667
    both  pessimistic  adjusted_inverse_harmonic_mean_rank  0.478261         0  0.350533  1.36438
    both  expected     inverse_harmonic_mean_rank           0.840278  0.520833  0.167964  1.90187
    both  expected     hits_at_1                                0.75      0.25      0.25        2
    both  expected     adjusted_inverse_harmonic_mean_rank  0.666667         0  0.350533  1.90187

    The second task's scores are all equal: its realistic rank is 2.5, but in expectation over
    tie-breaking its reciprocal rank is :math:`H(4)/4`, exactly chance. Values are looked up by
    key, PyKEEN's ``side.rank_type.metric`` with the defaults ``both`` and ``realistic``:

    >>> results = evaluate({"head": ranks_from_scores(scores, [0, 0, 0]), "tail": ranks})
    >>> round(results["mrr"], 6), round(results["tail.expected.mrr"], 6)
    (0.675, 0.840278)
    >>> results.sides
    ('head', 'tail', 'both')
    """
    resolved, defaults = resolve_metrics(metrics)
    prepared = prepare_input(
        ranks,
        num_candidates,
        weights,
        groups,
        weight_sums=weight_sums_suffice(resolved),
        # with groups and metrics all from per-group sums, only those sums read the tables:
        # int32 columns where they fit (half the memory, a lower peak)
        narrow=groups is not None and sums_only(resolved),
    )
    return compute_results(
        prepared.sides,
        prepared.labels,
        resolved,
        rank_types,
        average,
        weighted=prepared.weighted,
        default_metrics=defaults,
        num_samples=num_samples,
        seed=seed,
        progress=progress,
        own_tables=True,  # built just above, for this call only
    )
