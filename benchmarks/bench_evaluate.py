"""Evaluation at FB15k-237 test size: the full results table against PyKEEN and plain numpy.

FB15k-237's test set has 20,466 triples, so 2 x 20,466 ranks (head and tail prediction) among
14,541 entities, filtered (a few hundred distinct candidate counts). The targets (issue 9):

- the full table (values, E, std, z of PyKEEN's 25 metrics, median included, 3 sides x 3 rank
  types) in at most half the time of PyKEEN's ``RankBasedMetricResults.from_ranks`` plus its
  closed-form expectations and variances, when PyKEEN is importable; against a plain numpy pass
  of the same size (values of MR, MRR, Hits@k only) otherwise, to show what the null-model
  statistics cost on top of the bare minimum. Measured with and without the median, whose
  even-n null model is the slow part;
- no small-n cliff: the table at 4,000 ranks per side no slower than at 20,466;
- Monte-Carlo memory independent of the number of samples.

Every table is computed from scratch: the median's null model keeps the order-statistic law of
the last few inputs (so that the median and the inverse median of one cell share it), and a
timed call that found the previous round's laws there would measure a cache, not the work;
each timed call empties that cache first. Every ratio is read from times measured in one run,
interleaved: the calls compared take turns,
round after round, and each keeps its best round (:func:`_timing.interleaved_best_times`), so
a burst of load on the shared machine slows both sides of a ratio alike. Against PyKEEN (which
may use several threads) and numpy, wall time; the small-n cliff compares rankstats with
itself, single-threaded, in CPU time of this process, which other processes' time slices do
not inflate.

The measurements behind the current code (the Fourier inversion's series and chunks, which
removed the small-n cliff) are in ``benchmarks/HISTORY.md``. The groups' target is in
``bench_groups.py``.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import rankstats.null.median as median_module
from _timing import Row, best_time, interleaved_best_times, peak_memory
from rankstats import RankAccumulator, Ranks, evaluate, metric_resolver, ranks_from_scores
from rankstats.evaluation import PYKEEN_METRICS

NUM_TRIPLES = 20_466
NUM_ENTITIES = 14_541
RANK_TYPES = ["optimistic", "realistic", "pessimistic"]


def make_side(rng: np.random.Generator, size: int = NUM_TRIPLES) -> Ranks:
    """Model-like filtered ranks: heavy-tailed, a few ties, ~1000 distinct candidate counts."""
    candidates = NUM_ENTITIES - rng.integers(0, 1_000, size=size)
    optimistic = np.minimum(np.ceil(rng.lognormal(2.5, 2.2, size=size)), candidates)
    ties = rng.binomial(1, 0.03, size=size) * rng.integers(1, 4, size=size)
    pessimistic = np.minimum(optimistic + ties, candidates)
    return Ranks(optimistic.astype(np.int64), pessimistic.astype(np.int64), candidates)


def _rows(ranks: Ranks, rows: slice) -> Ranks:
    assert ranks.num_candidates is not None
    return Ranks(ranks.optimistic[rows], ranks.pessimistic[rows], ranks.num_candidates[rows])


def numpy_pass(sides: dict[str, Ranks]) -> list[float]:
    """The bare minimum: values of MR, MRR and Hits@k for every side and rank type."""
    both = Ranks.concatenate(sides.values())
    values = []
    for ranks in (*sides.values(), both):
        for rank_type in RANK_TYPES:
            r = ranks[rank_type]
            values += [r.mean(), (1.0 / r).mean()]
            values += [np.count_nonzero(r <= k) / r.size for k in (1, 3, 5, 10)]
    return values


def pykeen_table(sides: dict[str, Ranks]) -> Any:
    """PyKEEN's values (``from_ranks``) plus its closed-form E and V of every metric and cell.

    Returns the function to time, or ``None`` when PyKEEN is not importable.
    """
    try:
        from pykeen.evaluation.rank_based_evaluator import RankBasedMetricResults, RankPack
        from pykeen.metrics import rank_based_metric_resolver
    except ImportError:
        return None
    metrics = []
    for name in PYKEEN_METRICS:
        # PyKEEN names a Hits@k class "..._hits_at_k" and takes the cut-off as an argument
        match = re.fullmatch(r"(.*hits_at_)(\d+)", name)
        if match is None:
            metrics.append(rank_based_metric_resolver.make(name))
        else:
            metrics.append(rank_based_metric_resolver.make(f"{match[1]}k", k=int(match[2])))
    both = Ranks.concatenate(sides.values())
    cells = {**sides, "both": both}

    def table() -> None:
        items = [
            RankPack(side, rank_type, ranks[rank_type], ranks.num_candidates, None)
            for side, ranks in cells.items()
            for rank_type in RANK_TYPES
        ]
        RankBasedMetricResults.from_ranks(metrics=metrics, rank_and_candidates=items)
        for ranks in cells.values():
            for metric in metrics:
                if metric.closed_expectation:
                    metric.expected_value(num_candidates=ranks.num_candidates)
                if metric.closed_variance:
                    metric.variance(num_candidates=ranks.num_candidates)

    try:
        table()
    except (TypeError, AttributeError, ValueError) as error:  # another PyKEEN version's API
        print(f"PyKEEN baseline skipped: {error}", file=sys.stderr)
        return None
    return table


def run() -> list[Row]:
    rng = np.random.default_rng(0)
    sides = {"head": make_side(rng), "tail": make_side(rng)}
    pykeen = pykeen_table(sides)
    small = {side: _rows(r, slice(0, 4_000)) for side, r in sides.items()}
    rows = []
    without_median = [name for name in PYKEEN_METRICS if "median_rank" not in name]

    def full_table() -> None:
        median_module._CACHE.clear()
        evaluate(sides, metrics=PYKEEN_METRICS, rank_types=RANK_TYPES)

    def table_without_median() -> None:
        evaluate(sides, metrics=without_median, rank_types=RANK_TYPES)

    def small_table(metrics: list[str]) -> None:
        median_module._CACHE.clear()
        evaluate(small, metrics=metrics, rank_types=RANK_TYPES)

    results = evaluate(sides, metrics=PYKEEN_METRICS, rank_types=RANK_TYPES)
    assert results.z_score("tail.realistic.zmrr") is not None
    compared: dict[str, Callable[[], Any]] = {
        "numpy": lambda: numpy_pass(sides),
        "full": full_table,
        "without": table_without_median,
    }
    if pykeen is not None:
        compared["pykeen"] = pykeen
    wall = interleaved_best_times(compared, rounds=5)
    baseline, full_s, without_s = wall["numpy"], wall["full"], wall["without"]
    pykeen_s = wall.get("pykeen")
    for case, seconds in (
        ("evaluate: FB15k-237 size, 25 PyKEEN metrics, 3 sides x 3 rank types, E/std/z", full_s),
        ("evaluate: the same without median / inverse median", without_s),
    ):
        rows.append(Row(case, seconds, "numpy values only", baseline, max_seconds=1.0))
        rows.append(
            Row(
                case,
                seconds,
                "PyKEEN from_ranks + closed forms"
                if pykeen is not None
                else "PyKEEN (not installed)",
                pykeen_s,
                max_ratio=0.5,
            )
        )

    # the first call of each is untimed (caches of the median's rules fill)
    cpu = interleaved_best_times(
        {
            "full": full_table,
            "small": lambda: small_table(PYKEEN_METRICS),
            "without": table_without_median,
            "small without": lambda: small_table(without_median),
        },
        rounds=7,
        timer=time.process_time,
    )
    rows.append(
        Row(
            "small-n cliff: the full table at 4,000 ranks per side (CPU s)",
            cpu["small"],
            "same at 20,466 per side",
            cpu["full"],
            max_ratio=1.0,
        )
    )
    rows.append(
        Row(
            "small-n cliff without the median: 4,000 ranks per side (CPU s)",
            cpu["small without"],
            "same at 20,466 per side",
            cpu["without"],
            max_ratio=1.0,
        )
    )

    mad = metric_resolver.make("mad")
    candidates = sides["head"].num_candidates[:1_000]

    def sampled(num_samples: int) -> None:
        evaluate(
            sides["head"].realistic[:1_000], candidates, metrics=[mad], num_samples=num_samples
        )

    small_peak = peak_memory(lambda: sampled(8_000))
    large_peak = peak_memory(lambda: sampled(80_000))
    rows.append(
        Row(
            "Monte-Carlo peak memory, MAD, n = 1,000, 80,000 samples (MiB)",
            large_peak / 2**20,
            "8,000 samples (MiB)",
            small_peak / 2**20,
            max_ratio=1.5,
            unit="MiB",
        )
    )

    def default_table() -> None:
        evaluate(sides)

    rows.append(
        Row(
            "evaluate: FB15k-237 size, default metrics, 4 rank types (expected too)",
            best_time(default_table),
            "numpy values only",
            baseline,
            max_seconds=1.0,
        )
    )

    def streamed() -> None:
        median_module._CACHE.clear()
        accumulator = RankAccumulator(PYKEEN_METRICS, rank_types=RANK_TYPES)
        for start in range(0, NUM_TRIPLES, 1_000):
            accumulator.update(
                {side: _rows(r, slice(start, start + 1_000)) for side, r in sides.items()}
            )
        accumulator.compute()

    rows.append(
        Row(
            "RankAccumulator: the same table fed in 21 batches of 1,000",
            best_time(streamed, repeat=2),
            "numpy values only",
            baseline,
            max_seconds=1.0,
        )
    )

    batch, width = 1_000, NUM_ENTITIES
    scores = rng.standard_normal((batch, width)).astype(np.float32)
    targets = rng.integers(0, width, size=batch)
    mask = rng.random((batch, width)) < 0.01
    mask[np.arange(batch), targets] = False

    def naive_ranks() -> None:
        true = scores[np.arange(batch), targets][:, None]
        masked = np.where(mask, -np.inf, scores)
        1 + (masked > true).sum(axis=1)
        (masked >= true).sum(axis=1)

    rows.append(
        Row(
            "ranks_from_scores: 1,000 x 14,541 float32 scores, filtered, NaN checks",
            best_time(lambda: ranks_from_scores(scores, targets, filter_mask=mask)),
            "numpy comparisons",
            best_time(naive_ranks),
        )
    )
    return rows


if __name__ == "__main__":
    for row in run():
        print(" | ".join(row.cells()))
