r"""The base class of every rank-based metric: metadata, public template methods, hook defaults.

The public methods (:meth:`~RankBasedMetric.__call__`, :meth:`~RankBasedMetric.expected_value`,
:meth:`~RankBasedMetric.variance`, ...) validate their input once and then call private hooks that
subclasses override: :meth:`~RankBasedMetric._evaluate` computes the metric,
:meth:`~RankBasedMetric._expected_value` and :meth:`~RankBasedMetric._variance` give closed forms
under the null model, or ``None`` where there is none, in which case the base class falls back to
Monte-Carlo (when ``num_samples`` is given) or raises :class:`~rankstats.errors.NoClosedFormError`.
"""

from __future__ import annotations

import math
import re
import sys
from abc import ABC, abstractmethod
from collections.abc import Collection, Sequence
from typing import Any, ClassVar, Literal, NamedTuple

import numpy as np
import numpy.typing as npt
from docdata import get_docdata

from rankstats.arrays import FloatArray, IntArray
from rankstats.errors import NoClosedFormError
from rankstats.null.sampling import Seed, bootstrap_interval, evaluate_on_samples
from rankstats.ranges import ValueRange
from rankstats.validation import (
    check_num_samples,
    check_positive_int,
    raise_non_finite,
    validate_null_input,
    validate_rank_input,
)

if sys.version_info >= (3, 12):  # pragma: no cover
    from typing import override
else:  # pragma: no cover
    from typing_extensions import override

__all__ = [
    "RANK_OPTIMISTIC",
    "RANK_PESSIMISTIC",
    "RANK_REALISTIC",
    "RANK_TYPES",
    "ConfidenceInterval",
    "JointMoments",
    "RankBasedMetric",
    "RankType",
    "override",
    "sample_null_values",
]


RankType = Literal["optimistic", "realistic", "pessimistic"]
RANK_OPTIMISTIC: RankType = "optimistic"
RANK_REALISTIC: RankType = "realistic"
RANK_PESSIMISTIC: RankType = "pessimistic"
#: every rank type: with ties, the optimistic rank is 1 + #better, the pessimistic rank the number
#: of candidates not worse (the true one included), and the realistic rank their mean
RANK_TYPES: tuple[RankType, ...] = (RANK_OPTIMISTIC, RANK_REALISTIC, RANK_PESSIMISTIC)


class ConfidenceInterval(NamedTuple):
    """A Monte-Carlo estimate with a percentile-bootstrap confidence interval.

    It unpacks as ``lower, estimate, upper``, the order of PyKEEN's percentile array.
    """

    lower: float
    estimate: float
    upper: float


def _camel_to_snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class RankBasedMetric(ABC):
    r"""A metric that summarises the ranks of the true answers of :math:`n` ranking tasks.

    Task :math:`i` ranks its true answer at :math:`r_i \ge 1` among :math:`C_i` candidates.
    Calling the metric on the ranks returns a Python ``float``.

    **The null model.** A model that orders the candidates at random ranks the true answer
    uniformly, independently across tasks: :math:`r_i \sim \mathcal{U}\{1, \dots, C_i\}`.
    :meth:`expected_value`, :meth:`variance` and :meth:`std` give the metric's moments under this
    model, in closed form where one is known (:attr:`closed_expectation`,
    :attr:`closed_variance`) and otherwise by Monte-Carlo when ``num_samples`` is given.
    Comparing a result with them tells how far a model is from chance; the derived metrics
    (adjusted indices, z-scores) do so in one number.

    **Weights** are scaling factors, with the semantics of :func:`numpy.average`: only their ratios
    matter, a zero weight removes a task, and an integer weight :math:`w_i` gives the same metric
    value as repeating rank :math:`r_i` :math:`w_i` times. With :math:`a_i = w_i / \sum_j w_j`, a
    mean-type metric has :math:`\mathbb{E} = \sum_i a_i \mathbb{E}_i` and
    :math:`\mathbb{V} = \sum_i a_i^2 \mathbb{V}_i`.

    The null *variance*, and with it every z-score, is where weights and repetitions part. A
    weighted task is *one* random draw counted :math:`w_i` times, so it contributes
    :math:`w_i^2 \mathbb{V}_i` to the variance of the weighted sum; :math:`w_i` repeated tasks are
    independent draws and contribute :math:`w_i \mathbb{V}_i`. Weighting therefore gives a larger
    null variance than repeating, and z-scores of smaller magnitude: weights express importance,
    not extra evidence. For the weighted means of per-task terms (MR, MRR, Hits@k) the expected
    value, and with it the adjusted indices, is the same either way; for nonlinear aggregates
    such as the geometric mean or the median it differs too, by the same argument.

    Subclasses set the class metadata and override the hooks :meth:`_evaluate` and, where a
    closed form exists, :meth:`_expected_value` / :meth:`_variance`; :attr:`closed_expectation`
    and :attr:`closed_variance` follow from which hooks a class overrides.
    """

    #: the human-readable name
    name: ClassVar[str]
    #: other names to look the metric up by, besides the class name
    synonyms: ClassVar[Collection[str]] = ()
    #: the values the metric can take
    value_range: ClassVar[ValueRange]
    #: whether larger values are better
    increasing: ClassVar[bool]
    #: whether the metric accepts weights
    supports_weights: ClassVar[bool] = True
    #: whether the metric needs the number of candidates of each task to be computed
    needs_candidates: ClassVar[bool] = False
    #: the rank types (optimistic, realistic, pessimistic) the metric is meaningful for
    supported_rank_types: ClassVar[Collection[RankType]] = RANK_TYPES
    #: whether the metric works on binarized scores (never, for rank-based metrics)
    binarize: ClassVar[bool] = False
    #: whether the expected value under the null has a closed form (for unweighted input at least)
    closed_expectation: ClassVar[bool] = False
    #: whether the variance under the null has a closed form (for unweighted input at least)
    closed_variance: ClassVar[bool] = False
    #: whether a rank of +inf makes the value non-finite (then validation skips looking for it and
    #: checks the result instead, saving a pass over the ranks)
    _infinity_shows: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "closed_expectation" not in cls.__dict__:
            cls.closed_expectation = cls._overrides("_expected_value")
        if "closed_variance" not in cls.__dict__:
            cls.closed_variance = cls._overrides("_variance")

    @classmethod
    def _overrides(cls, hook: str) -> bool:
        return getattr(cls, hook) is not getattr(RankBasedMetric, hook)

    # --- metadata -----------------------------------------------------------------------------

    def _params(self) -> dict[str, Any]:
        """The constructor parameters, for :func:`repr`, equality and the key."""
        return {}

    @property
    def key(self) -> str:
        """The metric's key: the class name in snake case, with ``k`` replaced by its value.

        Examples
        --------
        >>> from rankstats import HitsAtK, InverseHarmonicMeanRank
        >>> InverseHarmonicMeanRank().key, HitsAtK(k=3).key
        ('inverse_harmonic_mean_rank', 'hits_at_3')
        """
        key = _camel_to_snake(type(self).__name__)
        k = self._params().get("k")
        if k is not None and key.endswith("_k"):
            key = f"{key[:-1]}{k}"
        return key

    @classmethod
    def get_description(cls) -> str:
        """Return the one-line description from the class's docdata."""
        return str(cls._docdata().get("description", ""))

    @classmethod
    def get_link(cls) -> str:
        """Return the reference link from the class's docdata."""
        return str(cls._docdata().get("link", ""))

    @classmethod
    def get_range(cls) -> str:
        """Return the value range in interval notation, e.g. ``(0, 1]``."""
        return cls.value_range.notate()

    @classmethod
    def _docdata(cls) -> dict[str, Any]:
        data = get_docdata(cls)
        return dict(data) if data else {}

    def __repr__(self) -> str:
        params = ", ".join(f"{name}={value!r}" for name, value in self._params().items())
        return f"{type(self).__name__}({params})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RankBasedMetric):
            return NotImplemented
        return type(self) is type(other) and self._params() == other._params()

    def __hash__(self) -> int:
        return hash((type(self), tuple(sorted(self._params().items()))))

    # --- public template methods ---------------------------------------------------------------

    def __call__(
        self,
        ranks: npt.ArrayLike,
        num_candidates: npt.ArrayLike | None = None,
        weights: npt.ArrayLike | None = None,
    ) -> float:
        """Evaluate the metric.

        Parameters
        ----------
        ranks : array-like of shape (n,)
            The rank of each task's true answer: finite, >= 1, not necessarily integers
            (realistic ranks are half-integers where ties are broken in the middle).
        num_candidates : array-like of shape (n,), optional
            The number of candidates of each task; required by metrics that need it
            (:attr:`needs_candidates`), and each rank must not exceed it.
        weights : array-like of shape (n,), optional
            Non-negative weights, not all zero (see the class docstring).

        Returns
        -------
        float
            The metric's value.
        """
        data = validate_rank_input(
            ranks,
            num_candidates,
            weights,
            needs_candidates=self.needs_candidates,
            supports_weights=self.supports_weights,
            metric=repr(self),
            infinity_shows=self._infinity_shows,
        )
        # a +inf rank left for the result to show may meet a zero weight (0 * inf): hush that,
        # the result is checked right after
        with np.errstate(invalid="ignore"):
            value = float(self._evaluate(*data))
        if not math.isfinite(value):  # valid ranks give finite values: find the culprit
            raise_non_finite(data.ranks)
            raise FloatingPointError(f"{self!r} gave {value} on valid input; please report this")
        return value

    def expected_value(
        self,
        num_candidates: npt.ArrayLike,
        num_samples: int | None = None,
        weights: npt.ArrayLike | None = None,
        *,
        generator: Seed = None,
    ) -> float:
        r"""The expected value under the null model :math:`r_i \sim \mathcal{U}\{1..C_i\}`.

        Parameters
        ----------
        num_candidates : array-like of shape (n,)
            The number of candidates :math:`C_i` of each task: integers >= 1.
        num_samples : int, optional
            The number of Monte-Carlo samples to use where no closed form exists.
        weights : array-like of shape (n,), optional
            Non-negative weights, not all zero.
        generator : int or numpy.random.Generator, optional
            Seed or generator for the Monte-Carlo fallback.

        Returns
        -------
        float
            The expected value: exact where a closed form exists, else a Monte-Carlo estimate.

        Raises
        ------
        NoClosedFormError
            If there is no closed form and ``num_samples`` is not given.
        """
        return self._null_moment("expected value", num_candidates, num_samples, weights, generator)

    def variance(
        self,
        num_candidates: npt.ArrayLike,
        num_samples: int | None = None,
        weights: npt.ArrayLike | None = None,
        *,
        generator: Seed = None,
    ) -> float:
        r"""The variance under the null model :math:`r_i \sim \mathcal{U}\{1..C_i\}`.

        Parameters and errors are those of :meth:`expected_value`; a Monte-Carlo estimate uses
        the unbiased (``ddof=1``) sample variance.
        """
        return self._null_moment("variance", num_candidates, num_samples, weights, generator)

    def std(
        self,
        num_candidates: npt.ArrayLike,
        num_samples: int | None = None,
        weights: npt.ArrayLike | None = None,
        *,
        generator: Seed = None,
    ) -> float:
        """The standard deviation under the null model, the square root of :meth:`variance`."""
        return math.sqrt(self.variance(num_candidates, num_samples, weights, generator=generator))

    def get_sampled_values(
        self,
        num_candidates: npt.ArrayLike,
        num_samples: int,
        weights: npt.ArrayLike | None = None,
        generator: Seed = None,
    ) -> FloatArray:
        r"""Evaluate the metric on ``num_samples`` rank vectors drawn from the null model.

        All samples are evaluated by vectorised calls on blocks of bounded size, never one
        Python call per sample.

        Returns
        -------
        numpy.ndarray of shape (num_samples,)
            The metric's value on each sample.
        """
        candidates, clean_weights = validate_null_input(
            num_candidates, weights, supports_weights=self.supports_weights, metric=repr(self)
        )
        num_samples = check_num_samples(num_samples)
        return self._sampled_values(
            candidates, clean_weights, num_samples, np.random.default_rng(generator)
        )

    def numeric_expected_value(
        self,
        num_candidates: npt.ArrayLike,
        num_samples: int,
        weights: npt.ArrayLike | None = None,
        generator: Seed = None,
    ) -> float:
        """Estimate the expected value under the null model by Monte-Carlo."""
        values = self.get_sampled_values(num_candidates, num_samples, weights, generator)
        return float(values.mean())

    def numeric_variance(
        self,
        num_candidates: npt.ArrayLike,
        num_samples: int,
        weights: npt.ArrayLike | None = None,
        generator: Seed = None,
    ) -> float:
        """Estimate the variance under the null model by Monte-Carlo (``ddof=1``)."""
        _check_variance_samples(num_samples)
        values = self.get_sampled_values(num_candidates, num_samples, weights, generator)
        return float(values.var(ddof=1))

    def numeric_expected_value_with_ci(
        self,
        num_candidates: npt.ArrayLike,
        num_samples: int,
        weights: npt.ArrayLike | None = None,
        generator: Seed = None,
        confidence_level: float = 95.0,
        n_boot: int = 1_000,
    ) -> ConfidenceInterval:
        """Estimate the expected value with a percentile-bootstrap confidence interval.

        Parameters
        ----------
        confidence_level : float, default=95.0
            The interval's coverage in percent, in (0, 100).
        n_boot : int, default=1000
            The number of bootstrap resamples.

        Other parameters are those of :meth:`get_sampled_values`.
        """
        return self._with_ci(
            "mean", num_candidates, num_samples, weights, generator, confidence_level, n_boot
        )

    def numeric_variance_with_ci(
        self,
        num_candidates: npt.ArrayLike,
        num_samples: int,
        weights: npt.ArrayLike | None = None,
        generator: Seed = None,
        confidence_level: float = 95.0,
        n_boot: int = 1_000,
    ) -> ConfidenceInterval:
        """Estimate the variance with a percentile-bootstrap confidence interval.

        Parameters are those of :meth:`numeric_expected_value_with_ci`.
        """
        _check_variance_samples(num_samples)
        return self._with_ci(
            "variance", num_candidates, num_samples, weights, generator, confidence_level, n_boot
        )

    # --- hooks ---------------------------------------------------------------------------------

    @abstractmethod
    def _evaluate(
        self, ranks: FloatArray, num_candidates: IntArray | None, weights: FloatArray | None
    ) -> FloatArray | float:
        """Compute the metric over the last axis of clean ``ranks`` of shape (..., n)."""

    def _expected_value(self, num_candidates: IntArray, weights: FloatArray | None) -> float | None:
        """The closed-form expected value for clean input, or ``None`` where there is none."""
        return None

    def _variance(self, num_candidates: IntArray, weights: FloatArray | None) -> float | None:
        """The closed-form variance for clean input, or ``None`` where there is none."""
        return None

    def _moments(
        self, num_candidates: IntArray, weights: FloatArray | None
    ) -> tuple[float | None, float | None]:
        """Both closed-form moments; metrics that get them from one computation override this."""
        return self._expected_value(num_candidates, weights), self._variance(
            num_candidates, weights
        )

    # --- machinery -----------------------------------------------------------------------------

    def _null_moment(
        self,
        which: Literal["expected value", "variance"],
        num_candidates: npt.ArrayLike,
        num_samples: int | None,
        weights: npt.ArrayLike | None,
        generator: Seed,
    ) -> float:
        candidates, clean_weights = validate_null_input(
            num_candidates, weights, supports_weights=self.supports_weights, metric=repr(self)
        )
        hook = self._expected_value if which == "expected value" else self._variance
        value = hook(candidates, clean_weights)
        if value is not None:
            return float(value)
        if num_samples is None:
            qualifier = " for weighted ranks" if clean_weights is not None else ""
            raise NoClosedFormError(
                f"{self!r} has no closed-form {which}{qualifier}; "
                f"pass num_samples= for a Monte-Carlo estimate"
            )
        num_samples = check_num_samples(num_samples)
        if which == "variance":
            _check_variance_samples(num_samples)
        values = self._sampled_values(
            candidates, clean_weights, num_samples, np.random.default_rng(generator)
        )
        return float(values.mean() if which == "expected value" else values.var(ddof=1))

    def _sampled_values(
        self,
        num_candidates: IntArray,
        weights: FloatArray | None,
        num_samples: int,
        generator: np.random.Generator,
    ) -> FloatArray:
        values = evaluate_on_samples([self], num_candidates, weights, num_samples, generator)
        return np.asarray(values[0], dtype=np.float64)

    def _with_ci(
        self,
        statistic: Literal["mean", "variance"],
        num_candidates: npt.ArrayLike,
        num_samples: int,
        weights: npt.ArrayLike | None,
        generator: Seed,
        confidence_level: float,
        n_boot: int,
    ) -> ConfidenceInterval:
        if not 0.0 < confidence_level < 100.0:
            raise ValueError(
                f"confidence_level must be a percentage in (0, 100), got {confidence_level!r}"
            )
        n_boot = check_positive_int(n_boot, "n_boot")
        rng = np.random.default_rng(generator)
        values = self.get_sampled_values(num_candidates, num_samples, weights, rng)
        estimate = float(values.mean() if statistic == "mean" else values.var(ddof=1))
        low, high = bootstrap_interval(
            values,
            statistic,
            confidence_level=confidence_level,
            num_resamples=n_boot,
            generator=rng,
        )
        return ConfidenceInterval(low, estimate, high)


class JointMoments:
    """Mixin for metrics whose closed-form moments come from one computation of both.

    Such a metric overrides :meth:`_moments` only; :meth:`_expected_value` and :meth:`_variance`
    read from it. List the mixin before :class:`RankBasedMetric` among the bases.
    """

    def _moments(
        self, num_candidates: IntArray, weights: FloatArray | None
    ) -> tuple[float | None, float | None]:
        raise NotImplementedError

    def _expected_value(self, num_candidates: IntArray, weights: FloatArray | None) -> float | None:
        return self._moments(num_candidates, weights)[0]

    def _variance(self, num_candidates: IntArray, weights: FloatArray | None) -> float | None:
        return self._moments(num_candidates, weights)[1]


def sample_null_values(
    metrics: Sequence[RankBasedMetric],
    num_candidates: npt.ArrayLike,
    num_samples: int,
    weights: npt.ArrayLike | None = None,
    generator: Seed = None,
) -> FloatArray:
    r"""Evaluate several metrics on the same rank vectors drawn from the null model.

    The Monte-Carlo counterpart of a results table: the samples are drawn once and shared, which
    is several times faster than one :meth:`RankBasedMetric.get_sampled_values` per metric.

    Parameters
    ----------
    metrics : sequence of RankBasedMetric
        The metrics; with ``weights``, each must support weights.
    num_candidates : array-like of shape (n,)
        The number of candidates :math:`C_i` of each task.
    num_samples : int
        The number of rank vectors :math:`r_i \sim \mathcal{U}\{1..C_i\}` to draw.
    weights : array-like of shape (n,), optional
        Non-negative weights, not all zero.
    generator : int or numpy.random.Generator, optional
        Seed or generator.

    Returns
    -------
    numpy.ndarray of shape (len(metrics), num_samples)
        Row ``j`` holds the values of ``metrics[j]``.

    Examples
    --------
    >>> from rankstats import ArithmeticMeanRank, HitsAtK
    >>> values = sample_null_values([ArithmeticMeanRank(), HitsAtK(k=1)], [2, 2], 1000, generator=0)
    >>> values.shape
    (2, 1000)
    """
    metrics = list(metrics)
    if not metrics:
        raise ValueError("metrics must name at least one metric, got none")
    unweighted = [m for m in metrics if not m.supports_weights]
    candidates, clean_weights = validate_null_input(
        num_candidates,
        weights,
        supports_weights=not unweighted,
        metric=repr(unweighted[0]) if unweighted else "this metric",
    )
    return evaluate_on_samples(
        metrics,
        candidates,
        clean_weights,
        check_num_samples(num_samples),
        np.random.default_rng(generator),
    )


def _check_variance_samples(num_samples: Any) -> None:
    if check_num_samples(num_samples) < 2:
        raise ValueError(
            f"num_samples must be at least 2 to estimate a variance, got {num_samples}"
        )
