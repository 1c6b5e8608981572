"""The input of :func:`~rankstats.evaluate`, validated once and compressed to tables.

Ranks come in several forms (a :class:`~rankstats.evaluation.scores.Ranks`, one array, a mapping
by rank type, a mapping by side of any of these); :func:`prepare_input` checks them with the
candidate counts, weights and group labels, and turns every side into
:class:`~rankstats.evaluation.tables.SideStatistics`. :class:`~rankstats.RankAccumulator` uses it
for each batch too, so a batch and a whole data set are read the same way.
"""

from __future__ import annotations

import difflib
import numbers
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from rankstats.arrays import FloatArray, IntArray
from rankstats.base import RANK_TYPES
from rankstats.evaluation.labels import encode_groups, label_order
from rankstats.evaluation.results import SIDE_BOTH
from rankstats.evaluation.scores import RANK_EXPECTED, Ranks
from rankstats.evaluation.tables import GROUP, WEIGHT, SideStatistics, Table
from rankstats.evaluation.weight_sums import exactly_weighted
from rankstats.validation import (
    check_rank_order,
    check_ranks,
    check_same_shape,
    check_weights,
    validate_rank_input,
)

__all__ = ["PreparedInput", "broadcast_candidates", "prepare_input", "ranks_shape"]

AnyArray = npt.NDArray[Any]


@dataclass
class PreparedInput:
    """Validated input compressed to tables: the statistics of each side and the group labels."""

    sides: dict[str, SideStatistics]
    labels: list[Hashable] | None
    weighted: bool


#: the error for ranks given under the rank type "expected", at the top or in a side's mapping
_EXPECTED_GIVEN = (
    "ranks cannot be given for the rank type 'expected'; it is computed from the optimistic and "
    "pessimistic ranks"
)


def _split_sides(ranks: Any) -> dict[str, Any]:
    if isinstance(ranks, Mapping):
        keys = list(ranks)
        for key in keys:
            if not isinstance(key, str):
                raise TypeError(f"the keys of ranks must be strings, got {key!r}")
        if not keys:
            raise ValueError("ranks must not be an empty mapping")
        if RANK_EXPECTED in keys:
            raise ValueError(_EXPECTED_GIVEN)
        if all(key in RANK_TYPES for key in keys):
            return {SIDE_BOTH: ranks}
        if any(key in RANK_TYPES for key in keys):
            raise ValueError(
                f"the keys of ranks must be either rank types {RANK_TYPES} or side names, "
                f"not both, got {keys}"
            )
        for key in keys:
            close = difflib.get_close_matches(key.lower(), RANK_TYPES, n=1, cutoff=0.8)
            if close:  # a side named like a rank type is a misspelt rank type
                raise ValueError(
                    f"ranks has the key {key!r}: did you mean the rank type {close[0]!r}? The "
                    f"keys of ranks are the rank types {RANK_TYPES} or side names, and a side "
                    "name must not look like a rank type"
                )
        if SIDE_BOTH in keys and len(keys) > 1:
            raise ValueError(
                f"the side {SIDE_BOTH!r} holds all ranks together and is computed; "
                f"do not pass it next to other sides, got {keys}"
            )
        return dict(ranks)
    return {SIDE_BOTH: ranks}


def _check_rank_type_keys(ranks: Mapping[Any, Any]) -> None:
    """A side's mapping holds arrays under rank types only, at least one (close matches named)."""
    unknown = [key for key in ranks if key not in RANK_TYPES]
    if ranks and not unknown:
        return
    if RANK_EXPECTED in unknown:
        raise ValueError(_EXPECTED_GIVEN)
    hints = [
        f"{key!r} (did you mean {close[0]!r}?)"
        if (close := difflib.get_close_matches(str(key).lower(), RANK_TYPES, n=1, cutoff=0.6))
        else repr(key)
        for key in unknown
    ]
    raise ValueError(
        f"the ranks of a side must be an array or a mapping of the rank types {RANK_TYPES} to "
        f"arrays, got " + (f"the keys {', '.join(hints)}" if unknown else "an empty mapping")
    )


def _per_side(value: Any, sides: Sequence[str], name: str) -> dict[str, Any]:
    if value is None:
        return dict.fromkeys(sides)
    if isinstance(value, Mapping):
        unknown = [key for key in value if key not in sides]
        if unknown:
            raise ValueError(f"{name} has keys {unknown} that are not sides of ranks {list(sides)}")
        return {side: value.get(side) for side in sides}
    return dict.fromkeys(sides, value)


def broadcast_candidates(num_candidates: Any, shape: tuple[int, ...] | None) -> Any:
    """A scalar candidate count stands for the same count for every rank, in the ranks' shape.

    Unchanged where it is not a scalar, or where the ranks' shape is unknown (``None``).
    """
    scalar = isinstance(num_candidates, numbers.Number | np.generic) or (
        isinstance(num_candidates, np.ndarray) and num_candidates.ndim == 0
    )
    return np.full(shape, num_candidates) if scalar and shape is not None else num_candidates


def ranks_shape(value: Any) -> tuple[int, ...] | None:
    """The shape of one side's ranks as given, before validation; ``None`` if it cannot be told.

    A :class:`~rankstats.evaluation.scores.Ranks` gives its number of tasks, a mapping of rank
    types the shape they share. ``np.shape`` reads a tensor's ``shape`` (``np.size`` would read
    its ``size`` method, not its number of elements).
    """
    if isinstance(value, Ranks):
        return (len(value),)
    if isinstance(value, Mapping):
        shapes = {ranks_shape(item) for item in value.values()}
        return shapes.pop() if len(shapes) == 1 else None
    try:
        return tuple(int(axis) for axis in np.shape(value))
    except (TypeError, ValueError):
        return None


def _side_tables(
    value: Any,
    num_candidates: Any,
    weights: Any,
    group_ids: IntArray | None,
    weights_as_keys: bool = False,
    weight_sums: bool = False,
    narrow: bool = False,
) -> SideStatistics:
    """Validate one side's input and compress it to tables (see :func:`prepare_input`)."""
    pairs: tuple[IntArray, IntArray] | None = None
    direct: dict[str, FloatArray] = {}
    shaped: Any = None  # the ranks as given, for the shape of the weights
    candidates = None
    if not isinstance(value, Ranks):
        num_candidates = broadcast_candidates(num_candidates, ranks_shape(value))
    if isinstance(value, Ranks):
        if num_candidates is not None and value.num_candidates is not None:
            raise ValueError(
                "num_candidates is given twice, in the Ranks object and as an argument; "
                "pass it only once"
            )
        if num_candidates is not None:  # a Ranks without counts: these (a scalar broadcast)
            value = Ranks(value.optimistic, value.pessimistic, num_candidates)
        pairs = (value.optimistic, value.pessimistic)
        candidates = value.num_candidates
    elif isinstance(value, Mapping):
        _check_rank_type_keys(value)
        given = {key: value[key] for key in RANK_TYPES if key in value}
        shaped = next(iter(given.values()), None)
        if "optimistic" in given and "pessimistic" in given:
            built = Ranks(given["optimistic"], given["pessimistic"], num_candidates)
            pairs = (built.optimistic, built.pessimistic)
            candidates = built.num_candidates
            if "realistic" in given:
                realistic = check_ranks(given["realistic"], "ranks['realistic']")
                if realistic.shape != built.optimistic.shape or not np.array_equal(
                    realistic, built.realistic
                ):
                    raise ValueError(
                        "ranks['realistic'] must be the mean of the optimistic and pessimistic "
                        "ranks, (optimistic + pessimistic) / 2"
                    )
        else:
            for rank_type, array in given.items():
                clean = validate_rank_input(array, num_candidates)
                direct[rank_type] = clean.ranks
                candidates = clean.num_candidates
    else:
        shaped = value
        clean = validate_rank_input(value, num_candidates)
        direct["realistic"] = clean.ranks
        candidates = clean.num_candidates
    size = pairs[0].size if pairs is not None else next(iter(direct.values())).size
    for name, array in direct.items():
        if array.size != size:
            raise ValueError(
                f"ranks[{name!r}] must have one entry per task like the other rank types "
                f"({size}), got {array.size}"
            )
    check_rank_order(direct)
    extra: dict[str, AnyArray] = {}
    if weights is not None:
        check_same_shape(shaped, weights=weights)  # the ranks as given (a Ranks' are flat)
        clean_weights = check_weights(weights)
        if clean_weights.size != size:
            raise ValueError(
                f"weights must have one entry per rank ({size}), got {clean_weights.size}"
            )
        extra[WEIGHT] = clean_weights
    gid = np.zeros(size, dtype=np.int64) if group_ids is None else group_ids
    if gid.size != size:
        raise ValueError(f"groups must have one label per rank ({size}), got {gid.size}")
    pair_keys = (
        None if pairs is None else {GROUP: gid, "optimistic": pairs[0], "pessimistic": pairs[1]}
    )
    rank_keys = {rank_type: {GROUP: gid, "rank": array} for rank_type, array in direct.items()}
    candidate_keys = None if candidates is None else {GROUP: gid, "num_candidates": candidates}
    candidates_table = None
    if candidate_keys is not None and not (weight_sums and weights is not None):
        candidates_table = Table.build({**candidate_keys, **extra}, narrow=narrow)
    if weights is None or weights_as_keys:
        pair_keys = None if pair_keys is None else {**pair_keys, **extra}
        rank_keys = {rank_type: {**keys, **extra} for rank_type, keys in rank_keys.items()}
        return SideStatistics(
            pairs=None if pair_keys is None else Table.build(pair_keys, narrow=narrow),
            ranks={rank_type: Table.build(keys) for rank_type, keys in rank_keys.items()},
            candidates=candidates_table,
        )
    # each distinct rank (pair) weighs the correctly rounded sum of its tasks' weights, as in
    # RankAccumulator: the results do not depend on the order of the tasks, to the last bit
    task_weights: FloatArray = extra[WEIGHT]
    if weight_sums and candidate_keys is not None:
        candidates_table = exactly_weighted(candidate_keys, task_weights, squares=True)
    return SideStatistics(
        pairs=None if pair_keys is None else exactly_weighted(pair_keys, task_weights),
        ranks={k: exactly_weighted(keys, task_weights) for k, keys in rank_keys.items()},
        candidates=candidates_table,
        tie_pairs=None
        if pair_keys is None or weight_sums
        else Table.build({**pair_keys, WEIGHT: task_weights}),
    )


def _group_labels(
    groups: dict[str, Any],
) -> tuple[list[Hashable] | None, dict[str, IntArray | None]]:
    """Map every side's group labels to ids into one sorted list of labels."""
    given = {side: g for side, g in groups.items() if g is not None}
    if not given:
        return None, dict.fromkeys(groups)
    if len(given) != len(groups):
        missing = [side for side in groups if side not in given]
        raise ValueError(f"groups must be given for every side or none, missing for {missing}")
    # labels are compared as Python objects (1 and "1" stay apart, as in the accumulator)
    codes, found = encode_groups(given)
    order = label_order(found)
    if order == range(len(order)):  # already in order: the codes are the ids
        return found, {side: codes[side] for side in given}
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    ids: dict[str, IntArray | None] = {side: rank[codes[side]] for side in given}
    return [found[i] for i in order], ids


def prepare_input(
    ranks: Any,
    num_candidates: Any,
    weights: Any,
    groups: Any,
    *,
    weights_as_keys: bool = False,
    weight_sums: bool = False,
    narrow: bool = False,
) -> PreparedInput:
    """Validate the input of :func:`evaluate` (or of an accumulator update) into tables.

    With weights, each distinct rank (or rank pair) of a group weighs the correctly rounded sum
    of its tasks' weights; ``weights_as_keys`` keeps each weight as a key column instead (the
    accumulator tags rows with unique "weights" that way). The candidate table keeps each
    task's weight, or with ``weight_sums`` (when every null model needs only those) the sums of
    the weights and of their squares per candidate count, as :class:`~rankstats.RankAccumulator`
    does for the same metrics. ``narrow`` builds the pairs and candidate counts in ``int32``
    where they fit (:meth:`~rankstats.evaluation.tables.Table.build`), for tables that only the
    grouped sums read.
    """
    values = _split_sides(ranks)
    sides = list(values)
    candidates = _per_side(num_candidates, sides, "num_candidates")
    side_weights = _per_side(weights, sides, "weights")
    side_groups = _per_side(groups, sides, "groups")
    if len({w is None for w in side_weights.values()}) > 1:
        raise ValueError("weights must be given for every side or none")
    labels, group_ids = _group_labels(side_groups)
    stats: dict[str, SideStatistics] = {}
    for side in sides:
        try:
            stats[side] = _side_tables(
                values[side],
                candidates[side],
                side_weights[side],
                group_ids[side],
                weights_as_keys,
                weight_sums,
                narrow,
            )
        except (TypeError, ValueError) as error:
            if len(sides) == 1:
                raise
            raise type(error)(f"side {side!r}: {error}") from error
    _check_same_layout(stats)
    weighted = any(w is not None for w in side_weights.values())
    return PreparedInput(stats, labels, weighted=weighted)


def _check_same_layout(stats: Mapping[str, SideStatistics]) -> None:
    layouts = {side: s.layout() for side, s in stats.items()}
    first = next(iter(layouts.values()))
    for side, layout in layouts.items():
        if layout != first:
            raise ValueError(
                "every side must give the same kinds of ranks (the same rank types, and "
                f"num_candidates for all sides or none); side {side!r} differs"
            )
