r"""Checking the input of :func:`~rankstats.compare.compare`: several models on the same queries.

Every model is given in one of the forms :func:`~rankstats.evaluate` takes for one side: a
:class:`~rankstats.Ranks` object, an array of realistic ranks, or a mapping from rank type to
arrays. The models must rank the same queries: the same number of them, with the same candidate
counts wherever two inputs give them, and, when query ids are given per model, the same set of ids
(models listed in another order are aligned to the first model's order). Anything else is refused
with one error naming the model and the first query where they differ.
"""

from __future__ import annotations

import numbers
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from rankstats.arrays import FloatArray, IntArray
from rankstats.base import RANK_TYPES
from rankstats.evaluation.labels import tuple_labels
from rankstats.evaluation.scores import EVALUATION_RANK_TYPES, RANK_EXPECTED, Ranks
from rankstats.validation import (
    check_num_candidates,
    check_rank_order,
    check_ranks,
    check_weights,
)

__all__ = [
    "PairedRanks",
    "check_confidence_level",
    "check_fraction",
    "prepare_paired_ranks",
]

AnyArray = npt.NDArray[Any]


@dataclass(frozen=True)
class PairedRanks:
    """The models' ranks of one rank type on the same queries, aligned, validated.

    ``ranks`` holds the ranks of the rank type, one row per model; for the rank type
    ``"expected"`` it holds the realistic ranks and ``bounds`` the optimistic and pessimistic
    ones, from which the metrics are taken in expectation over tie-breaking.
    """

    names: tuple[str, ...]
    rank_type: str
    ranks: FloatArray
    bounds: tuple[IntArray, IntArray] | None
    num_candidates: IntArray | None
    weights: FloatArray | None
    groups: AnyArray | None
    query_ids: AnyArray | None

    @property
    def num_queries(self) -> int:
        """The number of queries."""
        return int(self.ranks.shape[1])

    def subset(self, index: IntArray) -> PairedRanks:
        """The same models on the queries ``index`` only."""

        def take(array: Any) -> Any:
            return None if array is None else array[..., index]

        return replace(
            self,
            ranks=self.ranks[:, index],
            bounds=None if self.bounds is None else (take(self.bounds[0]), take(self.bounds[1])),
            num_candidates=take(self.num_candidates),
            weights=take(self.weights),
            groups=take(self.groups),
            query_ids=take(self.query_ids),
        )


def check_fraction(value: Any, name: str, example: float) -> float:
    """A fraction strictly between 0 and 1 (NaN refused), or an error naming ``name``.

    Parameters
    ----------
    value : Any
        The value to check.
    name : str
        The argument's name, for the error message.
    example : float
        A typical value, shown in the error message.

    Returns
    -------
    float
        ``value`` as a float.

    Examples
    --------
    >>> check_fraction(0.05, "alpha", 0.05)
    0.05
    >>> check_fraction(5, "alpha", 0.05)
    Traceback (most recent call last):
    ...
    ValueError: alpha must be a fraction in (0, 1), e.g. 0.05, got 5 (for 5% pass 0.05)
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number in (0, 1), got {value!r}")
    fraction = float(value)
    if not 0.0 < fraction < 1.0:
        hint = f" (for {fraction:g}% pass {fraction / 100:g})" if 1.0 < fraction < 100.0 else ""
        raise ValueError(
            f"{name} must be a fraction in (0, 1), e.g. {example:g}, got {value!r}{hint}"
        )
    return fraction


def check_confidence_level(value: Any) -> float:
    """A confidence level: a fraction strictly between 0 and 1, as in :mod:`scipy.stats`."""
    return check_fraction(value, "confidence_level", 0.95)


def _model_names(ranks: Any) -> tuple[list[str], list[Any]]:
    if isinstance(ranks, Ranks) or (
        isinstance(ranks, Mapping) and any(key in EVALUATION_RANK_TYPES for key in ranks)
    ):
        raise ValueError(
            "ranks must hold two or more models, as a mapping from model name to ranks or a "
            "sequence of ranks; got the ranks of a single model"
        )
    if isinstance(ranks, np.ndarray):
        if ranks.ndim != 2:
            raise ValueError(
                "ranks must hold two or more models: as an array, one row per model (shape "
                f"(num_models, num_queries)), got shape {ranks.shape}"
                + (" (a single model)" if ranks.ndim == 1 else "")
            )
        ranks = list(ranks)
    if isinstance(ranks, Mapping):
        names = list(ranks)
        for name in names:
            if not isinstance(name, str):
                raise TypeError(f"model names must be strings, got {name!r}")
        values = [ranks[name] for name in names]
    elif isinstance(ranks, Sequence) and not isinstance(ranks, str | bytes):
        values = list(ranks)
        if values and all(isinstance(value, numbers.Real) for value in values):
            raise ValueError(
                "ranks must hold two or more models, as a mapping from model name to ranks or a "
                "sequence of ranks; got one array of numbers (a single model)"
            )
        names = [f"model {i + 1}" for i in range(len(values))]
    else:
        raise TypeError(
            "ranks must be a mapping from model name to ranks or a sequence of ranks, got "
            f"{type(ranks).__name__}"
        )
    if len(values) < 2:
        raise ValueError(f"compare needs two or more models, got {len(values)}")
    return names, values


@dataclass
class _Model:
    """One model's validated ranks, before alignment."""

    rank_arrays: dict[str, FloatArray]
    bounds: tuple[IntArray, IntArray] | None
    candidates: IntArray | None

    @property
    def size(self) -> int:
        if self.bounds is not None:
            return int(self.bounds[0].size)
        return int(next(iter(self.rank_arrays.values())).size)

    def take(self, index: IntArray) -> _Model:
        return _Model(
            {key: value[index] for key, value in self.rank_arrays.items()},
            None if self.bounds is None else (self.bounds[0][index], self.bounds[1][index]),
            None if self.candidates is None else self.candidates[index],
        )


def _read_model(value: Any, candidates: Any) -> _Model:
    if isinstance(value, Ranks):
        if candidates is not None and value.num_candidates is not None:
            given = check_num_candidates(candidates)
            if given.shape != value.num_candidates.shape or not np.array_equal(
                given, value.num_candidates
            ):
                raise ValueError(
                    "num_candidates differs from the candidate counts of the Ranks object; "
                    "pass them only once"
                )
        built = value if value.num_candidates is not None or candidates is None else None
        if built is None:
            built = Ranks(value.optimistic, value.pessimistic, candidates)
        return _Model({}, (built.optimistic, built.pessimistic), built.num_candidates)
    if isinstance(value, Mapping):
        unknown = [key for key in value if key not in RANK_TYPES]
        if unknown:
            raise ValueError(
                f"a model's ranks may be a mapping from rank type {RANK_TYPES} to arrays; "
                f"got the keys {unknown}"
            )
        if "optimistic" in value and "pessimistic" in value:
            return _read_model(Ranks(value["optimistic"], value["pessimistic"], candidates), None)
        arrays = {key: check_ranks(array, f"ranks[{key!r}]") for key, array in value.items()}
        if not arrays:
            raise ValueError("a model's ranks must not be an empty mapping")
        sizes = {array.size for array in arrays.values()}
        if len(sizes) > 1:
            raise ValueError(f"every rank type must have one entry per query, got sizes {sizes}")
        check_rank_order(arrays)
        clean = None if candidates is None else check_num_candidates(candidates)
        return _Model(arrays, None, clean)
    clean_ranks = check_ranks(value)
    clean = None if candidates is None else check_num_candidates(candidates)
    return _Model({"realistic": clean_ranks}, None, clean)


def _rank_row(model: _Model, rank_type: str, name: str) -> FloatArray:
    if model.bounds is not None:
        optimistic, pessimistic = model.bounds
        if rank_type == "optimistic":
            return optimistic.astype(np.float64)
        if rank_type == "pessimistic":
            return pessimistic.astype(np.float64)
        return 0.5 * (optimistic + pessimistic).astype(np.float64)
    if rank_type == RANK_EXPECTED:
        raise ValueError(
            f"the rank type 'expected' needs the optimistic and pessimistic ranks (a Ranks "
            f"object) of every model; model {name!r} has only {sorted(model.rank_arrays)}"
        )
    if rank_type not in model.rank_arrays:
        raise ValueError(
            f"rank type {rank_type!r} was not given for model {name!r}, which has "
            f"{sorted(model.rank_arrays)}"
        )
    return model.rank_arrays[rank_type]


def _per_model(value: Any, names: Sequence[str], argument: str) -> list[Any]:
    if isinstance(value, Mapping):
        unknown = [key for key in value if key not in names]
        if unknown:
            raise ValueError(f"{argument} has keys {unknown} that are not models {list(names)}")
        return [value.get(name) for name in names]
    return [value] * len(names)


def _first_difference(a: AnyArray, b: AnyArray) -> int:
    return int(np.flatnonzero(a != b)[0])


def _align(
    models: list[_Model], names: Sequence[str], query_ids: Any
) -> tuple[list[_Model], AnyArray | None]:
    """Check the models hold the same queries and bring them into the first model's order."""
    sizes = [model.size for model in models]
    if query_ids is None:
        for name, size in zip(names[1:], sizes[1:], strict=True):
            if size != sizes[0]:
                raise ValueError(
                    f"every model must rank the same queries: model {names[0]!r} has "
                    f"{sizes[0]} ranks, model {name!r} has {size}"
                )
        return models, None
    ids = [np.asarray(item) for item in _per_model(query_ids, names, "query_ids")]
    for name, array, size in zip(names, ids, sizes, strict=True):
        if array.ndim != 1 or array.size != size:
            raise ValueError(
                f"query_ids of model {name!r} must be a 1-D array with one id per rank ({size}), "
                f"got shape {array.shape}"
            )
    first = ids[0]
    unique, counts = np.unique(first, return_counts=True)
    if (counts > 1).any():
        raise ValueError(
            f"query_ids must be unique, got {unique[counts > 1][0].item()!r} twice for model "
            f"{names[0]!r}"
        )
    order = np.argsort(first, kind="stable")
    aligned = [models[0]]
    for name, array, model in zip(names[1:], ids[1:], models[1:], strict=True):
        if array.size == first.size and np.array_equal(array, first):
            aligned.append(model)
            continue
        if array.size != first.size:
            raise ValueError(
                f"every model must rank the same queries: model {names[0]!r} has {first.size} "
                f"query ids, model {name!r} has {array.size}"
            )
        position = np.searchsorted(first, array, sorter=order)
        position = np.clip(position, 0, first.size - 1)
        found = first[order[position]] == array
        if not found.all():
            bad = int(np.flatnonzero(~found)[0])
            raise ValueError(
                f"every model must rank the same queries: query id {array[bad].item()!r} of model "
                f"{name!r} is not among the query ids of model {names[0]!r}"
            )
        index = order[position]
        if np.unique(index).size != index.size:
            raise ValueError(f"query_ids must be unique, model {name!r} repeats an id")
        inverse = np.empty_like(index)
        inverse[index] = np.arange(index.size)
        aligned.append(model.take(inverse))
    return aligned, first


def _common_candidates(models: Sequence[_Model], names: Sequence[str]) -> IntArray | None:
    reference: IntArray | None = None
    owner = ""
    for name, model in zip(names, models, strict=True):
        if model.candidates is None:
            continue
        if reference is None:
            reference, owner = model.candidates, name
            continue
        if model.candidates.shape != reference.shape or not np.array_equal(
            model.candidates, reference
        ):
            bad = _first_difference(model.candidates, reference)
            raise ValueError(
                f"every model must rank the same queries with the same candidates: query {bad} "
                f"has {reference[bad]} candidates for model {owner!r} but "
                f"{model.candidates[bad]} for model {name!r}"
            )
    if reference is not None and any(model.candidates is None for model in models):
        missing = [n for n, m in zip(names, models, strict=True) if m.candidates is None]
        raise ValueError(
            f"num_candidates must be given for every model or none; missing for {missing}"
        )
    return reference


def prepare_paired_ranks(
    ranks: Any,
    num_candidates: Any,
    *,
    rank_type: str,
    weights: Any,
    groups: Any,
    query_ids: Any,
) -> PairedRanks:
    """Validate and align the input of :func:`~rankstats.compare.compare`."""
    if rank_type not in EVALUATION_RANK_TYPES:
        raise ValueError(f"rank_type must be one of {EVALUATION_RANK_TYPES}, got {rank_type!r}")
    names, values = _model_names(ranks)
    candidates = _per_model(num_candidates, names, "num_candidates")
    # one array of counts with per-model query ids: in the first model's order, as the weights
    # (read in each model's own order, it had been refused unless constant)
    shared = (
        query_ids is not None
        and num_candidates is not None
        and not isinstance(num_candidates, Mapping)
        and np.ndim(num_candidates) > 0
    )
    if shared:
        candidates = [candidates[0]] + [None] * (len(names) - 1)
    models = []
    for name, value, given in zip(names, values, candidates, strict=True):
        try:
            models.append(_read_model(value, given))
        except (TypeError, ValueError) as error:
            raise type(error)(f"model {name!r}: {error}") from error
    models, ids = _align(models, names, query_ids)
    if shared:
        for model in models[1:]:
            if model.candidates is None:
                model.candidates = models[0].candidates
    for name, model in zip(names, models, strict=True):
        if model.candidates is not None and model.candidates.size != model.size:
            raise ValueError(
                f"model {name!r}: num_candidates must have one entry per rank ({model.size}), "
                f"got {model.candidates.size}"
            )
    common = _common_candidates(models, names)
    rows = np.stack([_rank_row(m, rank_type, n) for m, n in zip(models, names, strict=True)])
    if common is not None and (rows > common).any():
        row, query = (int(i[0]) for i in np.nonzero(rows > common))
        raise ValueError(
            f"model {names[row]!r}: ranks must not exceed their num_candidates, got rank "
            f"{rows[row, query]:g} > {common[query]} at query {query}"
        )
    bounds = None
    if rank_type == RANK_EXPECTED:
        pairs = [m.bounds for m in models]
        assert all(pair is not None for pair in pairs)  # _rank_row refused the others
        bounds = (
            np.stack([pair[0] for pair in pairs if pair is not None]),
            np.stack([pair[1] for pair in pairs if pair is not None]),
        )
    size = rows.shape[1]
    clean_weights = None
    if weights is not None:
        clean_weights = check_weights(weights)
        if clean_weights.size != size:
            raise ValueError(
                f"weights must have one entry per query ({size}), got {clean_weights.size}"
            )
    labels = None
    if groups is not None:
        if tuple_labels(groups):  # one label each, as evaluate takes them
            labels = np.fromiter(groups, dtype=object, count=len(groups))
        else:
            labels = np.asarray(groups)
        if labels.ndim != 1 or labels.size != size:
            raise ValueError(
                f"groups must be a 1-D array with one label per query ({size}), got shape "
                f"{labels.shape}"
            )
    return PairedRanks(
        names=tuple(names),
        rank_type=rank_type,
        ranks=rows,
        bounds=bounds,
        num_candidates=common,
        weights=clean_weights,
        groups=labels,
        query_ids=ids,
    )


def group_members(labels: AnyArray) -> tuple[list[Hashable], list[IntArray]]:
    """The distinct group labels (sorted) and the query indices of each."""
    try:
        unique, inverse = np.unique(labels, return_inverse=True)
    except TypeError as error:
        raise TypeError(f"groups must be sortable labels of one type: {error}") from error
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(unique.size + 1))
    members = [order[bounds[g] : bounds[g + 1]] for g in range(unique.size)]
    return list(unique.tolist()), members
