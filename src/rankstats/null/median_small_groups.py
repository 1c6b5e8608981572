r"""The median's null moments of many groups of a few tasks each, in one pass per group size.

:func:`~rankstats.null.median_small.small_moments` sums the point masses of the middle order
statistics of one group over Gram nodes on panels. A call costs a few hundred numpy calls
whatever its counts, most of an odd group's time (0.34 ms for ten tasks at counts near 14,000)
and of a group of tiny counts (0.7 ms), and then work per node and per pair, most of an even
group's time at larger counts (about 2 ms for ten tasks). :func:`grouped_small_moments` runs the
same sums for many groups of one size :math:`n` together:

* every group's windows of the middle ranks by one bisection for all groups (Bennett's bound, as
  :meth:`~rankstats.null.median_tails._Candidates.window`);
* every group's panels (a start at every count plus one and at the ladder of
  :func:`~rankstats.null.median_small.panel_ladder`) as the distinct entries of one sorted
  (groups x breaks) array, and their Gram nodes in one call of
  :func:`~rankstats.null.median_rules._piece_nodes`;
* the point masses at every node of every group by the single group's code
  (:class:`~rankstats.null.median_small._Tasks`), each node reading its own group's counts, a
  bounded number of nodes at a time;
* for an even number of tasks, the pairs of nodes in distinct panels by the same product form as
  :meth:`~rankstats.null.median_small._Centred.add_columns`: the moments of :math:`M` from each
  node's prefix statistics, and :math:`1/M` from the kernel :math:`2/(u + v)`, masked to each
  prefix, summed against the masses of :math:`u` over ranges of nodes :math:`v` (whole groups
  padded to the range's largest counts of nodes, or a part of one group), at most
  :data:`_KERNEL_ENTRIES` entries a range;
* the pairs within one panel by the single group's rules (integer nodes in :math:`v`, a Gram
  rule in :math:`u` below each), for many panels of many groups at a time, each node
  :math:`v`'s pairs reduced to their mass, means and centred sums of squares first; the counts
  below a panel are compared in integers (beyond :math:`2^{53}` a count :math:`C` and the
  start :math:`C + 1` of the next panel are one float).

Every chunk of point masses is centred on its group's own mean and merged into the group's
moments by the parallel formula (nonnegative terms), in the single group's order of chunks; the
mean of :math:`M` keeps its offsets from a half-integer. A group's sums are pairwise, as the
single group's (:class:`_GroupSums`): the moments agree with
:func:`~rankstats.null.median_small.small_moments` to a few units in the last place (1.6e-15
relative at most over eight count shapes and every size served;
``tests/test_median_small_groups.py``).
A group whose masses span more than :data:`~rankstats.null.median_small._SPAN_MAX` binary
orders (met by no input tried) is summed alone by
:func:`~rankstats.null.median_small.small_moments`.

Cost (2026-11-27, this machine, CPU time, 300 groups of each shape, the integer rules' cache
emptied before each): an odd group of 5 tasks 0.34 -> 0.12 ms at counts near 14,000, 0.56 ->
0.21 ms at counts up to :math:`10^{12}`; groups of tiny counts (30-45) 0.7-1.1 -> 0.02-0.26 ms
(5 to 40 tasks); an even group of 10 to 40 tasks at counts near 14,000 or up to :math:`10^{12}`
runs 0.9 to 1.4 times as fast as a call (1.6-2.2 ms for ten tasks, 7-10.5 ms for 40), after the
rule in :math:`u` within a panel went from 16 to 12 nodes up to 16 tasks
(:func:`~rankstats.null.median_small.inner_nodes`: 20% of the grouped time, 2-3% of a call's):
there the point masses at each pair of nodes within a panel (about 5,800 per group of ten tasks,
7,500 with 16 nodes), the same work either way, are most of the time.
``benchmarks/bench_groups.py``: 1,000 groups of about ten tasks, 0.63-0.67 s against 1.15-1.20 s
a call per group. The blocks bound the memory: about 10 MB for 128 groups of 40 tasks at counts
up to :math:`10^{12}`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from rankstats.arrays import BoolArray, FloatArray, IntArray
from rankstats.null.median_rules import _piece_nodes, _suffix_sum
from rankstats.null.median_small import (
    _SPAN_MAX,
    EVEN_N,
    EVEN_N_VALID,
    SMALL_N,
    _clip,
    _in_panel_order,
    _product,
    _Side,
    _Tasks,
    gram_nodes,
    inner_nodes,
    panel_ladder,
    panel_pair_nodes,
    panels_with_pairs,
    small_moments,
)
from rankstats.null.median_tails import (
    _LOG_EPS,
    INVERSE_TAIL,
    _log_tail_bounds,
    dyadic_points,
    inverse_tail,
    inverse_tail_table,
)

__all__ = ["grouped_median_moments", "grouped_small_moments"]

#: groups summed together: at most this many, of at most about _BLOCK_NODES nodes in all (the
#: node arrays of a block are fresh memory; larger blocks are slower)
_GROUPS_PER_BLOCK = 64
_BLOCK_NODES = 65_536
#: entries of the (nodes v x nodes u) kernel of the pairs of distinct panels formed at a time
_KERNEL_ENTRIES = 1 << 17
#: entries of the (nodes x tasks) arrays of the point masses evaluated at a time (bounded memory;
#: larger arrays are fresh pages, faulted in one by one)
_NODE_ENTRIES = 1 << 17
#: panels whose pairs within are formed at a time (at most 32 x 32 pairs each)
_PANELS_PER_BLOCK = 64


def grouped_median_moments(
    counts: IntArray, multiplicity: IntArray, owner: IntArray, size: int
) -> tuple[FloatArray, BoolArray]:
    r"""The median's and the inverse median's null moments of every group of a few tasks.

    Parameters
    ----------
    counts, multiplicity, owner : numpy.ndarray of shape (rows,)
        Rows of candidate counts: each row's count (int64), its number of tasks and its group
        (int64 in ``0..size - 1``).
    size : int
        The number of groups.

    Returns
    -------
    moments : numpy.ndarray of shape (size, 4)
        :math:`\mathbb{E}[M], \mathbb{V}[M], \mathbb{E}[1/M], \mathbb{V}[1/M]` of each group
        of 3 to :data:`~rankstats.null.median_small.SMALL_N` tasks or of an even number up to
        :data:`~rankstats.null.median_small.EVEN_N` (NaN in the others): the groups
        :func:`~rankstats.null.median_small.small_moments` serves.
    done : numpy.ndarray of shape (size,)
        The groups computed here; the others (fewer or more tasks) are left to a call each.
    """
    tasks = np.bincount(owner, weights=multiplicity, minlength=size).astype(np.int64)
    out = np.full((size, 4), math.nan)
    done = (tasks >= 3) & ((tasks <= SMALL_N) | ((tasks % 2 == 0) & (tasks <= EVEN_N)))
    keep = done[owner]
    times = multiplicity[keep].astype(np.int64)
    each = np.repeat(counts[keep], times)
    group = np.repeat(owner[keep], times)
    order = np.argsort(group, kind="stable")
    each, group = each[order], group[order]
    first = np.searchsorted(group, np.arange(size), side="left")
    for n in np.unique(tasks[done]).tolist():
        chosen = np.flatnonzero(tasks == n)
        rows = each[first[chosen][:, None] + np.arange(n)[None, :]]
        out[chosen] = grouped_small_moments(rows)
    return out, done


def grouped_small_moments(counts: IntArray) -> FloatArray:
    r"""E and V of the median and of its inverse for many groups of :math:`n` tasks each.

    Parameters
    ----------
    counts : numpy.ndarray of shape (groups, n)
        Each row the candidate counts of one group's tasks (int64, at least 1), in any order,
        :math:`3 \le n \le` :data:`~rankstats.null.median_small.SMALL_N`, or :math:`n` even
        up to :data:`~rankstats.null.median_small.EVEN_N_VALID` (where the sums hold;
        :func:`grouped_median_moments` sends only those up to
        :data:`~rankstats.null.median_small.EVEN_N` here).

    Returns
    -------
    numpy.ndarray of shape (groups, 4)
        Each group's :math:`\mathbb{E}[M], \mathbb{V}[M], \mathbb{E}[1/M], \mathbb{V}[1/M]`, as
        :func:`~rankstats.null.median_small.small_moments` gives them.

    Examples
    --------
    >>> import numpy as np
    >>> found = grouped_small_moments(np.array([[1, 2, 3, 5], [3, 7, 2, 9]]))
    >>> [round(float(value), 12) for value in found[0, :2]]
    [1.6, 0.223333333333]
    """
    counts = np.sort(np.asarray(counts, dtype=np.int64), axis=1)
    size, n = counts.shape
    if not (3 <= n <= SMALL_N or (n % 2 == 0 and 3 <= n <= EVEN_N_VALID)):
        raise ValueError(
            f"counts: expected rows of 3 to {SMALL_N} tasks or an even number up to "
            f"{EVEN_N_VALID}, got {n}"
        )
    out = np.empty((size, 4))
    trivial = counts[:, -1] == 1  # every rank is 1
    out[trivial] = (1.0, 0.0, 1.0, 0.0)
    rest = np.flatnonzero(~trivial)
    for part in _blocks(counts[rest], n) if rest.size else []:
        part = rest[part]
        found, alone = _block(counts[part])
        out[part] = found
        for g in part[alone].tolist():
            out[g] = small_moments(counts[g])
    return out


def _blocks(counts: IntArray, n: int) -> list[IntArray]:
    """Consecutive groups (rows of sorted counts) in blocks of about :data:`_BLOCK_NODES` nodes.

    A group's panels are at most its counts and the ladder's steps below its largest count (one
    more where a window clips them), each of :func:`~rankstats.null.median_small.gram_nodes`
    nodes; a block also takes at most :data:`_GROUPS_PER_BLOCK` groups.
    """
    ladder = panel_ladder(n, int(counts[:, -1].max()))
    steps = np.searchsorted(ladder, counts[:, -1], side="right")
    nodes = (n + 2 + steps) * gram_nodes(n)
    budget = (np.cumsum(nodes) - nodes) // _BLOCK_NODES
    first = np.flatnonzero(np.diff(budget, prepend=-1))
    start = np.repeat(first, np.diff(np.append(first, budget.size)))
    key = budget * (budget.size + 1) + (np.arange(budget.size) - start) // _GROUPS_PER_BLOCK
    cuts = np.flatnonzero(np.diff(key)) + 1
    return np.split(np.arange(counts.shape[0]), cuts)


def _block(counts: IntArray) -> tuple[FloatArray, BoolArray]:
    """The moments of some groups (sorted rows), and the groups to be summed alone instead."""
    size, n = counts.shape
    tasks = _Tasks(counts)
    top = counts[:, -1]
    nu = gram_nodes(n)
    moments = _GroupCentred(size)
    alone = np.zeros(size, dtype=bool)
    if n % 2:
        half = (n + 1) // 2
        lo, hi = _windows(tasks.c, half, top)
        starts, lengths, owner = _panels(counts, lo, hi)
        x, w, piece = _piece_nodes(starts, lengths, nu=nu)
        rows = owner[piece]
        moments.add(rows, w * _chunked(tasks.window_mass, n, x, half - 1, half, rows), x)
        return moments.result(), alone | (moments.total == 0.0)
    a = n // 2
    lo_a, hi_a = _windows(tasks.c, a, top)
    lo_b, hi_b = _windows(tasks.c, a + 1, top)
    hi_b = np.maximum(hi_b, hi_a)
    starts, lengths, owner = _panels(counts, lo_a, hi_b)
    # the lower middle rank lives in lo_a..hi_a, the upper one in lo_b..hi_b (to 1e-24)
    u_s, u_l, u_id = _clip(starts, lengths, lo_a[owner], hi_a[owner])
    v_s, v_l, v_id = _clip(starts, lengths, lo_b[owner], hi_b[owner])
    x_u, w_u, o_u = _piece_nodes(u_s, u_l, nu=nu)
    x_v, w_v, o_v = _piece_nodes(v_s, v_l, nu=nu)
    panel_u, panel_v = u_id[o_u], v_id[o_v]
    f = _chunked(tasks.lower_factor, n, x_u, a, owner[panel_u])
    g = _chunked(tasks.upper_factor, n, x_v, a, owner[panel_v])
    alone |= _cross_pairs(moments, (x_u, w_u, f, panel_u), (x_v, w_v, g, panel_v), owner, size)
    t_s, t_l, t_id = _clip(starts, lengths, lo_b[owner], hi_a[owner])
    if t_s.size:
        x_t, w_t, o_t = _piece_nodes(t_s, t_l, nu=nu)
        rows = owner[t_id[o_t]]
        moments.add(rows, w_t * _chunked(tasks.window_mass, n, x_t, a - 1, a + 1, rows), x_t)
    # pairs within one panel that meets both ranges (as small_moments)
    both = panels_with_pairs(u_id, v_id, lengths)
    for b0 in range(0, both.size, _PANELS_PER_BLOCK):
        part = both[b0 : b0 + _PANELS_PER_BLOCK]
        _panel_pairs(moments, tasks, (a, inner_nodes(n)), (starts, lengths, owner), part, counts)
    return moments.result(), alone | (moments.total == 0.0)


def _panel_pairs(
    moments: _GroupCentred,
    tasks: _Tasks,
    rank_and_nodes: tuple[int, int],
    panels: tuple[IntArray, IntArray, IntArray],
    part: IntArray,
    counts: IntArray,
) -> None:
    r"""Add the pairs :math:`u < v` within each of the panels ``part`` (of any groups).

    As :func:`~rankstats.null.median_small.small_moments`: a rule in :math:`v` on integer nodes,
    and below each node :math:`v` a Gram rule in :math:`u` on the panel's ``s..v - 1`` (at most
    :math:`2\nu` nodes). Each node :math:`v`'s pairs are first reduced to their mass, means and
    centred sums of squares (rows of a padded array, pairwise), then merged into their groups.
    Every node of a panel has the same counts below it (panels start at every count plus one).
    ``rank_and_nodes`` is the lower middle rank and the Gram nodes of the rule in :math:`u`
    (:func:`~rankstats.null.median_small.inner_nodes`), ``panels`` every
    panel's start, length and group, ``counts`` each group's sorted counts (integers).
    """
    a, nu = rank_and_nodes
    starts, lengths, owner = panels
    v, w_v, per_panel, u, w_u, own = panel_pair_nodes(starts, lengths, part, nu)
    v_rows = np.repeat(owner[part], per_panel)
    # (in integers: beyond 2**53 a count C and the start C + 1 of the panel after it are one
    # float, and the float comparison would leave C out of the counts below the panel)
    below = (counts[owner[part]] < starts[part][:, None]).sum(axis=1)
    pair = _product(
        _chunked(tasks.lower_factor, tasks.n, u, a, v_rows[own], np.repeat(below, per_panel)[own]),
        _chunked(tasks.upper_factor, tasks.n, v, a, v_rows),
        np.arange(u.size),
        own,
    )
    # each node v's pairs in a row (own comes in runs: the enumerated pieces, then the Gram ones)
    change = np.ones(own.size, dtype=bool)
    change[1:] = own[1:] != own[:-1]
    run_start = np.flatnonzero(change)
    place = np.arange(own.size) - run_start[np.cumsum(change) - 1]
    width = int(place.max()) + 1
    mass = np.zeros((v.size, width))
    values = np.ones((v.size, width))
    mass[own, place] = w_v[own] * w_u * pair
    values[own, place] = 0.5 * (u + v[own])
    total = mass.sum(axis=1)
    # (a node without mass adds nothing; the integer rules' weights may be negative)
    safe = np.where(total != 0.0, total, 1.0)
    stats: list[tuple[FloatArray, FloatArray]] = []
    for m in (values, 1.0 / values):
        mean = (mass * m).sum(axis=1) / safe
        dev = m - mean[:, None]
        stats.append((mean, (mass * (dev * dev)).sum(axis=1)))
    moments.add_moments(v_rows, total, stats[0], stats[1])


def _chunked(method: Callable[..., Any], n: int, x: FloatArray, *args: Any) -> Any:
    """``method(x, *args)`` on a few nodes at a time (the arrays after ``x`` are per node).

    The point masses' arrays are (nodes x tasks): at most :data:`_NODE_ENTRIES` entries each.
    Returns the parts joined, an array or a (mantissa, exponent) pair as ``method`` gives.
    """
    step = max(1, _NODE_ENTRIES // n)
    if x.size <= step:
        return method(x, *args)
    parts = [
        method(
            x[i : i + step],
            *(arg[i : i + step] if isinstance(arg, np.ndarray) else arg for arg in args),
        )
        for i in range(0, x.size, step)
    ]
    if isinstance(parts[0], tuple):
        return tuple(np.concatenate(column) for column in zip(*parts, strict=True))
    return np.concatenate(parts)


def _windows(c: FloatArray, k: int, top: IntArray) -> tuple[IntArray, IntArray]:
    r"""Each group's window of :math:`X_{(k)}`.

    As :meth:`~rankstats.null.median_tails._Candidates.window`: one bisection for all groups,
    as the single group's, clipped as
    :func:`~rankstats.null.median_small.small_moments` clips it (to :math:`1..\max C`).
    """
    counts = _Counts(c, 1.0 / c)
    # the upper end: the least x where N_x >= k is unlikely to fail (at most the k-th count)
    kth = c[:, k - 1].astype(np.int64)
    upper = _bisect(
        np.zeros_like(kth),
        kth,
        lambda x: _log_bounds(counts, k, x.astype(np.float64), True) <= _LOG_EPS,
        True,
    )
    # the lower end: the largest x where N_x >= k is unlikely ...
    lo = _bisect(
        np.zeros_like(kth),
        c[:, -1].astype(np.int64),
        lambda x: _log_bounds(counts, k, x.astype(np.float64), False) <= _LOG_EPS,
        False,
    )
    # ... and the inverse median's sums lose little below it (inverse_tail): where they would,
    # bisect again below, with both conditions (groups whose window starts at 1 need nothing)
    rest = np.flatnonzero(lo >= 1)
    if rest.size:
        lo[rest] = _inverse_lower_end(counts.take(rest), k, lo[rest])
    return np.maximum(lo + 1, 1), np.maximum(np.minimum(upper, top), 1)


class _Counts(NamedTuple):
    """The groups' counts, one row each, and their reciprocals (for :func:`_log_bounds`)."""

    c: FloatArray
    inv: FloatArray

    def take(self, rows: IntArray) -> _Counts:
        return _Counts(self.c[rows], self.inv[rows])


def _log_bounds(counts: _Counts, k: int, x: FloatArray, upper_tail: bool) -> FloatArray:
    r"""Log of Bennett's bound on each group's :math:`P(N_x \le k - 1)` or :math:`P(N_x \ge k)`.

    (``upper_tail`` the first.) ``x`` holds one point per group.
    """
    c, inv1 = counts
    above = c > x[:, None]
    p1 = x * np.where(above, inv1, 0.0).sum(axis=1)
    mu = (c.shape[1] - above.sum(axis=1)) + p1
    var = np.maximum(p1 - x * x * np.where(above, inv1 * inv1, 0.0).sum(axis=1), 0.0)
    tau = mu - float(k - 1) if upper_tail else k - mu
    return _log_tail_bounds(tau, var)


def _inverse_lower_end(counts: _Counts, k: int, lo: IntArray) -> IntArray:
    """The lower ends ``lo`` (each at least 1) moved down where :func:`inverse_tail` needs it.

    As :meth:`~rankstats.null.median_tails._Candidates.window` does for one group.
    """
    groups, tasks = counts.c.shape
    points = dyadic_points(float(lo.max()))
    at_points = np.stack(
        [_log_bounds(counts, k, np.full(groups, point), False) for point in points.tolist()],
        axis=1,
    )
    table = inverse_tail_table(at_points, tasks, counts.c[:, k - 1])
    kept = _lower_holds(counts, k, table, lo)
    if bool(kept.all()):
        return lo
    out: IntArray = lo.copy()
    moved = np.flatnonzero(~kept)
    part, part_table = counts.take(moved), (table[0][moved], table[1][moved])
    out[moved] = _bisect(
        np.zeros(moved.size, dtype=np.int64),
        lo[moved],
        lambda x: _lower_holds(part, k, part_table, x),
        False,
    )
    return out


def _lower_holds(
    counts: _Counts, k: int, table: tuple[FloatArray, FloatArray], x: IntArray
) -> BoolArray:
    """Whether each group's tail at ``x`` and what the inverse median loses below are small."""
    xf = np.maximum(x.astype(np.float64), 1.0)  # below 1 the tail is 0
    log_tail = _log_bounds(counts, k, xf, False)
    return (log_tail <= _LOG_EPS) & (inverse_tail(table, xf, log_tail) <= INVERSE_TAIL)


def _bisect(
    lo: IntArray, hi: IntArray, holds: Callable[[IntArray], BoolArray], keep_high: bool
) -> IntArray:
    """Bisect every range ``lo..hi`` at once until ``hi - lo <= 1``.

    Where ``holds`` at the midpoint, it becomes the new ``hi`` (``keep_high``) or the new
    ``lo``; elsewhere the other end. Returns ``hi`` (``keep_high``) or ``lo``.
    """
    while True:
        live = hi - lo > 1
        if not live.any():
            return hi if keep_high else lo
        mid = (lo + hi) // 2
        found = holds(mid)
        moves_high = found if keep_high else ~found
        hi = np.where(live & moves_high, mid, hi)
        lo = np.where(live & ~moves_high, mid, lo)


def _panels(counts: IntArray, lo: IntArray, hi: IntArray) -> tuple[IntArray, IntArray, IntArray]:
    """Every group's panels of ``lo..hi`` (:func:`~rankstats.null.median_small._panels`).

    Starts, lengths and the group of each, group by group and ascending within each: the
    distinct entries of each row of the sorted (groups x breaks) array, a break outside a
    group's ``lo + 1..hi`` replaced by ``hi + 1`` (the end of its last panel).
    """
    hi = np.maximum(hi, lo - 1)  # an empty window: no panel
    end = (hi + 1)[:, None]
    ladder = panel_ladder(counts.shape[1], int(hi.max()))
    breaks = np.concatenate(
        (counts + 1, np.broadcast_to(ladder, (counts.shape[0], ladder.size))), axis=1
    )
    breaks = np.where((breaks > lo[:, None]) & (breaks <= hi[:, None]), breaks, end)
    edges = np.sort(np.concatenate((lo[:, None], breaks, end), axis=1), axis=1)
    new = np.ones(edges.shape, dtype=bool)
    new[:, 1:] = edges[:, 1:] != edges[:, :-1]
    rows = np.broadcast_to(np.arange(edges.shape[0])[:, None], edges.shape)[new]
    flat = edges[new]
    last = flat == (hi + 1)[rows]
    following = np.empty_like(flat)
    following[:-1] = flat[1:]
    following[-1:] = flat[-1:]
    keep = ~last
    return flat[keep], (following - flat)[keep], rows[keep]


def _cross_pairs(
    moments: _GroupCentred, lower: _Side, upper: _Side, owner: IntArray, size: int
) -> BoolArray:
    r"""Add every group's pairs of nodes in distinct panels.

    As :func:`~rankstats.null.median_small._cross_pairs`: the nodes of each side, taken in
    panel order (panels are numbered group by group), are each group's in turn; the masses of
    :math:`u` are scaled by their group's largest exponent.
    Returns the groups whose masses span more than
    :data:`~rankstats.null.median_small._SPAN_MAX` binary orders on either side: they are left
    out here (to be summed alone).
    """
    (x_u, panel_u, a), (x_v, panel_v, b) = _in_panel_order(lower, upper)
    group_u, group_v = owner[panel_u], owner[panel_v]
    a_mant, a_expo = _normalised(*a, group_u, size)
    b_mant, b_expo = _normalised(*b, group_v, size)
    too_wide = (_span(a_expo, group_u, size) > _SPAN_MAX) | (
        _span(b_expo, group_v, size) > _SPAN_MAX
    )
    has_u = np.bincount(group_u, minlength=size) > 0
    shift = np.full(size, np.iinfo(np.int64).min)
    np.maximum.at(shift, group_u, a_expo)
    shift = np.where(has_u, shift, 0)
    keep_v = ~too_wide[group_v] & has_u[group_v]
    a = np.ldexp(a_mant, a_expo - shift[group_u])
    # each group's u nodes: their first index, and each node's place in its group
    first_u = np.searchsorted(group_u, np.arange(size + 1), side="left")
    place = np.arange(group_u.size) - first_u[group_u]
    width = int(place.max()) + 1 if place.size else 1
    padded_a = np.zeros((size, width))
    padded_x = np.ones((size, width))
    padded_a[group_u, place] = a
    padded_x[group_u, place] = x_u
    # the prefix sums of a and a x in each group (compensated, nonnegative terms)
    prefix = _suffix_sum(padded_a[:, ::-1].copy())[:, ::-1]
    prefix_ax = _suffix_sum((padded_a * padded_x)[:, ::-1].copy())[:, ::-1]
    # each v node's cut: the u nodes of its group below its panel
    cut = np.searchsorted(panel_u, panel_v, side="left") - first_u[group_v]
    group_v, x_v, b_mant, b_expo, cut = (
        group_v[keep_v],
        x_v[keep_v],
        b_mant[keep_v],
        b_expo[keep_v] + shift[group_v[keep_v]],
        cut[keep_v],
    )
    p = prefix[group_v, cut]
    live = p > 0.0
    group_v, x_v, b_mant, b_expo, cut, p = (
        group_v[live],
        x_v[live],
        b_mant[live],
        b_expo[live],
        cut[live],
        p[live],
    )
    mass = np.ldexp(b_mant * p, b_expo)
    x_mean = prefix_ax[group_v, cut] / p
    x_m2, inv_mean, inv_sq = _kernel_sums(padded_a, padded_x, group_v, x_v, cut, x_mean, p)
    m_mean = 0.5 * (x_mean + x_v)
    m_m2 = 0.25 * mass * x_m2
    inv_m2 = np.ldexp(b_mant * inv_sq, b_expo)
    moments.add_moments(group_v, mass, (m_mean, m_m2), (inv_mean, inv_m2))
    return too_wide


def _kernel_sums(
    a: FloatArray,
    x: FloatArray,
    group_v: IntArray,
    y: FloatArray,
    cut: IntArray,
    x_mean: FloatArray,
    prefix: FloatArray,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    r"""Per node :math:`v`: prefix moments of :math:`x` and of the kernel :math:`2/(x + y)`.

    The prefix's centred second moment of :math:`x` (normalised), and the mean and the centred
    sum of squares (not normalised) of the kernel over it. ``a`` and ``x`` are each group's
    masses and nodes :math:`u` in a row, padded to one width (zero masses). The nodes :math:`v`
    go a range of whole groups at a time, or a part of one group's, each range padded to its
    largest counts of nodes and at most about :data:`_KERNEL_ENTRIES` entries (bounded memory,
    whatever a group's nodes); nonnegative terms. The prefixes' moments of :math:`x` come once
    per distinct (group, prefix).
    """
    inv_mean = np.empty(y.size)
    inv_sq = np.empty(y.size)
    first_v = np.flatnonzero(np.diff(group_v, prepend=-1))
    place = np.arange(y.size) - np.repeat(first_v, np.diff(np.append(first_v, y.size)))
    for lo, hi in _kernel_ranges(group_v, cut, first_v):
        g0 = int(group_v[lo])
        rows = group_v[lo:hi] - g0
        spots = place[lo:hi] - place[lo]  # a range is whole groups, or a part of one
        reach = int(cut[lo:hi].max())
        # (groups, nodes v, nodes u), each node v's row masked to its prefix
        shape = (int(rows[-1]) + 1, int(spots.max()) + 1)
        y_pad, c_pad = np.ones(shape), np.zeros(shape, dtype=np.int64)
        y_pad[rows, spots] = y[lo:hi]
        c_pad[rows, spots] = cut[lo:hi]
        weights = a[g0 : g0 + shape[0], :reach]
        valid = np.arange(reach)[None, None, :] < c_pad[:, :, None]
        kernel = x[g0 : g0 + shape[0], None, :reach] + y_pad[:, :, None]
        np.divide(2.0, kernel, out=kernel)
        kernel *= valid
        means = np.einsum("gvu,gu->gv", kernel, weights)[rows, spots] / prefix[lo:hi]
        inv_mean[lo:hi] = means
        y_pad[rows, spots] = means  # each node's mean, in place of its node
        kernel -= y_pad[:, :, None]
        np.square(kernel, out=kernel)
        kernel *= valid
        inv_sq[lo:hi] = np.einsum("gvu,gu->gv", kernel, weights)[rows, spots]
    reach = max(int(cut.max(initial=0)), 1)
    step = max(1, _KERNEL_ENTRIES // reach)
    columns = np.arange(reach)
    # the prefixes' centred second moments of x, once per distinct (group, cut): the nodes v of
    # a panel share theirs
    key = group_v * (reach + 1) + cut
    distinct, at, back = np.unique(key, return_index=True, return_inverse=True)
    d_rows, d_cut = distinct // (reach + 1), distinct % (reach + 1)
    d_m2 = np.empty(distinct.size)
    for lo in range(0, distinct.size, step):
        part = slice(lo, lo + step)
        rows = d_rows[part]
        dev = x[rows, :reach] - x_mean[at[part], None]
        dev *= dev
        d_m2[part] = np.einsum(
            "ij,ij->i", dev, np.where(columns[None, :] < d_cut[part, None], a[rows, :reach], 0.0)
        )
    x_m2 = d_m2[back]
    x_m2 /= prefix
    return x_m2, inv_mean, inv_sq


def _kernel_ranges(group_v: IntArray, cut: IntArray, first_v: IntArray) -> list[tuple[int, int]]:
    """Ranges of the nodes v (group by group) for the padded kernels.

    Each of at most about :data:`_KERNEL_ENTRIES` entries: runs of whole groups, or parts of
    one group's nodes.
    """
    if not first_v.size:
        return []
    ends = np.append(first_v[1:], group_v.size)
    reach = np.maximum.reduceat(cut, first_v)
    out: list[tuple[int, int]] = []
    start, depth, width = -1, 0, 0
    for lo, hi, r in zip(first_v.tolist(), ends.tolist(), reach.tolist(), strict=True):
        r = max(r, 1)
        if (hi - lo) * r > _KERNEL_ENTRIES:  # one group alone, its nodes a part at a time
            if start >= 0:
                out.append((start, lo))
                start = -1
            step = max(1, _KERNEL_ENTRIES // r)
            out += [(i, min(i + step, hi)) for i in range(lo, hi, step)]
            continue
        new_depth, new_width = max(depth, hi - lo), max(width, r)
        count = 1 if start < 0 else int(group_v[lo] - group_v[start]) + 1
        if start >= 0 and count * new_depth * new_width > _KERNEL_ENTRIES:
            out.append((start, lo))
            start = -1
        if start < 0:
            start, depth, width = lo, hi - lo, r
        else:
            depth, width = new_depth, new_width
    if start >= 0:
        out.append((start, group_v.size))
    return out


def _normalised(
    mant: FloatArray, expo: IntArray, group: IntArray, size: int
) -> tuple[FloatArray, IntArray]:
    """:func:`~rankstats.null.median_small._normalised` in each group.

    A zero takes the least exponent of its group's live values.
    """
    mant, carry = np.frexp(mant)
    expo = expo + carry
    live = mant > 0.0
    if not live.all():
        least = np.full(size, np.iinfo(np.int64).max)
        np.minimum.at(least, group[live], expo[live])
        dead = np.flatnonzero(~live & (least[group] != np.iinfo(np.int64).max))
        expo[dead] = least[group[dead]]
    return mant, expo


def _span(expo: IntArray, group: IntArray, size: int) -> IntArray:
    """How many binary orders each group's values span (0 for a group without values)."""
    high = np.full(size, np.iinfo(np.int64).min)
    low = np.full(size, np.iinfo(np.int64).max)
    np.maximum.at(high, group, expo)
    np.minimum.at(low, group, expo)
    return np.where(high >= low, high - low, 0)


class _GroupCentred:
    r"""Each group's mass, mean and centred second moment of :math:`m` and :math:`1/m`.

    :class:`~rankstats.null.median_small._Centred` for many groups: each chunk of point masses
    is centred on each group's own mean and merged into the group's moments by the parallel
    formula (nonnegative terms); the mean of :math:`m` keeps each chunk's offsets from a
    half-integer.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self.total = np.zeros(size)
        self.stats = np.zeros((4, size))  # mean, M2 of m; mean, M2 of 1/m
        self.chunks: list[tuple[IntArray, FloatArray, FloatArray, FloatArray]] = []

    def add(self, group: IntArray, p: FloatArray, m: FloatArray) -> None:
        """Add the point masses ``p`` at the values ``m`` (positive) of each one's group."""
        self.add_moments(group, p, (m, None), (1.0 / m, None))

    def add_moments(
        self,
        group: IntArray,
        mass: FloatArray,
        values: tuple[FloatArray, FloatArray | None],
        inverse: tuple[FloatArray, FloatArray | None],
    ) -> None:
        """Add parts of masses ``mass`` with means (and centred sums of squares) of m and 1/m.

        Each group's sums are pairwise (:class:`_GroupSums`), as the single group's.
        """
        sums = _GroupSums(group, self.size)
        total, first, second = sums(mass, mass * values[0], mass * inverse[0])
        live = total != 0.0  # (as the single group's: a part's rule weights may be negative)
        safe = np.where(live, total, 1.0)
        stats = []
        for means, m2s, summed in ((*values, first), (*inverse, second)):
            mean = summed / safe
            spread = means - mean[group]
            parts = [mass * (spread * spread)] + ([] if m2s is None else [m2s])
            stats += [mean, np.sum(sums(*parts), axis=0)]
        guess = np.round(2.0 * stats[0]) / 2.0
        (offset,) = sums(mass * (values[0] - guess[group]))
        idx = np.flatnonzero(live)
        t, before = total[idx], self.total[idx]
        merged = before + t
        for k in range(2):
            delta = stats[2 * k][idx] - self.stats[2 * k, idx]
            self.stats[2 * k, idx] += delta * t / merged
            self.stats[2 * k + 1, idx] += (
                stats[2 * k + 1][idx] + delta * delta * before * t / merged
            )
        self.chunks.append((idx, t, guess[idx], offset[idx]))
        self.total[idx] = merged

    def result(self) -> FloatArray:
        r"""Each group's :math:`\mathbb{E}[M], \mathbb{V}[M], \mathbb{E}[1/M], \mathbb{V}[1/M]`."""
        out = np.full((self.size, 4), math.nan)
        live = self.total > 0.0
        guess = np.round(2.0 * self.stats[0]) / 2.0
        shift = np.zeros(self.size)
        for idx, t, g, d in self.chunks:
            shift[idx] += (g - guess[idx]) * t + d
        total = np.where(live, self.total, 1.0)
        out[:, 0] = guess + shift / total
        out[:, 1] = self.stats[1] / total
        out[:, 2] = self.stats[2]
        out[:, 3] = self.stats[3] / total
        out[~live] = math.nan
        return out


class _GroupSums:
    """Sums of values by group, pairwise within each group.

    The entries are sorted by group (where they are not already) and each group's run is summed
    by :func:`numpy.add.reduceat`, whose additions within a run are pairwise as
    :func:`numpy.sum`'s (as :meth:`rankstats.evaluation.group_sums.GroupSums._sum` sums long
    groups): a group's rounding error grows with the logarithm of its entries, not with their
    number.
    """

    def __init__(self, group: IntArray, size: int) -> None:
        self.size = size
        self.order: IntArray | None = None
        if group.size and bool((group[1:] < group[:-1]).any()):
            self.order = np.argsort(group, kind="stable")
            group = group[self.order]
        self.starts = np.flatnonzero(np.diff(group, prepend=-1))
        self.present = group[self.starts]

    def __call__(self, *values: FloatArray) -> list[FloatArray]:
        out = np.zeros((len(values), self.size))
        if self.starts.size:
            for row, v in zip(out, values, strict=True):
                ordered = v if self.order is None else v[self.order]
                row[self.present] = np.add.reduceat(ordered, self.starts)
        return list(out)
