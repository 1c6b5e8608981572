"""Comparing models: 10,000 queries x 3 models x 4 metrics x 10,000 randomization resamples.

The issue's goal: at least as fast as ranx's ``compare`` (Fisher's randomization test, numba) on the
same inputs and the same number of permutations, with the p-value's Monte-Carlo error stated.
ranx is not a dependency; when it is importable (e.g. ``pip install --target DIR ranx`` and
``PYTHONPATH=DIR``) it is the baseline, otherwise a plain numpy pass: for each metric and pair on
its own, blocks of random sign flips of the per-query differences (no shared blocks, no matrix
product), the straightforward vectorised way.

rankstats' timing includes the metrics' values (as ranx's does); a second row adds the 95% BCa
bootstrap intervals of every value and difference, which ranx does not compute.
"""

from __future__ import annotations

import sys

import numpy as np

from _timing import Row, best_time
from rankstats import compare

NUM_QUERIES = 10_000
NUM_CANDIDATES = 14_541
NUM_RESAMPLES = 10_000
METRICS = ["mrr", "hits@1", "hits@3", "hits@10"]
RANX_METRICS = ["mrr", "hit_rate@1", "hit_rate@3", "hit_rate@10"]


def make_models(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Three models' heavy-tailed integer ranks on the same queries, the second a bit better."""
    base = rng.lognormal(2.0, 1.8, size=NUM_QUERIES)
    models = {}
    for name, shift in (("a", 1.0), ("b", 0.93), ("c", 1.0)):
        noise = rng.lognormal(0.0, 0.4, size=NUM_QUERIES)
        models[name] = np.clip(np.ceil(base * shift * noise), 1, NUM_CANDIDATES)
    return models


def numpy_baseline(models: dict[str, np.ndarray], rng: np.random.Generator) -> None:
    """Each metric and pair on its own: blocks of random sign flips of per-query differences."""
    names = list(models)
    terms = {
        "mrr": lambda r: 1.0 / r,
        "hits@1": lambda r: (r <= 1).astype(float),
        "hits@3": lambda r: (r <= 3).astype(float),
        "hits@10": lambda r: (r <= 10).astype(float),
    }
    block = 1_000
    for metric in METRICS:
        for i in range(len(names)):
            for j in range(i + 1, len(names)):
                d = terms[metric](models[names[i]]) - terms[metric](models[names[j]])
                observed = abs(d.mean())
                count = 0
                for _ in range(NUM_RESAMPLES // block):
                    signs = rng.choice([-1.0, 1.0], size=(block, NUM_QUERIES))
                    count += int((np.abs(signs @ d) / NUM_QUERIES >= observed).sum())


def ranx_inputs(models: dict[str, np.ndarray]) -> tuple[object, list[object]] | None:
    """ranx's Qrels and Runs holding the same ranks, or None without ranx."""
    try:
        from ranx import Qrels, Run
    except ImportError:
        return None
    qrels = Qrels({f"q{i}": {"relevant": 1} for i in range(NUM_QUERIES)})
    runs = []
    for name, ranks in models.items():
        run = {}
        for i, rank in enumerate(ranks.astype(int)):
            # the relevant document after rank - 1 better ones (capped: MRR and Hits@10 need no
            # more than the exact position, which the cap keeps for ranks up to 1000)
            shown = min(rank, 1_000)
            scores = {f"d{j}": float(2_000 - j) for j in range(1, shown)}
            if rank <= 1_000:
                scores["relevant"] = float(2_000 - shown)
            run[f"q{i}"] = scores
        runs.append(Run(run, name=name))
    return qrels, runs


def run() -> list[Row]:
    """Time rankstats against ranx (or a plain numpy pass) and print the p-values' MC error."""
    rng = np.random.default_rng(0)
    models = make_models(rng)

    def ours() -> object:
        return compare(models, metrics=METRICS, n_resamples=NUM_RESAMPLES, interval=None, seed=0)

    result = ours()
    ours_s = best_time(ours, repeat=2)
    with_ci = best_time(
        lambda: compare(models, metrics=METRICS, n_resamples=NUM_RESAMPLES, seed=0), repeat=1
    )
    errors = [p.p_value_se for p in result.pairs if p.p_value_se is not None]
    print(result.to_table(), file=sys.stderr)
    print(
        f"p-value Monte-Carlo standard error: at most {max(errors):.2e} "
        f"(sqrt(p (1 - p) / {NUM_RESAMPLES}); "
        f"p = (b + 1)/(m + 1) >= {1 / (NUM_RESAMPLES + 1):.1e})",
        file=sys.stderr,
    )
    inputs = ranx_inputs(models)
    if inputs is not None:
        from ranx import compare as ranx_compare

        qrels, runs = inputs

        def theirs() -> object:
            return ranx_compare(
                qrels,
                runs,
                metrics=RANX_METRICS,
                stat_test="fisher",
                n_permutations=NUM_RESAMPLES,
                max_p=0.05,
            )

        theirs()  # numba compiles on the first call
        baseline, baseline_s = "ranx 0.3 compare (fisher)", best_time(theirs, repeat=2)
        report = theirs()
        print(report, file=sys.stderr)
    else:
        baseline = "numpy per-pair sign flips"
        baseline_s = best_time(lambda: numpy_baseline(models, np.random.default_rng(1)), repeat=1)
    case = f"compare 3 models x 4 metrics, {NUM_QUERIES} queries, {NUM_RESAMPLES} resamples"
    return [
        Row(case, ours_s, baseline, baseline_s, max_ratio=1.0),
        Row(case + " + 95% BCa intervals", with_ci, baseline, baseline_s),
    ]


if __name__ == "__main__":
    for row in run():
        print(" | ".join(row.cells()))
