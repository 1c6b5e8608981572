r"""Per-group sums over the tables of one side: the vectorised core of many groups at once.

:class:`GroupSums` sums per-task terms over each group's run of rows in a side's tables (sorted
by group): where every group has at most 128 rows, all terms at once in one product with a
sparse (groups x values) matrix of the rows' weights, each group's products added in row order
(as :func:`numpy.sum` adds a block of up to 128); otherwise ``np.add.reduceat`` sums each term
pairwise within each group. A term depends on the rank (or the candidate count) only, so it is
given once per value of the ranks' range, and each row indexes into those values.
:class:`TieSplit` splits the pairs of optimistic and pessimistic ranks into untied rows, whose
terms are the same for every rank type, and the few tied ones.
:mod:`rankstats.evaluation.grouped` builds the columns of the results table from these sums.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from rankstats.arrays import FloatArray, IntArray
from rankstats.evaluation.scores import RANK_EXPECTED
from rankstats.evaluation.tables import (
    GROUP,
    WEIGHT,
    WEIGHT_SQUARED,
    CellStatistics,
    SideStatistics,
    Table,
)

__all__ = [
    "SEQUENTIAL_ROWS",
    "GroupSums",
    "TieSplit",
    "index_dtype",
    "offsets",
    "stacked",
    "value_range",
]

#: groups of at most this many table rows are summed in sequence (numpy.sum's unrolled block)
SEQUENTIAL_ROWS = 128


class TieSplit(NamedTuple):
    """The rows of a pairs table as untied (optimistic = pessimistic) and tied ones.

    An untied row has one rank for every rank type, so each mean-type term of it is the same
    for all four; its terms are evaluated once per value of the optimistic ranks' range
    (``keys``, the row's index into them ``inverse``) and summed with ``untied_weights`` (0 for
    the tied rows). The tied rows (a few, in practice) are summed row by row.
    """

    ids: IntArray
    keys: FloatArray
    inverse: IntArray
    untied_weights: FloatArray
    #: the groups with tied rows, each one's first tied row, each tied row's index into them,
    #: and whether a group has more than 128 tied rows (then summed pairwise)
    tied_groups: IntArray
    tied_starts: IntArray
    tied_local: IntArray
    tied_long: bool
    tied_weights: FloatArray
    tied_optimistic: IntArray
    tied_pessimistic: IntArray


class GroupSums:
    """The group-wise sums of one side's tables."""

    def __init__(
        self,
        stats: SideStatistics | Callable[[], SideStatistics],
        size: int,
        total: FloatArray | None = None,
        like: SideStatistics | None = None,
    ) -> None:
        """The sums over ``size`` groups of the tables ``stats``.

        ``stats`` may be a function that builds the tables when first needed; ``total`` is
        then the total weight of each group, and ``like`` tables of the same layout.
        """
        self._source = stats
        self.size = size
        layout = stats if isinstance(stats, SideStatistics) else like
        assert layout is not None
        #: the tables, or (where built when needed) tables of the same layout and rows
        self.layout = layout
        self.has_pairs = layout.pairs is not None
        self.has_candidates = layout.candidates is not None
        # per table column of group ids: the start of each group's run of rows, the groups
        # present, the longest run, and each group's row range (a CSR index pointer)
        self._starts: dict[int, tuple[IntArray, IntArray, IntArray, int, IntArray]] = {}
        if total is None:
            base = self.stats.pairs or next(iter(self.stats.ranks.values()))
            # unweighted, from the counts themselves: the table's cached weights (an array per
            # row) are made when its sums need them, not held through what comes before
            weights = base.count if WEIGHT not in base.columns else base.weights()
            total = self._sum(base.columns[GROUP], weights)
        self.total = total
        self.present = self.total > 0
        self._cells: dict[int, CellStatistics] = {}
        self._rows: dict[str, tuple[IntArray, FloatArray, FloatArray]] = {}
        self._distinct: dict[str, tuple[IntArray, FloatArray, IntArray | None, FloatArray]] = {}
        self._squared: dict[int, tuple[Table, FloatArray]] = {}
        self._matrices: dict[tuple[int, int, int], tuple[Any, ...]] = {}
        #: whether the tables are this call's own and no reader needs their key columns once
        #: the sums are in: :meth:`release_pairs` and :meth:`release_candidates` then drop those
        self.owns_keys = False
        #: with :attr:`owns_keys`: the rows' values stay (ranks, candidate counts) and only the
        #: group ids go, their row ranges kept (:meth:`row_ranges`), for exact sums over the
        #: rows of a few groups (:mod:`rankstats.evaluation.chance_rows`)
        self.keeps_rows = False
        self._row_ranges: dict[int, IntArray] = {}

    @functools.cached_property
    def stats(self) -> SideStatistics:
        """The side's tables."""
        return self._source if isinstance(self._source, SideStatistics) else self._source()

    def _layout(self, ids: IntArray) -> tuple[IntArray, IntArray, int, IntArray]:
        """Each group's first row, the groups present, the longest run, the row ranges."""
        key = id(ids)
        found = self._starts.get(key)
        if found is None or found[0] is not ids:
            # from each group's number of rows: the ids are sorted and below the size
            counts = np.bincount(ids, minlength=self.size)
            indptr = np.zeros(self.size + 1, dtype=index_dtype(ids.size))
            np.cumsum(counts, out=indptr[1:])
            present = np.flatnonzero(counts)
            longest = int(counts.max()) if ids.size else 0
            found = self._starts[key] = (ids, indptr[present], present, longest, indptr)
        return found[1], found[2], found[3], found[4]

    def weighted_sums(
        self,
        ids: IntArray,
        weights: FloatArray,
        terms: Sequence[FloatArray],
        inverse: IntArray | None = None,
    ) -> list[FloatArray]:
        r"""Per-group sums of ``weights * t[inverse]`` for every ``t`` of ``terms``.

        With ``inverse``, each term holds one value per distinct key (rank or candidate count)
        and ``inverse`` gives each row's key; without, one value per row.

        The same sums as :meth:`_sum` of each product, in the same order: where every group has
        at most 128 rows, one product of a sparse (groups x keys) matrix of the weights, built
        once per table, with all terms side by side (each group's products added in row order,
        as ``np.bincount`` does, at a fifth of its cost for ten terms); otherwise by
        :meth:`_sum`, pairwise within each group.
        """
        return list(self.weighted_sums_array(ids, weights, terms, inverse))

    def weighted_sums_array(
        self,
        ids: IntArray,
        weights: FloatArray,
        terms: Sequence[FloatArray] | FloatArray,
        inverse: IntArray | None = None,
        *,
        by_group: bool = False,
    ) -> FloatArray:
        """:meth:`weighted_sums` as one (terms x groups) array.

        ``terms`` may also be given side by side, as the columns of one 2-D array
        (:func:`stacked`). With ``by_group``, the (groups x terms) array instead, for a caller
        that copies the rows it needs anyway (no contiguous transpose in between).
        """
        if not isinstance(terms, np.ndarray):
            if not terms:
                return np.zeros((self.size, 0) if by_group else (0, self.size))
            terms = np.column_stack(terms).astype(np.float64, copy=False)
        count = terms.shape[1]
        if ids.size and self._layout(ids)[2] <= SEQUENTIAL_ROWS:
            matrix = self._matrix(ids, weights, inverse, terms.shape[0])
            summed: FloatArray = np.asarray(matrix @ terms, dtype=np.float64)
            if by_group:
                return summed
            # one contiguous row per term (the product is (groups x terms)): every later pass
            # over a term's groups reads 8 bytes a group, where a strided row read a cache line
            transposed: FloatArray = np.ascontiguousarray(summed.T)
            return transposed
        columns = [terms[:, j] for j in range(count)]
        rows = columns if inverse is None else [c[inverse] for c in columns]
        sums = np.array([self._sum(ids, t * weights) for t in rows]).reshape(count, -1)
        return sums.T if by_group else sums

    def _matrix(
        self, ids: IntArray, weights: FloatArray, inverse: IntArray | None, width: int
    ) -> Any:
        """The sparse (groups x keys) matrix of the rows' weights, built once per table."""
        key = (id(ids), id(weights), id(inverse))
        found = self._matrices.get(key)
        if found is None or any(
            a is not b for a, b in zip(found[:3], (ids, weights, inverse), strict=True)
        ):
            from scipy import sparse

            indptr = self._layout(ids)[3]
            columns = inverse
            if columns is None:
                columns = np.arange(ids.size, dtype=index_dtype(ids.size))
            matrix = sparse.csr_matrix((weights, columns, indptr), shape=(self.size, width))
            found = self._matrices[key] = (ids, weights, inverse, matrix)
        return found[3]

    def _sum(self, ids: IntArray, values: FloatArray | IntArray) -> FloatArray:
        r"""Per-group sums of ``values`` over rows sorted by group id ``ids``.

        As accurate as :func:`numpy.sum` of each group: where every group has at most 128 rows
        (numpy's own unrolled block, summed in sequence), one ``np.bincount``; otherwise
        ``np.add.reduceat`` over each group's run of rows, which sums pairwise (error
        :math:`O(\log n)` ulps where a sequential sum has :math:`O(n)`).
        """
        starts, present, longest, _ = self._layout(ids)
        values = np.asarray(values, dtype=np.float64)
        if longest <= SEQUENTIAL_ROWS:
            summed = np.bincount(ids, weights=values, minlength=self.size)
            return np.asarray(summed[: self.size], dtype=np.float64)
        total = np.zeros(self.size)
        total[present] = np.add.reduceat(values, starts)
        return total

    def release_pairs(self) -> None:
        """Drop what is cached per row of the pairs (tie split, keys, weights, sparse matrices).

        With :attr:`owns_keys`, the pairs' key columns too (ranks and group ids).

        Once the values of the pairs are summed, these are not needed for the null moments,
        which come next: freed, their memory serves those, and the peak memory of a call is
        lower. Anything needed again is rebuilt.
        """
        self.__dict__.pop("tie_split", None)
        if self.stats.pairs is not None:
            self.stats.pairs.release_weights()
            if self.owns_keys:  # the group ids (and their layout) too
                self._release_keys(self.stats.pairs, ("optimistic", "pessimistic"))
        for rank_type in [k for k in self._distinct if k not in self.stats.ranks]:
            del self._distinct[rank_type]
        candidates = self.stats.candidates
        kept = None if candidates is None else id(candidates.columns.get(GROUP))
        for key in [k for k in self._matrices if k[0] != kept]:
            del self._matrices[key]

    def release_candidates(self) -> None:
        """Drop what is cached per row of the candidate counts (weights, sparse matrices).

        With :attr:`owns_keys`, the candidate counts and their group ids too.

        Once the null moments are summed, these are not needed: freed, their memory serves the
        results, and the peak memory of a call is lower. Anything needed again is rebuilt.
        """
        candidates = self.stats.candidates
        if candidates is None:
            return
        candidates.release_weights()
        self._squared.pop(id(candidates), None)
        ids = id(candidates.columns.get(GROUP))
        for key in [k for k in self._matrices if k[0] == ids]:
            del self._matrices[key]
        if self.owns_keys:  # the null moments are in: the group ids (and their layout) too
            self._release_keys(candidates, ("num_candidates",))

    def _release_keys(self, table: Table, values: tuple[str, ...]) -> None:
        """Drop a table's group ids and, unless :attr:`keeps_rows`, the key columns ``values``."""
        ids = table.columns.get(GROUP)
        if ids is None:
            return
        if self.keeps_rows:
            self._row_ranges[id(table)] = self._layout(ids)[3]
            values = ()
        table.release_keys((*values, GROUP))
        self._starts.pop(id(ids), None)

    def row_ranges(self, table: Table) -> IntArray:
        """Each group's range of rows of a table sorted by group, as an index pointer.

        Group ``g``'s rows are ``indptr[g]:indptr[g + 1]``; kept when the group ids are dropped
        (:attr:`keeps_rows`).
        """
        found = self._row_ranges.get(id(table))
        if found is not None:
            return found
        return self._layout(table.columns[GROUP])[3]

    def cell(self, g: int) -> CellStatistics:
        """The statistics of group ``g`` alone (for the metrics computed group by group)."""
        found = self._cells.get(g)
        if found is None:
            found = self._cells[g] = self.stats.cell(g)
        return found

    def rows(self, rank_type: str) -> tuple[IntArray, FloatArray, FloatArray]:
        """Group id, rank and total weight of each table row of a rank type."""
        found = self._rows.get(rank_type)
        if found is None:
            found = self._rows[rank_type] = self._compute_rows(rank_type)
        return found

    def _compute_rows(self, rank_type: str) -> tuple[IntArray, FloatArray, FloatArray]:
        if rank_type in self.stats.ranks:
            table = self.stats.ranks[rank_type]
            return table.columns[GROUP], table.columns["rank"], table.weights()
        ids, distinct, inverse, weights = self.distinct_rows(rank_type)
        return ids, distinct if inverse is None else distinct[inverse], weights

    def distinct_rows(self, rank_type: str) -> tuple[IntArray, Any, IntArray | None, FloatArray]:
        """Group id and total weight of each table row, the ranks' keys, each row's key.

        Terms are evaluated once per key and summed through each row's index into the keys: the
        keys are every value of the ranks' range where it is narrow (no wider than the rows).
        Where the ranks are not integers (given directly) or spread wider, the keys are the
        rows' own ranks (index ``None``); for ``"expected"``, a pair ``(optimistic,
        pessimistic)`` of the rows' arrays (the pairs' untied rows share the optimistic keys
        through :attr:`tie_split` instead).
        """
        found = self._distinct.get(rank_type)
        if found is None:
            found = self._distinct[rank_type] = self._compute_distinct_rows(rank_type)
        return found

    def _compute_distinct_rows(
        self, rank_type: str
    ) -> tuple[IntArray, Any, IntArray | None, FloatArray]:
        if rank_type in self.stats.ranks:
            table = self.stats.ranks[rank_type]
            return table.columns[GROUP], table.columns["rank"], None, table.weights()
        assert self.stats.pairs is not None
        pairs = self.stats.pairs
        optimistic, pessimistic = pairs.columns["optimistic"], pairs.columns["pessimistic"]
        ids, weights = pairs.columns[GROUP], pairs.weights()
        if rank_type == RANK_EXPECTED:  # in int64 for the terms (a narrow table's are int32)
            pair = (
                optimistic.astype(np.int64, copy=False),
                pessimistic.astype(np.int64, copy=False),
            )
            return ids, pair, None, weights
        if rank_type == "optimistic":
            key, scale = optimistic, 1.0
        elif rank_type == "pessimistic":
            key, scale = pessimistic, 1.0
        else:
            key, scale = optimistic + pessimistic, 0.5
        spread = value_range(key)
        if spread is None:
            return ids, scale * key.astype(np.float64), None, weights
        low, high = spread
        keys = scale * np.arange(low, high + 1, dtype=np.float64)
        return ids, keys, offsets(key, low, high), weights

    @functools.cached_property
    def tie_split(self) -> TieSplit | None:
        """The pairs' rows split into untied and tied ones, or ``None``.

        ``None`` without pairs (ranks given directly) or where the optimistic ranks spread wider
        than the rows.
        """
        if not self.has_pairs:
            return None
        ids, keys, inverse, weights = self.distinct_rows("optimistic")
        if inverse is None:
            return None
        pairs = self.stats.pairs
        assert pairs is not None
        optimistic, pessimistic = pairs.columns["optimistic"], pairs.columns["pessimistic"]
        tied = np.flatnonzero(optimistic != pessimistic)
        untied_weights = weights.copy()
        untied_weights[tied] = 0.0  # adds an exact 0 in the untied rows' sums
        tied_ids = ids[tied]  # sorted, as the rows
        new = np.empty(tied_ids.size, dtype=np.bool_)
        new[:1] = True
        np.not_equal(tied_ids[1:], tied_ids[:-1], out=new[1:])
        starts = np.flatnonzero(new)
        longest = int(np.diff(starts, append=tied_ids.size).max()) if tied_ids.size else 0
        # the rows' weights live on as the untied ones (and the tied rows'): the cached ones
        # are dropped (rebuilt if asked for again), and the call's peak memory is lower
        del self._distinct["optimistic"]
        pairs.release_weights()
        if self.owns_keys and not self.keeps_rows:  # the split holds what its sums read
            pairs.release_keys(("optimistic", "pessimistic"))
        return TieSplit(
            ids,
            keys,
            inverse,
            untied_weights,
            tied_ids[starts],
            starts,
            np.cumsum(new) - 1,
            longest > SEQUENTIAL_ROWS,
            weights[tied],
            # in int64 for the terms (a narrow table's ranks are int32, Table.build)
            optimistic[tied].astype(np.int64, copy=False),
            pessimistic[tied].astype(np.int64, copy=False),
        )

    def mean(self, ids: IntArray, terms: FloatArray, weights: FloatArray) -> FloatArray:
        """The weighted mean of per-row terms in every group (NaN where a group is empty)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.weighted_sums(ids, weights, [terms])[0] / self.total

    @staticmethod
    def counts(table: Table) -> FloatArray:
        """Each row's count as a float: its weight where the input is unweighted (no copy)."""
        if WEIGHT not in table.columns:
            return table.weights()  # the counts
        return table.count.astype(np.float64)

    def squared_weights(self, table: Table) -> FloatArray:
        """Each row's count times its squared weight, the weight of a variance term."""
        if WEIGHT not in table.columns:
            return table.weights()  # the counts
        found = self._squared.get(id(table))
        if found is None or found[0] is not table:
            if WEIGHT_SQUARED in table.columns:  # weight sums: the sum of the squares is kept
                squared = table.count.astype(np.float64) * table.columns[WEIGHT_SQUARED]
            else:
                squared = table.count.astype(np.float64) * table.columns[WEIGHT] ** 2
            found = self._squared[id(table)] = (table, squared)
        return found[1]

    @functools.cached_property
    def squared_total(self) -> FloatArray:
        """The square of each group's total weight."""
        return self.total * self.total


def stacked(size: int, terms: Sequence[Callable[[], FloatArray]]) -> FloatArray:
    """The terms side by side, as the columns of one (size x terms) array.

    Each term is evaluated as it is copied in, so only one term's array exists at a time.
    """
    columns = np.empty((size, len(terms)))
    for j, term in enumerate(terms):
        columns[:, j] = term()
    return columns


def index_dtype(largest: int) -> type[np.signedinteger[Any]]:
    """The integer type of indices up to ``largest``: ``int32`` where it fits, else ``int64``.

    scipy.sparse keeps indices in ``int32`` where they fit: a sparse matrix built from such
    indices does not copy them, and they take half the memory.
    """
    return np.int32 if largest < 2**31 - 1 else np.int64


def offsets(values: IntArray, low: int, high: int) -> IntArray:
    """``values - low`` for values in ``[low, high]``, as indices of :func:`index_dtype`.

    ``low`` goes in as an int64 scalar, cast unsafely where the indices are int32: it wraps as
    the values do, so the difference (below 2**31) is exact even for values beyond int32.
    """
    out: IntArray = np.subtract(
        values, np.int64(low), dtype=index_dtype(high - low), casting="unsafe"
    )
    return out


def value_range(values: IntArray) -> tuple[int, int] | None:
    """The least and greatest of integers spread over at most as many values as there are."""
    if not values.size:
        return None
    low, high = int(values.min()), int(values.max())
    return (low, high) if high - low < values.size else None
