"""Evaluating metrics on 1e7 ranks, validation included, against the bare numpy expression.

Target (issue 3): each ``__call__`` within 2x of the plain numpy expression for the same metric.
"""

from __future__ import annotations

import importlib.util

import numpy as np

import rankstats
from _timing import Row, best_time

N = 10_000_000


def run() -> list[Row]:
    rng = np.random.default_rng(0)
    num_candidates = np.full(N, 14_541)
    ranks = np.floor(rng.random(N) ** 3 * num_candidates) + 1.0  # model-like: many small ranks
    cases = {
        "mr": (rankstats.ArithmeticMeanRank(), lambda: ranks.mean()),
        "mrr": (rankstats.InverseHarmonicMeanRank(), lambda: (1.0 / ranks).mean()),
        "gmr": (rankstats.GeometricMeanRank(), lambda: np.exp(np.log(ranks).mean())),
        "hits@10": (rankstats.HitsAtK(k=10), lambda: (ranks <= 10).mean()),
        "median": (rankstats.MedianRank(), lambda: np.median(ranks)),
        "variance": (rankstats.Variance(), lambda: ranks.var()),
    }
    rows = []
    for name, (metric, bare) in cases.items():
        ours = best_time(lambda metric=metric: metric(ranks))
        rows.append(
            Row(
                f"__call__ {name}, n=1e7",
                ours,
                baseline="bare numpy",
                baseline_s=best_time(bare),
                max_ratio=2.0,
            )
        )
    with_candidates = rankstats.InverseHarmonicMeanRank()
    # informational: checking every rank against its candidate count reads a second 1e7 array,
    # which the bare expression does not; no target
    rows.append(
        Row(
            "__call__ mrr, checking ranks <= num_candidates, n=1e7",
            best_time(lambda: with_candidates(ranks, num_candidates)),
            baseline="bare numpy",
            baseline_s=best_time(lambda: (1.0 / ranks).mean()),
        )
    )
    if importlib.util.find_spec("pykeen") is not None:  # pragma: no cover - optional comparison
        from pykeen.metrics.ranking import InverseHarmonicMeanRank as PyKEENMRR

        pykeen_mrr = PyKEENMRR()
        rows.append(
            Row(
                "__call__ mrr, n=1e7 (vs PyKEEN)",
                best_time(lambda: with_candidates(ranks)),
                baseline="PyKEEN",
                baseline_s=best_time(lambda: pykeen_mrr(ranks)),
            )
        )
    else:
        rows.append(
            Row(
                "__call__ mrr, n=1e7 (vs PyKEEN)",
                best_time(lambda: with_candidates(ranks)),
                baseline="PyKEEN not installed",
            )
        )
    return rows
