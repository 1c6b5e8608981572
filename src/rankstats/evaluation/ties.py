r"""Metrics in expectation over uniform random tie-breaking, exactly.

A task whose true candidate ties with others has optimistic rank :math:`o` and pessimistic rank
:math:`p`; breaking the ties uniformly at random makes its rank :math:`r \sim \mathcal{U}\{o..p\}`,
independently across tasks. The realistic rank :math:`(o + p)/2` is :math:`\mathbb{E}[r]`, which
gives the expected value of the mean rank but not of nonlinear metrics: a model that scores every
candidate alike has realistic ranks :math:`(C + 1)/2` and a mean reciprocal rank of
:math:`\mathbb{E}[2/(C + 1)]` rather than the chance level :math:`H(C)/C`. In expectation over
tie-breaking such a model scores exactly chance, because its rank *is* the null model's
:math:`\mathcal{U}\{1..C\}`.

With :math:`a_i = w_i / \sum_j w_j` and :math:`L_i = p_i - o_i + 1`, the closed forms are

.. math::

    \mathbb{E}[\mathrm{MR}] = \sum_i a_i \frac{o_i + p_i}{2}, \qquad
    \mathbb{E}[\mathrm{MRR}] = \sum_i a_i \frac{H(p_i) - H(o_i - 1)}{L_i}, \qquad
    \mathbb{E}[\mathrm{H@}k] = \sum_i a_i \frac{\min(\max(k - o_i + 1, 0), L_i)}{L_i},

    \mathbb{E}[\mathrm{GMR}^{\pm 1}] = \exp \sum_i \ln \mathbb{E}\big[r_i^{\pm a_i}\big], \qquad
    \mathbb{E}[S^2] = \sum_i (a_i - a_i^2) \frac{L_i^2 - 1}{12} + \sum_i a_i d_i^2,

with :math:`H(n) = \sum_{j \le n} 1/j` and :math:`d_i` the deviation of :math:`(o_i + p_i)/2` from
its :math:`a`-weighted mean. Derived metrics (adjusted, z-scored) are affine in their base metric
with coefficients from the candidate counts alone, so their expectation is the affine map of the
base's. Metrics without such a form here (median, standard deviation, harmonic mean rank, ...)
are not offered in expectation.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from rankstats.arrays import FloatArray, IntArray
from rankstats.base import RankBasedMetric
from rankstats.evaluation.scores import Ranks
from rankstats.metrics.central import (
    ArithmeticMeanRank,
    GeometricMeanRank,
    InverseGeometricMeanRank,
    InverseHarmonicMeanRank,
)
from rankstats.metrics.derived import DerivedRankBasedMetric
from rankstats.metrics.dispersion import Count, Variance
from rankstats.metrics.hits import HitsAtK
from rankstats.null.harmonic import harmonic_number
from rankstats.null.tasks import Tasks
from rankstats.validation import check_weights

__all__ = [
    "expected_over_ties",
    "has_tie_expectation",
    "log_power_mean",
    "needs_task_weights",
    "reciprocal_sum",
]


#: up to this index, sums of reciprocals come from exact tables
_SMALL = 16


def _exact_tables() -> tuple[FloatArray, FloatArray]:
    """``range_sums[o, p]`` = sum of 1/j for o <= j <= p <= 16, ``suffix[o]`` = up to 16."""
    range_sums = np.zeros((_SMALL + 2, _SMALL + 2))
    for low in range(1, _SMALL + 1):
        total = Fraction(0)
        for high in range(low, _SMALL + 1):
            total += Fraction(1, high)
            range_sums[low, high] = float(total)
    return range_sums, range_sums[:, _SMALL].copy()


_RANGE_SUMS, _SUFFIX_SUMS = _exact_tables()
#: :math:`B_{2k} / (2k)` for the asymptotic expansion of the digamma function
_DIGAMMA_COEFFICIENTS = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132)
#: :math:`B_{2k} / (2k)!` for the Euler-Maclaurin formula
_EULER_MACLAURIN = (1 / 12, -1 / 720, 1 / 30240, -1 / 1209600)
#: ranges up to this length are summed term by term; longer ones use Euler-Maclaurin after it
_DIRECT_TERMS = 64
#: the most rows summed term by term at once (bounds memory to a few MiB)
_DIRECT_ROWS = 2**14
#: where |a ln p| is at most this, sums of j^a - 1 are taken (they do not cancel for small a);
#: elsewhere sums of j^a, which are then far from their count
_SHIFT_LIMIT = 1.0


def reciprocal_sum(low: IntArray, high: IntArray) -> FloatArray:
    r"""The sums :math:`\sum_{j = o}^{p} 1/j = H(p) - H(o - 1)`, to double precision.

    Parameters
    ----------
    low, high : numpy.ndarray of int
        The bounds :math:`1 \le o \le p`, element-wise.

    Returns
    -------
    numpy.ndarray of float64
        The sums.

    Notes
    -----
    A plain difference of harmonic numbers cancels when :math:`o` is large and the range short
    (:math:`H(10^6 + 2) - H(10^6 - 1)` loses ten digits). So the sum is split into positive
    parts: the terms up to 16 come from exact tables, and the rest, :math:`\psi(p + 1) - \psi(o)`
    with :math:`o > 16`, is taken term by term in the asymptotic expansion
    :math:`\psi(x) \sim \ln x - \frac{1}{2x} - \sum_k \frac{B_{2k}}{2k \, x^{2k}}`, with the
    logarithms combined by ``log1p``. For :math:`o = 1` it is :math:`H(p)` of
    :func:`rankstats.null.harmonic.harmonic_number`, exactly as the null model's
    :math:`\mathbb{E}[1/r] = H(C)/C` uses it.

    Examples
    --------
    >>> reciprocal_sum(np.array([1, 10**9]), np.array([3, 10**9])).tolist()  # 1 + 1/2 + 1/3
    [1.8333333333333333, 1e-09]
    """
    low, high = np.broadcast_arrays(
        np.asarray(low, dtype=np.int64), np.asarray(high, dtype=np.int64)
    )
    result = np.empty(low.shape, dtype=np.float64)
    first = low == 1
    result[first] = harmonic_number(high[first])
    table = ~first & (high <= _SMALL)
    result[table] = _RANGE_SUMS[low[table], high[table]]
    # both parts positive: nothing cancels
    straddle = ~first & (low <= _SMALL) & (high > _SMALL)
    result[straddle] = _SUFFIX_SUMS[low[straddle]] + _asymptotic_sum(
        np.full(np.count_nonzero(straddle), _SMALL + 1), high[straddle]
    )
    large = low > _SMALL
    result[large] = _asymptotic_sum(low[large], high[large])
    return result


def _asymptotic_sum(low: IntArray, high: IntArray) -> FloatArray:
    r""":math:`\psi(p + 1) - \psi(o)` for :math:`o > 16`, term by term in the expansion."""
    y = low.astype(np.float64)
    x = high.astype(np.float64) + 1.0
    gap = (high - low + 1).astype(np.float64)
    result: FloatArray = (
        np.log1p(gap / y) + gap / (2.0 * x * y) + _digamma_tail(y) - _digamma_tail(x)
    )
    return result


def _digamma_tail(z: FloatArray) -> FloatArray:
    r""":math:`\sum_k B_{2k} / (2k \, z^{2k})`, the part of :math:`\ln z - \psi(z) - 1/(2z)`."""
    inverse_square = 1.0 / (z * z)
    total = np.zeros_like(z)
    for coefficient in reversed(_DIGAMMA_COEFFICIENTS):
        total = (total + coefficient) * inverse_square
    return total


def log_power_mean(low: IntArray, high: IntArray, exponent: FloatArray | float) -> FloatArray:
    r"""The log-moments :math:`\ln \mathbb{E}[r^a]` of :math:`r \sim \mathcal{U}\{o..p\}`.

    Accurate in relative terms even for the tiny exponents :math:`a = \pm 1/n` of a geometric mean
    over many tasks, for :math:`|a| \le 1`.

    Parameters
    ----------
    low, high : numpy.ndarray of int
        The bounds :math:`1 \le o \le p`.
    exponent : float or numpy.ndarray
        The exponent :math:`a`, in :math:`[-1, 1]`, broadcast against the bounds.

    Returns
    -------
    numpy.ndarray of float64
        :math:`\ln \mathbb{E}[r^a] = \ln\big(1 + \frac{1}{L}\sum_{j=o}^{p} (j^a - 1)\big)`.

    Notes
    -----
    Where :math:`|a \ln p| \le 1` the summands are :math:`f(j) = j^a - 1`, computed with
    ``expm1`` so that no digits are lost for small :math:`a`, and the result is
    :math:`\ln(1 + \frac{1}{L}\sum_j f(j))` by ``log1p``; elsewhere :math:`\mathbb{E}[r^a]` is far
    from 1 and the summands are :math:`f(j) = j^a`. The first 64 terms are summed directly; the
    rest, from :math:`q = o + 64` on, by the Euler-Maclaurin formula

    .. math::

        \sum_{j=q}^{p} f(j) = \int_q^p f(x)\,dx + \frac{f(q) + f(p)}{2}
            + \sum_{k=1}^{4} \frac{B_{2k}}{(2k)!} \big(f^{(2k-1)}(p) - f^{(2k-1)}(q)\big),

    whose remainder is below :math:`10^{-20} |a|` for :math:`q \ge 65`; the integral is
    rearranged so that it does not cancel for small :math:`a`.

    Examples
    --------
    For :math:`r` uniform on :math:`\{1, 2, 3\}`, :math:`\ln \mathbb{E}[r] = \ln 2` and
    :math:`\ln \mathbb{E}[1/r] = \ln(11/18)`:

    >>> bounds = np.array([1, 1]), np.array([3, 3])
    >>> log_power_mean(*bounds, np.array([1.0, -1.0])).round(12).tolist()
    [0.69314718056, -0.492476485098]
    """
    low, high, a = np.broadcast_arrays(
        np.asarray(low, dtype=np.int64),
        np.asarray(high, dtype=np.int64),
        np.asarray(exponent, dtype=np.float64),
    )
    shape = a.shape
    low, high, a = low.ravel(), high.ravel(), a.ravel()
    tied = low != high
    if not tied.all():
        # an untied rank is its own mean: a ln r (most rows; the sums below are for ties)
        out = a * np.log(low.astype(np.float64))
        if tied.any():
            out[tied] = log_power_mean(low[tied], high[tied], a[tied])
        return out.reshape(shape)
    length = (high - low + 1).astype(np.float64)
    shifted = _shifted(a, high)
    total = np.zeros(low.shape, dtype=np.float64)
    for start in range(0, low.size, _DIRECT_ROWS):
        rows = slice(start, start + _DIRECT_ROWS)
        offsets = np.arange(min(int(length[rows].max()), _DIRECT_TERMS))
        terms = (low[rows, None] + offsets).astype(np.float64)
        valid = offsets < length[rows, None]
        logs = a[rows, None] * np.log(terms)
        values = np.where(shifted[rows, None], np.expm1(logs), np.exp(logs))
        total[rows] = np.where(valid, values, 0.0).sum(axis=1)
    long = length > _DIRECT_TERMS
    if long.any():
        total[long] += _euler_maclaurin_tail(
            (low[long] + _DIRECT_TERMS).astype(np.float64), high[long].astype(np.float64), a[long]
        )
    result = np.empty_like(total)
    result[shifted] = np.log1p(total[shifted] / length[shifted])
    result[~shifted] = np.log(total[~shifted] / length[~shifted])
    return result.reshape(shape)


def _shifted(a: FloatArray, high: IntArray | FloatArray) -> npt.NDArray[np.bool_]:
    """Whether to sum :math:`j^a - 1` (all terms near 0) rather than :math:`j^a`."""
    return np.abs(a) * np.log(high) <= _SHIFT_LIMIT


def _euler_maclaurin_tail(q: FloatArray, p: FloatArray, a: FloatArray) -> FloatArray:
    r""":math:`\sum_{j=q}^{p} f(j)` for :math:`65 \le q \le p`, by Euler-Maclaurin.

    Here :math:`f(x) = x^a - 1` where :math:`|a \ln p| \le 1` (so that nothing cancels for
    small :math:`a`) and :math:`f(x) = x^a` otherwise.
    """
    log_p, log_q = np.log(p), np.log(q)
    u = np.log1p((p - q) / q)  # ln(p / q) without cancellation
    b = 1.0 + a
    shifted = _shifted(a, p)
    # shifted: the integral [x (x^a - 1 - a) / (1 + a)]_q^p, rearranged so that nothing cancels
    e_p = np.expm1(a * log_p) - a
    moderate = ((p - q) * e_p + np.exp(b * log_q) * np.expm1(a * u)) / np.where(shifted, b, 1.0)
    # not shifted: [x^(1 + a) / (1 + a)]_q^p, with its limit ln(p / q) at a = -1
    safe_b = np.where(b == 0.0, 1.0, b)
    strong = np.exp(b * log_q) * np.where(b == 0.0, u, np.expm1(b * u) / safe_b)
    integral = np.where(shifted, moderate, strong)
    ends = np.where(
        shifted,
        0.5 * (np.expm1(a * log_q) + np.expm1(a * log_p)),
        0.5 * (np.exp(a * log_q) + np.exp(a * log_p)),
    )
    corrections = np.zeros_like(q)
    falling = a.copy()  # a (a - 1) ... (a - m + 1), for the m-th derivative of x^a
    for k, coefficient in enumerate(_EULER_MACLAURIN):
        order = 2 * k + 1
        if k > 0:
            falling = falling * (a - (order - 2)) * (a - (order - 1))
        corrections += (
            coefficient * falling * (np.exp((a - order) * log_p) - np.exp((a - order) * log_q))
        )
    result: FloatArray = integral + ends + corrections
    return result


# --- metrics in expectation over ties ----------------------------------------------------------

#: a rule: (metric, o, p, multiplicity, per-task normalised weight a) -> expected value
TieRule = Callable[[RankBasedMetric, IntArray, IntArray, IntArray, FloatArray], float]


def _mean_rank(_: RankBasedMetric, o: IntArray, p: IntArray, m: IntArray, a: FloatArray) -> float:
    return float(np.dot(m * a, 0.5 * (o + p).astype(np.float64)))


def _reciprocal(_: RankBasedMetric, o: IntArray, p: IntArray, m: IntArray, a: FloatArray) -> float:
    return float(np.dot(m * a, reciprocal_sum(o, p) / (p - o + 1)))


def _hits(metric: RankBasedMetric, o: IntArray, p: IntArray, m: IntArray, a: FloatArray) -> float:
    assert isinstance(metric, HitsAtK)
    length = p - o + 1
    hits = np.clip(metric.cutoff - o + 1, 0, length)
    return float(np.dot(m * a, hits / length))


def _geometric(sign: float) -> TieRule:
    def rule(_: RankBasedMetric, o: IntArray, p: IntArray, m: IntArray, a: FloatArray) -> float:
        return float(np.exp(np.dot(m, log_power_mean(o, p, sign * a))))

    return rule


def _variance(_: RankBasedMetric, o: IntArray, p: IntArray, m: IntArray, a: FloatArray) -> float:
    mean = 0.5 * (o + p).astype(np.float64)
    length = (p - o + 1).astype(np.float64)
    spread = (length * length - 1.0) / 12.0
    deviation = mean - np.dot(m * a, mean)
    return float(np.dot(m * (a - a * a), spread) + np.dot(m * a, deviation * deviation))


def _count(_: RankBasedMetric, o: IntArray, p: IntArray, m: IntArray, a: FloatArray) -> float:
    return float(m.sum())


#: the metrics with an exact expectation over ties, by exact class (subclasses may differ)
_RULES: dict[type[RankBasedMetric], TieRule] = {
    ArithmeticMeanRank: _mean_rank,
    InverseHarmonicMeanRank: _reciprocal,
    HitsAtK: _hits,
    GeometricMeanRank: _geometric(1.0),
    InverseGeometricMeanRank: _geometric(-1.0),
    Variance: _variance,
    Count: _count,
}


def _base_of(metric: RankBasedMetric) -> RankBasedMetric:
    return metric.base if isinstance(metric, DerivedRankBasedMetric) else metric


#: metrics whose expectation over ties is not linear in the task weights (geometric means are
#: products of E[r_i ** a_i]; the variance has a_i ** 2 terms): from weight sums per distinct
#: rank pair they cannot be computed, they need every task's own weight
_NONLINEAR_TIE_RULES = (GeometricMeanRank, InverseGeometricMeanRank, Variance)


def needs_task_weights(metric: RankBasedMetric) -> bool:
    """Whether the metric's weighted expectation over ties needs every task's own weight."""
    return isinstance(_base_of(metric), _NONLINEAR_TIE_RULES)


def has_tie_expectation(metric: RankBasedMetric) -> bool:
    """Whether :func:`expected_over_ties` knows ``metric`` (directly or through its base).

    Examples
    --------
    >>> from rankstats import metric_resolver
    >>> [has_tie_expectation(metric_resolver.make(name)) for name in ("zmrr", "median_rank")]
    [True, False]
    """
    return type(_base_of(metric)) in _RULES


def tie_expectation(
    metric: RankBasedMetric,
    optimistic: IntArray,
    pessimistic: IntArray,
    multiplicity: IntArray,
    weights: FloatArray | None,
) -> float:
    """The base metric's expectation over ties on clean, possibly grouped rows (no checks).

    Each row stands for ``multiplicity`` tasks with the given bounds and weight each.
    """
    rule = _RULES[type(metric)]
    if weights is None:
        a = np.full(optimistic.shape, 1.0 / float(multiplicity.sum()))
    else:
        a = weights / float(np.dot(multiplicity, weights))
    return rule(metric, optimistic, pessimistic, multiplicity, a)


def expected_over_ties(
    metric: RankBasedMetric, ranks: Ranks, weights: npt.ArrayLike | None = None
) -> float:
    r"""A metric's expected value when each task's ties are broken uniformly at random.

    Parameters
    ----------
    metric : RankBasedMetric
        The metric: the mean rank, mean reciprocal rank, Hits@k, geometric mean rank and its
        inverse, the variance, the count, or a metric derived from one of them (AMRI, adjusted
        MRR, z-scores, ...).
    ranks : Ranks
        The optimistic and pessimistic ranks (and, for derived metrics, the candidate counts).
    weights : array-like of shape (n,), optional
        Non-negative task weights, not all zero.

    Returns
    -------
    float
        :math:`\mathbb{E}[M(r)]` with :math:`r_i \sim \mathcal{U}\{o_i..p_i\}` independently.

    Examples
    --------
    A model that gives all ten candidates the same score, in expectation, scores exactly chance:

    >>> from rankstats import metric_resolver
    >>> ranks = Ranks(optimistic=[1, 1], pessimistic=[10, 10], num_candidates=[10, 10])
    >>> mrr = metric_resolver.make("mrr")
    >>> expected_over_ties(mrr, ranks) == mrr.expected_value([10, 10])
    True
    >>> abs(expected_over_ties(metric_resolver.make("amrr"), ranks)) < 1e-15
    True
    """
    if not isinstance(metric, RankBasedMetric):
        raise TypeError(f"metric must be a RankBasedMetric, got {type(metric).__name__}")
    if not isinstance(ranks, Ranks):
        raise TypeError(f"ranks must be a Ranks object, got {type(ranks).__name__}")
    base = _base_of(metric)
    if type(base) not in _RULES:
        known = ", ".join(sorted(cls.__name__ for cls in _RULES))
        raise ValueError(
            f"{metric!r} has no exact expectation over ties; known are {known} and the metrics "
            f"derived from them"
        )
    clean_weights = None
    if weights is not None:
        if not metric.supports_weights:
            raise ValueError(f"{metric!r} does not support weights; pass weights=None")
        clean_weights = check_weights(weights)
        if clean_weights.shape != ranks.optimistic.shape:
            raise ValueError(
                f"weights must have one entry per task ({len(ranks)}), got {clean_weights.size}"
            )
    multiplicity = np.ones(len(ranks), dtype=np.int64)
    value = tie_expectation(base, ranks.optimistic, ranks.pessimistic, multiplicity, clean_weights)
    if base is metric:
        return value
    if ranks.num_candidates is None:
        raise ValueError(f"{metric!r} needs num_candidates; build the Ranks with them")
    assert isinstance(metric, DerivedRankBasedMetric)
    null = metric._base_null(Tasks(ranks.num_candidates, clean_weights))
    return metric._value_from(value, null.mean, null.variance, null.gap)
