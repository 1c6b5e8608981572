r"""Null moments of the weighted population variance of the ranks.

Under the null the ranks :math:`r_i \sim \mathcal{U}\{1, \dots, C_i\}` are independent; this module
gives the exact mean and variance of their weighted variance (``ddof = 0``),

.. math::

    S^2 = \sum_{i=1}^{n} a_i \Bigl(r_i - \sum_{j=1}^{n} a_j r_j\Bigr)^2,
    \qquad a_i = \frac{w_i}{\sum_j w_j},

in :math:`O(n)` vectorised operations, without cancellation for huge :math:`C_i` or tiny spreads.
"""

from __future__ import annotations

import numpy as np

from rankstats.arrays import FloatArray, IntArray
from rankstats.weighting import pairwise_dot

__all__ = ["weighted_variance_moments"]


def _sum_of_distinct_pair_products(u: FloatArray, total: float) -> float:
    r"""Return :math:`\sum_{i \ne j} u_i u_j` for :math:`u \ge 0` without cancellation.

    The short form :math:`U^2 - \sum_i u_i^2` (with :math:`U = \sum_i u_i`) cancels when one term
    dominates; it is used only while :math:`\sum_i u_i^2 \le U^2 / 2`, where it loses at most one
    bit. Otherwise the sum is :math:`2 \sum_j u_j P_j`, with exclusive prefix sums :math:`P_j`,
    which adds non-negative terms only.
    """
    squares = pairwise_dot(u, u)
    if squares <= 0.5 * total * total:
        return total * total - squares
    prefix = np.empty_like(u)
    prefix[0] = 0.0
    np.cumsum(u[:-1], out=prefix[1:])
    return 2.0 * pairwise_dot(u, prefix)


def weighted_variance_moments(
    num_candidates: IntArray, weights: FloatArray | None = None
) -> tuple[float, float]:
    r"""Return the null expectation and variance of the weighted variance of the ranks.

    .. math::

        S^2 = \sum_{i=1}^{n} a_i (r_i - \bar r)^2, \qquad
        \bar r = \sum_{j=1}^{n} a_j r_j, \qquad a_i = \frac{w_i}{\sum_j w_j}

    with :math:`r_i \sim \mathcal{U}\{1, \dots, C_i\}` independent. For equal weights
    :math:`S^2` is ``np.var(ranks)`` (``ddof = 0``); in general it is
    ``np.average((ranks - np.average(ranks, weights=w)) ** 2, weights=w)``.

    Parameters
    ----------
    num_candidates : numpy.ndarray of shape (n,)
        The number of candidates :math:`C_i \ge 1` of each ranking task (int64).
    weights : numpy.ndarray of shape (n,), optional
        Non-negative scaling factors :math:`w_i` with a positive sum (float64); ``None`` means
        equal weights.

    Returns
    -------
    expectation : float
        :math:`\mathbb{E}[S^2]`.
    variance : float
        :math:`\mathbb{V}[S^2]`.

    Notes
    -----
    Write :math:`r_i = m_i + x_i` with :math:`m_i = (C_i + 1)/2` and centred, symmetric
    :math:`x_i`, whose moments are

    .. math::

        \sigma_i^2 = \mathbb{E}[x_i^2] = \frac{C_i^2 - 1}{12}, \qquad
        \mu_{4,i} = \mathbb{E}[x_i^4] = \frac{(C_i^2 - 1)(3 C_i^2 - 7)}{240}, \qquad
        \mathbb{E}[x_i^3] = 0,

    and let :math:`d_i = m_i - \sum_j a_j m_j`, so that :math:`\sum_i a_i d_i = 0`. Since
    :math:`\sum_i a_i (y_i - \bar y)^2 = \sum_i a_i y_i^2 - \bar y^2` for any :math:`y`,

    .. math::

        S^2 = \sum_i a_i d_i^2 + 2 \sum_i a_i d_i x_i + x^\top A x, \qquad
        A = \operatorname{diag}(a) - a a^\top .

    For independent centred :math:`x_i`,
    :math:`\mathbb{E}[x^\top A x] = \sum_i A_{ii} \sigma_i^2`,
    :math:`\mathbb{V}[x^\top A x] = \sum_i A_{ii}^2 (\mu_{4,i} - 3\sigma_i^4)
    + 2 \sum_{i,j} A_{ij}^2 \sigma_i^2 \sigma_j^2`, and the linear and quadratic parts are
    uncorrelated because every third moment vanishes. With :math:`A_{ii} = a_i (1 - a_i)`,
    :math:`A_{ij} = -a_i a_j` and :math:`v_i = \mu_{4,i} - \sigma_i^4 = \mathbb{V}[x_i^2]
    = (C_i^2 - 1)(C_i^2 - 4)/180`:

    .. math::

        \mathbb{E}[S^2] &= \sum_i a_i (1 - a_i)\, \sigma_i^2 + \sum_i a_i d_i^2, \\
        \mathbb{V}[S^2] &= \sum_i a_i^2 (1 - a_i)^2\, v_i
            + 2 \sum_{i \ne j} a_i^2 \sigma_i^2 \, a_j^2 \sigma_j^2
            + 4 \sum_i a_i^2 d_i^2 \sigma_i^2 .

    Every term is non-negative, so nothing cancels once the pieces are accurate:
    :math:`C^2 - 1` and :math:`C^2 - 4` are formed as :math:`(C - 1)(C + 1)` and
    :math:`(C - 2)(C + 2)`; :math:`d_i` is computed from the exact integers
    :math:`C_i - c_0` around an integer :math:`c_0` near the weighted mean of :math:`C`, so a tiny
    spread of huge :math:`C_i` (say :math:`10^{12} + k`) keeps its digits; :math:`1 - a_i` is
    summed from the other weights for the one weight that may exceed one half; and the sum over
    pairs :math:`i \ne j` avoids :math:`U^2 - \sum u_i^2` when one term dominates. The result
    matches exact enumeration (``tests/test_dispersion_null.py``) to a few units in the last
    place.

    Examples
    --------
    Exact values are :math:`35/32` and :math:`12007/15360` here:

    >>> from fractions import Fraction
    >>> mean, variance = weighted_variance_moments(np.array([1, 2, 3, 5]))
    >>> Fraction(mean).limit_denominator(10**6), Fraction(variance).limit_denominator(10**6)
    (Fraction(35, 32), Fraction(12007, 15360))

    Weighted, and with every task certain:

    >>> weights = np.array([1.0, 2.0, 0.5, 3.0])
    >>> mean, variance = weighted_variance_moments(np.array([1, 2, 3, 5]), weights)
    >>> Fraction(mean).limit_denominator(10**6), Fraction(variance).limit_denominator(10**6)
    (Fraction(214, 169), Fraction(635108, 428415))
    >>> weighted_variance_moments(np.array([1, 1, 1]))
    (0.0, 0.0)
    """
    c = num_candidates.astype(np.float64)
    sigma2 = (c - 1.0) * (c + 1.0) / 12.0
    var_x2 = sigma2 * ((c - 2.0) * (c + 2.0) / 15.0)
    n = num_candidates.size

    if weights is None:
        a: FloatArray | float = 1.0 / n
        one_minus_a: FloatArray | float = (n - 1.0) / n
        mean_c = float(np.mean(c))
    else:
        total_weight = float(np.sum(weights))
        a = weights / total_weight
        one_minus_a = 1.0 - a
        largest = int(np.argmax(a))
        if a[largest] > 0.5:  # 1 - a would cancel: sum the other weights instead
            others = float(np.sum(weights[:largest])) + float(np.sum(weights[largest + 1 :]))
            one_minus_a[largest] = others / total_weight
        mean_c = pairwise_dot(a, c)

    # d_i = (C_i - sum_j a_j C_j) / 2, from exact integer offsets to an integer near the mean
    low, high = int(num_candidates.min()), int(num_candidates.max())
    reference = min(max(round(mean_c), low), high)
    offsets = (num_candidates - reference).astype(np.float64)
    if weights is None:
        d = 0.5 * (offsets - np.mean(offsets))
    else:
        d = 0.5 * (offsets - pairwise_dot(a, offsets))
    d2 = d * d

    diagonal = a * one_minus_a
    if weights is None:
        e_quadratic = float(diagonal * np.sum(sigma2))
        e_linear = float(np.sum(d2)) / n
        v_diagonal = float(diagonal * diagonal * np.sum(var_x2))
        v_linear = pairwise_dot(d2, sigma2) / (n * n)
        u_total = float(np.sum(sigma2))
        v_pairs = _sum_of_distinct_pair_products(sigma2, u_total) / float(n) ** 4
    else:
        e_quadratic = pairwise_dot(diagonal, sigma2)
        e_linear = pairwise_dot(a, d2)
        v_diagonal = pairwise_dot(diagonal * diagonal, var_x2)
        u = a * a * sigma2
        v_linear = pairwise_dot(u, d2)
        v_pairs = _sum_of_distinct_pair_products(u, float(np.sum(u)))
    expectation = e_quadratic + e_linear
    variance = v_diagonal + 2.0 * v_pairs + 4.0 * v_linear
    return expectation, variance
