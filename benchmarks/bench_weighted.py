"""Weighted input: the default table with a weight per task, against the same call unweighted.

``evaluate(..., weights=...)`` weighs each distinct row of its tables (a rank, a pair of
optimistic and pessimistic ranks, a candidate count) by the correctly rounded sum of its tasks'
weights, so that the results do not depend on the order of the tasks (or on how an accumulator
was sharded) to the last bit. Those sums are exact integers on a fixed-point grid, in limbs of
32 bits (:mod:`rankstats.evaluation.weight_sums`).

Until 2026-11-27 every limb of every weight was sorted by its (row, limb) code, three codes a
weight: a weighted table of 1e5 tasks took about 65 ms, 40 times the unweighted one, and 70 ms
with 10,000 groups. Now :func:`~rankstats.evaluation.weight_sums.row_sums` adds the limbs on a
dense (rows x limbs) grid with no sort, and a row of one weight (most rows, with many groups)
takes that weight as it is; the numbers are the same. The first rows time the whole table, the
last two the weight sums alone against the sorted limbs they replaced (the accumulator's
mergeable form, :func:`~rankstats.evaluation.weight_sums.weight_limbs`, still kept for its
states), in one run.

Run ``python benchmarks/run.py weighted``.
"""

from __future__ import annotations

import numpy as np

from _timing import Row, cpu_ratio_row
from bench_evaluate import make_side
from rankstats import evaluate
from rankstats.evaluation.tables import distinct_rows
from rankstats.evaluation.weight_sums import rounded_sums, row_sums, weight_limbs

NUM_RANKS = 100_000
NUM_GROUPS = 10_000


def run(rounds: int = 7) -> list[Row]:
    rng = np.random.default_rng(1)
    ranks = make_side(rng, NUM_RANKS)
    labels = rng.integers(0, NUM_GROUPS, size=NUM_RANKS)
    weights = np.random.default_rng(2).uniform(0.5, 2.0, size=NUM_RANKS)
    rows = [
        cpu_ratio_row(
            f"evaluate: default table, 1e5 tasks, a weight each, {label} (CPU s)",
            lambda g=groups: evaluate(ranks, weights=weights, groups=g),
            "the same call unweighted",
            lambda g=groups: evaluate(ranks, groups=g),
            rounds,
        )
        for groups, label in ((None, "one group"), (labels, f"{NUM_GROUPS:,} groups, micro"))
    ]
    ones = np.ones(NUM_RANKS, dtype=np.int64)
    for groups, label in (
        (np.zeros(NUM_RANKS, dtype=np.int64), "one group"),
        (labels, f"{NUM_GROUPS:,} groups"),
    ):
        keys = {"group": groups, "num_candidates": ranks.num_candidates}
        _, index = distinct_rows(keys)
        size = int(index.max()) + 1
        rows.append(
            cpu_ratio_row(
                f"exact weight sums per candidate-count row, 1e5 tasks, {label} (CPU s)",
                lambda i=index, s=size: row_sums(i, s, weights),
                "sorted limbs (the same sums)",
                lambda k=keys: rounded_sums(weight_limbs(k, weights, ones), list(k)),
                rounds,
            )
        )
    return rows


if __name__ == "__main__":
    for row in run():
        print(" | ".join(row.cells()))
