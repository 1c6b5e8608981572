"""Sufficient statistics: ranks and candidate counts compressed to distinct values with counts.

Every rank-based metric is invariant under permuting the tasks, and metrics that accept weights
treat an integer weight as repetition, so the multiset of ranks, i.e. each distinct rank with its
count, determines every metric's value; the multiset of candidate counts determines every
null-model quantity. Ranks are integers (optimistic, pessimistic) or half-integers (realistic),
so in practice there are far fewer distinct values than tasks, and tables of distinct values are
what :func:`~rankstats.evaluation.evaluate.evaluate` computes from and what
:class:`~rankstats.evaluation.streaming.RankAccumulator` keeps. Merging tables adds integer
counts, which is exact and associative.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from rankstats.arrays import FloatArray, IntArray
from rankstats.chance import multiples_of_half
from rankstats.null.tasks import Tasks

__all__ = [
    "CellStatistics",
    "SideStatistics",
    "Table",
    "distinct_rows",
    "group_sum",
    "pair_ranks",
]

AnyArray = npt.NDArray[Any]

#: the key column holding a task's group id (0 for every task without groups)
GROUP = "group"
#: the key column holding a task's weight, present only for weighted input
WEIGHT = "weight"
#: beside ``weight`` in a candidate table that keeps weight sums (see
#: :class:`~rankstats.null.tasks.Tasks`): the sum of the squared weights of the row's tasks
WEIGHT_SQUARED = "weight_squared"


def pair_ranks(optimistic: AnyArray, pessimistic: AnyArray, rank_type: str) -> FloatArray:
    """The ranks of one type (float64) from a pairs table's optimistic and pessimistic ranks."""
    if rank_type == "optimistic":
        return optimistic.astype(np.float64)
    if rank_type == "pessimistic":
        return pessimistic.astype(np.float64)
    return 0.5 * (optimistic + pessimistic).astype(np.float64)


def group_sum(
    keys: Sequence[AnyArray], values: Sequence[AnyArray]
) -> tuple[list[AnyArray], list[AnyArray]]:
    """Sort rows by their keys (the first key primary) and sum ``values`` over equal keys.

    Examples
    --------
    >>> keys, sums = group_sum([np.array([2, 1, 2])], [np.array([1, 1, 5])])
    >>> keys[0].tolist(), sums[0].tolist()
    ([1, 2], [1, 6])
    """
    size = keys[0].size
    if size == 0:
        return [key[:0] for key in keys], [value[:0] for value in values]
    order = np.lexsort(tuple(reversed(keys))) if len(keys) > 1 else np.argsort(keys[0])
    sorted_keys = [key[order] for key in keys]
    new = np.zeros(size, dtype=np.bool_)
    new[0] = True
    for key in sorted_keys:
        new[1:] |= key[1:] != key[:-1]
    starts = np.flatnonzero(new)
    return (
        [key[starts] for key in sorted_keys],
        [np.add.reduceat(value[order], starts) for value in values],
    )


def distinct_rows(columns: Mapping[str, AnyArray]) -> tuple[dict[str, AnyArray], IntArray]:
    """The distinct rows of the columns, sorted as :meth:`Table.build` sorts, and each row's index.

    Integer columns whose ranges take at most 62 bits together are packed into one integer key
    (as :meth:`Table.build` packs them) and sorted once; other columns are sorted
    lexicographically.

    Examples
    --------
    >>> rows, index = distinct_rows({"a": np.array([2, 1, 2]), "b": np.array([0, 5, 0])})
    >>> rows["a"].tolist(), rows["b"].tolist(), index.tolist()
    ([1, 2], [5, 0], [1, 0, 1])
    """
    names = list(columns)
    arrays = [columns[name] for name in names]
    size = arrays[0].size
    if size == 0:
        return {name: array[:0] for name, array in zip(names, arrays, strict=True)}, np.zeros(
            0, dtype=np.int64
        )
    packed = _pack(arrays)
    if packed is not None:
        combined, lows, widths, deltas, _ = packed
        unique, index = np.unique(combined, return_inverse=True)
        keys = _unpack(unique, lows, widths, deltas)
        rows = {
            name: key.astype(array.dtype, copy=False)
            for name, key, array in zip(names, keys, arrays, strict=True)
        }
        return rows, index.reshape(-1).astype(np.int64, copy=False)
    order = np.lexsort(tuple(reversed(arrays)))
    new = np.zeros(size, dtype=np.bool_)
    new[0] = True
    for array in arrays:
        ordered = array[order]
        new[1:] |= ordered[1:] != ordered[:-1]
    starts = np.flatnonzero(new)
    index = np.empty(size, dtype=np.int64)
    index[order] = np.cumsum(new) - 1
    return {name: array[order[starts]] for name, array in zip(names, arrays, strict=True)}, index


def _is_half_integer(column: AnyArray) -> bool:
    """Whether a float column holds only multiples of 1/2 below 2**52 in magnitude."""
    return column.dtype.kind == "f" and column.size > 0 and multiples_of_half(column)


def _run_starts(ordered: IntArray) -> IntArray:
    """The index of the first row of each run of equal values of a sorted, non-empty array."""
    new = np.empty(ordered.size, dtype=np.bool_)
    new[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    return np.flatnonzero(new)


def _count_integer_rows(
    columns: Sequence[AnyArray], count: IntArray | None = None, narrow: bool = False
) -> tuple[list[IntArray], IntArray] | None:
    """Distinct rows of integer columns with their counts, through one combined integer key.

    ``count`` gives each row's count (1 each by default); counts are added exactly, as integers.
    With ``narrow`` (and no ``count``), where the key takes at most 31 bits and every value is
    below :math:`2^{30}` in magnitude, the columns after the first and the counts are ``int32``
    (:meth:`Table.build`).

    Sorting one ``int64`` array is far faster than an indirect lexicographic sort (50 ms against
    1.2 s for :math:`10^7` rows), so where the columns' ranges take at most 62 bits together,
    each row is encoded as one integer, each column (less its least value) in its own bits, the
    first column highest: shifts and masks encode and decode it (a mixed radix would need a
    division per column, 10 times slower). ``None`` otherwise.
    """
    packed = _pack(columns)
    if packed is None:
        return None
    combined, lows, widths, deltas, small = packed
    # int32 columns and counts: the key takes 31 bits, the values (and the sum or difference of
    # two) and the counts (at most the rows, below 2**31) fit
    narrow = narrow and count is None and small and combined.dtype == np.int32
    if count is None:
        ordered = combined  # the packed keys are this function's own: sorted in place
        ordered.sort()
        starts = _run_starts(ordered)
        unique = ordered[starts]
        counts: IntArray = np.empty(starts.size, dtype=np.int32 if narrow else np.int64)
        np.subtract(starts[1:], starts[:-1], out=counts[:-1], casting="unsafe")
        counts[-1] = ordered.size - starts[-1]
        return _unpack(unique, lows, widths, deltas, narrow), counts
    combined = combined.astype(np.int64, copy=False)  # room for the counts' bits
    count = count.astype(np.int64, copy=False)
    bits = max(int(count.max()), 0).bit_length()
    if int(count.min()) >= 0 and sum(widths) + bits <= 62:
        # each row's count in the low bits of its key: a plain sort, no indirect one
        combined <<= bits
        combined |= count
        ordered = combined
        ordered.sort()
        keys_sorted = ordered >> bits
        starts = _run_starts(keys_sorted)
        unique = keys_sorted[starts]
        counts = np.add.reduceat(ordered & ((1 << bits) - 1), starts)
    else:
        order = np.argsort(combined)
        ordered = combined[order]
        starts = _run_starts(ordered)
        unique = ordered[starts]
        counts = np.add.reduceat(count[order], starts)
    return _unpack(unique, lows, widths, deltas), counts.astype(np.int64, copy=False)


def _pack(
    columns: Sequence[AnyArray],
) -> tuple[IntArray, list[int], list[int], list[bool], bool] | None:
    """Each row of integer columns as one integer, or ``None`` (other dtypes, over 62 bits).

    Each column, less its least value, takes its own bits, the first column highest, so the
    integers sort as the rows do. They are ``int32`` where the columns take at most 31 bits
    together (half the memory, and sorted twice as fast), ``int64`` otherwise. Where they take
    more than 31 bits, a column may be packed as its difference from the column before it
    (:func:`_deltas`). Returns the integers, the columns' least values, widths, whether each
    is packed as such a difference, and whether every value is below :math:`2^{30}` in magnitude.
    """
    if columns[0].size == 0 or not all(np.issubdtype(c.dtype, np.integer) for c in columns):
        return None
    lows = [int(c.min()) for c in columns]
    highs = [int(c.max()) for c in columns]
    widths = [(high - low).bit_length() for low, high in zip(lows, highs, strict=True)]
    small = min(lows) >= -(2**30) and max(highs) < 2**30
    deltas = [False] * len(columns)
    differences: dict[int, IntArray] = {}
    if sum(widths) > 31:
        differences = _deltas(columns, lows, highs, widths, deltas)
    if sum(widths) > 62:
        return None
    dtype = np.int32 if sum(widths) <= 31 else np.int64
    # the difference is below 2**31 (2**62): no cast can overflow. The least values go in as
    # int64 scalars (a Python int beyond int32 cannot be cast to int32 at all): cast unsafely,
    # they wrap as the column's values do, and the difference comes out exact
    combined = np.subtract(columns[0], np.int64(lows[0]), dtype=dtype, casting="unsafe")
    scratch = np.empty_like(combined)
    for i in range(1, len(columns)):
        combined <<= widths[i]
        if deltas[i]:
            # the difference of the columns (within int64, checked), less its least value
            # below 2**62: no cast can overflow
            np.subtract(differences[i], np.int64(lows[i]), out=scratch, casting="unsafe")
        else:
            # the difference is below 2**62: no cast can overflow
            np.subtract(columns[i], np.int64(lows[i]), out=scratch, casting="unsafe")
        combined |= scratch
    return combined, lows, widths, deltas, small


def _deltas(
    columns: Sequence[AnyArray],
    lows: list[int],
    highs: list[int],
    widths: list[int],
    deltas: list[bool],
) -> dict[int, IntArray]:
    """Pack a column as its difference from the column before it where that takes fewer bits.

    Given the rows equal in the columns before, the difference orders them as the column does,
    and is equal where the column is: the packed integers sort and compare as the rows do
    either way. Pairs of optimistic and pessimistic ranks, which differ by the few tied
    candidates, then take the bits of one rank, not two. Updates ``lows``, ``widths`` and
    ``deltas`` in place (``highs`` is only read), and returns the differences taken, by column.
    """
    differences: dict[int, IntArray] = {}
    # a sample of about a thousand rows: the difference spreads at least as wide over all rows
    step = max(1, columns[0].size // 1024)
    for i in range(1, len(columns)):
        # bounds of the difference: computed only where it cannot overflow int64
        if lows[i] - highs[i - 1] < -(2**63) or highs[i] - lows[i - 1] >= 2**63:
            continue
        sample = np.subtract(columns[i][::step], columns[i - 1][::step], dtype=np.int64)
        if (int(sample.max()) - int(sample.min())).bit_length() >= widths[i]:
            continue  # no narrower over all rows (a column after the group ids, say)
        difference = np.subtract(columns[i], columns[i - 1], dtype=np.int64)
        low = int(difference.min())
        width = (int(difference.max()) - low).bit_length()
        if width < widths[i]:
            lows[i], widths[i], deltas[i] = low, width, True
            differences[i] = difference
    return differences


def _unpack(
    unique: IntArray, lows: list[int], widths: list[int], deltas: list[bool], narrow: bool = False
) -> list[IntArray]:
    """The ``int64`` columns of packed rows (:func:`_pack`); ``unique`` may be consumed.

    With ``narrow`` (``int32`` keys of values below :math:`2^{30}` in magnitude), the columns
    after the first are ``int32``: decoded with no conversion, and half the memory.
    """
    # the columns from the last to the first: the low bits, then shift them out
    keys: list[IntArray] = []
    dtype = np.int32 if narrow else np.int64
    for low, width in zip(reversed(lows[1:]), reversed(widths[1:]), strict=True):
        digit = np.bitwise_and(unique, (1 << width) - 1, dtype=dtype)
        digit += low
        keys.append(digit)
        unique >>= width
    first = unique if unique.dtype == np.int64 else unique.astype(np.int64)
    first += lows[0]
    keys.append(first)
    keys.reverse()
    for i in range(1, len(keys)):
        if deltas[i]:  # the difference from the column before, decoded just above
            keys[i] += keys[i - 1]
    return keys


@dataclass(frozen=True)
class Table:
    """Distinct rows of key columns with the number of times each occurs, sorted by the keys."""

    columns: dict[str, AnyArray]
    count: IntArray

    @classmethod
    def build(
        cls, columns: Mapping[str, AnyArray], count: IntArray | None = None, *, narrow: bool = False
    ) -> Table:
        """Compress rows to distinct ones, adding up their counts (1 each by default).

        With ``narrow``, integer key columns after the first (the group ids) and the counts are
        ``int32`` where the values are below :math:`2^{30}` in magnitude and the rows take at
        most 31 bits together, for a table only the grouped sums read
        (:mod:`rankstats.evaluation.group_sums`): half the memory, and a lower peak memory for
        :func:`~rankstats.evaluate` with many groups. The sum or difference of two values
        still fits in ``int32``; anything more (a product) must be taken in ``int64``.
        """
        names = list(columns)
        if count is None or np.issubdtype(count.dtype, np.integer):
            # half-integer ranks (realistic ranks) count as integers: twice their value; other
            # float columns (task weights) as the rank of each value among the column's
            # distinct values, decoded by indexing them (one sort of a packed integer key, not
            # an indirect sort over every column); -0.0 is taken as 0.0
            halves = {name for name in names if _is_half_integer(columns[name])}
            distinct: dict[str, FloatArray] = {}
            integers = []
            for name in names:
                column = columns[name]
                if name in halves:
                    column = (2.0 * column).astype(np.int64)
                elif column.dtype.kind == "f" and column.size:
                    distinct[name], column = np.unique(column + 0.0, return_inverse=True)
                    column = column.reshape(-1).astype(np.int64, copy=False)
                integers.append(column)
            fast = _count_integer_rows(integers, count, narrow and not halves and not distinct)
            if fast is not None:
                keys, counts = fast
                decoded = [
                    0.5 * key.astype(np.float64)
                    if name in halves
                    else distinct[name][key]
                    if name in distinct
                    else key
                    for name, key in zip(names, keys, strict=True)
                ]
                return cls(dict(zip(names, decoded, strict=True)), counts)
        if count is None:
            count = np.ones(columns[names[0]].size, dtype=np.int64)
        # -0.0 taken as 0.0 here too (float keys compare equal but would keep either sign)
        keys, (summed,) = group_sum(
            [c + 0.0 if c.dtype.kind == "f" else c for c in (columns[name] for name in names)],
            [count],
        )
        return cls(dict(zip(names, keys, strict=True)), summed)

    @classmethod
    def concatenate(cls, tables: Iterable[Table]) -> Table:
        """The table of the union of the tables' rows."""
        items = list(tables)
        names = list(items[0].columns)
        return cls.build(
            {name: np.concatenate([t.columns[name] for t in items]) for name in names},
            np.concatenate([t.count for t in items]),
        )

    def __len__(self) -> int:
        return int(self.count.size)

    def group(self, group: int) -> Table:
        """The rows of one group, without the group column."""
        ids = self.columns[GROUP]
        rows = slice(*np.searchsorted(ids, [group, group + 1]))
        return Table(
            {name: c[rows] for name, c in self.columns.items() if name != GROUP}, self.count[rows]
        )

    def merged_groups(self) -> Table:
        """The rows of all groups together, without the group column."""
        columns = {name: c for name, c in self.columns.items() if name != GROUP}
        return Table.build(columns, self.count)

    def as_one_group(self) -> Table:
        """The rows with every group id set to 0, not merged or re-sorted.

        The result may hold equal rows more than once, and is sorted by its group column
        only: what per-group sums and :meth:`group` need, and every other use merges rows.
        """
        columns = dict(self.columns)
        columns[GROUP] = np.zeros(self.count.size, dtype=np.int64)
        return Table(columns, self.count)

    def merged_one_group(self) -> Table:
        """The rows of all groups merged (distinct rows, counts added), all in group 0."""
        merged = self.merged_groups()
        columns = {GROUP: np.zeros(merged.count.size, dtype=np.int64), **merged.columns}
        return Table(columns, merged.count)

    def relabel_groups(self, mapping: IntArray) -> Table:
        """Replace every group id ``g`` by ``mapping[g]`` (and re-sort)."""
        columns = dict(self.columns)
        columns[GROUP] = mapping[columns[GROUP]]
        return Table.build(columns, self.count)

    def weights(self) -> FloatArray:
        """The total weight of each row: its count, times its weight for weighted input."""
        return self._weights

    def release_keys(self, names: Collection[str]) -> None:
        """Drop key columns no reader needs any more, from a table one call owns.

        For the tables :func:`~rankstats.evaluation.evaluate.evaluate` builds for its own use
        only: their memory then serves what comes next, and the call's peak memory is lower.
        The table cannot be read through those columns afterwards.
        """
        for name in names:
            self.columns.pop(name, None)

    def release_weights(self) -> None:
        """Drop the cached :meth:`weights` (an array per row), rebuilt when next asked for."""
        self.__dict__.pop("_weights", None)

    @functools.cached_property
    def _weights(self) -> FloatArray:
        total = self.count.astype(np.float64)
        if WEIGHT in self.columns:
            total = total * self.columns[WEIGHT]
        total.flags.writeable = False  # shared by every caller
        return total

    def state(self) -> dict[str, list[Any]]:
        """The table as plain lists, e.g. for JSON."""
        return {
            **{name: c.tolist() for name, c in self.columns.items()},
            "count": self.count.tolist(),
        }

    def same_layout(self, other: Table) -> bool:
        """Whether both tables have the same columns."""
        return list(self.columns) == list(other.columns)


@dataclass(frozen=True)
class CellStatistics:
    """What one cell of the results (one group or all, one side) is computed from.

    ``pairs`` has columns ``optimistic`` and ``pessimistic`` (when both are known), ``ranks``
    one table with a ``rank`` column per rank type given directly, ``candidates`` a column
    ``num_candidates``; each has a ``weight`` column for weighted input. ``tie_pairs``, for
    weighted input to :func:`~rankstats.evaluate` only, are the pairs with every task's own weight
    (the ``pairs`` weigh each distinct pair by its total): the expectation over ties of the
    metrics that are not linear in the weights needs them.
    """

    pairs: Table | None
    ranks: dict[str, Table]
    candidates: Table | None
    tie_pairs: Table | None = None
    _histograms: dict[str, tuple[FloatArray, FloatArray]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def histogram(self, rank_type: str) -> tuple[FloatArray, FloatArray]:
        """The distinct ranks of one type, sorted, and the total weight (or count) of each."""
        found = self._histograms.get(rank_type)
        if found is None:
            found = self._histograms[rank_type] = self._histogram(rank_type)
        return found

    def _histogram(self, rank_type: str) -> tuple[FloatArray, FloatArray]:
        if rank_type in self.ranks:
            table = self.ranks[rank_type]
            values = table.columns["rank"]
            weights = table.weights()
            if WEIGHT not in table.columns:
                return values, weights
        else:
            assert self.pairs is not None
            columns = self.pairs.columns
            values = pair_ranks(columns["optimistic"], columns["pessimistic"], rank_type)
            weights = self.pairs.weights()
        (values,), (weights,) = group_sum([values], [weights])
        return values, weights

    @functools.cached_property
    def tasks(self) -> Tasks:
        """The tasks of the cell as the null hooks take them: the candidate table's rows."""
        assert self.candidates is not None
        table = self.candidates
        return Tasks(
            table.columns["num_candidates"],
            table.columns.get(WEIGHT),
            table.count,
            table.columns.get(WEIGHT_SQUARED),
        )

    @functools.cached_property
    def candidate_key(self) -> tuple[bytes, ...]:
        """The null-model cache key: equal for equal multisets of (candidate count, weight)."""
        assert self.candidates is not None
        table = self.candidates
        return tuple(c.tobytes() for c in (*table.columns.values(), table.count))

    @property
    def size(self) -> int:
        """The number of tasks."""
        return int(self._table.count.sum())

    @property
    def total_weight(self) -> float:
        """The tasks' total weight (their number, without weights)."""
        return float(self._table.weights().sum())

    @property
    def _table(self) -> Table:
        return self.pairs if self.pairs is not None else next(iter(self.ranks.values()))


@dataclass(frozen=True)
class SideStatistics:
    """The tables of one side (e.g. head or tail prediction), all groups together."""

    pairs: Table | None = None
    ranks: dict[str, Table] = field(default_factory=dict)
    candidates: Table | None = None
    #: the pairs with every task's own weight, for weighted input where a metric's expectation
    #: over ties needs it (see :class:`CellStatistics`)
    tie_pairs: Table | None = None

    def tables(self) -> dict[str, Table]:
        """Every table by name: ``pairs``, ``candidates``, ``ranks.<rank type>``, ``tie_pairs``."""
        named = {f"ranks.{rank_type}": table for rank_type, table in self.ranks.items()}
        if self.pairs is not None:
            named["pairs"] = self.pairs
        if self.candidates is not None:
            named["candidates"] = self.candidates
        if self.tie_pairs is not None:
            named["tie_pairs"] = self.tie_pairs
        return named

    def layout(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """The table names and their columns, to check two statistics can be merged."""
        return tuple((name, tuple(t.columns)) for name, t in sorted(self.tables().items()))

    @classmethod
    def concatenate(cls, parts: Sequence[SideStatistics]) -> SideStatistics:
        """The statistics of the union of the parts' tasks (which must have the same layout)."""
        first = parts[0]
        return cls(
            pairs=None if first.pairs is None else Table.concatenate(p.pairs for p in parts),  # type: ignore[misc]
            ranks={
                rank_type: Table.concatenate(p.ranks[rank_type] for p in parts)
                for rank_type in first.ranks
            },
            candidates=None
            if first.candidates is None
            else Table.concatenate(p.candidates for p in parts),  # type: ignore[misc]
            tie_pairs=None
            if any(p.tie_pairs is None for p in parts)
            else Table.concatenate(p.tie_pairs for p in parts),  # type: ignore[misc]
        )

    @property
    def _table(self) -> Table:
        return self.pairs if self.pairs is not None else next(iter(self.ranks.values()))

    @property
    def size(self) -> int:
        """The number of tasks."""
        return int(self._table.count.sum())

    def mark_groups(self, flags: npt.NDArray[np.bool_]) -> None:
        """Set ``flags[g]`` for every group ``g`` present (a scatter: cheaper than the ids)."""
        flags[self._table.columns[GROUP]] = True

    def _mapped(self, function: Callable[[Table], Table]) -> dict[str, Any]:
        """Every table through ``function``, as the fields of a statistics object."""
        return {
            "pairs": None if self.pairs is None else function(self.pairs),
            "ranks": {rank_type: function(t) for rank_type, t in self.ranks.items()},
            "candidates": None if self.candidates is None else function(self.candidates),
            "tie_pairs": None if self.tie_pairs is None else function(self.tie_pairs),
        }

    def map(self, function: Callable[[Table], Table]) -> SideStatistics:
        """The same side with every table through ``function``."""
        return SideStatistics(**self._mapped(function))

    def cell(self, group: int | None) -> CellStatistics:
        """The statistics of one group, or of all groups together for ``None``."""

        def pick(table: Table) -> Table:
            return table.merged_groups() if group is None else table.group(group)

        return CellStatistics(**self._mapped(pick))

    def as_one_group(self) -> SideStatistics:
        """The same tasks as one group (id 0), for per-group passes over all of them."""
        return self.map(Table.as_one_group)

    def merged_one_group(self) -> SideStatistics:
        """The same tasks as one group (id 0), equal rows merged: fewer rows to pass over."""
        return self.map(Table.merged_one_group)

    def relabel_groups(self, mapping: IntArray) -> SideStatistics:
        """Replace group ids through ``mapping``."""
        return self.map(lambda table: table.relabel_groups(mapping))
