r"""The gap sums' inner sums at many integer nodes, from Gauss nodes in :math:`x` they share.

At an integer node :math:`y`, :func:`rankstats.null.median_gap.gap_sums` needs
:math:`S_k(y) = \sum_{x < y} \kappa(x, y)\, \varphi_k(x + y)` with
:math:`\kappa(x, y) = \alpha(x) / \alpha(y)` (:mod:`.median_gap`). The panels of
:mod:`.median_gap_panels` cut each node's sum in the shift :math:`t = y - x`, so every node
gets its own pieces, rules and kernel values: at a hundred tasks with counts spread over
:math:`1..14505`, the ~800 integer points of the interpolated sums (:mod:`.median_gap_intervals`)
made some 13,000 pieces, and their rules and kernels were most of the even median's time.

Here the pieces are cut in :math:`x` instead, once for all the nodes: at every count (between
two consecutive counts :math:`\alpha(x) = A x^{a - c(x)}` is one power of :math:`x`) and into
pieces of at most four of the kernel's decay lengths :math:`x / (a - c(x))` and a quarter of
:math:`x` (over which :math:`\varphi_k(x + y)`, its pole at :math:`x = -y`, is smooth). Each
piece gets its discrete Gauss rule (:func:`~rankstats.null.median_rules._piece_nodes`, as many
nodes as an exponential of that decay length asks, so that the rule is exact to
:math:`10^{-17}` of the piece's smallest term). A node :math:`y` then sums the pieces between
the lowest :math:`x` it reaches and the count :math:`C_y` below it; the piece from
:math:`C_y` to :math:`y - 1`, its own, the caller sums (its panels cross no count).

The kernel factorises: within a block of nodes whose :math:`\log \alpha(y)` lie within
:data:`BLOCK_LOG_RANGE` of the block's last node :math:`y_r`,
:math:`\kappa(x, y) = \kappa(x, y_r) / \kappa(y, y_r)`, one exponential per Gauss node
and one per node :math:`y`, each from :meth:`log_ratio` over the counts between its two
arguments (no cancellation of large logarithms). Each block is one dense product of its nodes
:math:`y` by the Gauss nodes they reach, masked to each node's own range; where the block
holds more nodes than the weights need Chebyshev points in :math:`y`
(:func:`_interpolation_size`), the weights are evaluated at those points only and each node's
sum is read from running sums over the Gauss nodes (:func:`_interpolated_rows`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple, Protocol

import numpy as np

from rankstats.arrays import FloatArray, IntArray
from rankstats.null.interpolation import chebyshev_points
from rankstats.null.median_rules import _nodes_per_piece, _piece_nodes, exponential_nodes_per_piece

__all__ = ["BLOCK_LOG_RANGE", "shared_sums"]

#: the most a block's log kernels between its nodes may span: a Gauss node's factor
#: kappa(x, y_r) is then at least e^-(c + 8), and the terms that matter to a node (kappa near
#: 1) come from exponentials of arguments up to 8, each rounded relative to its size, so the
#: range costs a few units in the last place. Wider blocks take more nodes y per interpolant of
#: the weights: a range of 4 took 2.5 ms at n = 100 with counts in 1..14505, 8 took 1.8 ms, 12
#: 1.6 ms (when the factors came from running sums over the nodes, since replaced, 12 had
#: moved the moments by 1.7e-15)
BLOCK_LOG_RANGE = 8.0
#: the most entries (nodes by Gauss nodes) of a block's product
_BLOCK_ENTRIES = 65536
#: the interpolant of the weights in y leaves e^-45 of their size (_interpolation_size)
_INTERPOLATION_LOG = 45.0
#: the shortest regular piece (shorter ones are enumerated anyway)
_MIN_STEP = 32


class Kernel(Protocol):
    """What :func:`shared_sums` reads of :class:`rankstats.null.median_gap._Kernel`."""

    values: FloatArray

    def exponent(self, y: FloatArray) -> FloatArray: ...

    def log_ratio(self, x: FloatArray, y: FloatArray) -> FloatArray: ...


def _cuts(kernel: Kernel, lo: float, hi: float) -> tuple[IntArray, IntArray, FloatArray]:
    r"""The pieces of the integers ``lo..hi - 1``: starts, lengths and each piece's power.

    Cut at every count and, between counts, from the lower end on by the ladder
    :math:`x_{k+1} = x_k + \max(\lfloor q x_k \rfloor, 32)`, :math:`q = \min(4 / p, 1/4)`
    (:math:`p = a - c(x)` the power), in closed form.
    """
    values = kernel.values
    inner = values[(values > lo) & (values < hi)]
    edges = np.concatenate(([lo], inner, [hi]))
    starts, ends = edges[:-1], edges[1:]
    power = kernel.exponent(starts)
    q = np.where(power > 4.0, 4.0 / np.maximum(power, 1.0), 0.25)
    # below x* = 32 / q the step is 32; above it, the geometric ladder from max(start, x*)
    knee = np.clip(_MIN_STEP / q, starts, ends)
    linear = np.ceil((knee - starts) / _MIN_STEP).astype(np.int64)
    geometric = np.where(ends > knee, np.ceil(np.log(ends / knee) / np.log1p(q)), 0.0).astype(
        np.int64
    )
    owner_l, step_l = _steps(linear)
    owner_g, step_g = _steps(geometric)
    cut = np.concatenate(
        (
            starts[owner_l] + _MIN_STEP * step_l,
            np.ceil(knee[owner_g] * np.exp(step_g * np.log1p(q[owner_g]))),
            edges,
        )
    )
    cut = np.unique(cut[(cut >= lo) & (cut <= hi)])
    piece_starts = cut[:-1]
    return (
        piece_starts.astype(np.int64),
        np.diff(cut).astype(np.int64),
        kernel.exponent(piece_starts),
    )


def _steps(counts: IntArray) -> tuple[IntArray, IntArray]:
    """For ``counts[i]`` steps of each interval ``i``: each step's interval and number."""
    owner = np.repeat(np.arange(counts.size), counts)
    return owner, np.arange(owner.size) - np.repeat(np.cumsum(counts) - counts, counts)


def shared_sums(
    kernel: Kernel,
    phi: Callable[[FloatArray], list[FloatArray]],
    y: FloatArray,
    lowest: FloatArray,
    top: FloatArray,
    width: int,
    budget: int,
) -> FloatArray | None:
    r"""Per integer node :math:`y_i`, the sums :math:`\sum_x \kappa(x, y_i)\, \varphi_k(x + y_i)`.

    Over :math:`x` from the piece holding ``lowest[i]`` up to ``top[i] - 1``. ``top[i]`` is a
    count below :math:`y_i` (or ``lowest[i]``, for none: an empty sum); the pieces reaching
    below ``lowest[i]`` are summed whole (their terms are exact, if small).
    ``phi`` maps an array of :math:`s` to the list of ``width`` weight arrays, analytic away
    from :math:`s \le 0` (as :func:`~rankstats.null.median_gap.gap_sums` asks: the
    interpolation in :math:`y` relies on it). Returns ``(width, nodes)``, or ``None`` where the
    products would exceed ``budget`` entries.
    """
    out = np.zeros((width, y.size))
    live = np.flatnonzero(top > lowest)
    if live.size == 0:
        return out
    live = live[np.argsort(y[live], kind="stable")]
    lo, hi = float(lowest[live].min()), float(top[live].max())
    starts, lengths, power = _cuts(kernel, lo, hi)
    decay = np.where(power > 0.0, np.maximum(starts, 1) / np.maximum(power, 1.0), np.inf)
    nus = np.maximum(
        exponential_nodes_per_piece(lengths, decay),
        _nodes_per_piece(lengths, np.maximum(starts, 1) / 4.0),
    )
    x, w, piece = _piece_nodes(starts, lengths, nu=nus)
    order = np.argsort(piece, kind="stable")  # by piece, so by x
    x, w = x[order], w[order]
    first = np.searchsorted(piece[order], np.arange(starts.size + 1))
    # each node's range of Gauss nodes: from the piece holding its lowest x to its count
    node_lo = first[np.searchsorted(starts, lowest[live], side="right") - 1]
    node_hi = first[np.searchsorted(starts, top[live], side="left")]
    node_hi = np.maximum(node_hi, node_lo)
    if int((node_hi - node_lo).sum()) > budget:
        return None
    y_live = y[live]
    # log alpha(y) from the first node on (log kappa between consecutive nodes, summed): where
    # the blocks end
    log_alpha = np.zeros(live.size)
    if live.size > 1:
        np.cumsum(-kernel.log_ratio(y_live[:-1], y_live[1:]), out=log_alpha[1:])
    start = 0
    while start < live.size:
        stop = _block_end(log_alpha, node_lo, node_hi, start)
        g0, g1 = int(node_lo[start:stop].min()), int(node_hi[start:stop].max())
        if g1 > g0:
            rows = live[start:stop]
            # kappa(x, y) = kappa(x, y_r) / kappa(y, y_r), y_r the block's last node
            y_block = y_live[start:stop]
            xs = x[g0:g1]
            kern = np.exp(kernel.log_ratio(xs, y_block[-1:])) * w[g0:g1]
            # (each node's own log kernel to the last: the running sums of log alpha over the
            # nodes carry a rounding per node, 4e-14 over a block of a hundred)
            factor = np.exp(-kernel.log_ratio(y_block, y_block[-1:]))
            block = _Block(kern, xs, y_block, node_lo[start:stop] - g0, node_hi[start:stop] - g0)
            size = _interpolation_size(float(xs[0]), float(y_block[0]), float(y_block[-1]))
            if size < rows.size:
                sums = _interpolated_rows(phi, block, size)
            else:
                sums = _direct_rows(phi, block)
            out[:, rows] = factor * sums
        start = stop
    return out


def _interpolation_size(x_low: float, y_low: float, y_high: float) -> int:
    r"""Chebyshev points in :math:`y` enough for :math:`\varphi(x + y)` over a block's nodes.

    The weights' poles lie at :math:`s \le 0`, at :math:`y \le -x` below the block's range
    :math:`[y_0, y_1]` (centre :math:`m`, half-width :math:`h`): the Bernstein ellipse through
    the nearest has :math:`\rho = u + \sqrt{u^2 - 1}`, :math:`u = (m + x) / h`, and the
    interpolant's error falls like :math:`\rho^{-K}`.
    :math:`K` points with :math:`(\rho / 2)^{-K} \le e^{-45}` (the ellipse of half that
    parameter keeps the weights within :math:`2^3` of their size on the range) leave
    :math:`10^{-18}` of the weights' size. A large number where the range reaches near a pole.
    """
    half = (y_high - y_low) / 2.0
    if half <= 0.0:
        return 1
    u = ((y_high + y_low) / 2.0 + x_low) / half
    rho = u + math.sqrt(u * u - 1.0)
    if rho <= 4.0:
        return 1 << 30
    return max(2, math.ceil(_INTERPOLATION_LOG / math.log(rho / 2.0)))


class _Block(NamedTuple):
    """A block of nodes and the Gauss nodes they reach.

    The kernel at the Gauss nodes (their weights included), the Gauss nodes, the nodes ``y``
    and each node's range of Gauss nodes (``lo`` up to ``hi``, exclusive).
    """

    kern: FloatArray
    xs: FloatArray
    y: FloatArray
    lo: IntArray
    hi: IntArray


def _direct_rows(phi: Callable[[FloatArray], list[FloatArray]], block: _Block) -> FloatArray:
    """Each node's masked sum of the kernel times the weights at ``xs + y``: ``(width, nodes)``."""
    column = np.arange(block.xs.size)
    inside = (column >= block.lo[:, None]) & (column < block.hi[:, None])
    kern_rows = np.where(inside, block.kern[None, :], 0.0)
    s = (block.xs[None, :] + block.y[:, None]).ravel()
    return np.array(
        [np.einsum("ij,ij->i", kern_rows, values_j.reshape(kern_rows.shape)) for values_j in phi(s)]
    )


def _interpolated_rows(
    phi: Callable[[FloatArray], list[FloatArray]], block: _Block, size: int
) -> FloatArray:
    r""":func:`_direct_rows` with the weights interpolated in :math:`y` from ``size`` points.

    :math:`\varphi(x_g + y_i) = \sum_k \ell_k(y_i) \varphi(x_g + \hat y_k)` at Chebyshev
    points :math:`\hat y_k` of the nodes' range, so each node's sum over its range of Gauss
    nodes is :math:`\sum_k \ell_k(y_i) (P_k(h_i) - P_k(l_i))`, :math:`P_k` the running sums of
    the kernel times the weights at :math:`\hat y_k`: the weights at ``size`` points rather
    than at every node. (Below a node's range the kernel is below the cut: the running sums
    there are small against the node's.)
    """
    y = block.y
    points = (y[0] + y[-1]) / 2.0 + (y[-1] - y[0]) / 2.0 * chebyshev_points(size)
    points[[0, -1]] = y[0], y[-1]
    basis = _chebyshev_basis(points, y)
    s = (block.xs[None, :] + points[:, None]).ravel()
    out = []
    running = np.zeros((size, block.xs.size + 1))
    for values_j in phi(s):
        np.cumsum(
            values_j.reshape(size, block.xs.size) * block.kern[None, :], axis=1, out=running[:, 1:]
        )
        within = running[:, block.hi] - running[:, block.lo]
        out.append(np.einsum("ik,ki->i", basis, within))
    return np.array(out)


def _chebyshev_basis(points: FloatArray, at: FloatArray) -> FloatArray:
    """The Lagrange basis of Chebyshev points of the second kind at ``at`` (rows: ``at``).

    The barycentric weights :math:`(-1)^k`, halved at both ends (stable for any range and
    number of points, where products of differences overflow); a row on a point is that
    point's unit row.
    """
    weights = np.where(np.arange(points.size) % 2 == 0, 1.0, -1.0)
    weights[[0, -1]] *= 0.5
    offset = at[:, None] - points[None, :]
    exact = offset == 0.0
    offset[exact] = 1.0
    terms = weights[None, :] / offset
    basis: FloatArray = terms / terms.sum(axis=1, keepdims=True)
    hit = exact.any(axis=1)
    basis[hit] = exact[hit]
    return basis


def _block_end(log_alpha: FloatArray, node_lo: IntArray, node_hi: IntArray, start: int) -> int:
    """The end of the block of nodes from ``start``: within the log range and the entries."""
    stop = int(np.searchsorted(log_alpha, log_alpha[start] + BLOCK_LOG_RANGE, side="right"))
    stop = max(stop, start + 1)
    width = np.maximum.accumulate(node_hi[start:stop]) - np.minimum.accumulate(node_lo[start:stop])
    fits = np.arange(1, stop - start + 1) * width <= _BLOCK_ENTRIES
    return start + max(int(np.argmin(fits)) if not bool(fits.all()) else fits.size, 1)
