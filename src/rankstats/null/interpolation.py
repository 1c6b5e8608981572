r"""Sums over many distinct candidate counts through a few interpolation nodes in :math:`\log C`.

The reciprocal-rank transforms of :mod:`rankstats.null.reciprocal` need, at every quadrature
node, :math:`\sum_g m_g f(C_g)` over the distinct counts :math:`C_g` of the tasks (with their
multiplicities :math:`m_g`), for a per-task function :math:`f` that is smooth in
:math:`\lambda = \log C` once :math:`C` is large. With :math:`10^6` distinct counts, evaluating
:math:`f` at each of them at each node is the whole cost. Here the counts above
:data:`LOWEST` are covered by intervals of :math:`\lambda` of width at most :data:`WIDTH`, each
with :data:`DEGREE` + 1 Chebyshev points (rounded to integers, so that :math:`f` is only ever
evaluated where it is defined), and the interpolation is folded into the multiplicities:

.. math::

    \sum_g m_g f(C_g) \approx \sum_g m_g \sum_k \ell_k(\lambda_g) f(c_k)
    = \sum_k W_k f(c_k), \qquad W_k = \sum_g m_g \ell_k(\lambda_g),

with the barycentric Lagrange basis :math:`\ell_k` of the interval holding :math:`\lambda_g`.
The weights :math:`W_k` do not depend on the node, so every node costs a few hundred
evaluations of :math:`f` instead of one per distinct count, and memory is independent of both
:math:`\max C` and the number of distinct counts. Degree 16 on intervals of width 1/2 in
:math:`\lambda` interpolates the transforms to about their own rounding: measured on the
harmonic and arithmetic transforms for counts from :math:`2^{12}` to :math:`10^{15}`, the folded
sums agree with the sums over every count to 1e-15 to 2e-15 relative, the expected values of the
reciprocal metrics to 2e-16 and their variances (which the centred quadrature is more sensitive
to) to 3e-14 (``tests/test_interpolation.py``). A higher degree or narrower intervals change
nothing: what is left is rounding, not interpolation error.

The counts of one share are folded when they are at least :data:`MIN_DISTINCT` and at least
:data:`MIN_GAIN` times the interpolation counts that would replace them: a dataset's filtered
counts (FB15k-237: about a thousand distinct counts within 7% of 14,541) become 17 nodes, which
makes the harmonic mean rank's moments several times faster there.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from rankstats.arrays import BoolArray, FloatArray, IntArray
from rankstats.null.median_rules import matmul

__all__ = [
    "DEGREE",
    "LOWEST",
    "MIN_DISTINCT",
    "MIN_GAIN",
    "WIDTH",
    "chebyshev_coefficients",
    "chebyshev_counts",
    "chebyshev_interpolate",
    "chebyshev_points",
    "count_intervals",
    "interpolation_pairs",
    "lagrange_basis",
]

#: counts below this are kept as they are
LOWEST = 2**12
#: the polynomial degree on each interval
DEGREE = 16
#: the largest width of an interval in log C
WIDTH = 0.5
#: interpolate the counts of one share a_i only when there are at least this many distinct ones
MIN_DISTINCT = 256
#: ... and at least this many times the number of interpolation counts that would replace them
MIN_GAIN = 4


def chebyshev_counts(low: float, high: float) -> FloatArray:
    """Integer counts at the Chebyshev points of the second kind of [low, high] in log C."""
    k = np.arange(DEGREE + 1)
    points = 0.5 * (low + high) - 0.5 * (high - low) * np.cos(np.pi * k / DEGREE)
    counts: FloatArray = np.unique(np.round(np.exp(points))).astype(np.float64)
    return counts


def lagrange_basis(nodes: FloatArray, x: FloatArray) -> FloatArray:
    """The Lagrange basis of ``nodes`` at ``x`` (rows: x, columns: nodes), barycentric form."""
    difference = nodes[:, None] - nodes[None, :]
    np.fill_diagonal(difference, 1.0)
    weights = 1.0 / np.prod(difference, axis=1)
    offset = x[:, None] - nodes[None, :]
    exact = offset == 0.0
    offset[exact] = 1.0
    terms = weights[None, :] / offset
    basis = terms / terms.sum(axis=1, keepdims=True)
    hit = exact.any(axis=1)
    basis[hit] = exact[hit].astype(np.float64)
    return np.asarray(basis, dtype=np.float64)


def chebyshev_points(size: int) -> FloatArray:
    r"""The Chebyshev points of the second kind on :math:`[-1, 1]`, ascending.

    :math:`-\cos(\pi k / (size - 1))`; those of ``size`` are every other one of ``2 size - 1``.
    """
    points: FloatArray = -np.cos(np.pi * np.arange(size) / (size - 1))
    return points


def chebyshev_interpolate(values: FloatArray, points: FloatArray, at: FloatArray) -> FloatArray:
    r"""The interpolant through ``values`` at ``points``, evaluated ``at`` (any affine image).

    ``points`` are :func:`chebyshev_points` mapped to the caller's axis and rounded there, as
    the values were computed at them; one column of ``values`` per function. The barycentric
    formula with the points' weights :math:`(-1)^k`, halved at both ends (invariant under the
    affine map, and stable for any number of points, unlike weights from products of
    differences); a point of ``at`` on a point takes that point's value. Taking the differences
    on the caller's axis, not on :math:`[-1, 1]`, matters: a tail changing by 0.5 over a window
    varies 40 times faster than its values in the units of :math:`[-1, 1]`, and the roundings
    of mapping nodes and points there had cost 3e-15 (a few 1e-14 on a median's variance).
    """
    size = values.shape[0]
    weights = np.where(np.arange(size) % 2 == 0, 1.0, -1.0)
    weights[[0, -1]] *= 0.5
    # numerators and the denominator from one product (the last column); a point of ``at`` on
    # a point makes its row infinite or NaN, and takes the point's value below
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = weights[None, :] / (at[:, None] - points[None, :])
        both = matmul(terms, np.column_stack((values, np.ones(size))))
        out: FloatArray = both[:, :-1] / both[:, -1:]
    on_point = ~np.isfinite(both[:, -1])
    if np.any(on_point):
        out[on_point] = values[np.searchsorted(points, at[on_point])]
    return out


def chebyshev_coefficients(values: FloatArray) -> FloatArray:
    r"""Chebyshev coefficients of the interpolant through ``values`` at :func:`chebyshev_points`.

    One column per function (rows: the points). The discrete cosine transform of the first kind,
    as a matrix product: :math:`c_j = \frac{2}{K - 1} {\sum_k}'' f_k \cos(\pi j k / (K - 1))`
    (first and last terms halved), :math:`c_0` and :math:`c_{K-1}` halved. The points ascend,
    so :math:`c_j` here is :math:`(-1)^j` times the usual one; only its size matters to callers.
    """
    coef: FloatArray = _cosine_transform(values.shape[0]) @ values
    return coef


@functools.lru_cache(maxsize=8)
def _cosine_transform(size: int) -> FloatArray:
    """The matrix of :func:`chebyshev_coefficients` for ``size`` points (read-only, cached)."""
    k = np.arange(size)
    transform = np.cos(np.pi * np.outer(k, k) / (size - 1)) * (2.0 / (size - 1))
    transform[:, [0, -1]] *= 0.5
    transform[[0, -1]] *= 0.5
    transform.setflags(write=False)
    return transform


def _fold(counts: IntArray, multiplicity: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Interpolation counts and weights W_k for the counts (all >= LOWEST) of one share."""
    log_counts = np.log(counts.astype(np.float64))
    low, high = float(log_counts.min()), float(log_counts.max())
    pieces = max(1, math.ceil((high - low) / WIDTH))
    edges = np.linspace(low, high, pieces + 1)
    piece = np.minimum(np.searchsorted(edges, log_counts, side="right") - 1, pieces - 1)
    node_counts, node_weights = [], []
    for index in range(pieces):
        inside = piece == index
        if not inside.any():
            continue
        nodes = chebyshev_counts(float(edges[index]), float(edges[index + 1]))
        log_nodes = np.log(nodes)
        # whole blocks of the interval's counts at a time: bounded memory
        weights = np.zeros(nodes.size)
        members = np.flatnonzero(inside)
        for start in range(0, members.size, 1 << 14):
            block = members[start : start + (1 << 14)]
            weights += multiplicity[block] @ lagrange_basis(log_nodes, log_counts[block])
        node_counts.append(nodes)
        node_weights.append(weights)
    counts_all = np.concatenate(node_counts)
    weights_all = np.concatenate(node_weights)
    merged, inverse = np.unique(counts_all, return_inverse=True)  # shared interval ends
    folded = np.bincount(inverse, weights=weights_all, minlength=merged.size)
    return merged, folded.astype(np.float64)


def _worth_folding(log_counts: FloatArray, group: IntArray, groups: int) -> BoolArray:
    r"""Which groups of counts are many more than the interpolation counts that would replace them.

    A group spanning :math:`R` in :math:`\log C` is replaced by at most
    :math:`\lceil R / \text{WIDTH} \rceil (\text{DEGREE} + 1)` counts.
    """
    size = np.bincount(group, minlength=groups)
    low = np.full(groups, np.inf)
    high = np.full(groups, -np.inf)
    np.minimum.at(low, group, log_counts)
    np.maximum.at(high, group, log_counts)
    pieces = np.maximum(1.0, np.ceil((high - low) / WIDTH))
    worth: BoolArray = (size >= MIN_DISTINCT) & (size >= MIN_GAIN * (DEGREE + 1) * pieces)
    return worth


def interpolation_pairs(
    counts: IntArray, shares: FloatArray, multiplicity: FloatArray
) -> tuple[IntArray, FloatArray, FloatArray]:
    r"""Replace many distinct large counts of equal share by interpolation nodes.

    Parameters
    ----------
    counts, shares, multiplicity : numpy.ndarray of shape (g,)
        Distinct pairs :math:`(C_g, a_g)` and how often each occurs.

    Returns
    -------
    tuple of numpy.ndarray
        Pairs and (real, possibly negative) multiplicities with
        :math:`\sum m_g f(C_g, a_g)` unchanged up to the interpolation error for every smooth
        :math:`f`; unchanged input where there are too few large counts of one share.
    """
    large = counts >= LOWEST
    if np.count_nonzero(large) < MIN_DISTINCT:
        return counts, shares, multiplicity
    values, inverse = np.unique(shares[large], return_inverse=True)
    folded_groups = np.flatnonzero(_worth_folding(np.log(counts[large]), inverse, values.size))
    if folded_groups.size == 0:
        return counts, shares, multiplicity
    large_index = np.flatnonzero(large)
    folded = np.zeros(values.size, dtype=bool)
    folded[folded_groups] = True
    keep = np.ones(counts.size, dtype=bool)
    keep[large_index[folded[inverse]]] = False
    out_counts, out_shares, out_multiplicity = [counts[keep]], [shares[keep]], [multiplicity[keep]]
    for group in folded_groups:  # few: each holds MIN_DISTINCT counts at least
        members = large_index[inverse == group]
        nodes, weights = _fold(counts[members], multiplicity[members])
        out_counts.append(nodes.astype(np.int64))
        out_shares.append(np.full(nodes.size, values[group]))
        out_multiplicity.append(weights)
    return (
        np.concatenate(out_counts).astype(np.int64),
        np.concatenate(out_shares),
        np.concatenate(out_multiplicity),
    )


def count_intervals(
    counts: IntArray, lowest: int
) -> tuple[IntArray, IntArray, list[tuple[IntArray, IntArray]]]:
    r"""Interpolation counts standing for many distinct counts, whatever their shares.

    The counts from ``lowest`` up are put in the intervals
    :math:`[\log(\text{lowest}) + k\,\text{WIDTH}, \log(\text{lowest}) + (k+1)\,\text{WIDTH}]`
    (fixed edges, so neighbouring intervals share their end counts); an interval holding more
    distinct counts than its :func:`chebyshev_counts` is folded into them, the others (and
    the counts below ``lowest``) stand for themselves.

    Parameters
    ----------
    counts : numpy.ndarray of shape (g,)
        Sorted distinct counts :math:`\ge 1`.
    lowest : int
        The smallest count that may be folded.

    Returns
    -------
    nodes : numpy.ndarray
        The sorted distinct counts that stand for all of ``counts``.
    position : numpy.ndarray of shape (g,)
        For a count standing for itself, its index in ``nodes``; -1 for a folded one.
    intervals : list of (members, node_positions)
        For each folded interval, the indices of its counts in ``counts`` and of its
        interpolation counts in ``nodes``; the weight of ``nodes[node_positions[k]]`` for
        ``counts[members[i]]`` is ``lagrange_basis(log nodes[node_positions], log counts)[i, k]``.
    """
    log_low = math.log(lowest)
    log_counts = np.log(counts.astype(np.float64))
    interval = np.where(counts >= lowest, np.floor((log_counts - log_low) / WIDTH), -1.0)
    interval = interval.astype(np.int64)
    labels, starts, sizes = np.unique(interval, return_index=True, return_counts=True)
    folded: list[tuple[IntArray, FloatArray]] = []
    own = np.ones(counts.size, dtype=bool)
    for label, start, size in zip(labels.tolist(), starts.tolist(), sizes.tolist(), strict=True):
        if label < 0 or size <= DEGREE + 1:
            continue
        nodes = chebyshev_counts(log_low + WIDTH * label, log_low + WIDTH * (label + 1))
        if size <= nodes.size:
            continue
        own[start : start + size] = False
        folded.append((np.arange(start, start + size), nodes))
    all_nodes = np.unique(
        np.concatenate([counts[own].astype(np.float64), *(nodes for _, nodes in folded)])
    ).astype(np.int64)
    position = np.full(counts.size, -1, dtype=np.int64)
    position[own] = np.searchsorted(all_nodes, counts[own])
    intervals = [
        (members, np.searchsorted(all_nodes, nodes.astype(np.int64))) for members, nodes in folded
    ]
    return all_nodes, position, intervals
