r"""From a model's scores to the ranks of the true candidates, with ties and filtering.

A model scores every candidate of a ranking task; the true candidate's rank depends on how ties
with it are broken. With :math:`t` the true candidate's score and the other (unfiltered)
candidates' scores :math:`s_j`, and larger scores better,

.. math::

    o = 1 + \#\{j : s_j > t\}, \qquad
    p = \#\{j : s_j \ge t\} \text{ (the true candidate included)}, \qquad
    \text{realistic} = \frac{o + p}{2},

the optimistic, pessimistic and realistic ranks. Breaking the ties uniformly at random makes the
rank uniform on :math:`\{o, \dots, p\}`; :mod:`rankstats.evaluation.ties` gives metrics in
expectation over that tie-breaking, exactly.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from rankstats.arrays import BoolArray, FloatArray, IntArray
from rankstats.validation import (
    MAX_NUM_CANDIDATES,
    check_num_candidates,
    check_positive_int,
    is_scalar,
    numeric_array,
)

__all__ = [
    "EVALUATION_RANK_TYPES",
    "RANK_EXPECTED",
    "EvaluationRankType",
    "Ranks",
    "ranks_from_scores",
]


#: the rank type of metrics taken in expectation over uniform random tie-breaking
RANK_EXPECTED: Literal["expected"] = "expected"
EvaluationRankType = Literal["optimistic", "realistic", "pessimistic", "expected"]
#: every rank type the evaluator knows, in table order
EVALUATION_RANK_TYPES: tuple[EvaluationRankType, ...] = (
    "optimistic",
    "realistic",
    "pessimistic",
    RANK_EXPECTED,
)

#: the most score entries compared at once; bounds the temporary memory of
#: :func:`ranks_from_scores` to a few times this many bytes whatever the batch size
DEFAULT_CHUNK_ELEMENTS = 2**22


#: the largest rank accepted: ranks never exceed their candidate count, which is at most 2**53
#: (integers are exact in float64 up to there, and sums of two ranks cannot overflow int64)
MAX_RANK = MAX_NUM_CANDIDATES


def _integer_ranks(value: Any, name: str) -> IntArray:
    """Validate ranks that must be integers in [1, 2**53] (optimistic and pessimistic ranks)."""
    array = numeric_array(value, name)  # booleans, masked entries, ragged nestings refused
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got an array of shape {array.shape}")
    if array.size == 0:
        raise ValueError(f"{name} must not be empty")
    if np.issubdtype(array.dtype, np.floating):  # float64 (numeric_array): holds 2**53
        with np.errstate(invalid="ignore"):
            bad = ~(array >= 1) | ~(array <= MAX_RANK) | (array != np.floor(array))
    else:
        bad = (array < 1) | (array > MAX_RANK)
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{name} must be integers between 1 and 2**53, got {array[index].item()!r} "
            f"at index {index}"
        )
    return array.astype(np.int64, copy=False)


@dataclass(frozen=True, eq=False)
class Ranks:
    r"""The ranks of the true candidates of a batch of ranking tasks, with ties resolved three ways.

    Parameters
    ----------
    optimistic : array-like of shape (n,)
        :math:`o_i = 1 +` the number of candidates scored strictly better than the true one.
    pessimistic : array-like of shape (n,)
        :math:`p_i =` the number of candidates scored at least as well, the true one included;
        :math:`o_i \le p_i`.
    num_candidates : int or array-like of shape (n,), optional
        The candidates of each task left after filtering, the true one included;
        :math:`p_i \le C_i`. One integer stands for the same count for every task.

    Raises
    ------
    ValueError
        If a rank is not an integer in :math:`[1, 2^{53}]` (larger ranks would lose precision in
        ``float64`` and overflow ``int64`` in sums), the arrays differ in length, a pessimistic
        rank is below its optimistic rank or above its candidate count.
    TypeError
        If the ranks are not numeric.

    Notes
    -----
    The realistic rank is :math:`(o_i + p_i) / 2`, the expectation of a rank drawn uniformly from
    :math:`\{o_i, \dots, p_i\}`. The arrays are validated and stored as read-only ``int64``
    copies, so a :class:`Ranks` never changes after construction.

    Examples
    --------
    >>> ranks = Ranks(optimistic=[1, 2, 1], pessimistic=[1, 4, 3], num_candidates=[5, 5, 3])
    >>> ranks.realistic
    array([1., 3., 2.])
    >>> len(ranks), ranks["pessimistic"].tolist()
    (3, [1, 4, 3])
    """

    optimistic: IntArray
    pessimistic: IntArray
    num_candidates: IntArray | None = None

    def __post_init__(self) -> None:
        optimistic = _integer_ranks(self.optimistic, "optimistic")
        pessimistic = _integer_ranks(self.pessimistic, "pessimistic")
        if pessimistic.shape != optimistic.shape:
            raise ValueError(
                f"pessimistic must have one entry per task like optimistic ({optimistic.size}), "
                f"got {pessimistic.size}"
            )
        if (pessimistic < optimistic).any():
            index = int(np.flatnonzero(pessimistic < optimistic)[0])
            raise ValueError(
                f"pessimistic ranks must not be smaller than optimistic ones, got "
                f"{pessimistic[index].item()} < {optimistic[index].item()} at index {index}"
            )
        candidates = None
        if self.num_candidates is not None:
            given: Any = self.num_candidates
            if is_scalar(given):
                # one count for every task
                scalar = check_num_candidates(np.reshape(np.asarray(given), 1))
                candidates = np.full(optimistic.shape, scalar[0], dtype=np.int64)
            else:
                candidates = check_num_candidates(given)
            if candidates.shape != optimistic.shape:
                raise ValueError(
                    f"num_candidates must have one entry per task like optimistic "
                    f"({optimistic.size}), got {candidates.size}"
                )
            if (pessimistic > candidates).any():
                index = int(np.flatnonzero(pessimistic > candidates)[0])
                raise ValueError(
                    f"ranks must not exceed their num_candidates, got pessimistic rank "
                    f"{pessimistic[index].item()} > num_candidates {candidates[index].item()} "
                    f"at index {index}"
                )
            candidates = _frozen(candidates)
        object.__setattr__(self, "optimistic", _frozen(optimistic))
        object.__setattr__(self, "pessimistic", _frozen(pessimistic))
        object.__setattr__(self, "num_candidates", candidates)

    @property
    def realistic(self) -> FloatArray:
        """The realistic ranks, :math:`(o_i + p_i) / 2`: integers or half-integers."""
        return 0.5 * (self.optimistic + self.pessimistic).astype(np.float64)

    def __len__(self) -> int:
        return int(self.optimistic.size)

    def __getitem__(self, rank_type: str) -> npt.NDArray[Any]:
        """The ranks of one type: ``"optimistic"``, ``"realistic"`` or ``"pessimistic"``."""
        if rank_type == "optimistic":
            return self.optimistic
        if rank_type == "realistic":
            return self.realistic
        if rank_type == "pessimistic":
            return self.pessimistic
        raise KeyError(
            f"rank_type must be 'optimistic', 'realistic' or 'pessimistic', got {rank_type!r}"
        )

    def __reduce__(self) -> tuple[type[Ranks], tuple[Any, ...]]:
        # rebuilt through the constructor, so copies and unpickled objects are read-only too
        return type(self), (self.optimistic, self.pessimistic, self.num_candidates)

    def __repr__(self) -> str:
        candidates = "None" if self.num_candidates is None else "array"
        return f"Ranks(n={len(self)}, num_candidates={candidates})"

    def as_dict(self) -> dict[str, npt.NDArray[Any]]:
        """The three rank types as a mapping, e.g. to pass on to other code."""
        return {name: self[name] for name in ("optimistic", "realistic", "pessimistic")}

    @classmethod
    def concatenate(cls, parts: Iterable[Ranks]) -> Ranks:
        """Join the ranks of several batches into one :class:`Ranks`.

        Examples
        --------
        >>> a = Ranks([1], [2], [3])
        >>> Ranks.concatenate([a, Ranks([3], [3], [4])]).pessimistic.tolist()
        [2, 3]
        """
        items = list(parts)
        if not items:
            raise ValueError("concatenate needs at least one Ranks, got none")
        for item in items:
            if not isinstance(item, Ranks):
                raise TypeError(f"concatenate takes Ranks objects, got {type(item).__name__}")
        with_candidates = {item.num_candidates is not None for item in items}
        if len(with_candidates) > 1:
            raise ValueError("cannot concatenate Ranks with and without num_candidates")
        candidates = None
        if with_candidates == {True}:
            candidates = np.concatenate(
                [item.num_candidates for item in items if item.num_candidates is not None]
            )
        return cls(
            np.concatenate([item.optimistic for item in items]),
            np.concatenate([item.pessimistic for item in items]),
            candidates,
        )


def _frozen(array: IntArray) -> IntArray:
    copy = np.array(array, dtype=np.int64, copy=True)
    copy.flags.writeable = False
    return copy


def _as_numpy(value: Any, name: str) -> npt.NDArray[Any]:
    """Turn a numpy array, list or CPU tensor into a numpy array, without copying if possible."""
    if isinstance(value, str | bytes | Mapping):
        raise TypeError(f"{name} must be an array or tensor, got {type(value).__name__}")
    try:
        return np.asarray(value)
    except Exception as error:  # e.g. a GPU tensor or one that requires grad
        # numpy has no bfloat16: such a tensor needs widening, not moving
        hint = ".float()" if "bfloat16" in str(getattr(value, "dtype", "")) else ".detach().cpu()"
        raise TypeError(
            f"{name} must be convertible to a numpy array (for a tensor: {hint}), "
            f"got {type(value).__name__}: {error}"
        ) from error


def _check_scores(value: Any) -> npt.NDArray[Any]:
    scores = _as_numpy(value, "scores")
    if scores.ndim != 2:
        raise ValueError(
            f"scores must be a 2-D array of shape (batch, num_candidates), "
            f"got an array of shape {scores.shape}"
        )
    if scores.size == 0:
        raise ValueError(f"scores must have at least one row and one column, got {scores.shape}")
    if scores.dtype == np.bool_ or not (
        np.issubdtype(scores.dtype, np.integer) or np.issubdtype(scores.dtype, np.floating)
    ):
        raise TypeError(f"scores must hold real numbers, got an array of dtype {scores.dtype}")
    return scores


def _check_targets(value: Any, shape: tuple[int, int]) -> IntArray:
    targets = _as_numpy(value, "targets")
    batch, width = shape
    if targets.dtype == np.bool_ or not np.issubdtype(targets.dtype, np.integer):
        raise TypeError(
            f"targets must be integer column indices into scores, got an array of dtype "
            f"{targets.dtype}; pass the true candidates' scores as target_scores= instead"
        )
    if targets.shape != (batch,):
        raise ValueError(
            f"targets must have shape (batch,) = ({batch},), one index per row of scores, "
            f"got {targets.shape}"
        )
    bad = (targets < 0) | (targets >= width)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"targets must be column indices in [0, {width}), "
            f"got {targets[row].item()} in row {row}"
        )
    return targets.astype(np.int64, copy=False)


def _check_target_scores(value: Any, batch: int) -> npt.NDArray[Any]:
    target_scores = _as_numpy(value, "target_scores")
    if target_scores.shape == (batch, 1):
        target_scores = target_scores[:, 0]
    if target_scores.shape != (batch,):
        raise ValueError(
            f"target_scores must have shape (batch,) = ({batch},), one score per row of "
            f"scores, got {target_scores.shape}"
        )
    if target_scores.dtype == np.bool_ or not (
        np.issubdtype(target_scores.dtype, np.integer)
        or np.issubdtype(target_scores.dtype, np.floating)
    ):
        raise TypeError(
            f"target_scores must hold real numbers, got an array of dtype {target_scores.dtype}"
        )
    if np.issubdtype(target_scores.dtype, np.floating):
        finite = np.isfinite(target_scores)
        if not finite.all():
            row = int(np.flatnonzero(~finite)[0])
            raise ValueError(
                f"target_scores must be finite, got {target_scores[row].item()!r} in row {row}"
            )
    return target_scores


def _as_score_type(target_scores: npt.NDArray[Any], dtype: np.dtype[Any]) -> npt.NDArray[Any]:
    """Target scores in the scores' type, so that comparisons stay exact.

    Float targets of integer scores are taken as those integers, and integer targets of float
    scores as those floats: compared as float64, integers beyond :math:`2^{53}` would round and
    tie with a neighbouring score silently. A target score that is no value of the scores' type
    cannot occur among the scores.
    """
    if np.issubdtype(dtype, np.floating) and np.issubdtype(target_scores.dtype, np.integer):
        return _integers_as_floats(target_scores, dtype)
    if not (np.issubdtype(dtype, np.integer) and np.issubdtype(target_scores.dtype, np.floating)):
        return target_scores
    info = np.iinfo(dtype)
    wide = target_scores.astype(np.float64)
    bad = (wide != np.floor(wide)) | (wide < float(info.min)) | (wide >= 2.0 * (info.max // 2 + 1))
    _refuse_inexact(target_scores, bad, dtype, "")
    return wide.astype(dtype)


def _refuse_inexact(
    target_scores: npt.NDArray[Any], bad: npt.NDArray[np.bool_], dtype: np.dtype[Any], how: str
) -> None:
    """The error for the first target score (of ``bad``) that is no score of type ``dtype``."""
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"target_scores must occur among the unfiltered scores of their row (the true "
            f"candidate is one of them), but {target_scores[row].item()!r} is no {dtype} "
            f"score{how}, in row {row}"
        )


def _integers_as_floats(target_scores: npt.NDArray[Any], dtype: np.dtype[Any]) -> npt.NDArray[Any]:
    """Integer target scores as floats of ``dtype``, each exactly (else no score of the row)."""
    converted = target_scores.astype(dtype)
    info = np.iinfo(target_scores.dtype)
    wide = converted.astype(np.float64)
    # rounded beyond the integer type's range, or back to another integer
    bad = (wide < float(info.min)) | (wide >= 2.0 * (info.max // 2 + 1))
    inside = ~bad
    bad[inside] = wide[inside].astype(target_scores.dtype) != target_scores[inside]
    rounded = converted[int(np.argmax(bad))].item()
    _refuse_inexact(target_scores, bad, dtype, f" (it would round to {rounded!r})")
    return converted


def _check_mask(value: Any, shape: tuple[int, ...]) -> BoolArray:
    mask = _as_numpy(value, "filter_mask")
    if mask.dtype != np.bool_:
        raise TypeError(
            f"filter_mask must be a boolean array (True = exclude the candidate), "
            f"got an array of dtype {mask.dtype}"
        )
    if mask.shape != shape:
        raise ValueError(f"filter_mask must have the shape of scores {shape}, got {mask.shape}")
    return mask


def _row_chunks(batch: int, width: int, chunk_elements: int) -> Iterator[slice]:
    rows = max(1, chunk_elements // width)
    for start in range(0, batch, rows):
        yield slice(start, min(start + rows, batch))


def ranks_from_scores(
    scores: npt.ArrayLike,
    targets: npt.ArrayLike | None = None,
    *,
    target_scores: npt.ArrayLike | None = None,
    filter_mask: npt.ArrayLike | None = None,
    larger_is_better: bool = True,
    chunk_elements: int = DEFAULT_CHUNK_ELEMENTS,
) -> Ranks:
    r"""Rank each row's true candidate among its scored candidates, with ties and filtering.

    Parameters
    ----------
    scores : array-like of shape (batch, num_candidates)
        The model's score of every candidate of every task: a numpy array or a CPU tensor
        (anything with ``__array__``). Unfiltered scores must be finite.
    targets : array-like of int of shape (batch,), optional
        The column of each row's true candidate.
    target_scores : array-like of shape (batch,), optional
        Instead of ``targets``: the true candidate's score; the true candidate must be among the
        row's (unfiltered) candidates, so its score occurs among them. Give exactly one of
        ``targets`` and ``target_scores``.
    filter_mask : array-like of bool of shape (batch, num_candidates), optional
        ``True`` where a candidate is to be left out (filtered evaluation: other known true
        answers). It must not exclude the true candidate. Scores under the mask are ignored,
        whatever their value.
    larger_is_better : bool, default=True
        Whether larger scores are better; ``False`` for distances and losses. It must be a
        ``bool`` (a numpy bool is fine): a truthy string such as ``"False"`` is refused.
    chunk_elements : int, default=2**22
        The most score entries compared at once: rows are processed in chunks, so temporary
        memory stays bounded whatever the batch size.

    Returns
    -------
    Ranks
        The optimistic and pessimistic (hence realistic) ranks and the number of candidates
        left after filtering, per row.

    Raises
    ------
    ValueError
        On shape mismatches, targets out of range, a mask excluding the true candidate, a NaN or
        infinite unfiltered score (naming the row), or a target score absent from its row.
    TypeError
        On non-numeric scores, non-integer targets, a non-boolean mask or ``larger_is_better``,
        or a ``chunk_elements`` that is not an integer.

    Notes
    -----
    With :math:`t` the true score of a row, the optimistic rank counts the strictly better
    candidates, :math:`o = 1 + \#\{s_j > t\}`, the pessimistic rank all that are not worse,
    :math:`p = \#\{s_j \ge t\}`, the true one included, both over the unfiltered candidates.

    Examples
    --------
    >>> import numpy as np
    >>> scores = np.array([[0.1, 0.9, 0.5, 0.5], [1.0, 1.0, 1.0, 1.0]])
    >>> ranks = ranks_from_scores(scores, targets=[2, 0])
    >>> ranks.optimistic.tolist(), ranks.pessimistic.tolist(), ranks.realistic.tolist()
    ([2, 1], [3, 4], [2.5, 2.5])

    Filtering candidate 1 of the first row (another known answer) moves the rank up:

    >>> mask = np.array([[False, True, False, False], [False, False, False, False]])
    >>> ranks = ranks_from_scores(scores, targets=[2, 0], filter_mask=mask)
    >>> ranks.optimistic.tolist(), ranks.pessimistic.tolist(), ranks.num_candidates.tolist()
    ([1, 1], [2, 4], [3, 4])
    """
    clean_scores = _check_scores(scores)
    batch, width = clean_scores.shape
    if (targets is None) == (target_scores is None):
        raise ValueError("give exactly one of targets (column indices) and target_scores")
    chunk_elements = check_positive_int(chunk_elements, "chunk_elements")
    if not isinstance(larger_is_better, bool | np.bool_):
        raise TypeError(
            f"larger_is_better must be a bool (True: larger scores are better), "
            f"got {larger_is_better!r}"
        )
    larger_is_better = bool(larger_is_better)
    clean_targets = None if targets is None else _check_targets(targets, (batch, width))
    clean_target_scores = (
        None if target_scores is None else _check_target_scores(target_scores, batch)
    )
    if clean_target_scores is not None:
        clean_target_scores = _as_score_type(clean_target_scores, clean_scores.dtype)
    mask = None if filter_mask is None else _check_mask(filter_mask, clean_scores.shape)
    if mask is not None and clean_targets is not None:
        excluded = mask[np.arange(batch), clean_targets]
        if excluded.any():
            row = int(np.flatnonzero(excluded)[0])
            raise ValueError(
                f"filter_mask must not exclude the true candidate, but it does in row {row} "
                f"(targets[{row}] = {clean_targets[row].item()})"
            )
    check_finite = np.issubdtype(clean_scores.dtype, np.floating)

    optimistic = np.empty(batch, dtype=np.int64)
    pessimistic = np.empty(batch, dtype=np.int64)
    num_candidates = np.full(batch, width, dtype=np.int64)
    for rows in _row_chunks(batch, width, chunk_elements):
        chunk = clean_scores[rows]
        keep = None if mask is None else ~mask[rows]
        if check_finite:
            _check_finite_rows(chunk, keep, rows.start)
        if clean_targets is not None:
            true = chunk[np.arange(chunk.shape[0]), clean_targets[rows]][:, None]
        else:
            assert clean_target_scores is not None
            true = clean_target_scores[rows][:, None]
        better = chunk > true if larger_is_better else chunk < true
        tied = chunk == true
        if keep is not None:
            better &= keep
            tied &= keep
            num_candidates[rows] = np.count_nonzero(keep, axis=1)
        optimistic[rows] = 1 + np.count_nonzero(better, axis=1)
        pessimistic[rows] = optimistic[rows] - 1 + np.count_nonzero(tied, axis=1)
    if clean_target_scores is not None:
        absent = pessimistic < optimistic
        if absent.any():
            row = int(np.flatnonzero(absent)[0])
            hint = ""
            if clean_target_scores.dtype != clean_scores.dtype:
                # float64 targets (0.1) against float32 scores (0.1 rounded to 24 bits) never tie
                hint = (
                    f" (the scores are {clean_scores.dtype} and target_scores "
                    f"{clean_target_scores.dtype}: compared as given, a value rounded to one "
                    "type need not equal it in the other; pass target_scores as the scores' "
                    "own values)"
                )
            raise ValueError(
                f"target_scores must occur among the unfiltered scores of their row (the true "
                f"candidate is one of them), but {clean_target_scores[row].item()!r} "
                f"does not in row {row}{hint}"
            )
    return Ranks(optimistic, pessimistic, num_candidates)


def _check_finite_rows(chunk: npt.NDArray[Any], keep: BoolArray | None, offset: int) -> None:
    bad = ~np.isfinite(chunk)
    if keep is not None:
        bad &= keep
    if bad.any():
        row, column = (int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"scores must be finite where not filtered, got {chunk[row, column].item()!r} in row "
            f"{offset + row} (column {column}); leave candidates out with filter_mask, not "
            f"with NaN or infinite scores"
        )
