r"""The base class of every rank-based metric: metadata, public template methods, hook defaults.

The public methods (:meth:`~RankBasedMetric.__call__`, :meth:`~RankBasedMetric.expected_value`,
:meth:`~RankBasedMetric.variance`, ...) validate their input once and then call private hooks that
subclasses override: :meth:`~RankBasedMetric._evaluate` computes the metric,
:meth:`~RankBasedMetric._expected_value` and :meth:`~RankBasedMetric._variance` give closed forms
under the null model, or ``None`` where there is none, in which case the base class falls back to
Monte-Carlo (when ``num_samples`` is given) or raises :class:`~rankstats.errors.NoClosedFormError`.
"""

from __future__ import annotations

import functools
import math
import re
import sys
from abc import ABC, abstractmethod
from collections.abc import Collection
from typing import Any, ClassVar, Literal

import numpy as np
import numpy.typing as npt
from docdata import get_docdata

from rankstats.arrays import FloatArray, IntArray
from rankstats.chance import ChanceTerms
from rankstats.null.estimates import (
    ConfidenceInterval,
    NullMoments,
    check_variance_samples,
    null_moment,
    null_moments,
    sample_null_values,
    sampled_values,
    with_confidence_interval,
)
from rankstats.null.sampling import Seed
from rankstats.null.tasks import Tasks
from rankstats.ranges import ValueRange
from rankstats.ranktypes import (
    RANK_OPTIMISTIC,
    RANK_PESSIMISTIC,
    RANK_REALISTIC,
    RANK_TYPES,
    RankType,
)
from rankstats.validation import (
    MAX_NUM_CANDIDATES,
    check_confidence_level,
    check_generator,
    check_num_ranks,
    check_num_samples,
    check_positive_int,
    check_ranks,
    is_scalar,
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
    "NullMoments",
    "RankBasedMetric",
    "RankType",
    "override",
    "sample_null_values",
]


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

    The null *variance*, and with it every z-score, is where weights and repetitions part: a
    weighted task is *one* draw counted :math:`w_i` times (the weights guide,
    ``docs/guide/weights.rst``, says why weights express importance, not extra evidence).

    Subclasses set the class metadata and override the hooks :meth:`_evaluate` and, where a
    closed form exists, :meth:`_expected_value` / :meth:`_variance`; :attr:`closed_expectation`
    and :attr:`closed_variance` follow from which hooks a class overrides. The null hooks take
    the tasks as a :class:`~rankstats.null.tasks.Tasks`: rows of (candidate count, weight)
    standing for several tasks each, so that a table of a billion queries is a few thousand
    rows; ``tasks.mean(terms)`` and ``tasks.mean_variance(terms)`` give the moments of a mean of
    per-task terms, ``tasks.candidates`` the counts the terms are computed from.
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
    #: whether the expected value is the same for every number of tasks with equal counts (means
    #: of per-task terms, and metrics whose expected value is fixed): then ``expected_value``
    #: accepts a scalar ``num_candidates`` without ``num_ranks``, as PyKEEN does
    _size_free_expectation: ClassVar[bool] = False
    #: whether the null moments need only the sums of the weights and of their squares per
    #: candidate count (means of per-task terms: MR, MRR, Hits@k and what derives from them), so
    #: that weighted state can keep those sums instead of each weight
    _null_from_weight_sums: ClassVar[bool] = False
    #: whether the unweighted value is the mean of the ranks: a mean of n ranks (each >= 1) at
    #: most 2**53 / n bounds every rank by 2**53, so the search for larger ranks (a pass over
    #: the ranks) is needed only when it is larger
    _mean_bounds_ranks: ClassVar[bool] = False

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
        if self is other:
            return True
        if type(other) is type(self):  # the common case, without the ABC's isinstance
            return self._identity() == other._identity()
        if not isinstance(other, RankBasedMetric):
            return NotImplemented
        return False  # another class: never equal (the identity holds the class)

    @functools.cached_property
    def _hash(self) -> int:
        return hash(self._identity())

    def __hash__(self) -> int:
        # computed once, then an attribute: evaluate looks metrics up in dictionaries hundreds
        # of times per call (the parameters are fixed at construction)
        return self._hash

    def _identity(self) -> tuple[Any, ...]:
        """The class and the sorted parameters: what equality and the hash compare.

        Computed once (the parameters are fixed at construction): a derived metric's base is
        looked up in dictionaries keyed by equal, not identical, instances.
        """
        found: tuple[Any, ...] | None = self.__dict__.get("_identity_key")
        if found is None:
            found = self.__dict__["_identity_key"] = (
                type(self),
                tuple(sorted(self._params().items())),
            )
        return found

    def __getstate__(self) -> dict[str, Any]:
        # the cached hash is left out (a type's hash differs between processes), and so is the
        # cached identity it is taken from
        state = dict(self.__dict__)
        state.pop("_hash", None)
        state.pop("_identity_key", None)
        return state

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
            The rank of each task's true answer: from 1 to 2**53, not necessarily integers
            (realistic ranks are half-integers where ties are broken in the middle). An array
            of more dimensions is flattened in row-major order; ``num_candidates`` and
            ``weights`` given as arrays must then have its shape (axes of length 1 aside).
        num_candidates : int or array-like of shape (n,), optional
            The number of candidates of each task (a scalar: the same for every task); required
            by metrics that need it (:attr:`needs_candidates`), and each rank must not exceed it.
        weights : float or array-like of shape (n,), optional
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
            check_upper=not (self._mean_bounds_ranks and weights is None),
        )
        with np.errstate(over="ignore"):  # a rank of +inf, found just below
            value = float(self._evaluate(*data))
        if not value * data.ranks.size <= MAX_NUM_CANDIDATES and self._mean_bounds_ranks:
            check_ranks(data.ranks)  # the ranks were left unchecked above 2**53: raises if so
        if not math.isfinite(value):  # valid ranks give finite values
            raise FloatingPointError(f"{self!r} gave {value} on valid input; please report this")
        return value

    def expected_value(
        self,
        num_candidates: npt.ArrayLike,
        num_samples: int | None = None,
        weights: npt.ArrayLike | None = None,
        *,
        generator: Seed = None,
        num_ranks: int | None = None,
    ) -> float:
        r"""The expected value under the null model :math:`r_i \sim \mathcal{U}\{1..C_i\}`.

        Parameters
        ----------
        num_candidates : int or array-like of shape (n,)
            The number of candidates :math:`C_i` of each task: integers >= 1. A scalar is the
            same count for every task and needs ``num_ranks`` (or ``weights``), except for
            metrics whose expected value does not depend on the number of tasks (MR, MRR,
            Hits@k and the adjusted metrics), as in PyKEEN.
        num_samples : int, optional
            The number of Monte-Carlo samples to use where no closed form exists; validated
            (a positive integer) even where it is not used.
        weights : float or array-like of shape (n,), optional
            Non-negative weights, not all zero.
        generator : int or numpy.random.Generator, optional
            Seed or generator for the Monte-Carlo fallback.
        num_ranks : int, optional
            The number of tasks :math:`n`, with a scalar ``num_candidates``.

        Returns
        -------
        float
            The expected value: exact where a closed form exists, else a Monte-Carlo estimate.

        Raises
        ------
        NoClosedFormError
            If there is no closed form and ``num_samples`` is not given.
        """
        return self._null_moment(
            "expected value", num_candidates, num_samples, weights, generator, num_ranks
        )

    def variance(
        self,
        num_candidates: npt.ArrayLike,
        num_samples: int | None = None,
        weights: npt.ArrayLike | None = None,
        *,
        generator: Seed = None,
        num_ranks: int | None = None,
    ) -> float:
        r"""The variance under the null model :math:`r_i \sim \mathcal{U}\{1..C_i\}`.

        Parameters and errors are those of :meth:`expected_value` (a scalar ``num_candidates``
        always needs ``num_ranks`` or ``weights``); a Monte-Carlo estimate uses the unbiased
        (``ddof=1``) sample variance.
        """
        return self._null_moment(
            "variance", num_candidates, num_samples, weights, generator, num_ranks
        )

    def std(
        self,
        num_candidates: npt.ArrayLike,
        num_samples: int | None = None,
        weights: npt.ArrayLike | None = None,
        *,
        generator: Seed = None,
        num_ranks: int | None = None,
    ) -> float:
        """The standard deviation under the null model, the square root of :meth:`variance`."""
        return math.sqrt(
            self.variance(
                num_candidates, num_samples, weights, generator=generator, num_ranks=num_ranks
            )
        )

    def moments(
        self,
        num_candidates: npt.ArrayLike,
        num_samples: int | None = None,
        weights: npt.ArrayLike | None = None,
        *,
        generator: Seed = None,
        num_ranks: int | None = None,
    ) -> NullMoments:
        r"""The expected value and variance under the null model, from one computation.

        Cheaper than :meth:`expected_value` followed by :meth:`variance` for metrics whose two
        moments come from one pass (the geometric and harmonic means, the median, the derived
        metrics), and from one set of samples where Monte-Carlo is needed.

        Parameters are those of :meth:`expected_value`; ``num_samples`` is needed when either
        moment has no closed form (then both come from the samples, for consistency).

        Returns
        -------
        NullMoments
            ``(expected_value, variance)`` as Python floats, with a ``std`` property.

        Examples
        --------
        >>> from rankstats import ArithmeticMeanRank
        >>> ArithmeticMeanRank().moments([3, 5])
        NullMoments(expected_value=2.5, variance=0.6666666666666666)
        """
        samples = None if num_samples is None else check_num_samples(num_samples)
        check_generator(generator)
        tasks = self._null_input(num_candidates, weights, num_ranks, False)
        return null_moments(self, tasks, samples, generator)

    def get_sampled_values(
        self,
        num_candidates: npt.ArrayLike,
        num_samples: int,
        weights: npt.ArrayLike | None = None,
        generator: Seed = None,
        *,
        num_ranks: int | None = None,
    ) -> FloatArray:
        r"""Evaluate the metric on ``num_samples`` rank vectors drawn from the null model.

        All samples are evaluated by vectorised calls on blocks of bounded size, never one
        Python call per sample.

        Returns
        -------
        numpy.ndarray of shape (num_samples,)
            The metric's value on each sample.
        """
        num_samples = check_num_samples(num_samples)
        check_generator(generator)
        candidates, clean_weights = self._null_input(
            num_candidates, weights, num_ranks, False
        ).expanded()
        return sampled_values(
            self, candidates, clean_weights, num_samples, np.random.default_rng(generator)
        )

    def numeric_expected_value(
        self,
        num_candidates: npt.ArrayLike,
        num_samples: int,
        weights: npt.ArrayLike | None = None,
        generator: Seed = None,
        *,
        num_ranks: int | None = None,
    ) -> float:
        """Estimate the expected value under the null model by Monte-Carlo."""
        values = self.get_sampled_values(
            num_candidates, num_samples, weights, generator, num_ranks=num_ranks
        )
        return float(values.mean())

    def numeric_variance(
        self,
        num_candidates: npt.ArrayLike,
        num_samples: int,
        weights: npt.ArrayLike | None = None,
        generator: Seed = None,
        *,
        num_ranks: int | None = None,
    ) -> float:
        """Estimate the variance under the null model by Monte-Carlo (``ddof=1``)."""
        check_variance_samples(num_samples)
        values = self.get_sampled_values(
            num_candidates, num_samples, weights, generator, num_ranks=num_ranks
        )
        return float(values.var(ddof=1))

    def numeric_expected_value_with_ci(
        self,
        num_candidates: npt.ArrayLike,
        num_samples: int,
        weights: npt.ArrayLike | None = None,
        generator: Seed = None,
        confidence_level: float = 0.95,
        n_boot: int = 1_000,
        *,
        num_ranks: int | None = None,
    ) -> ConfidenceInterval:
        """Estimate the expected value with a percentile-bootstrap confidence interval.

        Parameters
        ----------
        confidence_level : float, default=0.95
            The interval's coverage as a fraction in (0, 1), scipy's convention (PyKEEN's
            percentages, such as 95, are refused with a hint to pass 0.95).
        n_boot : int, default=1000
            The number of bootstrap resamples.

        Other parameters are those of :meth:`get_sampled_values`.
        """
        return self._with_ci(
            "mean",
            num_candidates,
            num_samples,
            weights,
            generator,
            confidence_level,
            n_boot,
            num_ranks,
        )

    def numeric_variance_with_ci(
        self,
        num_candidates: npt.ArrayLike,
        num_samples: int,
        weights: npt.ArrayLike | None = None,
        generator: Seed = None,
        confidence_level: float = 0.95,
        n_boot: int = 1_000,
        *,
        num_ranks: int | None = None,
    ) -> ConfidenceInterval:
        """Estimate the variance with a percentile-bootstrap confidence interval.

        Parameters are those of :meth:`numeric_expected_value_with_ci`.
        """
        check_variance_samples(num_samples)
        return self._with_ci(
            "variance",
            num_candidates,
            num_samples,
            weights,
            generator,
            confidence_level,
            n_boot,
            num_ranks,
        )

    # --- hooks ---------------------------------------------------------------------------------

    @abstractmethod
    def _evaluate(
        self, ranks: FloatArray, num_candidates: IntArray | None, weights: FloatArray | None
    ) -> FloatArray | float:
        """Compute the metric over the last axis of clean ``ranks`` of shape (..., n)."""

    def _evaluate_histogram(self, values: FloatArray, counts: FloatArray) -> float:
        """The metric on distinct ranks ``values`` occurring ``counts`` (integer) times each.

        Metrics that take weights get the counts as weights; others get the ranks repeated,
        unless they override this (the count needs only the total).
        """
        if self.supports_weights:
            return float(np.asarray(self._evaluate(values, None, counts)))
        repeated = np.repeat(values, counts.astype(np.int64))
        return float(np.asarray(self._evaluate(repeated, None, None)))

    def _expected_value(self, tasks: Tasks) -> float | None:
        """The closed-form expected value for clean input, or ``None`` where there is none."""
        return None

    def _variance(self, tasks: Tasks) -> float | None:
        """The closed-form variance for clean input, or ``None`` where there is none."""
        return None

    def _moments(self, tasks: Tasks) -> tuple[float | None, float | None]:
        """Both closed-form moments; metrics that get them from one computation override this."""
        return self._expected_value(tasks), self._variance(tasks)

    def _expected_gap(self, tasks: Tasks) -> float | None:
        r""":math:`1 - \mathbb{E}[M]` computed without forming :math:`\mathbb{E}[M]`, or ``None``.

        The re-indexed metrics divide by it: near the best value (Hits@10 with few candidates)
        ``1 - E`` would lose every digit that ``E`` shares with 1. Metrics whose expected value
        can be close to 1 compute the gap from per-task terms instead.
        """
        return None

    def _moments_and_gap(self, tasks: Tasks) -> tuple[float | None, float | None, float | None]:
        """The closed-form moments and :meth:`_expected_gap`, in one computation where possible."""
        mean, variance = self._moments(tasks)
        gap = None if mean is None else self._expected_gap(tasks)
        return mean, variance, gap

    def _value_gap(
        self, ranks: FloatArray, num_candidates: IntArray | None, weights: FloatArray | None
    ) -> FloatArray | None:
        """:math:`1 - M` over the last axis without forming :math:`M`, or ``None``."""
        return None

    def _chance_terms(self) -> ChanceTerms | None:
        r"""A mean-type metric's per-task terms and their null expectations, or ``None``.

        Where given, :math:`M - \mathbb{E}[M]` of the metrics derived from this one is taken as
        one exact sum where the rounded means cancel (:mod:`rankstats.chance`).
        """
        return None

    # --- delegation -----------------------------------------------------------------------------

    def _null_input(
        self, num_candidates: Any, weights: Any, num_ranks: Any, size_free: bool
    ) -> Tasks:
        if weights is None and num_ranks is not None and is_scalar(num_candidates):
            # one count for every task: one row standing for all of them, not n entries
            size = check_num_ranks(num_ranks)
            candidates, _ = validate_null_input(num_candidates, num_ranks=1, metric=repr(self))
            return Tasks(candidates, None, np.array([size], dtype=np.int64))
        candidates, clean_weights = validate_null_input(
            num_candidates,
            weights,
            num_ranks=num_ranks,
            supports_weights=self.supports_weights,
            metric=repr(self),
            size_free=size_free,
        )
        return Tasks(candidates, clean_weights)

    def _null_moment(
        self,
        which: Literal["expected value", "variance"],
        num_candidates: npt.ArrayLike,
        num_samples: int | None,
        weights: npt.ArrayLike | None,
        generator: Seed,
        num_ranks: int | None,
    ) -> float:
        samples = None if num_samples is None else check_num_samples(num_samples)
        check_generator(generator)
        size_free = which == "expected value" and self._size_free_expectation
        tasks = self._null_input(num_candidates, weights, num_ranks, size_free)
        return null_moment(self, which, tasks, samples, generator)

    def _with_ci(
        self,
        statistic: Literal["mean", "variance"],
        num_candidates: npt.ArrayLike,
        num_samples: int,
        weights: npt.ArrayLike | None,
        generator: Seed,
        confidence_level: float,
        n_boot: int,
        num_ranks: int | None,
    ) -> ConfidenceInterval:
        level = check_confidence_level(confidence_level)
        n_boot = check_positive_int(n_boot, "n_boot")
        check_generator(generator)
        rng = np.random.default_rng(generator)
        values = self.get_sampled_values(
            num_candidates, num_samples, weights, rng, num_ranks=num_ranks
        )
        return with_confidence_interval(values, statistic, level, n_boot, rng)


class JointMoments:
    """Mixin for metrics whose closed-form moments come from one computation of both.

    Such a metric overrides :meth:`_moments` only; :meth:`_expected_value` and :meth:`_variance`
    read from it. List the mixin before :class:`RankBasedMetric` among the bases.
    """

    def _moments(self, tasks: Tasks) -> tuple[float | None, float | None]:
        raise NotImplementedError

    def _expected_value(self, tasks: Tasks) -> float | None:
        return self._moments(tasks)[0]

    def _variance(self, tasks: Tasks) -> float | None:
        return self._moments(tasks)[1]
