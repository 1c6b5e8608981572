"""Many groups at once: 10,000 groups over 10^5 ranks against the same ranks as one group.

The target (issue 9): ``evaluate(..., groups=...)`` with 10,000 groups over 10^5 ranks (default
metrics, every rank type, null moments of every group) within 3x the time of the same ranks
without groups, for the micro and for the macro average.

The three calls are timed in turn, round after round, and each keeps its best round, in CPU
time of this process (:func:`time.process_time`): the work is single-threaded, so on an idle
machine that is the wall time, and on a shared one (2 cores, several processes) it is what other
processes' time slices do not inflate (a 15 ms call finds a quiet moment more often than a 40 ms
one). Caches shared with other processes still move it: under a load of ~5 on 2 cores the ratios
varied between runs by about +-0.4 in CPU time, +-0.6 in wall time
(``python benchmarks/run.py groups``).

Much of the grouped calls' time is the memory allocator's, not numpy's: the tables of 10^5
distinct rows and their temporaries take a few MB, which glibc's ``malloc`` hands back to the
system when they are freed at the end of each call (its trim threshold) and page-faults in again
on the next. Run with ``GLIBC_TUNABLES=glibc.malloc.trim_threshold=4294967295`` (freed memory
kept), the grouped calls took ~12 ms instead of ~20 ms and the ratios were 2.7-3.0 instead of
4.2-4.8, while the one group's time did not move (2 cores under load, same commit). The
benchmark measures the default allocator, as a user gets it; what would lower the grouped
time most is fewer and smaller large temporaries (in-place operations, narrower integer
columns), not fewer operations.
"""

from __future__ import annotations

import time

import numpy as np

from _timing import Row, interleaved_best_times
from bench_evaluate import make_side
from rankstats import evaluate

NUM_RANKS = 100_000
NUM_GROUPS = 10_000


def run(rounds: int = 15) -> list[Row]:
    rng = np.random.default_rng(1)
    ranks = make_side(rng, NUM_RANKS)
    labels = rng.integers(0, NUM_GROUPS, size=NUM_RANKS)
    best = interleaved_best_times(
        {
            "one group": lambda: evaluate(ranks),
            "micro": lambda: evaluate(ranks, groups=labels, average="micro"),
            "macro": lambda: evaluate(ranks, groups=labels, average="macro"),
        },
        rounds=rounds,
        timer=time.process_time,
    )
    return [
        Row(
            f"evaluate: {NUM_GROUPS:,} groups over 1e5 ranks, default metrics, {average} (CPU s)",
            best[average],
            "the same ranks as one group",
            best["one group"],
            max_ratio=3.0,
        )
        for average in ("micro", "macro")
    ]


if __name__ == "__main__":
    for row in run():
        print(" | ".join(row.cells()))
