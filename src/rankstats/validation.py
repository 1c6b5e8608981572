"""Turning user input into clean arrays, or a clear error.

Every public entry point of rankstats validates its input here, once; the private hooks behind it
trust what they get. Messages name the argument, say what was expected, and show what was given.
"""

from __future__ import annotations

import decimal
import itertools
import math
import numbers
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from rankstats.arrays import FloatArray, IntArray
from rankstats.errors import NoWeightSupportError

__all__ = [
    "NullInput",
    "RankInput",
    "as_array",
    "check_confidence_level",
    "check_generator",
    "check_lower_bound",
    "check_num_candidates",
    "check_num_ranks",
    "check_num_samples",
    "check_positive_int",
    "check_rank_order",
    "check_ranks",
    "check_same_shape",
    "check_variance_samples",
    "check_weight_spread",
    "check_weights",
    "holds_booleans",
    "is_scalar",
    "num_entries",
    "numeric_array",
    "raise_non_finite",
    "validate_null_input",
    "validate_rank_input",
]


#: the largest candidate count handled exactly: integers stay exact in float64 up to 2**53
MAX_NUM_CANDIDATES = 2**53


class RankInput(NamedTuple):
    """Validated input of a metric evaluation: flat arrays of equal length."""

    ranks: FloatArray
    num_candidates: IntArray | None
    weights: FloatArray | None


class NullInput(NamedTuple):
    """Validated input of a null-model computation: flat arrays of equal length."""

    num_candidates: IntArray
    weights: FloatArray | None


def num_entries(value: Any) -> int:
    """The number of entries of an array-like, tensors included.

    ``np.size`` reads a tensor's ``size`` attribute, which for a torch tensor is a method; the
    shape's product is the count for any array-like.
    """
    return math.prod(np.shape(value))


def _describe(array: npt.NDArray[Any], index: int) -> str:
    return f"{array.flat[index].item()!r} at index {index}"


def as_array(value: Any, name: str, *, size: int | None = None) -> npt.NDArray[Any]:
    """Convert ``value`` to a flat numeric numpy array without copying where possible.

    Lists, tuples, numpy arrays and objects implementing ``__array__`` (such as CPU tensors) are
    accepted; an array of more than one dimension is flattened.

    Parameters
    ----------
    value : array-like
        The user's input.
    name : str
        The argument's name, used in error messages.
    size : int, optional
        The number of entries a scalar stands for: a scalar is broadcast to this many (a
        read-only view, nothing is copied). Without it, a scalar is an error.

    Returns
    -------
    numpy.ndarray
        A one-dimensional array of a real numeric dtype.

    Raises
    ------
    TypeError
        If the input is a string, a mapping, boolean, complex or not numeric at all.
    ValueError
        If the input is a scalar or empty.
    """
    array = numeric_array(value, name)
    if array.ndim == 0:
        if size is None:
            raise ValueError(f"{name} must be a 1-D array-like, got the scalar {array.item()!r}")
        return np.broadcast_to(array, (size,))
    if array.size == 0:
        raise ValueError(f"{name} must not be empty, got an array of shape {array.shape}")
    return array.reshape(-1)


def numeric_array(value: Any, name: str) -> npt.NDArray[Any]:
    """``value`` as a numpy array of integers or floats (float64), any shape, or a clear error.

    Refuses strings, mappings, sets, masked arrays with masked entries, booleans (also among
    numbers in a list), ragged nestings and anything not numeric, each with a ``TypeError``
    naming ``name``. :func:`as_array` flattens its result; callers that need a shape of their
    own (:class:`~rankstats.evaluation.scores.Ranks`) take it as it is.
    """
    if isinstance(value, str | bytes | dict | set | frozenset):  # a set has no order
        raise TypeError(f"{name} must be an array-like of numbers, got {type(value).__name__}")
    if isinstance(value, np.ma.MaskedArray) and (masked := np.ma.getmaskarray(value)).any():
        # np.asarray would drop the mask and keep the masked entries
        raise TypeError(
            f"{name} must not be a masked array with masked entries ({int(masked.sum())} here); "
            f"pass the entries kept, e.g. {name}.compressed(), and the same entries of the "
            "other arguments"
        )
    if holds_booleans(value):  # np.asarray reads [True, 2] as [1, 2]
        raise TypeError(f"{name} must hold numbers, not booleans, got {type(value).__name__}")
    try:
        array = np.asarray(value)
    except Exception as error:  # e.g. a GPU tensor, or ragged nested lists
        raise TypeError(
            f"{name} must be convertible to a numpy array, got {type(value).__name__}: {error}"
        ) from error
    # integers and floats only (not booleans, and not timedelta64, which numpy counts as integer)
    if array.dtype.kind not in "iuf":
        if array.dtype == object and array.ndim == 0:  # a generator, an iterator, ...
            raise TypeError(
                f"{name} must be an array-like of numbers (a list, array or tensor), "
                f"got {type(value).__name__}"
            )
        if array.dtype == object and all(
            isinstance(x, numbers.Real | decimal.Decimal) and not isinstance(x, bool)
            for x in array.flat
        ):
            # Python integers beyond 64 bits, fractions and decimals make an array of objects:
            # as floats, they meet the bounds' checks (and their messages) like other numbers
            array = array.astype(np.float64)
        else:
            raise TypeError(f"{name} must hold real numbers, got an array of dtype {array.dtype}")
    if np.issubdtype(array.dtype, np.floating) and array.dtype != np.float64:
        # half and single precision would overflow comparing with the bounds (2**53), and long
        # doubles carry digits no computation here keeps: work in float64 from the start
        array = array.astype(np.float64)
    return array


def holds_booleans(value: Any) -> bool:
    """Whether a list or tuple (nested or not) holds a ``bool`` or ``numpy.bool_`` among numbers."""
    if not isinstance(value, list | tuple):
        return False
    kinds = set(map(type, value))  # one pass in C, not a loop over the entries in Python
    if kinds & {bool, np.bool_}:
        return True
    return bool(kinds & {list, tuple}) and any(holds_booleans(each) for each in value)


def check_ranks(value: Any, name: str = "ranks", *, check_upper: bool = True) -> FloatArray:
    """Validate ranks: numbers from 1 to 2**53 (half-integers, as realistic ranks are, are fine).

    The upper bound is that of :data:`MAX_NUM_CANDIDATES`: no larger rank can come from a
    ranking, and beyond it float64 no longer holds every integer.

    Parameters
    ----------
    value : array-like
        The ranks.
    name : str
        The argument's name, for error messages.
    check_upper : bool, default=True
        Whether to look for ranks above 2**53 (``+inf`` included). One pass (the minimum) finds
        NaN, ``-inf`` and values below 1; the upper bound takes a second pass, which callers skip
        where a comparison with the candidate counts finds it anyway. Integer ranks are always
        checked (as floats, those above 2**53 would round to a value that comparison passes).

    Returns
    -------
    numpy.ndarray of float64
        The ranks, flattened; the input itself is never modified.
    """
    array = as_array(value, name)
    # the minimum propagates NaN and finds -inf and values below 1 in one pass
    if not array.min() >= 1:
        bad = np.flatnonzero(~(array >= 1))[0]
        raise ValueError(f"{name} must be finite numbers >= 1, got {_describe(array, bad)}")
    # integers are checked before they become floats, which round those above 2**53 (to a
    # value a comparison with the candidate count would then let through)
    if (check_upper or array.dtype.kind in "iu") and not array.max() <= MAX_NUM_CANDIDATES:
        raise_non_finite(array, name)
    return array.astype(np.float64, copy=False)


def raise_non_finite(array: npt.NDArray[Any], name: str = "ranks") -> None:
    """Raise the error for the first non-finite or too large entry of ``array``, if there is one.

    :func:`check_ranks` calls it when the largest rank is not at most 2**53.
    """
    bad = np.flatnonzero(~np.isfinite(array))
    if bad.size:
        raise ValueError(f"{name} must be finite numbers >= 1, got {_describe(array, bad[0])}")
    large = np.flatnonzero(array > MAX_NUM_CANDIDATES)
    if large.size:
        raise ValueError(
            f"{name} must be at most 2**53 (no ranking has more candidates), "
            f"got {_describe(array, large[0])}"
        )


def check_num_candidates(
    value: Any, name: str = "num_candidates", *, check_lower: bool = True, size: int | None = None
) -> IntArray:
    """Validate candidate counts: integers >= 1 (integral floats are accepted).

    Parameters
    ----------
    value : array-like
        The counts.
    name : str
        The argument's name, for error messages.
    check_lower : bool, default=True
        Whether to check the lower bound here; callers that compare the counts with ranks
        (which are >= 1) skip it and call :func:`check_lower_bound` only if that comparison fails.
    size : int, optional
        The number of tasks a scalar count stands for (see :func:`as_array`).

    Returns
    -------
    numpy.ndarray of int64
        The counts, flattened.
    """
    array = as_array(value, name, size=size)
    if check_lower:
        check_lower_bound(array, name)
    if not array.max() <= MAX_NUM_CANDIDATES:
        bad = np.flatnonzero(~(array <= MAX_NUM_CANDIDATES))[0]
        raise ValueError(
            f"{name} must be integers between 1 and 2**53, got {_describe(array, bad)}"
        )
    if not np.issubdtype(array.dtype, np.integer):
        fractional = array != np.floor(array)
        if fractional.any():
            bad = np.flatnonzero(fractional)[0]
            raise ValueError(f"{name} must be integers >= 1, got {_describe(array, bad)}")
    return array.astype(np.int64, copy=False)


def check_lower_bound(array: npt.NDArray[Any], name: str = "num_candidates") -> None:
    """Raise the error for the first count that is not >= 1 (NaN included), if any."""
    if not array.min() >= 1:
        bad = np.flatnonzero(~(array >= 1))[0]
        raise ValueError(f"{name} must be integers >= 1, got {_describe(array, bad)}")


#: weights are rescaled by a power of two when the largest is outside this range, so that their
#: sum neither overflows nor loses digits to subnormal numbers
_WEIGHT_RANGE = (2.0**-500, 2.0**500)


#: the least positive weight, relative to the largest: shares of weighted means stay above about
#: 1e-130 (n up to 1e10), their squares times a task's null variance (at least about 1e-16, for
#: counts up to 2^53) above 1e-276, far from float64's subnormal numbers (below 2.2e-308)
_WEIGHT_SPREAD = 1e-120


def check_weight_spread(array: FloatArray, name: str = "weights", *, located: bool = True) -> None:
    """Refuse positive weights below :data:`_WEIGHT_SPREAD` times the largest (finite, >= 0).

    ``located``: the error names the weight's index in ``array`` (the user's own array).
    """
    high = array.max(initial=0.0)
    low = array.min(initial=high)
    if not low < _WEIGHT_SPREAD * high:
        return
    smallest = low if low > 0 else array.min(where=array > 0, initial=high)
    if smallest < _WEIGHT_SPREAD * high:
        bad = int(np.flatnonzero(array == smallest)[0])
        given = _describe(array, bad) if located else repr(float(smallest))
        raise ValueError(
            f"{name} must be 0 or at least {_WEIGHT_SPREAD:g} times the largest weight, got "
            f"{given} beside a largest weight of {float(high)!r}: such a "
            "weight changes no mean in float64, and its square leaves float64's range in "
            "the null variance; set it to 0"
        )


def check_weights(value: Any, name: str = "weights", *, size: int | None = None) -> FloatArray:
    """Validate weights: finite, non-negative, and not all zero (numpy.average semantics).

    Positive weights must be at least :data:`_WEIGHT_SPREAD` times the largest: a smaller one
    is lost in any sum with the largest, yet where every other task is certain the null model
    hangs on it alone, and its square is subnormal in float64 (variances off or zero,
    adjusted metrics overflowing). Only the ratios of weights matter. Weights so large that
    their sum would overflow float64 (or so small that it would lose digits) are rescaled by a
    power of two, which changes no ratio; the input is never modified.

    Parameters
    ----------
    value : array-like
        The weights.
    name : str
        The argument's name, for error messages.
    size : int, optional
        The number of tasks a scalar weight stands for (see :func:`as_array`).

    Returns
    -------
    numpy.ndarray of float64
        The weights, flattened.

    Examples
    --------
    >>> weights = check_weights([0.5e308, 1.5e308])
    >>> float(weights[1] / weights[0]), bool(np.isfinite(weights.sum()))
    (3.0, True)
    """
    array = as_array(value, name, size=size).astype(np.float64, copy=False)
    low, high = array.min(), array.max()
    if not low >= 0 or not np.isfinite(high):
        bad = np.flatnonzero(~((array >= 0) & np.isfinite(array)))[0]
        raise ValueError(f"{name} must be finite and non-negative, got {_describe(array, bad)}")
    if not high > 0:
        raise ValueError(f"{name} must not all be zero, got {array.size} zero weights")
    check_weight_spread(array, name)
    if not _WEIGHT_RANGE[0] <= high <= _WEIGHT_RANGE[1]:
        exponent = int(np.frexp(high)[1])
        array = np.ldexp(array, -exponent)  # a new array: exact, ratios unchanged
    return array


def _check_same_length(reference: npt.NDArray[Any], reference_name: str, **others: Any) -> None:
    for name, other in others.items():
        if other is not None and other.shape != reference.shape:
            raise ValueError(
                f"{name} must have one entry per rank task like {reference_name} "
                f"({reference.size}), got {other.size}"
            )


def check_same_shape(ranks: Any, **others: Any) -> None:
    """Multi-dimensional inputs must share the ranks' shape (length-1 axes aside).

    Each input is flattened in row-major order (:func:`as_array`), so ranks of shape (n, 2)
    against counts of shape (2n,) or (2, n) would pair ranks with other tasks' counts, silently.
    Only inputs with a ``shape`` (numpy arrays, tensors, pandas objects) are compared.
    """
    _check_shape_of(ranks, "ranks", others)


def _check_shape_of(reference: Any, reference_name: str, others: Mapping[str, Any]) -> None:
    """:func:`check_same_shape` against any argument (the counts, for the null models)."""
    shape = getattr(reference, "shape", None)
    if shape is None:
        return
    squeezed = _squeezed(shape)
    for name, other in others.items():
        other_shape = getattr(other, "shape", None)
        if other_shape is None or len(other_shape) == 0:
            continue
        other_squeezed = _squeezed(other_shape)
        if other_squeezed != squeezed and max(len(squeezed), len(other_squeezed)) > 1:
            raise ValueError(
                f"{name} must have the shape of {reference_name} {tuple(shape)} (both are "
                f"flattened in row-major order, pairing their entries), got shape "
                f"{tuple(other_shape)}"
            )


def _squeezed(shape: Any) -> tuple[int, ...]:
    """A shape without its axes of length 1."""
    return tuple(int(axis) for axis in shape if axis != 1)


def check_rank_order(ranks: Mapping[str, npt.NDArray[Any]]) -> None:
    """Refuse ranks of one task out of order: optimistic <= realistic <= pessimistic.

    ``ranks`` maps rank types to validated arrays of one length; those given are compared in
    that order (a realistic rank is the mean of the other two, so it lies between them).
    """
    order = [name for name in ("optimistic", "realistic", "pessimistic") if name in ranks]
    for low, high in itertools.pairwise(order):
        above = np.flatnonzero(ranks[low] > ranks[high])
        if above.size:
            i = int(above[0])
            raise ValueError(
                f"ranks[{low!r}] must not exceed ranks[{high!r}] (optimistic <= realistic <= "
                f"pessimistic), got {ranks[low][i].item()!r} > {ranks[high][i].item()!r} "
                f"at index {i}"
            )


def validate_rank_input(
    ranks: Any,
    num_candidates: Any = None,
    weights: Any = None,
    *,
    needs_candidates: bool = False,
    supports_weights: bool = True,
    metric: str = "this metric",
    check_upper: bool = True,
) -> RankInput:
    """Validate the arguments of a metric evaluation.

    Parameters
    ----------
    ranks : array-like of shape (n,)
        The ranks, finite and >= 1.
    num_candidates : array-like of shape (n,), optional
        The number of candidates of each ranking task; each rank must not exceed its count.
    weights : array-like of shape (n,), optional
        Non-negative weights, not all zero.
    needs_candidates : bool
        Whether ``num_candidates`` is required.
    supports_weights : bool
        Whether ``weights`` may be given.
    metric : str
        The metric's name, for error messages.
    check_upper : bool, default=True
        Whether to look for ranks above 2**53 without candidate counts; a caller that can tell
        from its result that none is there (the mean rank) looks for them only when it cannot.

    Returns
    -------
    RankInput
        The clean arrays.
    """
    check_same_shape(ranks, num_candidates=num_candidates, weights=weights)
    # with candidate counts, each rank is compared with its count below; without, every rank
    # with 2**53 (a finite rank beyond it leaves the result finite: the result cannot tell)
    clean_ranks = check_ranks(ranks, check_upper=check_upper and num_candidates is None)
    candidates = None
    if num_candidates is not None:
        candidates = check_num_candidates(num_candidates, size=clean_ranks.size)
    elif needs_candidates:
        raise ValueError(f"{metric} needs num_candidates, the number of candidates of each task")
    clean_weights = None
    if weights is not None:
        if not supports_weights:
            raise NoWeightSupportError(f"{metric} does not support weights; pass weights=None")
        clean_weights = check_weights(weights, size=clean_ranks.size)
    _check_same_length(clean_ranks, "ranks", num_candidates=candidates, weights=clean_weights)
    # +inf exceeds every candidate count, so this comparison also finds it
    if candidates is not None and (clean_ranks > candidates).any():
        check_lower_bound(candidates)
        bad = int(np.flatnonzero(clean_ranks > candidates)[0])
        raise ValueError(
            f"ranks must not exceed their num_candidates, got rank {clean_ranks[bad].item()!r} "
            f"> num_candidates {candidates[bad].item()!r} at index {bad}"
        )
    return RankInput(clean_ranks, candidates, clean_weights)


def is_scalar(value: Any) -> bool:
    """Whether a user's argument is one number (0-d): not a string, mapping or ragged nesting.

    ``np.ndim`` raises numpy's own ``ValueError`` on a ragged nesting (``[[1], [1, 2]]``); that
    is no scalar here, and :func:`as_array` then names the argument.
    """
    if isinstance(value, str | bytes | Mapping):
        return False
    try:
        return bool(np.ndim(value) == 0)
    except ValueError:  # a ragged nesting: no scalar, and as_array names the argument
        return False


def validate_null_input(
    num_candidates: Any,
    weights: Any = None,
    *,
    num_ranks: Any = None,
    supports_weights: bool = True,
    metric: str = "this metric",
    size_free: bool = False,
) -> NullInput:
    """Validate the arguments of a null-model computation (expected value, variance, sampling).

    Parameters
    ----------
    num_candidates : int or array-like of shape (n,)
        The number of candidates of each task; a scalar is the same count for every task.
    weights : float or array-like of shape (n,), optional
        Non-negative weights, not all zero.
    num_ranks : int, optional
        The number of tasks :math:`n`. Needed with a scalar ``num_candidates`` unless the
        weights give it; with an array, it must equal the array's length.
    supports_weights : bool
        Whether ``weights`` may be given.
    metric : str
        The metric's name, for error messages.
    size_free : bool, default=False
        Whether the quantity asked for is the same for every number of tasks (the expected value
        of a mean such as MR, MRR or Hits@k): then a scalar ``num_candidates`` without
        ``num_ranks`` stands for one task instead of raising.

    Returns
    -------
    NullInput
        The clean arrays.
    """
    size = None if num_ranks is None else check_num_ranks(num_ranks)
    if is_scalar(num_candidates) and size is None:
        if weights is not None and not is_scalar(weights):
            size = num_entries(weights)
        elif size_free:
            size = 1
        else:
            raise ValueError(
                f"num_candidates is the scalar {num_candidates!r}, one count for every task: "
                f"pass num_ranks=, the number of ranking tasks, or one count per task"
            )
    if weights is not None and not supports_weights:
        raise NoWeightSupportError(f"{metric} does not support weights; pass weights=None")
    candidates = check_num_candidates(num_candidates, size=size)
    if size is not None and candidates.size != size:
        raise ValueError(
            f"num_ranks must equal the number of entries of num_candidates ({candidates.size}), "
            f"got {size}"
        )
    clean_weights = None
    if weights is not None:
        _check_shape_of(num_candidates, "num_candidates", {"weights": weights})
        clean_weights = check_weights(weights, size=candidates.size)
    _check_same_length(candidates, "num_candidates", weights=clean_weights)
    return NullInput(candidates, clean_weights)


def check_positive_int(value: Any, name: str) -> int:
    """Return ``value`` as an ``int`` if it is a positive integer, else raise a clear error."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a positive integer, got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def check_num_samples(value: Any) -> int:
    """Validate a Monte-Carlo sample count."""
    return check_positive_int(value, "num_samples")


def check_variance_samples(num_samples: object) -> int:
    """Validate a sample count that a variance is estimated from: an integer >= 2."""
    count = check_num_samples(num_samples)
    if count < 2:
        raise ValueError(
            f"num_samples must be at least 2 to estimate a variance, got {num_samples!r}"
        )
    return count


def check_num_ranks(value: Any) -> int:
    """Validate a number of ranking tasks."""
    return check_positive_int(value, "num_ranks")


def check_confidence_level(value: Any) -> float:
    """Validate a confidence level: a fraction strictly between 0 and 1, as in :mod:`scipy.stats`.

    Examples
    --------
    >>> check_confidence_level(0.95)
    0.95
    >>> check_confidence_level(95)
    Traceback (most recent call last):
    ...
    ValueError: confidence_level must be a fraction in (0, 1), got 95; for 95% pass 0.95
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"confidence_level must be a number in (0, 1), got {value!r}")
    level = float(value)
    if not 0.0 < level < 1.0:
        hint = f"; for {value}% pass {level / 100:g}" if 1.0 < level < 100.0 else ""
        raise ValueError(f"confidence_level must be a fraction in (0, 1), got {value!r}{hint}")
    return level


def check_generator(value: Any, name: str = "generator") -> None:
    """Validate a seed or generator: ``None``, a non-negative integer or a numpy random generator.

    Checked where it is taken, even when no sampling happens (a closed form exists), so that a
    mistyped seed never passes unnoticed. ``name`` is the argument's, for the messages.
    """
    if value is None or isinstance(
        value, np.random.Generator | np.random.BitGenerator | np.random.SeedSequence
    ):
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(
            f"{name} must be a seed (a non-negative integer), a numpy.random.Generator or "
            f"None, got {value!r}"
        )
    if value < 0:
        raise ValueError(f"{name} must be a non-negative seed, got {value!r}")
