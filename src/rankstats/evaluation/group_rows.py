r"""The columns of many groups' results, and the rows they make: per group and macro-averaged.

A :class:`Column` holds one row of the table (side, rank type, metric) for every group, as arrays;
:class:`LazyGroups` builds a group's results from the columns when it is first looked up, and
:func:`macro_rows` averages every column over its groups. A derived metric's values are an
:class:`Elementwise` array: a few operations on its base's arrays, done for the groups indexed
(one group for its row, every group for the macro average) and never stored.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from rankstats.arrays import FloatArray, IntArray
from rankstats.base import RankBasedMetric
from rankstats.evaluation.results import (
    METHOD_EXACT,
    METHOD_MONTE_CARLO,
    EvaluationResults,
    ResultRow,
)

__all__ = [
    "CODE_EXACT",
    "CODE_MONTE_CARLO",
    "CODE_NONE",
    "METHODS",
    "BoolArray",
    "CodeArray",
    "Column",
    "Elementwise",
    "LazyGroups",
    "Values",
    "macro_rows",
    "rows_of_group",
]

BoolArray = npt.NDArray[np.bool_]
CodeArray = npt.NDArray[np.int8]
#: a row's method by its code in a column: no statistics, closed forms, Monte-Carlo
METHODS: tuple[str | None, ...] = (None, METHOD_EXACT, METHOD_MONTE_CARLO)
CODE_NONE, CODE_EXACT, CODE_MONTE_CARLO = 0, 1, 2


class Elementwise:
    """An array over the groups computed element-wise from other arrays when it is indexed.

    ``function(*(array[index] for array in arrays), *constants)`` is the entries at ``index``:
    for one group, numpy scalars give the same floating-point result as the whole array would.
    Nothing is computed or stored until it is indexed, so a derived metric's column costs
    neither time nor memory when no group is read. ``function`` must be picklable (a
    module-level function), as the results are.
    """

    def __init__(
        self,
        function: Callable[..., Any],
        arrays: Sequence[npt.NDArray[Any] | Elementwise],
        *constants: float,
    ) -> None:
        self.function = function
        self.arrays = tuple(arrays)
        self.constants = constants

    @property
    def size(self) -> int:
        """The number of groups."""
        return int(self.arrays[0].size)

    def __getitem__(self, index: Any) -> Any:
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.entries(index)

    def entries(self, index: Any) -> Any:
        """The entries at ``index``, with numpy's error state left as the caller set it.

        For callers reading many entries under one :func:`numpy.errstate` (setting it costs
        microseconds, reading an entry less).
        """
        return self.function(*(_entries(array, index) for array in self.arrays), *self.constants)


def _entries(array: npt.NDArray[Any] | Elementwise, index: Any) -> Any:
    """``array[index]``, an element-wise array's without setting numpy's error state."""
    return array.entries(index) if isinstance(array, Elementwise) else array[index]


#: an array over the groups, stored or computed when indexed
Values = FloatArray | Elementwise


@dataclass
class Column:
    """One row of the table (side, rank type, metric) for every group, as arrays of length G.

    ``expected_value`` and ``variance`` are NaN where there is none (``None`` in a row);
    ``present`` marks the groups that have tasks of positive weight on this side.
    """

    side: str
    rank_type: str
    metric: RankBasedMetric
    present: BoolArray
    value: Values
    expected_value: Values
    variance: Values
    method: CodeArray
    standard_error: FloatArray
    note: dict[int, str] = field(default_factory=dict)
    #: M - E where computed without cancellation (the z-score's; ``None``: from the value and
    #: the expected value)
    difference: Values | None = None

    def row(self, g: int) -> ResultRow:
        """The result row of group ``g``."""
        return rows_of_group([self], g)[0]

    def _row(self, g: int) -> ResultRow:
        """:meth:`row`, with numpy's error state set by the caller (:func:`rows_of_group`)."""
        expected = float(_entries(self.expected_value, g))
        variance = float(_entries(self.variance, g))
        error = float(self.standard_error[g])
        difference = None if self.difference is None else float(_entries(self.difference, g))
        return ResultRow(
            self.side,
            self.rank_type,
            self.metric,
            float(_entries(self.value, g)),
            None if math.isnan(expected) else expected,
            None if math.isnan(variance) else variance,
            method=METHODS[self.method[g]],
            standard_error=None if math.isnan(error) else error,
            note=self.note.get(g),
            difference=None if difference is None or math.isnan(difference) else difference,
        )


def rows_of_group(columns: Iterable[Column], g: int) -> list[ResultRow]:
    """The rows of group ``g`` in the columns where it has tasks, under one numpy error state."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return [column._row(g) for column in columns if column.present[g]]


class LazyGroups(Mapping[Hashable, EvaluationResults]):
    """The results of each group, by label, each built when first looked up."""

    def __init__(
        self,
        labels: Sequence[Hashable],
        columns: Sequence[Column],
        present: BoolArray,
        make: Callable[[list[ResultRow]], EvaluationResults],
    ) -> None:
        self._columns = list(columns)
        self._labels = list(labels)  # the results stay as they are if the caller changes these
        self._present = present.copy()
        self._make = make
        self._built: dict[int, EvaluationResults] = {}

    @functools.cached_property
    def _ids(self) -> dict[Hashable, int]:
        """The id of each label's group, built on first use (thousands of labels)."""
        ids = np.flatnonzero(self._present).tolist()
        return dict(zip([self._labels[g] for g in ids], ids, strict=True))

    def __getitem__(self, label: Hashable) -> EvaluationResults:
        g = self._ids[label]
        found = self._built.get(g)
        if found is None:
            rows = rows_of_group(self._columns, g)
            found = self._built.setdefault(g, self._make(rows))
        return found

    def __iter__(self) -> Iterator[Hashable]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, label: object) -> bool:
        try:
            return label in self._ids
        except TypeError:
            return False


def macro_rows(columns: Sequence[Column]) -> list[ResultRow]:
    r"""Average every column over its groups (each group counts once).

    The value and :math:`\mathbb{E}` average, and :math:`\mathbb{V}` becomes
    :math:`\sum_g \mathbb{V}_g / G^2`: groups hold disjoint tasks, independent under the null.
    Groups where a metric is undefined (an adjusted index of a group whose tasks all have a
    single candidate) are left out of that metric's average, and its row says so.
    """
    rows = []
    every_group = slice(None)  # every group, in order: a view of each array, the same sums
    # the columns of a side share one array of the groups present, and the columns of a metric's
    # rank types its arrays of null moments and methods: each is reduced once
    found: dict[int, tuple[BoolArray, IntArray]] = {}
    reduce = _Reductions().reduce

    # every element-wise array's entries under one error state (each is computed once)
    with np.errstate(divide="ignore", invalid="ignore"):
        for column in columns:
            known = found.get(id(column.present))
            if known is None or known[0] is not column.present:
                known = found[id(column.present)] = (column.present, np.flatnonzero(column.present))
            groups = known[1]
            if groups.size == 0:
                continue
            chosen: slice | IntArray = every_group if groups.size == column.value.size else groups
            value = reduce(column.value, chosen, "sum")
            defined, left_out = groups, groups[:0]
            if math.isnan(value):  # the value is undefined (NaN) in some groups
                undefined = np.isnan(column.value[chosen])
                if undefined.any():
                    defined, left_out = groups[~undefined], groups[undefined]
                    chosen = defined
                    value = float(column.value[chosen].sum())
            key = (column.side, column.rank_type, column.metric)
            if defined.size == 0:
                reasons = "; ".join(dict.fromkeys(column.note.values()))
                rows.append(
                    ResultRow(
                        *key,
                        math.nan,
                        None,
                        None,
                        method=None,
                        note=f"undefined in every one of the {groups.size} groups: {reasons}",
                    )
                )
                continue
            count = defined.size
            expected = reduce(column.expected_value, chosen, "sum")
            variance = reduce(column.variance, chosen, "sum")
            method = reduce(column.method, chosen, "method")
            error = (
                reduce(column.standard_error, chosen, "errors")
                if method == METHOD_MONTE_CARLO
                else None
            )
            note = None
            if column.note or left_out.size:
                note = _macro_note(column, groups, defined, left_out)
            difference = None
            if column.difference is not None:  # the mean of the groups' differences
                difference = reduce(column.difference, chosen, "sum") / count
            rows.append(
                ResultRow(
                    *key,
                    value / count,
                    None if math.isnan(expected) else expected / count,
                    None if math.isnan(variance) else variance / count**2,
                    method=method,
                    standard_error=None if error is None else error / count,
                    note=note,
                    difference=None if math.isnan(difference or 0.0) else difference,
                )
            )
    return rows


class _Reductions:
    """The sums and methods of arrays over chosen groups, each reduced once (:func:`macro_rows`).

    An :class:`Elementwise` array that others are computed from (a base's null standard
    deviation, shared by the z-scores of every rank type) has its entries computed once per
    choice of groups; the others' entries are reduced at once and not kept. The caches are
    keyed by ``id`` and hold their arrays, so a key cannot be reused while it is cached; they
    are plain attributes, not a closure that refers to itself, so they are freed with the
    object and not left to the cyclic garbage collector.
    """

    def __init__(self) -> None:
        self._reduced: dict[tuple[int, int, str], tuple[Any, Any, Any]] = {}
        self._inner_parts: dict[tuple[int, int], tuple[Any, Any, Any]] = {}

    def part_of(self, array: Any, chosen: slice | IntArray, inner: bool = False) -> Any:
        """``array[chosen]``, an element-wise array's computed (under the caller's errstate)."""
        if not isinstance(array, Elementwise):
            return array[chosen]
        key = (id(array), id(chosen))
        known = self._inner_parts.get(key) if inner else None
        if known is None or known[0] is not array or known[1] is not chosen:
            arguments = [self.part_of(each, chosen, inner=True) for each in array.arrays]
            part = array.function(*arguments, *array.constants)
            if not inner:
                return part
            known = self._inner_parts[key] = (array, chosen, part)
        return known[2]

    def reduce(self, array: Any, chosen: slice | IntArray, how: str) -> Any:
        """The sum (``"sum"``), method (``"method"``) or root sum of squares (``"errors"``)."""
        key = (id(array), id(chosen), how)
        known = self._reduced.get(key)
        if known is None or known[0] is not array or known[1] is not chosen:
            part = self.part_of(array, chosen)
            result: Any
            if how == "sum":  # NaN where any entry is
                result = float(part.sum())
            elif how == "method":
                low, high = int(part.min()), int(part.max())
                result = METHODS[
                    CODE_MONTE_CARLO if high == CODE_MONTE_CARLO else int(low > CODE_NONE)
                ]
            else:  # the standard errors of Monte-Carlo estimates, where there are
                errors = part[~np.isnan(part)]
                result = math.sqrt(float((errors * errors).sum())) if errors.size else None
            known = self._reduced[key] = (array, chosen, result)
        return known[2]


def _macro_note(
    column: Column, groups: IntArray, defined: IntArray, left_out: IntArray
) -> str | None:
    """The note of a macro-averaged row: the groups' notes, and those left out and why."""
    is_defined = np.zeros(column.value.size, dtype=bool)
    is_defined[defined] = True
    note = "; ".join(dict.fromkeys(n for g, n in column.note.items() if is_defined[g]))
    if left_out.size:
        reasons = "; ".join(
            dict.fromkeys(
                n for g, n in column.note.items() if column.present[g] and not is_defined[g]
            )
        )
        note = (
            f"macro average over the {defined.size} of {groups.size} groups where it is "
            f"defined; {left_out.size} left out ({reasons})" + (f"; {note}" if note else "")
        )
    return note or None
