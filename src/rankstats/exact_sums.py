r"""Sums of floating-point numbers as if added exactly, rounded once: vectorised, per group.

Where a sum cancels (its terms large, the sum small), the rounding of each partial sum can take
every digit of the result; :func:`math.fsum` avoids this, one number at a time in Python's loop.
:func:`exact_sum` gives the same accuracy in a few numpy passes, and for many groups at once
(one sum per group of the terms).

The method is error-free extraction (Rump, Ogita and Oishi, *Accurate floating-point summation
part I: faithful rounding*, SIAM J. Sci. Comput. 31(1), 2008). For :math:`n` terms of
magnitude at most :math:`m`, take the power of two :math:`\sigma \ge (n + 2)\, m`. Then each

.. math:: q_i = \mathrm{fl}(\mathrm{fl}(\sigma + x_i) - \sigma), \qquad r_i = x_i - q_i

is computed without error, the :math:`q_i` are multiples of :math:`u = 2^{-53} \sigma`, and
:math:`|\sum q_i| \le \sigma = 2^{53} u`: every partial sum of the :math:`q_i`, in any order
and in any group, is a multiple of :math:`u` below :math:`2^{53} u`, so it is exact. The
residuals :math:`|r_i| \le u` are extracted again, level after level, until every residual is
0: each level takes about :math:`53 - \log_2(4 (n + 2))` bits, so terms of similar magnitudes
take two or three levels, integers one, and the whole range of doubles a few dozen. The levels'
exact sums (per group) are then added with Neumaier's compensation, each addition's rounding
error kept and added back at the end.

**Error bound.** Every level's sum is exact, so the only roundings are those of adding the
levels' sums, whose magnitudes fall by a factor of about :math:`2^{45}` from each to the next:
the result is within a unit or two in the last place of the exact sum (the tests compare it
with exact rational sums).
"""

from __future__ import annotations

import math
from typing import overload

import numpy as np

from rankstats.arrays import FloatArray, IntArray

__all__ = ["exact_products", "exact_sum"]

#: Veltkamp's splitting constant for doubles: 2**27 + 1
_SPLITTER = 134217729.0
#: more extraction levels than the exponents of doubles need (each takes about 45 bits)
_MAX_LEVELS = 64


@overload
def exact_sum(terms: FloatArray, groups: None = None, size: int = 1) -> float: ...


@overload
def exact_sum(terms: FloatArray, groups: IntArray, size: int) -> FloatArray: ...


def exact_sum(
    terms: FloatArray, groups: IntArray | None = None, size: int = 1
) -> float | FloatArray:
    r"""The sum of ``terms`` (per group), rounded once from the exact sum.

    Parameters
    ----------
    terms : numpy.ndarray of shape (n,)
        Finite float64 numbers, :math:`n + 2` times the largest magnitude below
        :math:`2^{1023}` (the extraction's :math:`\sigma` must be finite).
    groups : numpy.ndarray of shape (n,), optional
        Each term's group, an integer in ``[0, size)``; ``None`` for one sum of every term.
    size : int
        The number of groups.

    Returns
    -------
    float or numpy.ndarray of shape (size,)
        The sum (``groups`` omitted) or each group's sum, 0 for a group without terms.

    Examples
    --------
    >>> terms = np.array([1.0, 1e-30, -1.0])
    >>> float(np.sum(terms)), exact_sum(terms)
    (0.0, 1e-30)
    >>> exact_sum(np.array([1.0, 1e-20, -1.0, 2.0]), np.array([0, 0, 0, 1]), 2).tolist()
    [1e-20, 2.0]
    """
    residual = np.asarray(terms, dtype=np.float64)
    levels: list[FloatArray] = []
    for _ in range(_MAX_LEVELS):
        largest = float(np.max(np.abs(residual), initial=0.0))
        if largest == 0.0:
            break
        # sigma: a power of two at least (n + 2) times the largest magnitude
        sigma = math.ldexp(1.0, math.frexp(largest)[1] + (residual.size + 2).bit_length())
        high = (sigma + residual) - sigma  # exact, in multiples of 2**-53 sigma
        residual = residual - high  # exact
        levels.append(_group_sums(high, groups, size))
    else:  # pragma: no cover - more levels than the exponents of doubles span
        levels.append(_group_sums(residual, groups, size))
    # the levels' exact sums added with compensation (Neumaier): each addition's error is kept
    total = np.zeros(size)
    compensation = np.zeros(size)
    for level in levels:
        added = total + level
        virtual = added - total
        compensation += (total - (added - virtual)) + (level - virtual)
        total = added
    result: FloatArray = total + compensation
    return float(result[0]) if groups is None else result


def _group_sums(values: FloatArray, groups: IntArray | None, size: int) -> FloatArray:
    """The sum of ``values`` in each group (one group without ``groups``), as ``(size,)``."""
    if groups is None:
        return np.array([values.sum()])
    summed: FloatArray = np.bincount(groups, weights=values, minlength=size).astype(
        np.float64, copy=False
    )
    return summed


def exact_products(a: FloatArray, b: FloatArray) -> tuple[FloatArray, FloatArray]:
    r"""Each product :math:`a_i b_i` as two doubles that add up to it exactly.

    Dekker's product (Veltkamp's splitting of each factor into halves of 26 bits, whose
    products are exact): :math:`p = \mathrm{fl}(a b)` and the rounding error
    :math:`e = a b - p`, for factors whose magnitudes stay below about :math:`2^{995}` and whose
    product's error is not below the least normal double (:math:`2^{-1022}`).

    Examples
    --------
    >>> high, low = exact_products(np.array([1e6]), np.array([499999999999.5]))
    >>> float(high[0]), float(low[0])
    (4.999999999995e+17, -32.0)
    """
    product = a * b
    a_high, a_low = _split(a)
    b_high, b_low = _split(b)
    error = ((a_high * b_high - product) + a_high * b_low + a_low * b_high) + a_low * b_low
    return product, error


def _split(values: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Each double as the sum of two with at most 26 significant bits each (Veltkamp)."""
    scaled = _SPLITTER * values
    high = scaled - (scaled - values)
    return high, values - high
