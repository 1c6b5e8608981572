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
from rankstats.null.tasks import Tasks
from rankstats.weighting import pairwise_dot

__all__ = ["weighted_variance_moments", "weighted_variance_moments_of"]


def _sum_of_distinct_pair_products(u: FloatArray, m: FloatArray) -> float:
    r"""Return :math:`\sum_{i \ne j} u_i u_j` over tasks for :math:`u \ge 0`, without cancellation.

    Row :math:`k` stands for :math:`m_k` tasks of value :math:`u_k`. The short form
    :math:`U^2 - \sum_i u_i^2` (with :math:`U = \sum_i u_i`) cancels when one task dominates; it
    is used only while :math:`\sum_i u_i^2 \le U^2 / 2`, where it loses at most one bit.
    Otherwise the sum is :math:`\sum_k m_k u_k (2 P_k + (m_k - 1) u_k)`, with the exclusive
    prefix sums :math:`P_k` of :math:`m u`, which adds non-negative terms only.
    """
    mu = m * u
    total = pairwise_dot(mu, 1.0)
    squares = pairwise_dot(mu, u)
    if squares <= 0.5 * total * total:
        return total * total - squares
    prefix = np.empty_like(u)
    prefix[0] = 0.0
    np.cumsum(mu[:-1], out=prefix[1:])
    return pairwise_dot(mu, 2.0 * prefix + (m - 1.0) * u)


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
    return weighted_variance_moments_of(Tasks(num_candidates, weights))


def weighted_variance_moments_of(tasks: Tasks) -> tuple[float, float]:
    """:func:`weighted_variance_moments` of tasks given as rows with multiplicities."""
    tasks.require_each_weight("the null model of the ranks' variance")
    candidates = tasks.candidates
    c = candidates.astype(np.float64)
    sigma2 = (c - 1.0) * (c + 1.0) / 12.0
    var_x2 = sigma2 * ((c - 2.0) * (c + 2.0) / 15.0)
    n = tasks.size
    # the number of tasks of each row
    m = np.ones(c.size) if tasks.counts is None else tasks.counts.astype(np.float64)

    if tasks.weights is None:
        a: FloatArray = np.full(c.size, 1.0 / n)
        one_minus_a: FloatArray = np.full(c.size, (n - 1.0) / n)
    else:
        row_weights = tasks.row_weights
        total_weight = tasks.total_weight
        a = tasks.weights / total_weight
        one_minus_a = 1.0 - a
        largest = int(np.argmax(a))
        # 1 - a would cancel: sum the other weights instead (a > 1/2 means a row of one task)
        if a[largest] > 0.5:
            others = pairwise_dot(row_weights[:largest], 1.0) + pairwise_dot(
                row_weights[largest + 1 :], 1.0
            )
            one_minus_a[largest] = others / total_weight
    # the share of each row's tasks together
    share = m * a

    # d_i = (C_i - sum_j a_j C_j) / 2, from exact integer offsets to an integer near the mean
    low, high = int(candidates.min()), int(candidates.max())
    reference = min(max(round(pairwise_dot(share, c)), low), high)
    offsets = (candidates - reference).astype(np.float64)
    d = 0.5 * (offsets - pairwise_dot(share, offsets))
    d2 = d * d

    diagonal = a * one_minus_a
    e_quadratic = pairwise_dot(m * diagonal, sigma2)
    e_linear = pairwise_dot(share, d2)
    v_diagonal = pairwise_dot(m * (diagonal * diagonal), var_x2)
    u = a * a * sigma2
    v_linear = pairwise_dot(m * u, d2)
    v_pairs = _sum_of_distinct_pair_products(u, m)
    expectation = e_quadratic + e_linear
    variance = v_diagonal + 2.0 * v_pairs + 4.0 * v_linear
    return expectation, variance
