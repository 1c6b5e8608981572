r""":math:`M - \mathbb{E}[M]` of a mean-type metric, exact where the rounded means cancel.

The adjusted and z-scored metrics divide :math:`M - \mathbb{E}[M]` by a scale. For a metric
that is a weighted mean of per-task terms, :math:`M = \sum_i a_i t(r_i)` and
:math:`\mathbb{E}[M] = \sum_i a_i \bar t(C_i)` (:math:`a_i = w_i / W`), each rounded to a double
before the difference is taken. Where :math:`M` and :math:`\mathbb{E}[M]` (or their gaps
:math:`1 - M` and :math:`1 - \mathbb{E}[M]`) share leading digits, those roundings take the
digits of the difference: tasks with one candidate next to a task with :math:`10^{12}`, say,
give ``Hits@10`` of :math:`2/3` against an expectation of :math:`2/3 + 3.3 \cdot 10^{-12}`, and
the adjusted ``Hits@10`` came out :math:`8 \cdot 10^{-8}` off.

:func:`ill_conditioned` says where the rounded difference may have lost digits: where it is
below :math:`1 / L` (:data:`CONDITION_LIMIT`, :math:`L = 256`) of the smaller of
:math:`|\mathbb{E}|` and :math:`|1 - \mathbb{E}|` (of :math:`|\mathbb{E}|` alone where
:math:`1 - M` is not computed directly, as for the expectation over tie-breaking). Elsewhere the
pair it is taken from is at most :math:`2 L + 1 = 513` times the difference in magnitude, and
each of the pair (a sum of :math:`n` terms) is within :math:`c` units of :math:`2^{-53}` of its
own magnitude: the difference is within :math:`513\, c \cdot 2^{-53}` of itself, below
:math:`10^{-12}` for :math:`c` up to 17. For pairwise sums :math:`c` grows as
:math:`\log_2 n` at worst, and is a few units in practice; for the integer sums of the mean
rank it is 1 (the division alone rounds).
There :func:`exact_difference` takes the sum

.. math:: W \, (M - \mathbb{E}[M]) = \sum_i w_i\, t(r_i) - \sum_j w_j\, \bar t(C_j)

over both lists at once, exactly (:func:`~rankstats.exact_sums.exact_sum`), each product in the
form that carries its digits: :math:`w\, t` or :math:`w - w\, (1 - t)`, whichever of
:math:`t` and :math:`1 - t` is smaller, with the gap computed directly
(:class:`ChanceTerms`), each product itself exact as a pair of doubles
(:func:`~rankstats.exact_sums.exact_products`: a weight of :math:`10^6` times a rank of
:math:`5 \cdot 10^{11}` takes more than 53 bits). What is left is the rounding of each term
(:math:`1/r`, :math:`H(C)/C`), a unit of :math:`2^{-53}` of that term, and none at all where
the terms are exact (a task with one candidate, a hit or a miss, an integer rank and its
expectation): the cancellation between tasks is gone.

Where a term is a ratio of integers (:math:`\min(k, C) / C` of ``Hits@k``, its expectation over
tie-breaking), rounding it before the product keeps a rounding that the product itself need not
have: ten tasks of ten candidates, three of them hits, gave the adjusted ``Hits@3`` as
:math:`1.6 \cdot 10^{-17}`, not 0, as :math:`10 \cdot \mathrm{fl}(3/10) \ne 3`. With the ratio
given (:attr:`ChanceTerms.expected_ratio`, ``rank_ratio`` of :func:`exact_difference`), a product
whose weight times the numerator is exact in a double is taken as that product divided by the
denominator, rounded once: exact wherever :math:`w\, t` is a double, and within half a unit of
:math:`2^{-53}` of it elsewhere (the form above is within a unit, or more for large weights).

Where :math:`M` and :math:`\mathbb{E}[M]` (and their gaps) are themselves exact sums, each
rounded once by the division by :math:`W`, :math:`c` is 1 (2 for a gap taken as ``1 - M``), and
the limit is :data:`EXACT_SUMS_LIMIT`, :math:`L = 1024`: :math:`(2 L + 1) \cdot 2 \cdot 2^{-53}`
is below :math:`4.6 \cdot 10^{-13}`. That is so for the mean rank of unweighted tasks
(:func:`sums_exact`): its terms, their expectations :math:`(C + 1) / 2` and their gaps are
multiples of :math:`1/2`, and so is every partial sum of them, exact in a double while below
:math:`2^{52}`. A group of a few tasks whose mean rank falls within a 256th of its expectation,
common enough, then needs no exact sum.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from rankstats.arrays import FloatArray, IntArray
from rankstats.exact_sums import exact_products, exact_sum
from rankstats.null.grouping import distinct_counts, distinct_inverse

__all__ = [
    "CONDITION_LIMIT",
    "EXACT_SUMS_LIMIT",
    "ChanceTerms",
    "ExactDifference",
    "Ratio",
    "candidate_rows",
    "condition_threshold",
    "exact_difference",
    "ill_conditioned",
    "multiples_of_half",
    "sums_exact",
    "weight_sums_exact",
]

#: the rounded difference is recomputed where the magnitudes it is taken from exceed this many
#: times its own (module doc)
CONDITION_LIMIT = 256.0
#: the limit where :math:`M` and :math:`\mathbb{E}` are exact sums, each rounded once
#: (:func:`sums_exact`, module doc)
EXACT_SUMS_LIMIT = 1024.0


#: a term as a ratio of integers (as doubles): ``(numerator, gap numerator, denominator)``, the
#: term being ``numerator / denominator`` and its gap ``gap numerator / denominator``
Ratio = tuple[FloatArray, FloatArray, FloatArray]


class ChanceTerms(NamedTuple):
    r"""A mean-type metric's per-task terms and their null expectations, each with its gap.

    ``value(r)`` is the term :math:`t(r)` of a rank, ``value_gap(r)`` is :math:`1 - t(r)`,
    ``expected(C)`` is :math:`\bar t(C) = \mathbb{E}[t(U\{1..C\})]` and ``expected_gap(C)`` is
    :math:`1 - \bar t(C)`, the gaps computed directly (without cancellation).
    """

    value: Callable[[FloatArray], FloatArray]
    value_gap: Callable[[FloatArray], FloatArray]
    expected: Callable[[IntArray], FloatArray]
    expected_gap: Callable[[IntArray], FloatArray]
    #: whether the terms of ranks that are multiples of 1/2, their expectations and their gaps
    #: are multiples of 1/2 too (the mean rank's): summed exactly where :func:`sums_exact`
    halves: bool = False
    #: the expectations as ratios of integers, where they are (:data:`Ratio`, ``Hits@k``'s
    #: :math:`\min(k, C) / C`): each weighted product then rounded once (module doc)
    expected_ratio: Callable[[IntArray], Ratio] | None = None


class ExactDifference(NamedTuple):
    r""":math:`M - \mathbb{E}` as one exact sum, and whether the rounded one needs it.

    ``compute()`` is the exact sum (:func:`exact_difference`); ``sums_exact()`` says whether
    :math:`M` and :math:`\mathbb{E}` were exact sums, each rounded once (terms with
    :attr:`ChanceTerms.halves` where :func:`sums_exact`): then the rounded difference is
    recomputed only below :data:`EXACT_SUMS_LIMIT`.
    """

    compute: Callable[[], Any]
    sums_exact: Callable[[], bool]


def condition_threshold(mean: Any, gap: Any, limit: float = CONDITION_LIMIT) -> Any:
    r"""The :math:`|D|` below which :func:`ill_conditioned` flags :math:`D`.

    :math:`\min(|\mathbb{E}|, |1 - \mathbb{E}|) / L`, :math:`L` the ``limit``
    (:data:`CONDITION_LIMIT` by default); computed once where many differences share it. NaN
    anywhere gives NaN (nothing flagged).
    """
    with np.errstate(invalid="ignore"):
        return np.minimum(np.abs(mean), np.abs(gap)) / limit


def ill_conditioned(
    difference: Any, mean: Any, gap: Any, limit: float = CONDITION_LIMIT
) -> npt.NDArray[np.bool_]:
    r"""Where the rounded :math:`D = M - \mathbb{E}` may have lost digits.

    That is where :math:`L |D| < \min(|\mathbb{E}|, |1 - \mathbb{E}|)`, :math:`L` the ``limit``
    (:data:`CONDITION_LIMIT`, or :data:`EXACT_SUMS_LIMIT` where :func:`sums_exact`).
    Elsewhere the pair :math:`D` is taken from (by
    :func:`~rankstats.metrics.derived.chance_difference`: :math:`M` and :math:`\mathbb{E}`, or
    their gaps, whichever :math:`\mathbb{E}` picks) is at most :math:`2 L + 1` times :math:`|D|`
    in magnitude, so :math:`D` keeps its digits but for the rounding of the pair. NaN anywhere
    gives ``False``.
    """
    with np.errstate(invalid="ignore"):
        return np.asarray(np.abs(difference) < condition_threshold(mean, gap, limit))


def multiples_of_half(values: npt.NDArray[Any]) -> bool:
    """Whether every value is a multiple of 1/2 below :math:`2^{52}` in magnitude.

    Examples
    --------
    >>> multiples_of_half(np.array([1.0, 2.5])), multiples_of_half(np.array([1.0, 2.25]))
    (True, False)
    """
    if values.dtype.kind in "iub":
        return True
    if values.dtype.kind != "f":
        return False
    with np.errstate(invalid="ignore", over="ignore"):
        doubled = 2.0 * values
        return bool(np.all(np.abs(doubled) < 2.0**53) and np.array_equal(doubled, np.rint(doubled)))


def sums_exact(
    ranks: Sequence[npt.NDArray[Any]], integer_weights: bool, total: float, largest: float
) -> bool:
    r"""Whether sums of terms that keep multiples of 1/2 are exact here, rounded once by the mean.

    For a metric whose terms keep multiples of :math:`1/2` (:attr:`ChanceTerms.halves`: the
    mean rank), :math:`M`, :math:`\mathbb{E}` and their gaps are then exact sums, each rounded
    once, by the division by :math:`W`, and :func:`ill_conditioned` takes
    :data:`EXACT_SUMS_LIMIT`. That is so where the ``ranks`` are multiples of :math:`1/2`, the
    tasks' weights integers (``integer_weights``: counts of unweighted tasks), and the total
    weight :math:`W` (``total``) times the ``largest`` candidate count is at most
    :math:`2^{51}`: every term is at most :math:`\max C` in magnitude, so every product and
    partial sum is a multiple of :math:`1/2` below :math:`2^{52}`, exact in a double, whatever
    the order of the additions.
    """
    return (
        integer_weights
        and total * largest <= 2.0**51
        and all(multiples_of_half(values) for values in ranks)
    )


def weight_sums_exact(weights: FloatArray) -> bool:
    r"""Whether every sum of some of the (nonnegative, finite) ``weights`` is exact in a double.

    So it is where each weight is a multiple of the smallest unit :math:`q` in the last place
    among them (a power of two) and their total is at most :math:`2^{52} q` (every partial sum
    is then a multiple of :math:`q` below :math:`2^{53} q`, the total's own rounding
    notwithstanding): integers, halves, any dyadic weights of a modest span, but not tenths.

    Examples
    --------
    >>> weight_sums_exact(np.array([0.5, 3.0, 0.25])), weight_sums_exact(np.array([0.1, 0.2]))
    (True, False)
    """
    nonzero = weights[weights != 0.0]
    if nonzero.size == 0:
        return True
    fraction, exponent = np.frexp(nonzero)
    mantissa = (fraction * 2.0**53).astype(np.int64)  # exact: 53 bits
    lowest = mantissa & -mantissa  # the lowest set bit of each
    unit = math.ldexp(1.0, int((exponent - 53 + np.log2(lowest).astype(np.int64)).min()))
    return float(nonzero.sum()) <= 2.0**52 * unit


def candidate_rows(
    candidates: IntArray, weights: FloatArray | None
) -> tuple[IntArray, FloatArray | None]:
    r"""The candidate counts' rows for :func:`exact_difference`: each distinct count once.

    Each distinct count comes with its number of tasks (unweighted) or the sum of its tasks'
    weights, where those sums are exact (:func:`weight_sums_exact`); otherwise one row per task
    with its own weight. A count's rows rounded once, not once per task, is what makes a mean of
    ratios exactly at chance give a difference of exactly 0 (module doc).
    """
    if weights is None:
        values, counts = distinct_counts(candidates)
        return values, counts.astype(np.float64)
    if not weight_sums_exact(weights):
        return candidates, weights
    values, inverse = distinct_inverse(candidates)
    totals: FloatArray = np.bincount(inverse, weights=weights, minlength=values.size).astype(
        np.float64, copy=False
    )
    return values, totals


def _parts(
    terms: FloatArray,
    gaps: FloatArray,
    weights: FloatArray | None,
    groups: IntArray | None,
    ratio: Ratio | None = None,
) -> tuple[list[FloatArray], list[IntArray]]:
    r"""``w t`` as ``w (t)`` or ``w - w (1 - t)``, whichever of the term and its gap is smaller.

    Returns the numbers whose sum is :math:`\sum w t`, and their groups (with ``groups``): the
    products (``w t`` or ``-w (1 - t)``) as two doubles each, adding up to them exactly
    (:func:`~rankstats.exact_sums.exact_products`), and the ``+w`` of the rows in the gap form.
    ``weights`` ``None`` stands for a weight of 1 each (no groups): the products are the terms,
    and the ``+w`` parts their count. With the terms' ``ratio``, a product whose weight times
    the numerator is exact is that product over the denominator, rounded once (module doc).
    """
    in_gap = np.abs(gaps) < np.abs(terms)
    chosen = np.where(in_gap, -gaps, terms)
    if weights is None:
        return [chosen, np.array([float(np.count_nonzero(in_gap))])], []
    high, low = exact_products(chosen, weights)
    if ratio is not None:
        numerator, gap_numerator, denominator = ratio
        scaled, error = exact_products(np.where(in_gap, -gap_numerator, numerator), weights)
        once = error == 0.0
        quotient = scaled / denominator
        # the quotient's remainder s - q d is a double (q correctly rounded), exactly
        # (s - fl(q d)) - err(q d): the quotient and the remainder over d, rounded, leave
        # 2^-53 of that remainder, so terms of different tasks cancel to the last digit
        # (1/3 + 1/6 of two tasks against the 1/2 of a third had kept their roundings)
        product, product_error = exact_products(quotient, denominator)
        with np.errstate(invalid="ignore"):  # rows not taken once: any value
            remainder = ((scaled - product) - product_error) / denominator
        high = np.where(once, quotient, high)
        low = np.where(once, remainder, low)
    if groups is None:
        return [high, low, weights[in_gap]], []
    return [high, low, weights[in_gap]], [groups, groups, groups[in_gap]]


def exact_difference(
    terms: ChanceTerms,
    ranks: FloatArray | None,
    rank_weights: FloatArray | None,
    candidates: IntArray,
    candidate_weights: FloatArray | None,
    total: Any,
    rank_groups: IntArray | None = None,
    candidate_groups: IntArray | None = None,
    size: int = 1,
    *,
    rank_terms: tuple[FloatArray, FloatArray] | None = None,
    rank_ratio: Ratio | None = None,
) -> Any:
    r""":math:`M - \mathbb{E}[M]` from the ranks and the candidate counts, as one exact sum.

    Parameters
    ----------
    terms
        The metric's per-task terms.
    ranks, rank_weights
        The ranks (or distinct ranks) and the total weight of the tasks of each (``None``: 1
        each, without groups).
        ``rank_terms`` may give their terms and the terms' gaps instead of ``ranks`` (the
        expectations over tie-breaking of pairs of ranks, say), and ``rank_ratio`` those terms
        as ratios of integers (:data:`Ratio`), where they are.
    candidates, candidate_weights
        The candidate counts (or distinct counts) and the total weight of the tasks of each
        (``None``: 1 each, without groups).
    total
        The total weight :math:`W` (per group with groups), the same for both lists.
    rank_groups, candidate_groups, size
        Each row's group, and the number of groups; ``None`` for one sum.

    Returns
    -------
    float or numpy.ndarray of shape (size,)
        The difference (in each group).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        if rank_terms is None:
            assert ranks is not None
            rank_terms = terms.value(ranks), terms.value_gap(ranks)
        value, value_groups = _parts(*rank_terms, rank_weights, rank_groups, rank_ratio)
        null, null_groups = _parts(
            terms.expected(candidates),
            terms.expected_gap(candidates),
            candidate_weights,
            candidate_groups,
            None if terms.expected_ratio is None else terms.expected_ratio(candidates),
        )
    parts = np.concatenate([*value, *(-part for part in null)])
    if rank_groups is None or candidate_groups is None:
        return exact_sum(parts) / total
    groups = np.concatenate([*value_groups, *null_groups])
    with np.errstate(divide="ignore", invalid="ignore"):  # groups without tasks: NaN
        return exact_sum(parts, groups, size) / total
