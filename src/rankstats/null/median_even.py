r"""The median's null moments for an even number of tasks, from the upper middle rank out.

For :math:`n = 2a` tasks, :math:`M = (X_{(a)} + X_{(a+1)}) / 2`. Write :math:`X = X_{(a)}`,
:math:`Y = X_{(a+1)}` and, for a function :math:`g` (:math:`M`, :math:`(M - c)^2`, :math:`1/M`,
:math:`(1/M - 1/c)^2`),

.. math::

    \mathbb{E}[g(M)] = \mathbb{E}[g(Y)]
    + \sum_{v} J(v) \sum_{u < v} w(u \mid v)\, \bigl(g(\tfrac{u + v}{2}) - g(v)\bigr),

with :math:`J(v) = P(X < v = Y)` and :math:`w(u \mid v) = P(X = u \mid X < v = Y)`: ties
:math:`X = Y` contribute nothing to the second term. The first term is a single order statistic,
summed like the odd case (:mod:`rankstats.null.median`); the second one is a sum of
nonnegative terms for the inverse median (whose :math:`g` decreases), so that nothing cancels
however far apart the two middle ranks are (the decomposition into single order statistics and
a double sum of :math:`P(N_x = a, N_y = a)` subtracts terms of the size of
:math:`\mathbb{E}[1/X]` to leave :math:`\mathbb{E}[1/M]`, which is orders of magnitude smaller
when :math:`X \ll Y`).

The law of the pair
-------------------
With :math:`N_x = \#\{i : r_i \le x\}`, :math:`\alpha(x) = x^{a - c(x)} / \prod_{C_i > x} C_i`
and the kernel :math:`\kappa(x, y) = \alpha(x) / \alpha(y)` of :mod:`rankstats.null.median_gap`,
:math:`P(X = u, Y = v) = (\alpha(u) - \alpha(u - 1))\, \beta'(v)` for :math:`u < v`, so that
:math:`w(u \mid v) = \kappa(u, v - 1) - \kappa(u - 1, v - 1)`; summation by parts in :math:`u`
gives

.. math::

    \sum_{u < v} w(u \mid v)\, h(u) = h(v - 1) + \sum_{x < y} \kappa(x, y)\,
    \bigl(h(x) - h(x + 1)\bigr), \qquad y = v - 1,

the kernel sums of :func:`~rankstats.null.median_gap.gap_sums` with weight functions of
:math:`s = x + y` (for the inverse median, :math:`h(x) - h(x + 1) = 2/((s+1)(s+2)) > 0`).
:math:`J(v) = P(N_{v-1} = a) - P(N_{v-1} = a, N_v = a)` is a difference; where it loses more
than two digits (the upper ranks rarely land exactly on :math:`v`, e.g. counts of :math:`10^9`),
it comes instead from the identity :math:`e_k(z + 1) - e_k(z) = (|z| - k + 1)\int_0^1
e_{k-1}(z + s)\, ds` for the elementary symmetric polynomials behind :math:`P(N_y = a + 1)`:

.. math::

    J(v) = (m + 1) \int_{v-1}^{v} P(N_y = a + 1) \Bigl(\frac{v - 1}{y}\Bigr)^m \frac{dy}{y},
    \qquad m = a - c(v - 1),

a positive, smooth integrand (a polynomial in :math:`y` of degree below :math:`n - a`, whose
logarithm varies by less than about :math:`\delta = 0.02 n / (n - a)` over the interval there),
integrated by four-point Gauss-Legendre (:data:`_GAUSS`; for an integrand like
:math:`e^{\delta t}` its error is about :math:`6 \cdot 10^{-10} \delta^8`, :math:`4 \cdot
10^{-21}` at :math:`\delta = 0.04`).

Sums and error bound
--------------------
:math:`v` runs over the window of :math:`Y` on panels cut at every count plus one, where the
law changes polynomial, and at powers of four: on Gram nodes where the kernel sums at
:math:`y = v - 1` continue smoothly, or can be interpolated between the counts at less cost than
integer nodes take (:func:`cheaper_nodes`, :mod:`rankstats.null.median_gap_intervals`), else on
integer nodes (every integer on short panels, integer interpolatory rules of 8 to 32 nodes, as
the summands' scale asks), the kernel sums as in :func:`~rankstats.null.median_gap.gap_sums`.
The tails and point masses are accurate to about :math:`10^{-16}` absolute
(:mod:`rankstats.null.median_tails`); every term of the second sum of the inverse median is
nonnegative and each factor is accurate to a few units in the last place
relative, so the second term is accurate to about :math:`10^{-15}` relative of itself, and the
first is a single order statistic (:math:`10^{-13}` relative or better). Measured against a
30-60 digit reference that conditions on how many ranks fall below the smaller of two counts
(tests and scans of small counts 1..60 against :math:`10^6..10^{12}`): :math:`2.5 \cdot
10^{-14}` relative or better on all four moments for half the tasks (or one or two more or
fewer), :math:`n = 66` to 4000. The lower middle rank's tails below the small count, down to
:math:`10^{-300}`, come from methods relative to their size (:mod:`rankstats.null.median_band`,
whose split bands cost the same at any :math:`n`); until they did, V of the inverse median had
been up to :math:`1.8 \cdot 10^{-11}` off from :math:`n = 900` on. And to :math:`10^{-12}`
against the pairwise programme on spread counts with short windows.

The caller (``_moments`` in :mod:`rankstats.null.median`) uses this only where the decomposition is
ill-conditioned: for spread counts it costs two to four times as much (point masses at
:math:`v - 1` and :math:`v` on integer nodes, kernel sums with four weight functions).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from rankstats.arrays import FloatArray, IntArray
from rankstats.null.median_gap import _Kernel, continues, gap_sums, interpolation_plan
from rankstats.null.median_gap_intervals import Cells, fewest_points
from rankstats.null.median_rules import (
    _ENUM,
    IntegerWindow,
    _ladder,
    _piece_nodes,
    _pieces,
    dot,
    integer_nodes,
)
from rankstats.null.median_tails import _Candidates, _Evaluator

__all__ = [
    "SingleSums",
    "WindowNodes",
    "cheaper_nodes",
    "even_moments",
    "single_sums",
    "window_nodes",
]

#: the window is cut into at least this many panels
_N_SUB = 48
#: the summands of the single sums are smooth on this many panel lengths
_SMOOTH = 2.0
#: the largest length-to-scale ratio whose rule needs at most _NU = 16 nodes for 1e-14
_RATIO_UNCLIPPED = 10.0 ** (-7.0 / 16.0)
#: J(v) is taken as a difference while it keeps at least this fraction of P(N_{v-1} = a)
_DIFFERENCE_MIN = 0.01
#: Gauss-Legendre nodes of the integral for J(v)
_GAUSS = 4
#: the kernel sums drop terms below this fraction of the largest (the pair terms are not small
#: beside the single sums here, unlike the double sum of the older decomposition)
_GAP_TOLERANCE = 1e-18

Moments = tuple[float, float, float, float]


class WindowNodes(NamedTuple):
    """The nodes and weights of the sums over a window of ranks, and how the window was cut."""

    x: FloatArray
    w: FloatArray
    #: the cut points (counts in the window, the centre, a ladder) and the longest piece
    breaks: IntArray
    piece: int
    #: the pieces (first integer, length) and the piece of each node
    starts: IntArray
    lengths: IntArray
    owner: IntArray

    def enumerated(self, nodes: IntArray) -> tuple[FloatArray, FloatArray]:
        """The nodes and weights with every integer of the pieces of ``nodes``, sorted."""
        pieces = np.unique(self.owner[nodes])
        keep = ~np.isin(self.owner, pieces)
        # as many nodes as integers: every integer, weight one
        added, ones, _ = _piece_nodes(
            self.starts[pieces], self.lengths[pieces], nu=self.lengths[pieces]
        )
        x = np.concatenate((self.x[keep], added))
        w = np.concatenate((self.w[keep], ones))
        order = np.argsort(x, kind="stable")
        return x[order], w[order]


def cheaper_nodes(
    cands: _Candidates,
    nodes: WindowNodes,
    a: int,
    tolerance: float,
    integers: IntegerWindow,
    shift: float = 0.0,
) -> tuple[FloatArray, FloatArray, bool, Cells | None]:
    """The Gram ``nodes`` or the ``integers``, whichever the gap sums take at less cost.

    For nodes with a count within the gap sums' kernel reach (at ``nodes.x - shift``): the Gram
    nodes, the gap sums' inner sums interpolated between the counts, cost the tails and point
    masses at the nodes and an exact inner sum at each interpolation point (their panels next
    to a count where the kernel varies within a few integers take every integer); the integer
    nodes cost the tails, the point masses and an exact inner sum at each. Returns the nodes,
    their weights, whether they are the integers (whose rules are formed only then) and, for
    the Gram nodes, the interpolation's cells (at ``nodes.x - shift``, for :func:`gap_sums`).
    """
    limit = 2 * integers.size()
    y = nodes.x - shift
    if nodes.x.size + fewest_points(cands.values, y) > limit:
        # fewer integer nodes whatever the plan (before its cost)
        return (*integers.nodes(), True, None)
    hard, points, cells = interpolation_plan(cands.values, cands.below, a, y, tolerance)
    x, w = nodes.enumerated(hard) if hard.size else (nodes.x, nodes.w)
    if x.size + points <= limit:
        return x, w, False, cells
    return (*integers.nodes(), True, None)


def window_scale(lo: int, hi: int) -> float:
    """The length on which the summands over ``lo..hi`` are smooth (the tails vary on it)."""
    return _SMOOTH * (hi - lo + 1) / _N_SUB


def window_nodes(cands: _Candidates, lo: int, hi: int, c0: int) -> WindowNodes:
    r"""Nodes for sums over ``lo..hi``, cut at the counts inside, at ``c0`` and on a ladder.

    With no count inside, the tails are one smooth function over the window (varying on
    :func:`window_scale`): pieces of a 33rd of the window take rules of 16 nodes, within their
    error bound :math:`(L / 2 s)^{2\nu} \le 10^{-14}` (``_RATIO_UNCLIPPED``), so a window takes
    about 528 nodes however wide, or every rank where it is narrower; where the 1/x weights
    or a count make a piece rougher than that, pieces of a 48th (at least 32) take as many
    nodes as their scale asks, summed point by point up to twice that.
    """
    in_window = cands.distinct[(cands.distinct > lo) & (cands.distinct <= hi)]
    breaks = np.concatenate((in_window, np.array([c0], dtype=np.int64), _ladder(hi)))
    piece = max(_ENUM, -(-(hi - lo + 1) // _N_SUB))
    if in_window.size == 0:
        long_piece = max(1, int(_RATIO_UNCLIPPED * 2.0 * window_scale(lo, hi)))
        starts, lengths = _pieces(lo, hi, breaks, long_piece)
        smooth = np.minimum(window_scale(lo, hi), starts.astype(np.float64))
        if float((lengths / (2.0 * smooth)).max()) <= _RATIO_UNCLIPPED:
            x, w, owner = _piece_nodes(starts, lengths, smooth, enumerate_below=1.0)
            return WindowNodes(x, w, breaks, piece, starts, lengths, owner)
    starts, lengths = _pieces(lo, hi, breaks, piece)
    # tails vary on the window's scale, the weights 1/x on the scale of x
    smooth = np.minimum(window_scale(lo, hi), starts.astype(np.float64))
    x, w, owner = _piece_nodes(starts, lengths, smooth)
    return WindowNodes(x, w, breaks, piece, starts, lengths, owner)


class SingleSums(NamedTuple):
    r"""Centred moments of one order statistic by summation by parts about :math:`c_0`.

    :math:`\mathbb{E}[X] - c_0`, :math:`\mathbb{E}[(X - c_0)^2]`, :math:`\mathbb{E}[1/X] -
    1/c_0`, :math:`\mathbb{E}[(1/X - 1/c_0)^2]`, and the terms of the last three sums (their
    sizes give a condition estimate).
    """

    s1: float
    s2: float
    e_inv: float
    m2_inv: float
    s2_terms: FloatArray
    e_inv_terms: FloatArray
    m2_inv_terms: FloatArray


def single_sums(x: FloatArray, w: FloatArray, tail: FloatArray, c0: int) -> SingleSums:
    r""":class:`SingleSums` from ``tail`` :math:`= P(X > x) - 1[x < c_0]` at the nodes ``x``."""
    d = x - c0
    s2_terms = (2.0 * d + 1.0) * tail
    inv_w = 1.0 / (x * (x + 1.0))
    v0 = (c0 - x) / (x * c0)
    v1 = (c0 - x - 1.0) / ((x + 1.0) * c0)
    e_inv_terms = inv_w * tail
    m2_inv_terms = inv_w * (v1 + v0) * tail
    return SingleSums(
        dot(w, tail),
        dot(w, s2_terms),
        -dot(w, e_inv_terms),
        -dot(w, m2_inv_terms),
        s2_terms,
        e_inv_terms,
        m2_inv_terms,
    )


def _single(
    cands: _Candidates, evaluator: _Evaluator, k: int, lo: int, hi: int, c0: int
) -> Moments:
    r"""Centred moments of the single order statistic :math:`X = X_{(k)}` (:class:`SingleSums`)."""
    nodes = window_nodes(cands, lo, hi, c0)
    x, w = nodes.x, nodes.w
    lower, upper, _, _ = evaluator.evaluate(x, 0.0, [k - 1], [])
    sums = single_sums(x, w, np.where(x < c0, -upper[:, 0], lower[:, 0]), c0)
    return sums.s1, sums.s2, sums.e_inv, sums.m2_inv


def _centre(cands: _Candidates, k: int, lo: int, hi: int) -> int:
    r"""An integer near the median of :math:`X_{(k)}`, about which its sums lose fewest digits.

    The smallest ``x`` in ``lo..hi`` with :math:`\mathbb{E}[N_x] \ge k - 1/2`.
    """
    a, b = lo - 1, hi
    while b - a > 1:
        mid = (a + b) // 2
        if cands.mean_var(mid)[0] >= k - 0.5:
            b = mid
        else:
            a = mid
    return max(b, lo)


def _pair_mass(
    cands: _Candidates, evaluator: _Evaluator, kernel: _Kernel, a: int, v: FloatArray
) -> FloatArray:
    r""":math:`J(v) = P(X_{(a)} < v = X_{(a+1)})` at integer nodes :math:`v \ge 2`."""
    # one evaluation per distinct point (consecutive integer nodes share v - 1 and v)
    points, where = np.unique(np.concatenate((v - 1.0, v)), return_inverse=True)
    _, _, pmf_points, _ = evaluator.evaluate(points, 0.0, [], [a])
    pmf = pmf_points[where.ravel(), 0]
    below, at = pmf[: v.size], pmf[v.size :]
    log_k = kernel.log_ratio(v - 1.0, v)
    joint = at * np.exp(log_k)
    out = below - joint
    hard = ~(out >= _DIFFERENCE_MIN * below)
    m = a - cands.below[cands.index_above(v - 1.0)]
    hard &= m >= 0
    out = np.where(m >= 0, np.maximum(out, 0.0), 0.0)
    if np.any(hard):
        t, wt = np.polynomial.legendre.leggauss(_GAUSS)
        t, wt = (t + 1.0) / 2.0, wt / 2.0
        vh = v[hard]
        mh = m[hard].astype(np.float64)
        y = (vh[:, None] - 1.0 + t[None, :]).ravel()
        _, _, upper_pmf, _ = evaluator.evaluate(y, 0.0, [], [a + 1])
        pmf_y = upper_pmf[:, 0].reshape(vh.size, _GAUSS)
        y2 = y.reshape(vh.size, _GAUSS)
        # ((v - 1) / y)^m / y, with (v - 1) / y = 1 - t / y
        factor = np.exp(mh[:, None] * np.log1p(-t[None, :] / y2)) / y2
        out[hard] = (mh + 1.0) * np.einsum("ij,j->i", pmf_y * factor, wt)
    return np.asarray(out, dtype=np.float64)


def even_moments(cands: _Candidates) -> Moments | None:
    r"""E and V of the median and of its inverse for an even number of tasks (module docs).

    Returns ``None`` if the kernel sums exceed their budget (the caller then falls back to the
    decomposition into single order statistics and a double sum).
    """
    n = cands.n
    a = n // 2
    lo_b, hi_b = cands.window(a + 1)
    lo_b, hi_b = max(lo_b, 1), max(min(hi_b, cands.c_max), 1)
    lo_a = max(cands.window(a)[0], 1)
    lo = max(1, min(lo_a, lo_b - 1))
    c0 = _centre(cands, a + 1, lo_b, hi_b)
    evaluator = _Evaluator(cands, float(lo), float(hi_b), 0.0)
    s1, s2, e_inv, m2_inv = _single(cands, evaluator, a + 1, lo_b, hi_b, c0)
    # pairs X < v = Y over Y's window, on panels cut where v - 1 crosses a count
    v_lo = max(lo_b, 2)
    if hi_b < v_lo:
        return c0 + s1, s2 - s1 * s1, 1.0 / c0 + e_inv, m2_inv - e_inv * e_inv
    in_window = cands.distinct[(cands.distinct >= v_lo) & (cands.distinct < hi_b)]
    breaks = np.concatenate((in_window + 1, _ladder(hi_b)))
    piece = max(_ENUM, -(-(hi_b - v_lo + 1) // _N_SUB))
    kernel = _Kernel(cands.values, cands.below, a)
    # Gram nodes (J and the kernel sums continue smoothly to non-integer v where no count lies
    # within the kernel's reach, and are interpolated between the counts where one does), or
    # integer nodes, where both are exact, whichever costs less
    starts, lengths = _pieces(v_lo, hi_b, breaks, piece)
    smooth = np.minimum(window_scale(v_lo, hi_b), starts.astype(np.float64))
    v, wv, owner = _piece_nodes(starts, lengths, smooth)
    cells = None
    if not continues(cands.values, cands.below, a, v - 1.0, _GAP_TOLERANCE):
        # a count within the kernel's reach: the inner sums interpolated between the counts
        # at the Gram nodes, or integer nodes, whichever costs less
        nodes = WindowNodes(v, wv, breaks, piece, starts, lengths, owner)
        integers = IntegerWindow(v_lo, hi_b, breaks, piece, window_scale(v_lo, hi_b))
        v, wv, _, cells = cheaper_nodes(cands, nodes, a, _GAP_TOLERANCE, integers, shift=1.0)
    terms = _pair_terms(cands, evaluator, kernel, a, v, wv, float(c0), cells)
    if terms is None:
        v, wv = integer_nodes(v_lo, hi_b, breaks, piece, window_scale(v_lo, hi_b))
        terms = _pair_terms(cands, evaluator, kernel, a, v, wv, float(c0))
    if terms is None:
        return None
    shift = s1 + terms[0]
    m2 = s2 + terms[1]
    e_inv += terms[2]
    m2_inv += terms[3]
    return c0 + shift, m2 - shift * shift, 1.0 / c0 + e_inv, m2_inv - e_inv * e_inv


def _pair_terms(
    cands: _Candidates,
    evaluator: _Evaluator,
    kernel: _Kernel,
    a: int,
    v: FloatArray,
    wv: FloatArray,
    c: float,
    cells: Cells | None = None,
) -> list[float] | None:
    r"""The second terms of :math:`\mathbb{E}[g(M)]` for the four :math:`g` (module docs).

    ``None`` if the kernel sums cannot be done at these nodes (see
    :func:`~rankstats.null.median_gap.gap_sums`); ``cells`` are the interpolation's cells at
    ``v - 1`` where :func:`cheaper_nodes` planned them.
    """
    mass = _pair_mass(cands, evaluator, kernel, a, v)
    ci = 1.0 / c

    def phi(s: FloatArray) -> list[FloatArray]:
        # h(x) - h(x + 1) for h(u) = g((u + v) / 2) - g(v), with x + v = s + 1
        inv = 2.0 / ((s + 1.0) * (s + 2.0))
        return [
            np.full(s.size, -0.5),
            -0.5 * (s + 1.5 - 2.0 * c),
            inv,
            inv * (2.0 / (s + 1.0) + 2.0 / (s + 2.0) - 2.0 * ci),
        ]

    sums = gap_sums(
        cands.values,
        cands.below,
        a,
        v - 1.0,
        wv,
        mass,
        c,
        tolerance=_GAP_TOLERANCE,
        phi=phi,
        cells=cells,
    )
    if sums is None:
        return None
    # h(v - 1) of each g
    weight = wv * mass
    h_inv = 1.0 / (v * (2.0 * v - 1.0))
    return [
        -0.5 * float(np.sum(weight)) + sums[0],
        dot(weight, (-0.5 * (2.0 * v - 0.5 - 2.0 * c))) + sums[1],
        dot(weight, h_inv) + sums[2],
        dot(weight, (h_inv * (2.0 / (2.0 * v - 1.0) + 1.0 / v - 2.0 * ci))) + sums[3],
    ]
