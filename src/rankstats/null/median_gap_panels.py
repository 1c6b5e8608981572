r"""Pieces in :math:`t` of the gap sums' kernel sums, and their nodes.

For a node :math:`y`, :func:`rankstats.null.median_gap.gap_sums` sums the kernel over the shifts
:math:`t = 1..T` of :math:`x = y - t`. The kernel has a kink wherever :math:`x` crosses a count
and falls like an exponential of the decay length :math:`y / (a - c(y))`, so the shifts are cut
at the counts and every four decay lengths, and each piece is summed point by point or by a
discrete Gauss rule of as many nodes as an exponential of the kernel's (or, below a count, the
steeper) decay length asks (:func:`rankstats.null.median_rules.exponential_nodes_per_piece`),
no fewer than the weights' scale :math:`y` asks. Nodes are taken in blocks of about
:data:`PIECES_PER_BLOCK` pieces, so the pairs in memory at once are bounded whatever the counts.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

import numpy as np

from rankstats.arrays import FloatArray, IntArray
from rankstats.null.median_rules import (
    _nodes_per_piece,
    _piece_nodes,
    exponential_nodes_per_piece,
)

__all__ = [
    "PIECES_PER_BLOCK",
    "Cuts",
    "Pieces",
    "kernel_pieces",
    "node_blocks",
    "pair_count",
    "panel_nodes",
    "shift_cuts",
]

#: the panels of the nodes are built in blocks of about this many pieces (each piece a few
#: dozen pairs at most), so the pairs in memory at once are bounded whatever the counts (about
#: 5 MB at the peak: 8192 pieces took 10 MB)
PIECES_PER_BLOCK = 4_096


class Pieces(NamedTuple):
    """Pieces of the sums over ``t``: start, length, Gauss nodes, node, count index."""

    starts: IntArray
    lengths: IntArray
    nus: IntArray
    owner: IntArray
    ix: IntArray


def kernel_pieces(
    values: FloatArray,
    below: FloatArray,
    a: int,
    y: FloatArray,
    span: IntArray,
    power: FloatArray,
) -> Pieces:
    r"""The pieces in :math:`t` of :math:`\sum_{t=1}^{T_j} f_j(t)`, for one rule per piece.

    The integers :math:`1..T_j` are cut where :math:`x = y_j - t` crosses a count (the kernel
    has a kink there) and into pieces of at most four decay lengths :math:`y / (a - c(y))` (and
    a quarter of :math:`y`, over which the weights :math:`\varphi` are smooth); pieces are then
    summed point by point or by discrete Gauss rules (see
    :func:`rankstats.null.median_rules._piece_nodes`).
    """
    nodes = np.arange(y.size)
    decay, step, i0, kinks, regular = shift_cuts(values, y, span, power)
    k_owner = np.repeat(nodes, kinks)
    k_index = np.arange(k_owner.size) - np.repeat(np.cumsum(kinks) - kinks, kinks) + i0[k_owner]
    k_cut = np.ceil(y[k_owner] - values[k_index])
    r_owner = np.repeat(nodes, regular)
    r_cut = 1.0 + step[r_owner] * (
        np.arange(r_owner.size) - np.repeat(np.cumsum(regular) - regular, regular) + 1.0
    )
    owner = np.concatenate((nodes, nodes, k_owner, r_owner))
    cut = np.concatenate((np.ones(y.size), span + 1.0, k_cut, r_cut))
    inside = (cut >= 1.0) & (cut <= span[owner] + 1.0)
    owner, cut_i = owner[inside], cut[inside].astype(np.int64)
    # the cuts (integers) sorted by node, then by t: as one key where it fits in 62 bits (a sort
    # of values is several times faster than a lexsort)
    width = int(span.max()) + 2
    if width * (y.size + 1) < 2**62:
        owner, cut_i = np.divmod(np.sort(owner * width + cut_i), width)
    else:
        order = np.lexsort((cut_i, owner))
        owner, cut_i = owner[order], cut_i[order]
    same = (owner[1:] == owner[:-1]) & (cut_i[1:] > cut_i[:-1])
    starts = cut_i[:-1][same]
    lengths = (cut_i[1:] - cut_i[:-1])[same]
    p_owner = owner[:-1][same]
    # no count lies strictly inside a piece: one count index per piece (alpha is continuous)
    middle = y[p_owner] - (starts + (lengths - 1) / 2.0)
    ix = np.asarray(np.searchsorted(values, middle, side="right"), dtype=np.int64)
    # the kernel's own decay length on each piece: below a count its power a - c(x) is larger
    # than at y (e.g. (x / 12)^33 below a count 12 where it is flat above)
    lowest = np.maximum(y[p_owner] - (starts + lengths - 1.0), 1.0)
    power_x = np.maximum(a - below[ix], 0.0)
    with np.errstate(divide="ignore"):
        decay_x = np.where(power_x > 0.0, lowest / np.maximum(power_x, 1.0), np.inf)
    # the kernel falls like an exponential on its decay length; the weights phi are smooth on
    # the scale of y (their pole s = 0 is at least y away)
    nus = np.maximum(
        exponential_nodes_per_piece(lengths, np.minimum(decay[p_owner], decay_x)),
        _nodes_per_piece(lengths, y[p_owner] / 8.0),
    )
    return Pieces(starts, lengths, nus, p_owner, ix)


def panel_nodes(pieces: Pieces) -> tuple[FloatArray, IntArray, FloatArray, IntArray]:
    """Nodes ``t``, their nodes ``y`` (index), weights and count index of the pieces."""
    t, w, piece = _piece_nodes(pieces.starts, pieces.lengths, nu=pieces.nus)
    return t, pieces.owner[piece], w, pieces.ix[piece]


def pair_count(pieces: Pieces) -> int:
    """How many pairs :func:`_panels` makes of these pieces (enumerated or ruled)."""
    lengths, nus = pieces.lengths, pieces.nus
    return int(np.where(lengths <= 2 * nus, lengths, nus).sum())


def node_blocks(found: Cuts) -> list[IntArray]:
    """The nodes in consecutive blocks of about :data:`PIECES_PER_BLOCK` pieces of panels.

    ``found`` is :func:`shift_cuts` of the nodes.
    """
    size = found.kinks.size
    pieces = found.kinks + found.regular + 2
    ends = np.searchsorted(
        np.cumsum(pieces), np.arange(PIECES_PER_BLOCK, int(pieces.sum()), PIECES_PER_BLOCK)
    )
    bounds = np.unique(np.concatenate(([0], ends + 1, [size])))
    bounds = bounds[bounds <= size]
    return [np.arange(lo, hi) for lo, hi in itertools.pairwise(bounds.tolist()) if hi > lo]


class Cuts(NamedTuple):
    """Where the pieces of each node's sum over ``t = 1..span`` are cut (:func:`kernel_pieces`)."""

    #: the kernel's decay length y / (a - c(y)), and the longest regular piece
    decay: FloatArray
    step: IntArray
    #: the first count in y - span .. y - 1 (each such count cuts a piece: a kink) and how many
    first_kink: IntArray
    kinks: IntArray
    #: the regular cuts, every ``step``
    regular: IntArray


def shift_cuts(values: FloatArray, y: FloatArray, span: IntArray, power: FloatArray) -> Cuts:
    """The cuts of every node's panels: at the counts it crosses and every few decay lengths."""
    with np.errstate(divide="ignore"):
        decay = np.where(power > 0.0, y / np.maximum(power, 1.0), np.inf)
    step = np.maximum(np.floor(np.minimum(4.0 * decay, y / 4.0)), 32.0).astype(np.int64)
    # kinks: counts b with y - T <= b < y cut at ceil(y - b)
    first = np.searchsorted(values, y - span, side="left")
    kinks = np.searchsorted(values, y, side="left") - first
    # a node with no shift (span 0: y = 1, or nothing within reach) has no cut
    return Cuts(decay, step, first, kinks, np.maximum(span - 1, 0) // step)
