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

Then (branch groups5) from micro 3.74 and macro 3.97 (3.56-3.97 and 3.88-4.32 over six runs;
micro 10.2 ms, macro 10.9 ms, one group 2.7 ms) to micro 3.1-3.3 and macro 3.0-3.1 (medians of
three series of five or six runs: micro 3.13, 3.16, 3.30; macro 2.99, 3.08, 3.10; micro 8.1-8.7
ms, macro 8.1-8.3 ms, one group 2.6-2.7 ms), results the same to the bit in every group:

- the tables :func:`~rankstats.evaluate` builds with groups, where every metric comes from
  per-group sums, keep their ranks, candidate counts and row counts in ``int32`` where every
  value is below 2**30 and a row packs into 31 bits (``Table.build(..., narrow=True)``; the
  group ids stay ``int64``), unpacked without conversions, in half the memory; the terms take
  their arguments in ``int64`` (the distinct candidate counts, the tied ranks);
- the macro average computes an element-wise array that others are computed from (a base's
  null standard deviation, which the z-scores of every rank type share) once, not once per
  rank type;
- a derived metric shares its base's array of methods unless a group's metric is undefined,
  and looks for the groups where the array form fails only where some does; the groups with
  tasks are marked by a scatter of the tables' group ids, not through the distinct ids.

Measured in separate processes, the two versions alternated (``python benchmarks/run.py
groups`` as it runs, five or six runs each): running both versions in one process (the old one
as a renamed copy) misled here, as both then share one heap and each one's page faults depend
on the other's calls. Much of the gain is page faults, and not where the memory was cut: in the
benchmark's rounds (one group, micro, macro) the macro calls now fault almost never (0 against
1,341 per call) and the micro calls 500-760 times (against 1,341); the macro average's change
alone, which does not touch the micro call, took the micro ratio from 3.73 to 3.38. So these
ratios depend on the allocator's state, and a change elsewhere may move them by 0.3-0.6 either
way. With the glibc tunables above (no faults) the CPU work alone went from 2.93 (micro) and
3.22 (macro) to 2.85 and 2.98 (micro 7.6 -> 7.4 ms, macro 8.4 -> 7.6 ms).

Tried and not kept (measured as above): group ids in ``int32`` as well (micro 3.13 -> 3.27:
``np.bincount`` and fancy indexing convert them, as before); the tied rows' terms of the
optimistic, pessimistic and realistic ranks evaluated in one call per metric (no CPU time
saved: those terms cost 2 us each, the cost is the few terms over ties, ``_expected_reciprocal``
133 us and ``_expected_hit`` 22 us each); each rank type's values stored as the untied rows'
means, shared, with only the ~2,600 groups with tied rows of its own (1.7 MB less in results,
but no fewer faults, and no less CPU time: micro 3.10 -> 3.13, macro 3.11 -> 3.18); the null
moments computed before the pairs' values (no trim of the heap in between, but the same peak:
no change); the untied weights rebuilt in place of the cached weights rather than copied (no
change). What is left of the CPU work beyond the one group's: the sparse products and the
entries of the pairs' values (about 1.8 ms), the null moments (about 1.2 ms), the tables (0.8
ms more than the one group's, two sorts of 10^5 keys, 0.2 ms each, and the group labels'
encoding, 0.3 ms), the groups' columns and the micro rows (about 0.8 ms) or the macro rows
(about 1.2 ms).

The last row times the other metrics with closed-form null models (the geometric mean rank
and its inverse, their adjusted and z-scored forms, the ranks' variance) over the same groups.
Until 2026-11-27 each group's null model of these, and the geometric means' expectation over
tie-breaking (and the variance's), took a call per group: 602 ms for the four geometric
metrics alone, 194 times one group; with the variance, 235 ms after the geometric means' null
moments were vectorised. From one pass over the rows now (the exponents 1/n_g per row; the
geometric terms once per distinct pair of count and group size): 37 ms, 15 times one group
(the four geometric metrics alone: 16 ms, 6 times; their terms at 30,000 such pairs, where one
group has a thousand distinct counts, are most of it). Metrics without a
closed form (the harmonic and inverse arithmetic mean ranks, the median, the MAD, the standard
deviation) still take a pass per group: 3.3 ms a group for the harmonic mean rank, 6 ms for
the median of 50 tasks.

Measured again on 2026-11-27, three runs (nothing in the grouped path changed): micro 3.14,
3.06, 2.98 and macro 3.05, 2.93, 2.86 (grouped 7.9-8.4 ms, one group 2.6-2.8 ms), at the target
and on either side of it from run to run. The micro average's own rows (its builder, columns
and rows from the groups' sums) take 0.57 ms of a micro call, so building them directly would
save at most that.

Later on 2026-11-27: the pairs' entries in one block per rank type (one gather of the untied
sums, one add of the tied rows' sums, row sums, one divide), the null moments' means in two
divides, integer labels of a small span found present by a scatter and coded by ``np.take``
(365 -> 300 us), a group's rows under one numpy error state, the tie expectations of Hits@k
and the MRR without gathers where every row given is tied. Alternated with the code before
them in separate processes, eight runs each: micro 3.13 (3.04-3.22) against 3.12
(2.90-3.26), macro 2.96 (2.86-3.06) against 3.04 (2.88-3.18): nothing beyond the noise.
Counted in instructions (valgrind's callgrind, ``OPENBLAS_NUM_THREADS=1``,
``PYTHONHASHSEED=0``: the counts repeat to 0.01%), a micro call went from 82.9 to 81.8
million, the one group's call being 26.7 million: 3.1 times. One block for all rank types
(2.6 MB) had been faster for micro, but it was a new mapping each call, faulted in page by
page (1,060 faults per macro call against 180 with a block per rank type).

Tried and not kept: the tables of unweighted groups as one row per task, sorted stably by
group only (the input's preparation 2.2 -> 1.6 ms): a repeated row's terms are then added one
by one rather than its count times its term once, and the results differ in the last bits
from those of ``RankAccumulator``, whose tables merge equal rows (the scale-out guide promises
the accumulator gives ``evaluate``'s results to the last bit); the candidate counts' terms as
fewer basis sums (``1/C``, ``1/C**2``, ``C``, ``C**2``: the product's 15 terms cost 0.43 ms,
and recombining them as much as that saves); a gather and ``np.add.reduceat`` in place of the
sparse products (3 to 7 times slower).

In a plain loop of calls in a fresh process (no interleaving), glibc returns a grouped call's
freed memory to the system after each call (its peak, 7.7 MB, is above the trim threshold)
and every call faults it in again: micro 10-11 ms there, 3.6 to 5 times the one group. Once
the process has freed an array of several MB (as an evaluation loop freeing its score
matrices has), glibc's thresholds have risen and the same loop gives micro 6.5-7.1 ms, 3.2 to
3.4 times the one group, which then runs in 2.05 ms with its caches warm.

Then the adjusted and z-scored columns took ``M - E`` from whichever pair carries the digits
(``chance_difference``: the z-MRR near 0 had been 6e-9 off): a choice per group, made once per
derived metric, and one more pass per column. Macro went from 2.89-2.93 to 3.07-3.17, micro
3.03-3.20 (runs of the final code). The exact numbers came first.

On 2026-11-27 (later) the adjusted and z-scored means, and the z-score column of every
mean-type metric's rows, took ``M - E`` as one exact sum over a group's rows where the rounded
means cancel (:mod:`rankstats.chance`; tasks with one candidate beside tasks with 1e12 had left
the adjusted Hits@10 8e-8 off): a screen of ``|M - E|`` per base metric and rank type (24 passes
over the groups for the default metrics; the micro average's one group in Python's floats), and
an exact sum over the rows of the few groups it flags, found through the tables' row ranges.
The tables keep their ranks and candidate counts for that (their group ids still go): the
call's peak memory went from 7.8 to 9.0 MB for micro, 10.8 MB for macro, which shares one array
of ``M - E`` per base and rank type between the columns that read it (``tracemalloc``). This
benchmark's data flags one group of the mean rank (M = 7,024 against E = 7,000) in every rank
type. Measured in one process with the screen and the exact sums on and off in turn (best of 40
calls, CPU time): 0.7-1.1 ms of a 6-9 ms micro call. Runs of ``run.py groups`` on the final
code (each product of a weight and a term then taken exactly too): micro 3.01-3.39, macro
3.31-3.57 over seven runs (one group 2.3-2.9 ms as the machine's load moved), against
3.03-3.20 and 3.07-3.17 before. Correct digits came first. The macro average's rounded
``M - E`` of every group then served as its own screen (no separate pass of ``|M - E|``):
macro 3.15-3.30, micro 2.86-3.24 over seven runs (peak 10.5 MB for macro).

Then (later on 2026-11-27), counted in instructions (callgrind, as above: micro 97.3, one group
31.0 million per call, 3.14 times) and timed in alternated runs of ``run.py groups``:

- the mean rank's ``M - E`` is summed again only below a 1024th of its expectation where ``M``
  and ``E`` are exact sums (unweighted tasks: :func:`rankstats.chance.sums_exact`): this data's
  one group of the mean rank at a 292nd of chance needs no exact sum in any rank type (0.3 ms);
- ``chance_difference`` takes one form where every group takes it, and the screen's thresholds
  are computed when first read (macro 2.95 -> 2.8);
- every product of terms (``GroupSums.weighted_sums_array``) gives one contiguous row per term.
  Its rows had been strided views of the (groups x terms) product, and each pass over a term's
  groups (the micro average's 24 totals, the means, the screens, the coefficients) read a
  64-byte cache line per 8-byte group: micro 95.2 -> 90.5 million instructions per call, macro
  96.4 -> 90.0 (one group 30.5, 2.96 and 2.95 times); micro 2.7-2.9 and macro 2.5-2.7 times
  one group over runs (from 2.9-3.2 and 2.8-3.0). The copy holds a second copy of the product
  for a moment: the micro call's peak went from 9.0 to 10.0 MB (macro 10.5 -> 10.1).

In a plain loop of calls with warm caches and glibc's thresholds raised (no page faults) the
micro call took 7.6 ms against the one group's 2.4 (3.1 times): the benchmark's rounds, which
alternate the three calls, find the one group's caches colder. Tried and not kept: a screen
shared by the groups without tied pairs across rank types (the set operations cost what the
screens save); the products a few terms at a time, copied into the rows (peak 9.1 MB, but each
part streams the matrix again: 106 million instructions, slower).


Corrected later on 2026-11-27: the ratios from 2026-11-27 above (2.5-2.9) were flattered by a
defect. The macro average's reductions were a closure that called itself; its cell held it and
its caches (1.4 MB of group arrays) in a reference cycle, freed only when the cyclic collector
ran. Memory so held across calls kept glibc from trimming the heap after each grouped call,
and the micro calls alternated with the macro ones profited too. With the cycle removed
(``group_rows._Reductions``; ``tests/test_no_cycles.py``) both averages fault about 1,650 pages
per call (from about 560) and take 3.3-3.8 times one group (micro 9-10 ms, one group 2.6-2.9
ms), as measured in alternated runs of the two versions. About a third of that is the faults:
a grouped call's heap grows by about 6 MB (its results are 4.6 MB: each rank type's block of
values, the null moments' block, the derived metrics' scales), above glibc's trim threshold,
which is twice the largest block freed by ``munmap`` so far (here the 1.2 MB product of the
null moments). Once the process has freed a larger array, as any scoring pass does (the second
pair of rows frees 16 MB first), nothing is trimmed and the grouped calls take 2.5-2.9 times
one group.

So the calls are now timed in a fresh interpreter per state (``_in_fresh_process``), not in
the process that ran the other benchmarks: in ``run.py``'s single process the benchmarks before
this one had freed arrays of several MB, and the ratios depended on which ran first. The
target is checked on the fresh process. Tried then and not kept: the sparse products a few
terms at a time, each part copied into its rows (peak 9.8 -> 9.2 MB, about 200 fewer faults
per call, no faster: the matrix is streamed once per part).

Then (2026-11-27, later) the micro call's peak went from 9.66 to 8.1 MB (tracemalloc; every
group's results the same to the bit), in three steps, each taking memory one phase held while
another needed its own:

- the null moments come before the values: the candidate counts' arrays (the sparse matrix's
  weights, the index into the distinct counts, the group ids) are freed before the pairs' sums
  make theirs, and the group totals are summed from the tables' counts, so that the pairs' float
  weights are made when their sums need them (the null moments' phase peaked at 7.9 MB, the
  values' at 8.5 MB, from 9.66);
- the pairs' untied sums are read as the (groups x terms) product: each rank type's block copies
  its rows from it anyway, and the contiguous transpose had been a third copy for a moment;
- the tie split's untied rows and the pairs' caches are released once the untied sums are in,
  before the tied rows' terms and sums (that phase 8.25 -> 6.2 MB). The peak is now the blocks
  of values (every rank type's entries) and the columns' screens and scales, about 8.1 MB each.

Page faults per call went from about 1,900 to 1,000-1,550 (they follow where the freed blocks
lie in the heap as much as the peak), and in three runs of ``run.py groups`` the fresh process
took 3.16-3.39 (micro) and 3.17-3.53 (macro) times one group, against 3.35-3.8 before (in two
later runs of the whole table 3.1-3.13 and 3.1-3.26); after 16 MB freed, 2.5-2.6. In the
same process with the thresholds raised (no faults) the calls take 6.1-6.2 ms against the one
group's 2.2 (2.8 times): about 1.3 ms of the tables with group ids, 1.0 of the null moments, 1.7
of the values, 1.1 of the 96 columns. The target is not met.

The inverse arithmetic mean rank's null moments now come from one quadrature for all groups
(``rankstats.null.reciprocal_groups``), not one call per group: 10,000 groups 4.5 -> 0.38 s
(the last row). The values of the median, its inverse and the MAD come from one sort of the
rows (``rankstats.evaluation.group_medians``; the MAD at 10,000 groups 1.03 -> 0.07 s), and the
null columns of the MAD and the standard deviation, which have no closed form, from the first
group. The null moments of the harmonic mean rank and the median still take a call per group
(10 s and 15 s here): the harmonic transform of a task costs an Euler-Maclaurin sum where the
single group's power-series buckets do not reach, so that batching the groups would save their
fixed costs only, and the median's product-form law is built per group.

Later (2026-11-27) the harmonic mean rank's null moments came from one quadrature for all
groups after all (``rankstats.null.reciprocal_groups``), 10 s -> 0.09 s (the last row):
batching the rows' transforms at each group's own nodes would have cost 6 s, but each group's
nodes can be shifted (the trapezoidal rule does not care where its nodes start) so that every
group's arguments ``log s`` fall on one grid, where the transforms are tabulated once per table
count (17 tables for this data's thousand distinct counts, folded in log C) and each group's
sums are a sparse product of its weights on the tables. The inverse arithmetic mean rank's
grouped quadrature, which had evaluated every row at every node, now takes the same path:
0.32 -> 0.08 s. The median's null moments still take a call per group.

In the run of the whole table that followed (nothing in the default metrics' path changed):
micro 3.33 and macro 3.27 times one group in the fresh process (8.2-8.3 ms against 2.5 ms),
2.59 and 2.63 after 16 MB freed. The target is not met in the fresh process.

Then two cuts of the grouped work, results the same to the bit: the screens of ``M - E`` pick
their suspects by one bound per base (``|E|`` times a little over ``2**-8``) and compute the
thresholds at those groups only, where each base's thresholds had been computed over every
group; and ``1 - M`` is summed directly only for the bases where some group takes ``M - E``
from the gaps (against 13,541-14,541 candidates, the mean rank's only: the MRR's and Hits@10's
gap rows, their terms in the sparse products and 480 kB of results went). Page faults per call
went from about 1,000 (micro) and 1,300 (macro) to 886 and 1,100; in five alternated pairs of
fresh processes, micro 3.17-3.29 -> 3.11-3.15 and macro 3.15-3.43 -> 3.20-3.31 times one group.
Tried and not kept: the null moments' product a part of 2,048 groups at a time, each part
transposed into its columns (the call's peak 8.1 -> 7.7 MB, but no fewer faults). Then fewer
small numpy calls in the screens (none at all where the bound flags no group; the macro
average's one form of ``M - E`` per base): in three runs of ``run.py groups``, micro 2.98,
3.30, 3.08 and macro 3.15, 3.37, 3.22 (one group 2.6-2.7 ms), earlier the same hour micro
2.91-2.97 and macro 3.04-3.07: at the target and either side of it as the machine's load moves.

The weighted row: the geometric means' and the variance's closed forms for weighted input had
taken a call per group (about 0.33 ms a group); each task's share ``w / W_g`` now comes from
the rows that keep each task's weight, in one pass for all groups.

The weighted IAMR and HMR rows (no target): their null moments had taken a call per group
(1,000 groups of ten weighted tasks: 0.57 s and 1.23 s); each pair of a group now takes its
own argument in one quadrature for all groups (``rankstats.null.reciprocal_weighted``): 0.06 s
and 0.59 s (2026-11-27), the harmonic mean rank's Euler-Maclaurin values per pair and node
being most of what is left.

The median rows (no target) show what is left of the class. Until 2026-11-27 (later) the median's
and the inverse median's null moments took a call per group, 1,000 groups of about ten tasks over
1e4 ranks in 1.2-1.3 s against 0.9-1.2 ms for one group (two runs on 2026-11-27, after the few-task
path's pairs of panels went without pair indices: the even groups' calls 0.55-0.65 times as long).
Batching the groups would not close it. A group of ten costs about 0.7 ms whatever its counts (about
a thousand numpy calls) and 1.3 ms more that grows with its nodes (about 240 a side; the inverse
median's kernel over some 30,000 pairs of them). Even with nodes shared by all groups, so that the
kernel is one matrix product for all of them, an estimate gives 3-4 s for 10,000 groups: the target
needs sums over the pairs that cost O(nodes), not O(nodes^2).

Then the groups of 3 to 16 tasks, and of an even number up to 56, went together, one pass per
group size (``rankstats.null.median_small_groups``: the same sums, every group's nodes in one
array): the last row compares that with a call per group in one run (1,000 groups: 0.66 s
against 1.14 s, 0.58 times), and the row before it still shows about a thousand times one
group. The fixed costs went; the point masses at each pair of nodes within a panel (about
7,500 per even group of ten tasks at these counts) remain, the same work either way. The row
of 100 groups of about 100 tasks shows the groups that still take a call each (the main path's
exact dynamic programme: about 5 ms a group of 100 tasks, 20-35 ms at 500, against 2 ms at
2,000 where the Fourier inversion takes over)."""

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
