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

What sets the ratio. A grouped call does the one group's work (the tables, the terms of each
distinct rank and candidate count) plus the sums of every group (sparse products over the
tables' rows, sorted by group), the null moments of every group and the columns of every group;
without page faults (glibc's trim and mmap thresholds raised by ``GLIBC_TUNABLES``) that is about
2.8 times the one group's CPU time. In a fresh process glibc returns the memory a grouped call
frees (its peak, about 8-10 MB, is above the trim threshold) to the system, and the next call
faults it in again, 2.5-5 us a 4 KiB page on this virtual machine: that adds 0.2-0.3 to the
ratio. Once the process has freed an array of several MB, as any scoring pass does, glibc's
thresholds have risen and the grouped calls take 2.5-2.7 times the one group (the rows "after
16 MB freed"). The target is checked in a fresh interpreter (:func:`_in_fresh_process`), so that
no earlier benchmark's frees set the allocator's state.

The other rows have no target. They time the metrics beyond the defaults over the same groups:
those with closed forms vectorised over the groups (the geometric means, the variance, weighted
too), the harmonic and inverse arithmetic mean ranks from one quadrature for all groups, and the
median and its inverse, whose null moments take a pass per group size (groups of up to 16 tasks,
and of an even number up to 40, together) or a call per group (larger ones): about a thousand
times one group, as the last row shows against a call for every group.

How each cut was found and measured, and what was tried and not kept, is in
``benchmarks/HISTORY.md``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from _timing import Row, cpu_ratio_row, interleaved_best_times
from bench_evaluate import _rows, make_side
from rankstats import evaluate
from rankstats.evaluation import grouped

NUM_RANKS = 100_000
NUM_GROUPS = 10_000
#: metrics with closed-form null models beyond the default ones
CLOSED_FORMS = ["gmr", "igmr", "agmri", "zgmr", "variance"]
#: the metrics whose null moments take a call per group, and the groups of their row
MEDIANS = ["median", "inverse_median"]
MEDIAN_GROUPS = 1_000
#: a scoring pass's array (float64 elements), freed before the "scored" state is timed
_SCORES = 2_000_000


def _inputs() -> tuple[Any, np.ndarray]:
    rng = np.random.default_rng(1)
    return make_side(rng, NUM_RANKS), rng.integers(0, NUM_GROUPS, size=NUM_RANKS)


def _default_times(rounds: int, scored: bool) -> dict[str, float]:
    """Best CPU times of the three calls, alternated, in this process (run in a fresh one)."""
    if scored:  # as after a scoring pass: an array of some MB freed (glibc's thresholds rise)
        scores = np.ones(_SCORES)
        del scores
    ranks, labels = _inputs()
    return interleaved_best_times(
        {
            "one group": lambda: evaluate(ranks),
            "micro": lambda: evaluate(ranks, groups=labels, average="micro"),
            "macro": lambda: evaluate(ranks, groups=labels, average="macro"),
        },
        rounds=rounds,
        timer=time.process_time,
    )


def _in_fresh_process(rounds: int, scored: bool) -> dict[str, float]:
    """:func:`_default_times` in a new interpreter, so that no earlier benchmark's memory
    history (the arrays it freed) sets the allocator's state."""
    script = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import bench_groups; "
        "print(json.dumps(bench_groups._default_times(int(sys.argv[2]), sys.argv[3] == '1')))"
    )
    here = str(Path(__file__).resolve().parent)
    done = subprocess.run(
        [sys.executable, "-c", script, here, str(rounds), "1" if scored else "0"],
        capture_output=True,
        text=True,
        check=True,
    )
    times: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return times


def _call_per_group(call: Callable[[], Any]) -> Any:
    """``call()`` with the median's null moments taken a call per group (as before 2026-11-27)."""

    def none_done(
        counts: np.ndarray, multiplicity: np.ndarray, owner: np.ndarray, size: int
    ) -> tuple[np.ndarray, np.ndarray]:
        return np.full((size, 4), np.nan), np.zeros(size, dtype=bool)

    saved = grouped.grouped_median_moments
    grouped.grouped_median_moments = none_done
    try:
        return call()
    finally:
        grouped.grouped_median_moments = saved


def run(rounds: int = 15) -> list[Row]:
    rows = []
    for scored in (False, True):
        best = _in_fresh_process(rounds, scored)
        state = "after 16 MB freed" if scored else "fresh process"
        rows.extend(
            Row(
                f"evaluate: {NUM_GROUPS:,} groups over 1e5 ranks, default metrics, {average}, "
                f"{state} (CPU s)",
                best[average],
                "the same ranks as one group",
                best["one group"],
                # the target applies to a fresh process, where nothing else sets the allocator
                max_ratio=None if scored else 3.0,
            )
            for average in ("micro", "macro")
        )
    # the other metrics computed for all groups at once, for the record (no target: each had
    # taken a call per group; the reciprocal-of-mean metrics 4.5 s and 10 s)
    ranks, labels = _inputs()
    # task weights for the weighted row (each task at its own share of its group)
    weights = np.random.default_rng(2).uniform(0.5, 2.0, size=NUM_RANKS)
    for metrics, label, count, weighted in (
        (CLOSED_FORMS, "GMR, IGMR, AGMRI, z-GMR, variance", max(3, rounds // 3), None),
        (CLOSED_FORMS, "the same, weighted", 3, weights),
        (["iamr"], "IAMR (one quadrature for all groups)", 3, None),
        (["hmr"], "HMR (one quadrature for all groups)", 3, None),
    ):
        rows.append(
            cpu_ratio_row(
                f"evaluate: {NUM_GROUPS:,} groups, {label} (CPU s)",
                lambda m=metrics, w=weighted: evaluate(ranks, metrics=m, weights=w, groups=labels),
                "the same ranks as one group",
                lambda m=metrics, w=weighted: evaluate(ranks, metrics=m, weights=w),
                count,
            )
        )
    # a tenth of the ranks, in a tenth of the groups (about ten tasks each)
    part, few = _rows(ranks, slice(0, NUM_RANKS // 10)), labels[: NUM_RANKS // 10] % MEDIAN_GROUPS
    # weighted, the reciprocal-of-mean metrics' pairs each at their own argument (no target)
    share = weights[: NUM_RANKS // 10]
    for metric, label in (("iamr", "IAMR"), ("hmr", "HMR")):
        rows.append(
            cpu_ratio_row(
                f"evaluate: {MEDIAN_GROUPS:,} groups over 1e4 ranks, weighted {label} (CPU s)",
                lambda m=metric: evaluate(part, metrics=[m], weights=share, groups=few),
                "the same ranks as one group",
                lambda m=metric: evaluate(part, metrics=[m], weights=share),
                2,
            )
        )
    # the median's null moments: the groups of one size summed together, against one group
    # (no target; see the module's docstring) and against a call per group, the way they were
    # computed before (the batched function patched to leave every group to its call)
    rows.append(
        cpu_ratio_row(
            f"evaluate: {MEDIAN_GROUPS:,} groups over 1e4 ranks, median and inverse median (CPU s)",
            lambda: evaluate(part, metrics=MEDIANS, groups=few),
            "the same ranks as one group",
            lambda: evaluate(part, metrics=MEDIANS),
            1,
        )
    )
    # groups of about a hundred tasks: a call each (the main path), the costlier part now
    larger = labels[: NUM_RANKS // 10] % (NUM_RANKS // 10 // 100)
    rows.append(
        cpu_ratio_row(
            "evaluate: 100 groups of about 100 tasks, median and inverse median (CPU s)",
            lambda: evaluate(part, metrics=MEDIANS, groups=larger),
            "the same ranks as one group",
            lambda: evaluate(part, metrics=MEDIANS),
            1,
        )
    )
    rows.append(
        cpu_ratio_row(
            f"evaluate: {MEDIAN_GROUPS:,} groups, median and inverse median, "
            "groups of one size together (CPU s)",
            lambda: evaluate(part, metrics=MEDIANS, groups=few),
            "a call per group",
            lambda: _call_per_group(lambda: evaluate(part, metrics=MEDIANS, groups=few)),
            1,
        )
    )
    return rows


if __name__ == "__main__":
    for row in run():
        print(" | ".join(row.cells()))
