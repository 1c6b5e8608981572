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

Much of the grouped calls' time is page faults, not numpy. glibc's ``malloc`` returns the memory
freed at the end of each call to the system (its trim threshold) and the next call faults it
in again, one 4 KiB page at a time; on this machine (a virtual machine) a fault costs 2.5-5 us,
so each MB of a call's peak memory costs about a millisecond. The one group's call peaks below
the trim threshold and faults almost never. The grouped calls' peak was cut from 23.7 MB to
13.1 MB (page faults per call from 5,300 to 2,800; ``tracemalloc`` and ``getrusage``), by
computing derived metrics' values and moments from their bases' arrays when a group is read,
keeping only the totals of the per-group sums for the micro average, dividing means in place,
32-bit sparse indices, stacking terms as they are evaluated, and releasing the pairs' per-row
caches before the null moments. It was then cut to 11.5 MB (faults per call about 2,200), by
releasing the per-row caches of the pairs (tie split, sparse matrix, weights) as soon as their
sums are in and those of the candidate counts once the null moments are, and by packing a
(group, optimistic, pessimistic) row as (group, optimistic, number of tied candidates) in 32
bits for the sort; this took the ratios from 4.3 (micro) and 4.5 (macro) to 4.0 and 4.25 (CPU
time, load ~2 on 2 cores). It was then cut to 8.4 MB (faults per call from about 2,180 to
1,270-1,370, about a millisecond in all): the tables :func:`~rankstats.evaluate` builds are its
own, so where every metric's columns come from per-group sums (the default metrics do) their key
columns are dropped as soon as those sums are in (the pairs' ranks once the tie split holds what
its sums read, their group ids once the values are summed, the candidate counts once their index
is built, their group ids once the null moments are), and the pairs' cached weights once the
untied weights are copied. This took the ratios from 4.0 (micro) and 4.2 (macro) to about 3.6
and 3.85 (3.5-3.7 and 3.7-3.9 over runs; micro 12.8 -> 11.5 ms, macro 13.5 -> 12.1 ms, one group
3.2 ms; CPU time, the two versions alternated in one session). What remains at the peak is
mostly the results (5.4 MB), the tables' row counts, the candidate counts' group ids, and the
null moments' sparse product.

Tried and not kept (no gain measured, alternated in one process): group ids in 32 bits (250
fewer faults, but ``np.bincount`` and fancy indexing convert them to 64 bits, call after call);
every entry of the pairs' values summed in one (entries x groups) array (fewer numpy calls, but
370 more faults: one large block does not fit the holes the released caches leave). Run with
``GLIBC_TUNABLES=glibc.malloc.trim_threshold=4294967295:glibc.malloc.mmap_threshold=4294967295``
(freed memory kept; no faults), the grouped calls took about 3.1-3.4 times the one group's before
these cuts; the rest of the gap is numpy and Python work (the sparse products of the values and
the null moments, about 2.2-2.5 ms; the tables' packing, sorting and unpacking, about 1.5 ms; the
micro or macro rows, about 1.5 ms). The benchmark measures the default allocator, as a user gets
it.
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
