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
:math:`y` by the Gauss nodes they reach, masked to each node's own range.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np

from rankstats.arrays import FloatArray, IntArray
from rankstats.null.median_rules import _nodes_per_piece, _piece_nodes, exponential_nodes_per_piece

__all__ = ["BLOCK_LOG_RANGE", "shared_sums"]

#: the most a block's log kernels between its nodes may span (the factor e^4 it allows in a
#: node's share keeps every Gauss node's factor within the cut's range)
BLOCK_LOG_RANGE = 4.0
#: the most entries (nodes by Gauss nodes) of a block's product
_BLOCK_ENTRIES = 65_536
#: the shortest regular piece (shorter ones are enumerated anyway)
_MIN_STEP = 32


class Kernel(Protocol):
    """What :func:`shared_sums` reads of :class:`rankstats.null.median_gap._Kernel`."""

    values: FloatArray
    below: FloatArray
    a: int

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
    index = np.searchsorted(values, starts, side="right")
    power = kernel.a - kernel.below[index]
    q = np.where(power > 4.0, 4.0 / np.maximum(power, 1.0), 0.25)
    # below x* = 32 / q the step is 32; above it, the geometric ladder from max(start, x*)
    knee = np.clip(_MIN_STEP / q, starts, ends)
    linear = np.ceil((knee - starts) / _MIN_STEP).astype(np.int64)
    geometric = np.where(ends > knee, np.ceil(np.log(ends / knee) / np.log1p(q)), 0.0).astype(
        np.int64
    )
    owner_l = np.repeat(np.arange(starts.size), linear)
    step_l = np.arange(owner_l.size) - np.repeat(np.cumsum(linear) - linear, linear)
    owner_g = np.repeat(np.arange(starts.size), geometric)
    step_g = np.arange(owner_g.size) - np.repeat(np.cumsum(geometric) - geometric, geometric)
    cut = np.concatenate(
        (
            starts[owner_l] + _MIN_STEP * step_l,
            np.ceil(knee[owner_g] * np.exp(step_g * np.log1p(q[owner_g]))),
            edges,
        )
    )
    cut = np.unique(cut[(cut >= lo) & (cut <= hi)])
    piece_starts = cut[:-1]
    piece_power = kernel.a - kernel.below[np.searchsorted(values, piece_starts, side="right")]
    return piece_starts.astype(np.int64), np.diff(cut).astype(np.int64), piece_power


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
    count below :math:`y_i` (or ``lowest[i]``, for none: an empty sum); the
    pieces reaching below ``lowest[i]`` are summed whole (their terms are exact, if small).
    ``phi`` maps an array of :math:`s` to the list of ``width`` weight arrays. Returns
    ``(width, nodes)``, or ``None`` where the products would exceed ``budget`` entries.
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
    # log alpha(y) from the first node on (log kappa between consecutive nodes, summed)
    log_alpha = np.zeros(live.size)
    if live.size > 1:
        np.cumsum(-kernel.log_ratio(y_live[:-1], y_live[1:]), out=log_alpha[1:])
    start = 0
    while start < live.size:
        stop = _block_end(log_alpha, node_lo, node_hi, start)
        rows = live[start:stop]
        g0, g1 = int(node_lo[start:stop].min()), int(node_hi[start:stop].max())
        if g1 > g0:
            y_ref = y_live[stop - 1]
            xs = x[g0:g1]
            kern = np.exp(kernel.log_ratio(xs, np.full(xs.size, y_ref))) * w[g0:g1]
            shares = np.zeros(rows.size)
            if rows.size > 1:
                shares[:-1] = kernel.log_ratio(
                    y_live[start : stop - 1], np.full(rows.size - 1, y_ref)
                )
            column = np.arange(g0, g1)
            mask = (column >= node_lo[start:stop, None]) & (column < node_hi[start:stop, None])
            kern_rows = np.where(mask, kern[None, :], 0.0)
            s = (xs[None, :] + y_live[start:stop, None]).ravel()
            factor = np.exp(-shares)
            for j, values_j in enumerate(phi(s)):
                summed = np.einsum("ij,ij->i", kern_rows, values_j.reshape(kern_rows.shape))
                out[j, rows] = factor * summed
        start = stop
    return out


def _block_end(log_alpha: FloatArray, node_lo: IntArray, node_hi: IntArray, start: int) -> int:
    """The end of the block of nodes from ``start``: within the log range and the entries."""
    stop = int(np.searchsorted(log_alpha, log_alpha[start] + BLOCK_LOG_RANGE, side="right"))
    stop = max(stop, start + 1)
    width = np.maximum.accumulate(node_hi[start:stop]) - np.minimum.accumulate(node_lo[start:stop])
    fits = np.arange(1, stop - start + 1) * width <= _BLOCK_ENTRIES
    return start + max(int(np.argmin(fits)) if not bool(fits.all()) else fits.size, 1)
