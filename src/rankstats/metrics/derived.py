r"""Derived metrics: affine transforms :math:`M^* = \alpha M + \beta` of a base metric.

The coefficients :math:`\alpha, \beta` depend only on the candidate counts (and weights), never on
the ranks, so published results can be adjusted without the model, and the null moments follow
from the base metric's: :math:`\mathbb{E}[M^*] = \alpha \mathbb{E}[M] + \beta` and
:math:`\mathbb{V}[M^*] = \alpha^2 \mathbb{V}[M]`.

Three adjustments are offered:

- :class:`ExpectationNormalizedMetric`: :math:`M / \mathbb{E}[M]`, expected value 1;
- :class:`ReindexedMetric`: :math:`(M - \mathbb{E}[M]) / (1 - \mathbb{E}[M])`, expected value 0
  and best value 1 (for metrics whose best value is 1, or, like the mean rank, 1 at its best);
- :class:`ZMetric`: :math:`\pm (M - \mathbb{E}[M]) / \sqrt{\mathbb{V}[M]}`, expected value 0 and
  variance 1, with the sign chosen so that larger is always better.

Near the best value, :math:`1 - \mathbb{E}[M]` and :math:`1 - M` are taken from the base metric's
own gap hooks rather than formed by subtraction, so no digits cancel. The module holds the three
adjustment classes and the eight concrete metrics built on them (each mostly docstring and
metadata); it is kept whole so that every derived metric reads next to the transformation it uses.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar, NamedTuple

import numpy as np
import numpy.typing as npt
from docdata import parse_docdata

from rankstats.arrays import FloatArray, IntArray
from rankstats.base import RANK_TYPES, RankBasedMetric, RankType, override
from rankstats.chance import (
    EXACT_SUMS_LIMIT,
    ExactDifference,
    candidate_rows,
    exact_difference,
    ill_conditioned,
    sums_exact,
)
from rankstats.errors import NoClosedFormError
from rankstats.metrics.central import (
    ArithmeticMeanRank,
    GeometricMeanRank,
    InverseHarmonicMeanRank,
)
from rankstats.metrics.hits import HitsAtK
from rankstats.null.tasks import Tasks
from rankstats.ranges import ValueRange
from rankstats.validation import is_scalar

__all__ = [
    "AdjustedArithmeticMeanRank",
    "AdjustedArithmeticMeanRankIndex",
    "AdjustedGeometricMeanRankIndex",
    "AdjustedHitsAtK",
    "AdjustedInverseHarmonicMeanRank",
    "AffineTransformationParameters",
    "DerivedRankBasedMetric",
    "ExpectationNormalizedMetric",
    "ReindexedMetric",
    "ZArithmeticMeanRank",
    "ZGeometricMeanRank",
    "ZHitsAtK",
    "ZInverseHarmonicMeanRank",
    "ZMetric",
    "accurate_difference",
    "chance_difference",
    "index_of_difference",
    "takes_difference",
    "z_of_difference",
]


_UNBOUNDED = ValueRange(lower=None, upper=None)
#: reindexed metrics reach 1 at best; their lower bound depends on the data
_AT_MOST_ONE = ValueRange(lower=None, upper=1, upper_inclusive=True)


class BaseNull(NamedTuple):
    r"""The base metric's null moments and its gap :math:`1 - \mathbb{E}[M]`, computed directly."""

    mean: float
    variance: float | None
    gap: float


def _real_number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not is_scalar(value):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{name} must be a real number, got {value!r}") from error


def chance_difference(
    values: FloatArray,
    mean: Any,
    value_gaps: FloatArray | None,
    gap: Any,
    direct: Any = None,
) -> FloatArray:
    r""":math:`M - \mathbb{E}[M]`, from whichever pair carries the digits.

    Near the best value 1, :math:`M` and :math:`\mathbb{E}[M]` share leading digits with 1 and
    :math:`(1 - \mathbb{E}) - (1 - M)` keeps them; near 0 (an MRR of a few millionths, with
    millions of candidates) the gaps share the leading digits instead, and :math:`M - \mathbb{E}`
    keeps them. The form is chosen by :math:`\mathbb{E}` alone (``direct``, the default
    :math:`|\mathbb{E}| \le |1 - \mathbb{E}|`, may be given, computed once for many values):
    digits cancel only where :math:`M` is close to :math:`\mathbb{E}`, and there the smaller
    pair is the one :math:`\mathbb{E}` picks; elsewhere both forms are exact to a few units in
    the last place. ``value_gaps`` (:math:`1 - M`, computed directly) may be ``None``: then
    ``1 - values``. NaN in ``gap`` (an undefined metric) gives NaN.
    """
    if direct is None:
        direct = takes_difference(mean, gap)
    # one form for every element (one element, say): that one alone
    array = isinstance(direct, np.ndarray) and direct.ndim > 0
    every = bool(direct.all() if array else direct)
    if every:
        difference = np.asarray(values - mean, dtype=np.float64)
        # M at its best value 1 (1 - M = 0): M - E is the gap 1 - E itself, so that an index
        # (M - E) / (1 - E) is 1 exactly, within its range (M - E rounded had given 1 + 2e-16)
        best = values == 1.0 if value_gaps is None else value_gaps == 0.0
        if np.any(best):
            difference = np.asarray(np.where(best, gap, difference), dtype=np.float64)
        return difference
    gaps = 1.0 - values if value_gaps is None else value_gaps
    if not array or not direct.any():
        return np.asarray(gap - gaps, dtype=np.float64)
    # as above: at the best value, the gap 1 - E itself
    return np.asarray(np.where(direct & (gaps != 0.0), values - mean, gap - gaps), dtype=np.float64)


def accurate_difference(
    values: Any,
    mean: Any,
    value_gaps: Any,
    gap: Any,
    exact: ExactDifference | None = None,
) -> FloatArray:
    r""":math:`M - \mathbb{E}`, rounded, or exact where the rounded one lost digits.

    Rounded by :func:`chance_difference`; ``exact.compute()`` (one exact sum over the tasks,
    :mod:`rankstats.chance`) where that may have lost digits
    (:func:`~rankstats.chance.ill_conditioned`, with the higher limit where
    ``exact.sums_exact()``) and ``exact`` is given. Without ``value_gaps`` (:math:`1 - M`
    computed directly), the gaps' form is no better than :math:`M - E` itself, and the threshold
    is :math:`|E|` alone.
    """
    difference = chance_difference(values, mean, value_gaps, gap)
    threshold_gap = gap if value_gaps is not None else mean
    if (
        exact is not None
        and ill_conditioned(difference, mean, threshold_gap)
        and (
            not exact.sums_exact()
            or ill_conditioned(difference, mean, threshold_gap, EXACT_SUMS_LIMIT)
        )
    ):
        difference = np.asarray(exact.compute(), dtype=np.float64)
    return difference


def takes_difference(mean: Any, gap: Any) -> Any:
    r"""Where :func:`chance_difference` takes :math:`M - E` itself: :math:`|E| \le |1 - E|`.

    False where the gap is NaN (an undefined metric), so that NaN follows.
    """
    with np.errstate(invalid="ignore"):
        return np.abs(mean) <= np.abs(gap)


def index_of_difference(difference: Any, gap: Any) -> FloatArray:
    """An adjusted index :math:`(M - E) / (1 - E)` from :math:`M - E`."""
    return np.asarray(difference / gap + 0.0, dtype=np.float64)


def z_of_difference(difference: Any, std: Any, sign: float) -> FloatArray:
    r"""A z-score :math:`s (M - E) / \sqrt{V}` from :math:`M - E`."""
    return np.asarray(sign * difference / std + 0.0, dtype=np.float64)


def _concrete_kinds(kind: type) -> list[Any]:
    """The metrics of an abstract kind of derived metric (those with a base), every level."""
    found: list[Any] = []
    stack: list[type] = list(kind.__subclasses__())
    while stack:
        sub = stack.pop(0)
        if "base_cls" in sub.__dict__:
            found.append(sub)
        stack.extend(sub.__subclasses__())
    return found


def _base_null(mean: float, variance: float | None, gap: float | None) -> BaseNull:
    return BaseNull(mean, variance, 1.0 - mean if gap is None else gap)


class AffineTransformationParameters(NamedTuple):
    r"""The coefficients of :math:`M^* = \\text{scale} \\cdot M + \\text{offset}`."""

    scale: float = 1.0
    offset: float = 0.0


class DerivedRankBasedMetric(RankBasedMetric):
    r"""A metric :math:`M^* = \alpha M + \beta` derived from a base metric :math:`M`.

    Subclasses name the base in :attr:`base_cls` and implement :meth:`_coefficients`; they need
    the candidate counts, inherit :attr:`supports_weights` from the base, and have closed-form
    moments exactly where the base has those the coefficients use.

    Parameters
    ----------
    **kwargs
        Passed to the base metric, e.g. ``k`` for Hits@k.
    """

    #: the base metric's class
    base_cls: ClassVar[type[RankBasedMetric]]
    needs_candidates = True
    #: every rank type, as PyKEEN's evaluator reports them (PyKEEN's attribute names the
    #: realistic one only); the null model has no ties, so for optimistic and pessimistic
    #: ranks of tied scores the comparison is biased (see the rank-types guide)
    supported_rank_types: ClassVar[tuple[RankType, ...]] = RANK_TYPES
    #: which of the base's moments the coefficients use
    _coefficients_use_variance: ClassVar[bool] = False
    #: whether :meth:`_transform` works from the gaps 1 - M of the base values
    _uses_value_gap: ClassVar[bool] = False
    #: the expected value is fixed by the transformation (0 or 1) whatever the number of tasks
    _size_free_expectation = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        base_cls = cls.__dict__.get("base_cls")
        if base_cls is not None:
            cls._null_from_weight_sums = base_cls._null_from_weight_sums
            closed = base_cls.closed_expectation and (
                base_cls.closed_variance or not cls._coefficients_use_variance
            )
            cls.supports_weights = base_cls.supports_weights
            cls.closed_expectation = closed
            cls.closed_variance = closed and base_cls.closed_variance
        super().__init_subclass__(**kwargs)

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        """A concrete metric; the three abstract kinds are a ``TypeError`` naming their metrics.

        PyKEEN spells a derived metric ``ZMetric(base_cls="mrr")``; here each is a class of its
        own (:class:`ZInverseHarmonicMeanRank`), which the error names.
        """
        if getattr(cls, "base_cls", None) is None:
            names = ", ".join(
                f"{sub.__name__} (of {sub.base_cls.__name__})" for sub in _concrete_kinds(cls)
            )
            raise TypeError(
                f"{cls.__name__} is abstract (PyKEEN's base_cls= is not taken here): use one "
                f"of its metrics, {names}"
            )
        return super().__new__(cls)

    def __init__(self, **kwargs: Any) -> None:
        self.base = self.base_cls(**kwargs)

    @override
    def _params(self) -> dict[str, Any]:
        return self.base._params()

    def get_coefficients(
        self,
        num_candidates: npt.ArrayLike,
        weights: npt.ArrayLike | None = None,
        *,
        num_ranks: int | None = None,
    ) -> AffineTransformationParameters:
        """Return the coefficients (scale, offset) for these candidate counts and weights.

        A scalar ``num_candidates`` needs ``num_ranks`` (or ``weights``), as in
        :meth:`~rankstats.base.RankBasedMetric.variance`.
        """
        return self._coefficients(self._null_input(num_candidates, weights, num_ranks, False))

    def adjust(
        self,
        base_metric_result: float,
        num_candidates: npt.ArrayLike,
        weights: npt.ArrayLike | None = None,
        *,
        num_ranks: int | None = None,
    ) -> float:
        """Adjust a published value of the base metric, without the model or the ranks.

        Examples
        --------
        >>> AdjustedArithmeticMeanRankIndex().adjust(1.0, num_candidates=[5, 5])
        1.0
        """
        value = _real_number(base_metric_result, "base_metric_result")
        if value not in self.base.value_range:
            raise ValueError(
                f"base_metric_result must be a value of {self.base!r}, in "
                f"{self.base.value_range.notate()}, got {base_metric_result!r}"
            )
        tasks = self._null_input(num_candidates, weights, num_ranks, False)
        return self._adjust_values(np.asarray(value), tasks).item()

    @abstractmethod
    def _coefficients_of(self, null: BaseNull) -> AffineTransformationParameters:
        """The coefficients, given the base metric's null moments; raises where undefined."""

    def _coefficients_from(
        self, base_mean: float, base_variance: float | None, base_gap: float | None = None
    ) -> AffineTransformationParameters:
        """The coefficients from the base's moments (and gap :math:`1 - E`, where computed)."""
        return self._coefficients_of(_base_null(base_mean, base_variance, base_gap))

    def _exact_moments(self) -> tuple[float | None, float | None]:
        """The moments the transformation fixes by construction (``None``: follow from the base)."""
        return None, None

    def _base_null(self, tasks: Tasks) -> BaseNull:
        """The base metric's null moments and gap, from one computation."""
        mean, variance, gap = self.base._moments_and_gap(tasks)
        if mean is None:
            raise NoClosedFormError(f"{self!r} needs a closed-form expected value of {self.base!r}")
        if variance is None and self._coefficients_use_variance:
            raise NoClosedFormError(f"{self!r} needs a closed-form variance of {self.base!r}")
        return _base_null(mean, variance, gap)

    def _coefficients(self, tasks: Tasks) -> AffineTransformationParameters:
        """The coefficients for clean input."""
        return self._coefficients_of(self._base_null(tasks))

    def _moments_from(
        self, base_mean: float, base_variance: float | None, base_gap: float | None = None
    ) -> tuple[float, float | None]:
        """Return the null moments, given the base metric's; raises where undefined."""
        return self._moments_of(_base_null(base_mean, base_variance, base_gap))

    def _value_from(
        self,
        base_value: float,
        base_mean: float,
        base_variance: float | None,
        base_gap: float | None = None,
        *,
        value_gap: float | None = None,
        exact: ExactDifference | None = None,
    ) -> float:
        r"""The derived value of one base value, given the base's moments (for cached moments).

        Prefer it to ``scale * value + offset`` with :meth:`_coefficients_from`: it works from
        the gaps :math:`1 - M` and :math:`1 - E` where those carry the digits. ``value_gap`` is
        :math:`1 - M` computed directly (the base's ``_value_gap``), where known; ``exact``
        gives :math:`M - \mathbb{E}` as one exact sum, taken where the rounded one may have
        lost digits (:mod:`rankstats.chance`).
        """
        null = _base_null(base_mean, base_variance, base_gap)
        values = np.asarray(base_value, dtype=np.float64)
        if self._uses_value_gap:
            gaps = None if value_gap is None else np.asarray(value_gap, dtype=np.float64)
            difference = accurate_difference(values, null.mean, gaps, null.gap, exact)
            return float(self._of_difference(difference, null))
        return float(self._transform(values, None, null))

    def _of_difference(self, difference: FloatArray, null: BaseNull) -> FloatArray:
        r"""The value from :math:`M - \mathbb{E}` (metrics with :attr:`_uses_value_gap`)."""
        raise NotImplementedError

    def _moments_of(self, null: BaseNull) -> tuple[float, float | None]:
        scale, offset = self._coefficients_of(null)
        exact_mean, exact_variance = self._exact_moments()
        mean = scale * null.mean + offset if exact_mean is None else exact_mean
        if exact_variance is not None:
            return mean, exact_variance
        # scale (scale V): a large scale's square alone may overflow where the product does not
        return mean, None if null.variance is None else scale * (scale * null.variance)

    def _transform(
        self,
        values: FloatArray,
        value_gaps: Callable[[], FloatArray] | None,
        null: BaseNull,
    ) -> FloatArray:
        """Map base values (and, where it helps, their gaps :math:`1 - M`) to derived values.

        The metrics that work from :math:`M - E` (:attr:`_uses_value_gap`) take it by
        :func:`chance_difference`, the others the affine map.
        """
        if self._uses_value_gap:
            gaps = None if value_gaps is None else value_gaps()
            return self._of_difference(chance_difference(values, null.mean, gaps, null.gap), null)
        scale, offset = self._coefficients_of(null)
        return np.asarray(scale * values + offset, dtype=np.float64)

    def _adjust_values(self, values: FloatArray, tasks: Tasks) -> FloatArray:
        return self._transform(values, None, self._base_null(tasks))

    @override
    def _moments(self, tasks: Tasks) -> tuple[float, float | None]:
        return self._moments_of(self._base_null(tasks))

    @override
    def _evaluate(
        self, ranks: FloatArray, num_candidates: IntArray | None, weights: FloatArray | None
    ) -> FloatArray:
        assert num_candidates is not None  # needs_candidates: guaranteed by validation
        null = self._base_null(Tasks(num_candidates, weights))
        base = self.base

        def gaps() -> FloatArray:
            gap = base._value_gap(ranks, num_candidates, weights)
            if gap is None:
                return np.asarray(1.0 - np.asarray(base._evaluate(ranks, num_candidates, weights)))
            return gap

        values = np.asarray(base._evaluate(ranks, num_candidates, weights))
        if not self._uses_value_gap:
            return self._transform(values, None, null)
        terms = base._chance_terms()
        exact = None
        if terms is not None and ranks.ndim == 1:
            chance_terms = terms

            def compute() -> Any:
                # the counts' terms once per distinct count, times its tasks or their weight
                values, totals = candidate_rows(num_candidates, weights)
                total = Tasks(num_candidates, weights).total_weight
                return exact_difference(chance_terms, ranks, weights, values, totals, total)

            def exact_sums() -> bool:
                return chance_terms.halves and sums_exact(
                    [ranks], weights is None, float(ranks.size), float(num_candidates.max())
                )

            exact = ExactDifference(compute, exact_sums)

        difference = accurate_difference(values, null.mean, gaps(), null.gap, exact)
        return self._of_difference(difference, null)

    @override
    def _expected_value(self, tasks: Tasks) -> float:
        return self._moments(tasks)[0]

    @override
    def _variance(self, tasks: Tasks) -> float | None:
        return self._moments(tasks)[1]


class ExpectationNormalizedMetric(DerivedRankBasedMetric):
    r"""The base metric divided by its expected value, :math:`M^* = M / \mathbb{E}[M]`.

    .. math:: \alpha = \frac{1}{\mathbb{E}[M]}, \qquad \beta = 0, \qquad \mathbb{E}[M^*] = 1
    """

    @override
    def _coefficients_of(self, null: BaseNull) -> AffineTransformationParameters:
        if null.mean == 0:
            raise ValueError(f"{self!r} is undefined: the expected value of {self.base!r} is 0")
        return AffineTransformationParameters(scale=1.0 / null.mean)

    @override
    def _exact_moments(self) -> tuple[float | None, float | None]:
        return 1.0, None


class ReindexedMetric(DerivedRankBasedMetric):
    r"""The base metric re-indexed to 0 at chance and 1 at best.

    .. math::

        M^* = \frac{M - \mathbb{E}[M]}{1 - \mathbb{E}[M]}, \qquad
        \alpha = \frac{1}{1 - \mathbb{E}[M]}, \qquad \beta = -\alpha \, \mathbb{E}[M]

    It is larger-is-better whatever the base's direction, for bases whose best value is 1. It is
    undefined when :math:`\mathbb{E}[M] = 1`, i.e. when every task has a single candidate.
    """

    increasing = True

    _uses_value_gap = True

    @override
    def _coefficients_of(self, null: BaseNull) -> AffineTransformationParameters:
        if null.gap == 0.0:
            raise ValueError(
                f"{self!r} is undefined: the expected value of {self.base!r} is 1, so chance is "
                f"already perfect here (e.g. every task has a single candidate)"
            )
        scale = 1.0 / null.gap
        return AffineTransformationParameters(scale=scale, offset=-scale * null.mean)

    @override
    def _of_difference(self, difference: FloatArray, null: BaseNull) -> FloatArray:
        self._coefficients_of(null)  # raises where undefined
        return index_of_difference(difference, null.gap)

    @override
    def _exact_moments(self) -> tuple[float | None, float | None]:
        return 0.0, None


class ZMetric(DerivedRankBasedMetric):
    r"""The z-score of the base metric under the null, oriented so that larger is better.

    .. math::

        M^* = s \, \frac{M - \mathbb{E}[M]}{\sqrt{\mathbb{V}[M]}}, \qquad
        s = \begin{cases} +1 & \text{if larger } M \text{ is better} \\
                          -1 & \text{otherwise} \end{cases}

    so :math:`\alpha = s / \sqrt{\mathbb{V}[M]}` and :math:`\beta = -\alpha \, \mathbb{E}[M]`; under
    the null :math:`\mathbb{E}[M^*] = 0` and :math:`\mathbb{V}[M^*] = 1`. It is undefined when the
    null variance is 0 (every task has a single candidate). See
    :class:`~rankstats.base.RankBasedMetric` for why weights and repetitions give different
    z-scores.
    """

    increasing = True
    value_range = _UNBOUNDED
    _coefficients_use_variance = True

    _uses_value_gap = True

    @override
    def _coefficients_of(self, null: BaseNull) -> AffineTransformationParameters:
        scale = self._sign() / self._std(null)
        return AffineTransformationParameters(scale=scale, offset=-scale * null.mean)

    def _sign(self) -> float:
        return 1.0 if self.base.increasing else -1.0

    def _std(self, null: BaseNull) -> float:
        variance = null.variance
        if variance is None:
            raise NoClosedFormError(f"{self!r} needs a closed-form variance of {self.base!r}")
        if not variance > 0:
            raise ValueError(
                f"{self!r} is undefined: the null variance of {self.base!r} is {variance!r}, so "
                f"every outcome is certain here (e.g. every task has a single candidate)"
            )
        return math.sqrt(variance)

    @override
    def _of_difference(self, difference: FloatArray, null: BaseNull) -> FloatArray:
        return z_of_difference(difference, self._std(null), self._sign())

    @override
    def _exact_moments(self) -> tuple[float | None, float | None]:
        return 0.0, 1.0


@parse_docdata
class AdjustedArithmeticMeanRank(ExpectationNormalizedMetric):
    r"""The adjusted arithmetic mean rank (AMR), :math:`\mathrm{MR} / \mathbb{E}[\mathrm{MR}]`.

    It lies in :math:`[0, 2)`, lower is better, and is 1 in expectation for a random model
    (Berrendorf et al., 2020).

    Examples
    --------
    >>> AdjustedArithmeticMeanRank()([1, 1], num_candidates=[3, 3])
    0.5

    ---
    link: https://arxiv.org/abs/2002.06914
    description: The mean over all ranks divided by its expected value.
    """

    name = "Adjusted Arithmetic Mean Rank (AAMR)"
    synonyms = ("adjusted_mean_rank", "amr", "aamr")
    value_range = ValueRange(lower=0, lower_inclusive=True, upper=2, upper_inclusive=False)
    increasing = False
    base_cls = ArithmeticMeanRank


@parse_docdata
class AdjustedArithmeticMeanRankIndex(ReindexedMetric):
    r"""The adjusted arithmetic mean rank index (AMRI).

    .. math::

        \mathrm{AMRI} = \frac{\mathrm{MR} - \mathbb{E}[\mathrm{MR}]}{1 - \mathbb{E}[\mathrm{MR}]}

    It lies in :math:`[-1, 1]`: 1 when every rank is 1, 0 in expectation for a random model, and
    -1 when every rank is last (Berrendorf et al., 2020).

    Examples
    --------
    >>> AdjustedArithmeticMeanRankIndex()([1, 1], num_candidates=[3, 3])
    1.0
    >>> AdjustedArithmeticMeanRankIndex()([3, 3], num_candidates=[3, 3])
    -1.0

    ---
    link: https://arxiv.org/abs/2002.06914
    description: The re-indexed adjusted mean rank (AAMR)
    """

    name = "Adjusted Arithmetic Mean Rank Index (AAMRI)"
    synonyms = ("adjusted_mean_rank_index", "amri", "aamri")
    value_range = ValueRange(lower=-1, lower_inclusive=True, upper=1, upper_inclusive=True)
    base_cls = ArithmeticMeanRank


@parse_docdata
class ZArithmeticMeanRank(ZMetric):
    r"""The z-scored arithmetic mean rank (zMR); larger is better.

    Examples
    --------
    >>> ZArithmeticMeanRank()([2], num_candidates=[3])
    0.0

    ---
    link: https://arxiv.org/abs/2203.07544
    description: The z-scored mean rank
    """

    name = "z-Mean Rank (zMR)"
    synonyms = ("zamr", "zmr")
    base_cls = ArithmeticMeanRank


@parse_docdata
class AdjustedGeometricMeanRankIndex(ReindexedMetric):
    r"""The adjusted geometric mean rank index (AGMRI).

    .. math::

        \mathrm{AGMRI}
        = \frac{\mathrm{GMR} - \mathbb{E}[\mathrm{GMR}]}{1 - \mathbb{E}[\mathrm{GMR}]}

    It is 1 when every rank is 1 and 0 in expectation for a random model; its lower bound depends
    on the candidate counts.

    Examples
    --------
    >>> AdjustedGeometricMeanRankIndex()([1, 1], num_candidates=[4, 9])
    1.0

    ---
    link: https://arxiv.org/abs/2203.07544
    description: The re-indexed adjusted geometric mean rank (AGMRI)
    tight_lower: (G[C]-E[f])/(1-E[f]), G[C] the geometric mean of the candidate counts
    """

    name = "Adjusted Geometric Mean Rank Index (AGMRI)"
    synonyms = ("gmri", "agmri")
    value_range = _AT_MOST_ONE
    base_cls = GeometricMeanRank


@parse_docdata
class ZGeometricMeanRank(ZMetric):
    r"""The z-scored geometric mean rank (zGMR); larger is better.

    Examples
    --------
    >>> ZGeometricMeanRank()([1, 1], num_candidates=[5, 5]) > 0
    True

    ---
    link: https://arxiv.org/abs/2203.07544
    description: The z-scored geometric mean rank
    """

    name = "z-Geometric Mean Rank (zGMR)"
    synonyms = ("zgmr",)
    base_cls = GeometricMeanRank


@parse_docdata
class AdjustedInverseHarmonicMeanRank(ReindexedMetric):
    r"""The adjusted mean reciprocal rank (AMRR).

    .. math::

        \mathrm{AMRR} = \frac{\mathrm{MRR} - \mathbb{E}[\mathrm{MRR}]}{1 - \mathbb{E}[\mathrm{MRR}]}

    It is 1 when every rank is 1 and 0 in expectation for a random model; its lower bound,
    :math:`-\mathbb{E}[\mathrm{MRR}] / (1 - \mathbb{E}[\mathrm{MRR}])`, depends on the data.

    Examples
    --------
    >>> AdjustedInverseHarmonicMeanRank()([1, 1], num_candidates=[10, 10])
    1.0

    ---
    link: https://arxiv.org/abs/2203.07544
    description: The re-indexed adjusted MRR
    tight_lower: (mean(1/C)-E[f])/(1-E[f])
    """

    name = "Adjusted Inverse Harmonic Mean Rank"
    synonyms = ("amrr", "aihmr", "adjusted_mrr", "adjusted_mean_reciprocal_rank")
    value_range = _AT_MOST_ONE
    base_cls = InverseHarmonicMeanRank


@parse_docdata
class ZInverseHarmonicMeanRank(ZMetric):
    r"""The z-scored mean reciprocal rank (zMRR); larger is better.

    Examples
    --------
    >>> ZInverseHarmonicMeanRank()([1, 1], num_candidates=[10, 10]) > 0
    True

    ---
    link: https://arxiv.org/abs/2203.07544
    description: The z-scored mean reciprocal rank
    """

    name = "z-Mean Reciprocal Rank (zMRR)"
    synonyms = ("zmrr", "zihmr")
    base_cls = InverseHarmonicMeanRank


@parse_docdata
class AdjustedHitsAtK(ReindexedMetric):
    r"""The adjusted Hits@k, re-indexed to 0 at chance and 1 at best.

    .. math::

        \mathrm{AH@}k = \frac{\mathrm{H@}k - \mathbb{E}[\mathrm{H@}k]}{1 - \mathbb{E}[\mathrm{H@}k]}

    Parameters
    ----------
    k : int, default=10
        The cut-off; a positive integer.

    Examples
    --------
    >>> AdjustedHitsAtK(k=1)([1, 2], num_candidates=[2, 2])
    0.0

    ---
    link: https://arxiv.org/abs/2203.07544
    description: The re-indexed adjusted hits at K
    tight_lower: -E[f]/(1-E[f])
    """

    name = "Adjusted Hits at K"
    synonyms = (
        "ahk",
        "ah@k",
        "ahits@k",
        "ah@",
        "ahits@",
        "ahits_at_",
        "ah_at_",
        "adjusted_hits_at_",
    )
    value_range = _AT_MOST_ONE
    base_cls = HitsAtK

    def __init__(self, k: int = 10) -> None:
        super().__init__(k=k)


@parse_docdata
class ZHitsAtK(ZMetric):
    r"""The z-scored Hits@k; larger is better.

    Parameters
    ----------
    k : int, default=10
        The cut-off; a positive integer.

    Examples
    --------
    >>> ZHitsAtK(k=1)([1, 2], num_candidates=[2, 2])
    0.0

    ---
    link: https://arxiv.org/abs/2203.07544
    description: The z-scored hits at K
    """

    name = "z-Hits at K"
    synonyms = ("z_hits_at_", "zahk", "zh@k", "zh@", "zhits@k", "zhits@", "zh_at_")
    base_cls = HitsAtK

    def __init__(self, k: int = 10) -> None:
        super().__init__(k=k)
