"""Group labels kept apart as Python keeps them apart, for the streaming accumulator.

numpy turns ``[1, "1"]`` into two equal strings, and sorts labels of one type only. Here a label
is a Python object (numpy scalars converted with ``.item()``): two labels are the same group
exactly when they are equal in Python, so ``1``, ``1.0`` and ``np.int64(1)`` are one group and
``1`` and ``"1"`` are two. Labels must be hashable and not missing values (NaN, None, pandas NA,
NaT). Arrays of numbers or strings are encoded by one vectorised :func:`numpy.unique` (or a
lookup table, for integers of a small span); only mixed or object labels take a Python pass.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    "add_labels",
    "check_label",
    "encode_groups",
    "label_from_json",
    "label_order",
    "tuple_labels",
    "weightless_groups_note",
]


#: the types of pandas' missing-value markers (checked by name: pandas is an optional extra)
_MISSING_TYPES = frozenset({"NAType", "NaTType"})


def tuple_labels(value: Any) -> bool:
    """Whether ``value`` is a list (or tuple) of tuples, one label each.

    Such as (relation, direction) pairs, where numpy would make a 2-D array of them.
    """
    return isinstance(value, list | tuple) and set(map(type, value)) == {tuple}


def check_label(label: Any) -> Hashable:
    """A group label as a plain Python object (numpy scalars converted), hashable, not missing.

    Missing values (NaN, None, pandas NA, NaT) are refused: a group of them would be silent, and
    None is also the label of the overall rows in the reports.
    """
    if isinstance(label, np.generic):
        label = label.item()
    try:
        hash(label)
    except TypeError as error:
        raise TypeError(f"group labels must be hashable, got {label!r}") from error
    if isinstance(label, float) and math.isnan(label):
        raise ValueError("group labels must not be NaN (a missing label?)")
    if label is None or type(label).__name__ in _MISSING_TYPES:
        # pandas and numpy mark missing values so (numpy's NaT converts to None)
        raise ValueError(
            f"group labels must not be missing values (None, NaN, pandas NA or NaT), got "
            f"{label!r}; give those tasks a label of their own or leave them out"
        )
    return label  # type: ignore[no-any-return]


def encode_groups(groups: Any) -> tuple[Any, list[Hashable]]:
    """Replace group labels by integer codes, keeping labels apart that Python keeps apart.

    numpy turns ``[1, "1"]`` into two equal strings; here labels are compared as Python objects.
    Returns the codes (an array, or a mapping of arrays per side, as ``groups`` was) and the label
    of each code.

    Examples
    --------
    >>> codes, labels = encode_groups([1, "1", 1.0, np.int64(1)])
    >>> codes.tolist(), labels
    ([0, 1, 0, 0], [1, '1'])
    """
    if groups is None:
        return None, []
    labels: list[Hashable] = []
    index: dict[Hashable, int] = {}
    if isinstance(groups, Mapping):
        return {side: _encode(value, labels, index) for side, value in groups.items()}, labels
    return _encode(groups, labels, index), labels


def _encode(value: Any, labels: list[Hashable], index: dict[Hashable, int]) -> npt.NDArray[Any]:
    if isinstance(value, str | bytes | set | frozenset):  # a set has no order to follow
        raise TypeError(
            f"groups must be an array-like of labels, one per task in the tasks' order, "
            f"got {type(value).__name__}"
        )
    array = value if isinstance(value, np.ndarray) else None
    if array is None:
        try:
            array = np.asarray(value)
        except (TypeError, ValueError):
            array = None
        if (
            array is not None
            and array.dtype.kind in "US"
            and not set(map(type, value)) <= {str, bytes, np.str_, np.bytes_}
        ):
            array = None  # numpy made strings of numbers mixed with strings
    if array is not None and array.ndim != 1:
        if not tuple_labels(value) and (isinstance(value, np.ndarray) or array.dtype != object):
            raise ValueError(f"groups must be a 1-D array of labels, got shape {array.shape}")
        array = None
    if array is not None and array.dtype.kind in "iu" and array.size:
        # integer labels of a small span (relation ids, ...): a lookup table, no sort
        low, high = int(array.min()), int(array.max())
        if high - low <= 4 * array.size + 1024:
            offsets: npt.NDArray[np.intp] = (array if low == 0 else array - low).astype(
                np.intp, copy=False
            )
            seen = np.zeros(high - low + 1, dtype=np.bool_)
            seen[offsets] = True
            present = np.flatnonzero(seen)
            if present.size == high - low + 1 and not labels:
                # every label of the span, in the first array: the codes are the offsets
                labels.extend(range(low, high + 1))
                codes: npt.NDArray[np.intp] = offsets.view()
                codes.flags.writeable = False  # may be the caller's array: read-only
                return codes
            lookup = np.zeros(high - low + 1, dtype=np.int64)
            lookup[present] = _codes((present + low).tolist(), labels, index)
            found: npt.NDArray[np.int64] = np.take(lookup, offsets)  # faster than lookup[offsets]
            return found
    if array is not None and array.dtype.kind in "biufUS":
        unique, inverse = np.unique(array, return_inverse=True)
        if unique.dtype.kind == "f" and np.isnan(unique).any():
            raise ValueError("group labels must not be NaN (a missing label?)")
        codes = _codes(unique.tolist(), labels, index)
        return codes[inverse.reshape(-1)] if codes.size else np.zeros(0, dtype=np.int64)
    items = list(array) if array is not None else list(value)
    return np.fromiter(
        (_code(check_label(item), labels, index) for item in items),
        dtype=np.int64,
        count=len(items),
    )


def _codes(
    distinct: list[Hashable], labels: list[Hashable], index: dict[Hashable, int]
) -> npt.NDArray[np.int64]:
    """Codes of distinct plain labels (from ``tolist()`` of a numeric or string array, NaN-free).

    The first array seen needs no look-ups: its labels take the codes 0, 1, ... in one pass, and
    the index of labels is built only if another array follows (:func:`_code`).
    """
    if not labels:
        labels.extend(distinct)
        return np.arange(len(distinct), dtype=np.int64)
    return np.array([_code(label, labels, index) for label in distinct], dtype=np.int64)


def _code(label: Hashable, labels: list[Hashable], index: dict[Hashable, int]) -> int:
    if len(index) < len(labels):  # labels coded without the index (the first array's)
        start = len(index)
        index.update(zip(labels[start:], range(start, len(labels)), strict=True))
    label = check_label(label)
    found = index.get(label)
    if found is None:
        found = index[label] = len(labels)
        labels.append(label)
    return found


def weightless_groups_note(labels: Sequence[Hashable]) -> str:
    """The note on groups left out because all their tasks have weight 0 (the first ten named)."""
    shown = ", ".join(repr(label) for label in labels[:10])
    more = f" and {len(labels) - 10} more" if len(labels) > 10 else ""
    return f"{len(labels)} group(s) left out because all their tasks have weight 0: {shown}{more}"


def label_from_json(label: Any) -> Any:
    """A label read from JSON: lists back to the tuples they were (a label is never a list)."""
    if isinstance(label, list):
        return tuple(label_from_json(item) for item in label)
    return label


def add_labels(
    known: tuple[Hashable, ...], new: Sequence[Hashable]
) -> tuple[tuple[Hashable, ...], npt.NDArray[np.int64]]:
    """The labels with ``new`` ones appended, and the id of each of ``new`` among them."""
    ids = {label: position for position, label in enumerate(known)}
    extended = list(known)
    mapping = np.empty(len(new), dtype=np.int64)
    for position, label in enumerate(new):
        found = ids.get(label)
        if found is None:
            found = ids[label] = len(extended)
            extended.append(label)
        mapping[position] = found
    return tuple(extended), mapping


def label_order(labels: Sequence[Hashable]) -> Sequence[int]:
    """The positions of the labels in sorted order; by type name first where types are mixed.

    Labels already in order give ``range(len(labels))``, which a caller can recognise without
    comparing every position.

    Examples
    --------
    >>> label_order(["b", 2, "a", 1])
    [3, 1, 2, 0]
    """
    items: list[Any] = list(labels)
    positions = range(len(items))
    try:
        if sorted(items) == items:  # e.g. the integer labels of one array, coded in order
            return positions
        return sorted(positions, key=items.__getitem__)
    except TypeError:
        pass
    try:
        return sorted(positions, key=lambda i: (type(items[i]).__name__, items[i]))
    except TypeError:
        return sorted(positions, key=lambda i: (type(items[i]).__name__, repr(items[i])))
