"""Evaluation at FB15k-237 test size: the full results table against a plain numpy pass.

FB15k-237's test set has 20,466 triples, so 2 x 20,466 ranks (head and tail prediction) among
14,541 entities, filtered (a few hundred distinct candidate counts). PyKEEN's default rank-based
evaluation of its metrics for both sides and three rank types takes about two minutes there,
most of it recomputing null-model quantities. The target: the whole table, with expected values,
standard deviations and z-scores, in under a second.

The baseline is a plain numpy pass over the same ranks computing only values (mean rank, MRR,
Hits@1,3,5,10 for every side and rank type), no null model: the ratio says what the null-model
statistics and the other metrics cost on top of the bare minimum.
"""

from __future__ import annotations

import numpy as np

from _timing import Row, best_time
from rankstats import RankAccumulator, Ranks, evaluate, ranks_from_scores

NUM_TRIPLES = 20_466
NUM_ENTITIES = 14_541
RANK_TYPES = ["optimistic", "realistic", "pessimistic"]
#: PyKEEN's rank-based metrics (its evaluator's default set), by their PyKEEN keys
PYKEEN_METRICS = [
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
]


def make_side(rng: np.random.Generator) -> Ranks:
    """Model-like filtered ranks: heavy-tailed, a few ties, ~1000 distinct candidate counts."""
    candidates = NUM_ENTITIES - rng.integers(0, 1_000, size=NUM_TRIPLES)
    optimistic = np.minimum(np.ceil(rng.lognormal(2.5, 2.2, size=NUM_TRIPLES)), candidates)
    ties = rng.binomial(1, 0.03, size=NUM_TRIPLES) * rng.integers(1, 4, size=NUM_TRIPLES)
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


def run() -> list[Row]:
    rng = np.random.default_rng(0)
    sides = {"head": make_side(rng), "tail": make_side(rng)}
    baseline = best_time(lambda: numpy_pass(sides))
    rows = []

    def full_table() -> None:
        evaluate(sides, metrics=PYKEEN_METRICS, rank_types=RANK_TYPES)

    results = evaluate(sides, metrics=PYKEEN_METRICS, rank_types=RANK_TYPES)
    assert results.z_score("tail.realistic.zmrr") is not None
    rows.append(
        Row(
            "evaluate: FB15k-237 size, 25 PyKEEN metrics, 3 sides x 3 rank types, E/std/z",
            best_time(full_table),
            "numpy values only",
            baseline,
            max_seconds=1.0,
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
