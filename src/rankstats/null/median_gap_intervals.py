r"""The gap sums at non-integer nodes, from inner sums interpolated between the counts.

The double sums of :mod:`rankstats.null.median_gap` weigh, at each node :math:`y` of a sum
over the window, the inner sums

.. math::

    S_j(y) = \sum_{1 \le x < y} \kappa(x, y)\, \varphi_j(x + y), \qquad
    \kappa(x, y) = \alpha(x) / \alpha(y),

over the integers :math:`x`. The single sums' nodes come from discrete Gauss (Gram) rules on
panels cut at the counts, and are not integers. Where a count lies within the kernel's reach
below a node, the continuation that :mod:`~rankstats.null.median_gap` uses for such nodes (the
sum over integer shifts :math:`t = y - x`) has a kink at every integer :math:`y`, as
:math:`y - t` crosses the count; until 2026-11-28 such inputs took every sum at integer nodes
(the tails and point masses at two to three times as many nodes, and the kernel sums at each).

Derivation
----------
The continuation in :math:`x` is smooth instead. Let :math:`C_- \le y \le C_+` for consecutive
distinct counts. On the integers of :math:`[C_-, C_+]`, :math:`S_j` is the restriction of one
analytic function of :math:`y`:

* :math:`\alpha(y) = y^{p} / \prod_{C_i > C_-} C_i` there, :math:`p = a - c(C_-)` (and at
  :math:`y = C_+` both sides' forms agree);
* the part of the sum over :math:`x` below :math:`C_-` is a sum, over a fixed set of :math:`x`,
  of :math:`\alpha(x) \varphi_j(x + y)`, analytic in :math:`y > -x`;
* the part over :math:`C_- \le x < y` is a sum of :math:`x^p \varphi_j(x + y)` up to a moving
  limit, whose Euler-Maclaurin continuation in that limit is analytic (the summand is a
  polynomial times a rational function with its poles at :math:`x = -y - \{0, 1, 2\}`).

Its singularities lie at :math:`y \le 0`: the poles of :math:`\varphi_j`, and a pole of order
:math:`p` at 0 from :math:`1 / \alpha(y)` in the terms with :math:`x` at or below :math:`C_-`,
whose weight relative to :math:`S_j` is about :math:`\kappa(C_-, y)` (at most :math:`e^{-c}`,
:math:`c` the kernel's cut, where no count is below).

Error bound
-----------
A function analytic but at :math:`y \le 0`, interpolated on :math:`[l, h]` (centre :math:`c`,
half-width :math:`r`) through :math:`\nu` points near its Chebyshev points, has an error of
order :math:`\rho^{-\nu}`, :math:`\rho = c / r + \sqrt{(c / r)^2 - 1}` (the Bernstein ellipse
through 0); the pole of order :math:`p` adds about :math:`4 \kappa \binom{p + \nu}{\nu}
(r / 2c)^\nu` (measured on :math:`(c / y)^p`: within a factor 4). The points are the fewest
with both below :math:`10^{-16}`, plus one, at most :data:`NU_MAX`: the integers nearest the
Chebyshev points of the second kind, pushed apart where they collide; a range narrower than
twice its points is widened within its interval between counts.

The nodes of each interval between counts are grouped by the rungs of a geometric ladder
(ratio :data:`LADDER`, so no cell is wide against its distance from 0), one interpolant per
group; a group the bound does not allow is halved while it spans :data:`SPLIT_MIN` integers.
The nodes left (next to a count, where the kernel varies within a few integers) cannot be
interpolated: :func:`plan_points` finds them before any point mass is evaluated, and their
panels take every integer instead; it also counts the points, so that the caller can take
integer nodes instead where they are fewer. The sums at the points are exact (every pair, from the
table of running sums, or the panels' rules in :math:`x` where they are cheaper), and a node
that is an integer takes its own.

Check: each interpolant is compared with the exact sum at one more integer (in the widest gap
between its points), within :data:`CHECK_TOLERANCE` of that weight's largest inner sum (the
exact sums' own rounding, about :math:`10^{-15}` of their terms, is the floor; the weight
that changes sign cancels near its zero). Otherwise, or past the pair budget, ``None``: the
caller sums at integer nodes as before. Measured against the gap sums over every integer of
the window with the input's own point masses (tests): within :math:`10^{-13}`; the moments of
the median and its inverse against the integer nodes' (180 random inputs of 58 to 600 tasks,
counts to :math:`10^{12}`): within :math:`10^{-15}` up to a few hundred tasks, and within the
kernel sums' own cut (:math:`10^{-16} n` relative) beyond: :math:`4 \cdot 10^{-14}` on
:math:`\mathbb{V}[1/M]` at 502 tasks, where finer Gram panels move it as much.

Cost: about ten to twenty exact inner sums per interval between counts that holds a node (one
more for the check), in a few vectorised passes, where the integer nodes took every integer of
panels shorter than 256, and the tails and point masses at those integers besides: 100 tasks
with counts in 1..14505, 41 -> 24 ms; in 1000..2000, 24 -> 13 ms (CPU, best of five).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from rankstats.arrays import FloatArray, IntArray
from rankstats.null.median_rules import dot

__all__ = [
    "CHECK_TOLERANCE",
    "LADDER",
    "NU_MAX",
    "SPLIT_MIN",
    "Cells",
    "fewest_points",
    "interpolated_sums",
    "plan_points",
]

#: the most integer points per interval
NU_MAX = 24
#: a cell no interpolant serves is halved while it spans at least this many integers
SPLIT_MIN = 4 * NU_MAX
#: the interpolant against an exact sum at one more integer, relative to its largest value
CHECK_TOLERANCE = 1e-13
#: the ratio of a geometric ladder's rungs, inside which nodes share one interpolant (its
#: points' range [l, h] within one rung, (l + h) / (h - l) >= 4: rho >= 7.9, about 20 points)
LADDER = 5.0 / 3.0
#: the interpolation error aimed at (relative)
_TARGET_DIGITS = 16.0

#: exact inner sums at integer points: ``(weights, points)``, or ``None`` past a budget
Rows = Callable[[FloatArray], FloatArray | None]
#: the log-weight of the inner sums' pole at 0 in an interpolant whose lowest point is x
Pole = Callable[[FloatArray], FloatArray]


def _points_needed(
    lo: FloatArray, hi: FloatArray, power: FloatArray, log_pole: FloatArray
) -> IntArray:
    r"""The fewest points on each ``[lo, hi]`` for the interpolant's error to be about 1e-16.

    Two bounds (module documentation): :math:`\rho^{-\nu}` for the ellipse through 0, and
    :math:`4 \kappa \binom{p + \nu}{\nu} (r / 2c)^\nu` for the pole of order :math:`p` at 0
    with the weight :math:`\kappa = e^{\text{log\_pole}}` (Chebyshev interpolation of
    :math:`(c / y)^p`, measured: within a factor 4). :data:`NU_MAX` + 1 where no
    :math:`\nu \le` :data:`NU_MAX` meets both.
    """
    centre, radius = 0.5 * (lo + hi), np.maximum(0.5 * (hi - lo), 0.5)
    ratio = centre / radius
    log_rho = np.log10(ratio + np.sqrt(ratio * ratio - 1.0))
    step = np.log10(radius / (2.0 * centre))
    # log10 of 4 kappa binom(p + nu, nu) (r / 2c)^nu for nu = 1..NU_MAX (columns)
    nu = np.arange(1.0, NU_MAX + 1.0)
    log_term = np.cumsum(np.log10((power[:, None] + nu) / nu), axis=1) + step[:, None] * nu
    log_term += (log_pole / math.log(10.0) + math.log10(4.0))[:, None]
    meets = (nu >= 2.0) & (log_rho[:, None] * nu >= _TARGET_DIGITS)
    meets &= log_term <= -_TARGET_DIGITS
    first = np.argmax(meets, axis=1)
    return np.where(meets.any(axis=1), first + 2, NU_MAX + 1).astype(np.int64)


def _widened(
    lo: FloatArray, hi: FloatArray, bounds: FloatArray, power: FloatArray, pole: Pole
) -> tuple[FloatArray, FloatArray, IntArray]:
    """Ranges narrower than twice their points widened within ``bounds`` (up to three times).

    ``bounds`` holds each range's interval between counts (columns: first, last integer).
    Returns the ranges and their point counts.
    """
    nu = _points_needed(lo, hi, power, pole(lo))
    for _ in range(3):
        short = (hi - lo + 1.0 < 2 * nu) & (nu <= NU_MAX)
        if not bool(np.any(short)):
            break
        room = 2.0 * nu - (hi - lo + 1.0)
        new_lo = np.maximum(bounds[:, 0], lo - np.ceil(room / 2.0))
        new_hi = np.minimum(bounds[:, 1], new_lo + 2.0 * nu - 1.0)
        new_lo = np.maximum(bounds[:, 0], np.minimum(new_lo, new_hi - 2.0 * nu + 1.0))
        lo, hi = np.where(short, new_lo, lo), np.where(short, new_hi, hi)
        changed = np.flatnonzero(short)  # the others keep their counts
        nu = nu.copy()
        nu[changed] = _points_needed(lo[changed], hi[changed], power[changed], pole(lo[changed]))
    return lo, hi, nu


def _interval_points(lo: FloatArray, hi: FloatArray, nu: IntArray) -> FloatArray:
    """Per row, ``nu`` distinct integers in ``[lo, hi]`` near its Chebyshev points (2nd kind).

    Rounded, then pushed apart where they collide (each at least one above the one before,
    then at least one below the one after, the last at most ``hi``); NaN beyond ``nu``. Every
    row needs ``hi - lo + 1 >= nu``.
    """
    k = np.arange(NU_MAX, dtype=np.float64)[None, :]
    real = k < nu[:, None]
    last = np.maximum(nu - 1, 1).astype(np.float64)[:, None]
    angle = np.pi * np.minimum(k, last) / last
    near = np.rint(0.5 * (lo + hi)[:, None] - 0.5 * (hi - lo)[:, None] * np.cos(angle))
    near = np.maximum.accumulate(near - k, axis=1) + k
    near = np.minimum(near, hi[:, None] - (last - k))  # room for the points after each one
    near = np.where(real, near, np.inf)
    near = np.minimum.accumulate((near - k)[:, ::-1], axis=1)[:, ::-1] + k
    points: FloatArray = np.where(real, near, np.nan)
    return points


def _cell_keys(interval: IntArray, at: FloatArray) -> IntArray:
    """One key per interval between counts and rung of the ladder (:data:`LADDER`)."""
    rung = np.floor(np.log(at) / math.log(LADDER)).astype(np.int64)
    keys: IntArray = interval * (int(rung.max(initial=0)) + 1) + rung
    return keys


def fewest_points(values: FloatArray, y: FloatArray) -> int:
    """A lower bound of the points :func:`plan_points` counts: four per cell before any halving.

    (At least three points and a check each; cheap, to turn an input away before its plan.)
    """
    at = y[y != np.floor(y)]
    interval = np.searchsorted(values, at, side="right").astype(np.int64)
    return 4 * int(np.unique(_cell_keys(interval, at)).size)


class _Plan(NamedTuple):
    """Interpolants (cells) for non-integer nodes: padded points, a check each, their nodes."""

    #: (cells, NU_MAX) integer points, NaN beyond each cell's own
    points: FloatArray
    #: one more integer per cell, in the widest gap between its points
    probe: FloatArray
    #: the nodes served (indices into the nodes) and the cell of each
    nodes: IntArray
    cell: IntArray
    #: the nodes no cell serves
    failed: IntArray


def _plan(values: FloatArray, y: FloatArray, power: FloatArray, pole: Pole) -> _Plan:
    """The cells of the non-integer nodes ``y``, and the nodes none serves.

    The nodes of each interval between counts are grouped by the rungs of a geometric ladder
    (:data:`LADDER`: no cell is wide against its distance from 0). A group takes one
    interpolant where it can; where not, it is halved (the part nearer the count below is the
    harder one: the kernel's pole weighs most there) while it spans at least
    :data:`SPLIT_MIN` integers, all groups of a round at once. The nodes of a group that cannot
    be served (where the kernel varies within a few integers next to a count) need integer
    nodes.
    """
    loose = np.flatnonzero(y != np.floor(y))
    at = y[loose]
    interval = np.searchsorted(values, at, side="right").astype(np.int64)
    _, group = np.unique(_cell_keys(interval, at), return_inverse=True)
    padded = np.concatenate(([1.0], values, [np.inf]))
    cells_points: list[FloatArray] = []
    cells_probe: list[FloatArray] = []
    served_nodes: list[IntArray] = []
    served_cell: list[IntArray] = []
    failed: list[IntArray] = []
    done = 0
    while loose.size:
        count = int(group.max()) + 1
        lo = np.full(count, np.inf)
        hi = np.full(count, -np.inf)
        np.minimum.at(lo, group, np.floor(at))
        np.maximum.at(hi, group, np.ceil(at))
        first = np.zeros(count, dtype=np.int64)
        first[group[::-1]] = interval[::-1]  # any node's interval: they share one
        bounds = np.column_stack((padded[first], padded[first + 1]))
        group_power = np.full(count, -np.inf)
        np.maximum.at(group_power, group, power[loose])
        w_lo, w_hi, nu = _widened(lo, hi, bounds, group_power, pole)
        ok = (nu <= NU_MAX) & (w_hi - w_lo >= nu)  # room for the points and a check
        points = np.full((count, NU_MAX), np.nan)
        points[ok] = _interval_points(w_lo[ok], w_hi[ok], nu[ok])
        gaps = np.diff(points, axis=1)
        widest = np.argmax(np.where(np.isnan(gaps), -1.0, gaps), axis=1)
        gap = np.take_along_axis(gaps, widest[:, None], axis=1)[:, 0]
        ok &= np.nan_to_num(gap, nan=0.0) >= 2.0
        probe = np.floor(np.take_along_axis(points, widest[:, None], axis=1)[:, 0] + gap / 2.0)
        # the cells taken: renumbered after those of earlier rounds
        taken = np.flatnonzero(ok)
        number = np.full(count, -1, dtype=np.int64)
        number[taken] = done + np.arange(taken.size)
        done += taken.size
        cells_points.append(points[taken])
        cells_probe.append(probe[taken])
        mine = ok[group]
        served_nodes.append(loose[mine])
        served_cell.append(number[group[mine]])
        # the rest: halved where wide enough, else given up
        split = ~ok & (hi - lo + 1.0 >= SPLIT_MIN)
        rest = ~mine
        halve = split[group] & rest
        failed.append(loose[rest & ~halve])
        upper = at > 0.5 * (lo + hi)[group]
        loose, at, interval = loose[halve], at[halve], interval[halve]
        group = 2 * group[halve] + upper[halve]
        if loose.size:
            _, group = np.unique(group, return_inverse=True)
    return _Plan(
        np.concatenate(cells_points) if cells_points else np.zeros((0, NU_MAX)),
        np.concatenate(cells_probe) if cells_probe else np.zeros(0),
        np.concatenate(served_nodes) if served_nodes else np.zeros(0, dtype=np.int64),
        np.concatenate(served_cell) if served_cell else np.zeros(0, dtype=np.int64),
        np.concatenate(failed) if failed else np.zeros(0, dtype=np.int64),
    )


class Cells(NamedTuple):
    """A plan's cells by the values of the nodes they serve, for :func:`interpolated_sums`.

    The plan of the nodes a choice of nodes was judged on serves the nodes the gap sums keep
    of them (a subset, by value): its cells need not be formed again.
    """

    #: the nodes served, sorted, and the cell of each
    at: FloatArray
    cell: IntArray
    #: each cell's points (NaN padded) and check
    points: FloatArray
    probe: FloatArray


def plan_points(
    values: FloatArray, y: FloatArray, power: FloatArray, pole: Pole
) -> tuple[IntArray, int, Cells]:
    """The non-integer nodes among ``y`` no interpolant here can serve, and the points it takes.

    (The nodes' panels need integer nodes: :func:`interpolated_sums` gives ``None`` while any
    is left. The points are the integers whose exact sums the interpolants and their checks
    take.) Returns the cells too, for :func:`interpolated_sums` on these nodes or some of them.
    """
    plan = _plan(values, y, power, pole)
    real = ~np.isnan(plan.points)
    order = np.argsort(y[plan.nodes], kind="stable")
    cells = Cells(y[plan.nodes][order], plan.cell[order], plan.points, plan.probe)
    points = int(np.unique(np.concatenate((plan.points[real], plan.probe))).size)
    return plan.failed, points, cells


def _restricted(cells: Cells | None, y: FloatArray) -> _Plan | None:
    """The plan of the non-integer nodes among ``y`` from ``cells`` (``None``: some not served).

    The cells that serve none of them are left out, with their points.
    """
    if cells is None:
        return None
    loose = np.flatnonzero(y != np.floor(y))
    at = y[loose]
    position = np.minimum(np.searchsorted(cells.at, at), max(cells.at.size - 1, 0))
    if cells.at.size == 0 or not bool(np.all(cells.at[position] == at)):
        return None
    used, cell = np.unique(cells.cell[position], return_inverse=True)
    return _Plan(
        cells.points[used], cells.probe[used], loose, cell.reshape(-1), np.zeros(0, np.int64)
    )


def _weights(points: FloatArray) -> FloatArray:
    """The barycentric weights of each row's ``points`` (NaN padded: weight 0 there).

    From products of differences scaled by the row's range (a few dozen points at most).
    """
    real = ~np.isnan(points)
    filled = np.where(real, points, 0.0)
    scale = np.maximum(np.nanmax(points, axis=1) - np.nanmin(points, axis=1), 1.0)[:, None, None]
    difference = (filled[:, :, None] - filled[:, None, :]) / scale
    pair = real[:, :, None] & real[:, None, :] & ~np.eye(NU_MAX, dtype=bool)[None, :, :]
    product = np.prod(np.where(pair, difference, 1.0), axis=2)
    weights: FloatArray = np.where(real, 1.0 / product, 0.0)
    return weights


def _barycentric(
    points: FloatArray, weights: FloatArray, values: FloatArray, at: FloatArray
) -> FloatArray:
    """Each row's interpolant through its ``points`` (NaN padded), evaluated at its ``at``.

    ``values`` has shape ``(functions, rows, NU_MAX)``; ``at`` holds no point (the nodes are not
    integers, the probes lie in gaps). Returns ``(functions, rows)``.
    """
    real = ~np.isnan(points)
    terms = np.where(real, weights / (at[:, None] - np.where(real, points, at[:, None] + 1.0)), 0.0)
    out: FloatArray = np.einsum("frk,rk->fr", values, terms) / terms.sum(axis=1)
    return out


def interpolated_sums(
    values: FloatArray,
    y: FloatArray,
    scale: FloatArray,
    power: FloatArray,
    pole: Pole,
    rows: Rows,
    width: int,
    cells: Cells | None = None,
) -> list[float] | None:
    r"""Return :math:`\sum_y` ``scale`` :math:`\cdot S_j(y)` for each weight :math:`j`.

    Parameters
    ----------
    values : numpy.ndarray
        The sorted distinct counts.
    y, scale : numpy.ndarray
        The nodes (any real numbers above 1) and their weights.
    power : numpy.ndarray
        At each node, the kernel's power :math:`a - c(y)`.
    pole : callable
        At points :math:`x`, :math:`\log \kappa(C_-, x)` for the count :math:`C_-` below
        (at least minus the kernel's cut, which it is where no count is below).
    rows : callable
        Exact inner sums at integer points, shape ``(width, points)``, or ``None``.
    width : int
        The number of weight functions.
    cells : Cells, optional
        The cells :func:`plan_points` formed on these nodes or more (by value); planned
        afresh where ``None`` or where some node is not among them.

    Returns
    -------
    list of float, or None
        ``None`` where some node no cell serves, a cell fails its check, or ``rows`` gives up
        (see the module documentation).
    """
    integral = y == np.floor(y)
    plan = _restricted(cells, y)
    if plan is None:
        plan = _plan(values, y, power, pole)
    if plan.failed.size:
        return None
    real = ~np.isnan(plan.points)
    asked = np.unique(np.concatenate((plan.points[real], plan.probe, y[integral])))
    exact = rows(asked) if asked.size else np.zeros((width, 0))
    if exact is None:
        return None
    inner = np.empty((width, y.size))
    inner[:, integral] = exact[:, np.searchsorted(asked, y[integral])]
    if plan.probe.size:
        at_points = np.where(
            real[None], exact[:, np.searchsorted(asked, np.where(real, plan.points, asked[0]))], 0.0
        )
        # the checks, against each weight's largest inner sum (the sums of a weight that
        # changes sign cancel near its zero, and carry the rounding of their terms' sizes)
        size = np.abs(exact).max(axis=1)
        weights = _weights(plan.points)
        found = _barycentric(plan.points, weights, at_points, plan.probe)
        expected = exact[:, np.searchsorted(asked, plan.probe)]
        if bool(np.any(np.abs(found - expected) > CHECK_TOLERANCE * size[:, None])):
            return None
        cell = plan.cell
        inner[:, plan.nodes] = _barycentric(
            plan.points[cell], weights[cell], at_points[:, cell], y[plan.nodes]
        )
    return [dot(row, scale) for row in inner]
