r"""Exact sums of float64 weights per table row, in integer limbs: mergeable in any order.

Adding floats rounds, and the rounding depends on the order of the additions, so an accumulator
that summed its weights as floats would give results that depend on how the data were sharded
and merged. Every finite float64 :math:`w \ge 0` is an integer multiple of :math:`2^{-1126}`
(:math:`w = M \, 2^{E}` with an integer :math:`M < 2^{53}` and :math:`E \ge -1126`), so the sum
of any number of them is an integer multiple of :math:`2^{-1126}` too. This module keeps that
integer, per row of a table's key columns, as base-:math:`2^{32}` digits ("limbs"):

.. math::

    S = 2^{-1126} \sum_k d_k \, 2^{32 k}, \qquad 0 < d_k < 2^{32}.

A table of limbs has the key columns, a ``limb`` column :math:`k` and the digit :math:`d_k` as
its ``count``; adding tables adds digits as ``int64`` (exact) and then carries, so the result is
the same integer, in the same canonical form (digits in :math:`(0, 2^{32})`, sorted rows), in
whatever order and grouping the parts were added. At most :math:`\lceil 2160/32 \rceil` limbs
exist per row, so the state stays bounded by the number of distinct keys, whatever the weights.

:func:`rounded_sums` turns each row's exact sum into the float64 nearest to it (ties to even):
the correctly rounded sum, as :func:`math.fsum` gives.

:func:`~rankstats.evaluate` needs only those rounded sums, not a mergeable state, so
:func:`exactly_weighted` takes them from :func:`row_sums`: the same digits added on a dense grid
(rows by limbs) with no sort, the same numbers: the sums of a candidate table of :math:`10^5`
tasks take about 1 ms where sorting the limbs' codes took 16 to 18 ms, and the weighted default
table about 20 ms where it took 65 (``python benchmarks/run.py weighted``).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from rankstats.arrays import FloatArray, IntArray
from rankstats.evaluation.tables import WEIGHT, WEIGHT_SQUARED, Table, _run_starts, distinct_rows

__all__ = [
    "LIMB",
    "MAX_COUNT",
    "MAX_LIMB",
    "add_limbs",
    "align",
    "exactly_weighted",
    "rounded_sums",
    "row_sums",
    "weigh",
    "weight_limbs",
]

#: the column holding each digit's position :math:`k`
LIMB = "limb"
#: bits per limb
_BITS = 32
#: a grid position's limb is the position shifted right by this (2**5 = _BITS)
_LIMB_SHIFT = 5
_MASK = (1 << _BITS) - 1
#: the highest limb a table of limbs may hold (a float64 reaches limb 67, carries of sums of up to
#: 2**63 of them a few more); states are checked against it
MAX_LIMB = 80
#: the limb is packed with its row as ``row * _LIMBS + limb``: room for MAX_LIMB and its carries
_LIMBS = 96
#: the exponent of the unit of the fixed-point grid: every float64 is a multiple of 2**-1126
_OFFSET = 1126
#: the largest count of one row in one call of :func:`weight_limbs` (rows are added in chunks
#: whose counts add up to less than twice this, so that digits times counts stay below 2**63)
MAX_COUNT = 2**30

AnyArray = npt.NDArray[Any]


def weight_limbs(keys: Mapping[str, AnyArray], weights: FloatArray, count: IntArray) -> Table:
    """The exact sums of ``count * weights`` per distinct row of ``keys``, as a table of limbs.

    Parameters
    ----------
    keys : mapping of str to numpy.ndarray of shape (n,)
        The key columns.
    weights : numpy.ndarray of float64, shape (n,)
        Finite, non-negative weights.
    count : numpy.ndarray of int64, shape (n,)
        How many times each row occurs (each at most ``2**30``).

    Examples
    --------
    >>> table = weight_limbs({"rank": np.array([1, 1, 2])}, np.array([0.1, 0.2, 0.3]),
    ...                      np.ones(3, dtype=np.int64))
    >>> rows, sums = rounded_sums(table, ["rank"])
    >>> rows["rank"].tolist(), sums.tolist()
    ([1, 2], [0.30000000000000004, 0.3])
    """
    if count.size and int(count.max()) > MAX_COUNT:
        raise ValueError(f"a row occurs more than {MAX_COUNT} times in one batch; split the batch")
    # the digits of one (row, limb) are added as int64: each is below 2**32 * count, so the counts
    # added at once must stay below 2**31; chunks of rows whose counts add up to less do
    chunk = (np.cumsum(count) - count) // MAX_COUNT
    if count.size and chunk[-1] > 0:
        starts = np.flatnonzero(np.diff(chunk, prepend=-1))
        bounds = [*starts.tolist(), count.size]
        return add_limbs(
            [
                weight_limbs(
                    {name: column[a:b] for name, column in keys.items()}, weights[a:b], count[a:b]
                )
                for a, b in itertools.pairwise(bounds)
            ]
        )
    if not count.size:
        columns = {name: np.asarray(column)[:0] for name, column in keys.items()}
        return Table({**columns, LIMB: np.zeros(0, dtype=np.int64)}, np.zeros(0, dtype=np.int64))
    rows, index = distinct_rows(keys)
    limb, pieces = _limb_pieces(weights)
    code = index * _LIMBS + limb
    codes = np.concatenate([code, code + 1, code + 2])
    values = np.concatenate(pieces) * np.tile(count, len(pieces))
    keep = values != 0
    return _limb_table(rows, codes[keep], values[keep])


def _limb_pieces(weights: FloatArray) -> tuple[IntArray, tuple[IntArray, IntArray, IntArray]]:
    r"""Each weight's lowest limb and its digits in that limb and the two above (all exact).

    A weight :math:`w = M 2^E` (an integer :math:`M < 2^{53}`, also for subnormals) is the
    integer :math:`M 2^{p}` on the grid, :math:`p = E + 1126`, whose bits fall in the limbs
    :math:`\lfloor p / 32 \rfloor` and the two above. A weight of zero has digits of zero.
    """
    mantissa, exponent = np.frexp(weights)
    mantissa *= 2.0**53
    digits = mantissa.astype(np.int64)
    del mantissa
    # p >= 0 for every float64 (E >= -1073): the limb and the shift by a shift and a mask, in
    # place where possible (the arrays of the weights' size, each faulted in, are the cost)
    position = exponent.astype(np.int64)
    position += _OFFSET - 53
    limb = position >> _LIMB_SHIFT
    shift = np.bitwise_and(position, _BITS - 1, out=position)
    # the lowest limb's digit: the low 32 bits of M << shift (the shift wraps in int64 above
    # bit 63, which the mask drops); the rest: M >> (32 - shift)
    low = np.left_shift(digits, shift)
    low &= _MASK
    np.subtract(_BITS, shift, out=shift)
    rest = np.right_shift(digits, shift, out=digits)
    top = rest >> _BITS
    rest &= _MASK
    return limb, (low, rest, top)


def _limb_table(rows: Mapping[str, AnyArray], codes: IntArray, digits: IntArray) -> Table:
    """The canonical table of limbs of digits at codes ``row * _LIMBS + limb`` of ``rows``.

    One integer per (distinct row, limb): sorting it sorts by the rows' keys, then the limb.
    Digits of equal codes are added, carried into [1, 2**32), and zeros dropped.
    """
    codes, digits = _carry_codes(*_sum_by_code(codes, digits))
    row, limbs = np.divmod(codes, _LIMBS)
    return Table({**{name: c[row] for name, c in rows.items()}, LIMB: limbs}, digits)


def _sum_by_code(codes: IntArray, values: IntArray) -> tuple[IntArray, IntArray]:
    """The distinct codes, sorted, and the sum of the values of each (int64, exact)."""
    if not codes.size:
        return codes, values
    order = np.argsort(codes)  # integer sums: the order within a code does not matter
    codes = codes[order]
    starts = _run_starts(codes)
    return codes[starts], np.add.reduceat(values[order], starts)


def _carry_codes(codes: IntArray, digits: IntArray) -> tuple[IntArray, IntArray]:
    """Bring every digit into [1, 2**32) by carrying into the next limb (and drop zeros)."""
    while True:
        carries = digits >> _BITS
        if not carries.any():
            keep = digits != 0
            return codes[keep], digits[keep]
        has = carries != 0
        codes, digits = _sum_by_code(
            np.concatenate([codes, codes[has] + 1]),
            np.concatenate([digits & _MASK, carries[has]]),
        )


def add_limbs(tables: Sequence[Table]) -> Table:
    """The limbs of the sums of several tables of limbs (with the same key columns)."""
    names = [name for name in tables[0].columns if name != LIMB]
    keys = {name: np.concatenate([t.columns[name] for t in tables]) for name in names}
    rows, index = distinct_rows(keys)
    limbs = np.concatenate([t.columns[LIMB] for t in tables])
    digits = np.concatenate([t.count for t in tables])
    return _limb_table(rows, index * _LIMBS + limbs, digits)


def rounded_sums(table: Table, names: Sequence[str]) -> tuple[dict[str, AnyArray], FloatArray]:
    """The distinct key rows of a table of limbs and the float64 nearest each row's exact sum.

    Rows are in the table's (sorted) order; a row whose sum is zero has no limbs, so it is not
    listed (see :func:`align`).
    """
    size = len(table)
    if size == 0:
        return {name: table.columns[name][:0] for name in names}, np.zeros(0)
    new = np.zeros(size, dtype=np.bool_)
    new[0] = True
    for name in names:
        column = table.columns[name]
        new[1:] |= column[1:] != column[:-1]
    starts = np.flatnonzero(new)
    sums = _round_rows(table.columns[LIMB], table.count, starts)
    return {name: table.columns[name][starts] for name in names}, sums


def _round_rows(limbs: IntArray, digits: IntArray, starts: IntArray) -> FloatArray:
    """The float64 nearest the exact sum of each row of canonical limbs (rows from ``starts``).

    Rows of up to three limbs, nearly all, are rounded vectorised (:func:`_rounded_short`); the
    others in Python integers, whose division is correctly rounded.
    """
    sums, done = _rounded_short(limbs, digits, starts)
    ends = [*starts[1:].tolist(), limbs.size]
    scale = 1 << _OFFSET
    too_large = ValueError(
        "the weights of one cell add up to more than the largest float64 (1.8e308); "
        "scale the weights down"
    )
    for index in np.flatnonzero(~done).tolist():
        start, end = int(starts[index]), ends[index]
        total = 0
        for position in range(start, end):
            total += int(digits[position]) << (_BITS * int(limbs[position]))
        try:
            sums[index] = total / scale  # int / int is correctly rounded in Python
        except OverflowError:  # Python's division raises where numpy's gives inf
            raise too_large from None
    if not np.isfinite(sums).all():
        raise too_large
    return sums


#: the least exponent of a normal float64: results below are rounded in Python instead (scaling
#: a rounded value into the subnormal range would round it twice)
_LEAST_NORMAL = -1022


def _rounded_short(
    limbs: IntArray, digits: IntArray, starts: IntArray
) -> tuple[FloatArray, npt.NDArray[np.bool_]]:
    r"""Correctly rounded sums of the rows of one, two or three limbs, and which rows those are.

    With the row's lowest limb :math:`k_0` and :math:`u = 2^{32 k_0 - 1126}`, the sum is
    :math:`u (d_0 + 2^{32} d_1 + \dots)`. One limb: :math:`d_0 u` is exact. Two limbs
    :math:`k_0 < k_1`: :math:`a = d_1 2^{32 (k_1 - k_0)}` is exact and the float sum
    :math:`a + d_0` of two exact values is correctly rounded; from :math:`k_1 - k_0 \ge 3` on,
    :math:`d_0 < 2^{32}` is below half an ulp of :math:`a \ge 2^{96}`, so the sum is :math:`a`.
    Three consecutive limbs: :math:`T = 2^{32} d_2 + d_1` is an exact integer; below
    :math:`2^{53}` it is an exact float and :math:`2^{32} T + d_0` rounds once as above; from
    :math:`2^{54}` on, :math:`d_0` only decides whether the discarded bits are zero, so
    :math:`T` with its last bit set when :math:`d_0 \ne 0` (rounding to odd, at least two bits
    below the kept ones) converts to the same float. Multiplying by :math:`u` is exact while the
    result stays normal; other rows are left to the caller (``done`` false).
    """
    rows = starts.size
    ends = np.append(starts[1:], limbs.size)
    length = ends - starts
    sums = np.zeros(rows)
    done = np.zeros(rows, dtype=np.bool_)
    low = limbs[starts]
    d0 = digits[starts].astype(np.float64)
    value = np.full(rows, np.nan)
    # the result is value * 2**(32 * limb - offset)
    limb = low.copy()
    one = length == 1
    value[one] = d0[one]
    two = np.flatnonzero(length == 2)
    gap = limbs[starts[two] + 1] - low[two]
    d1 = digits[starts[two] + 1].astype(np.float64)
    far = gap >= 3
    value[two] = np.where(far, d1, np.ldexp(d1, 32 * np.minimum(gap, 2)) + d0[two])
    limb[two[far]] += gap[far]
    three = np.flatnonzero(
        (length == 3) & (limbs[np.minimum(starts + 2, limbs.size - 1)] == low + 2)
    )
    three = three[limbs[starts[three] + 1] == low[three] + 1]
    top = digits[starts[three] + 2]
    exact = top < 2**31  # T < 2**63 converts to float64 correctly rounded
    three, top = three[exact], top[exact]
    whole = (top << 32) | digits[starts[three] + 1]
    small = whole < 2**53
    big = whole >= 2**54
    sticky = (digits[starts[three]] != 0).astype(np.int64)
    value[three[small]] = np.ldexp(whole[small].astype(np.float64), 32) + d0[three[small]]
    value[three[big]] = np.ldexp((whole[big] | sticky[big]).astype(np.float64), 32)
    ready = np.isfinite(value)
    with np.errstate(over="ignore"):
        scaled = np.ldexp(value[ready], 32 * limb[ready] - _OFFSET)
    mantissa_exponent = np.frexp(scaled)[1]
    normal = (mantissa_exponent - 1 >= _LEAST_NORMAL) | (scaled == 0)
    index = np.flatnonzero(ready)[normal]
    sums[index] = scaled[normal]
    done[index] = True
    return sums, done


def align(
    rows: Mapping[str, AnyArray], values: FloatArray, target: Mapping[str, AnyArray]
) -> FloatArray:
    """Spread ``values`` of some ``rows`` onto all rows of ``target`` (sorted alike), 0 elsewhere.

    Every row of ``rows`` must be a row of ``target``; both are sorted by the same key columns.
    """
    names = list(target)
    size = next(iter(target.values())).size
    result = np.zeros(size)
    if values.size == 0:
        return result
    tag = np.concatenate([np.zeros(size, dtype=np.int64), np.ones(values.size, dtype=np.int64)])
    combined = [np.concatenate([target[name], rows[name]]) for name in names]
    order = np.lexsort((tag, *reversed(combined)))
    # each row of ``rows`` sorts right after its equal row of ``target``
    found = np.flatnonzero(tag[order] == 1)
    result[order[found - 1]] = values[order[found] - size]
    return result


def weigh(table: Table, limbs: Table, squared: Table | None = None) -> Table:
    """The rows of ``table``, each once, weighing the float64 nearest its exact sum in ``limbs``.

    ``limbs`` holds the exact weight sums of rows of ``table`` (those missing weigh zero);
    ``squared``, where given, the exact sums of the squared weights, which go into a
    ``weight_squared`` column (a candidate table that keeps weight sums). The result has a
    ``weight`` column and a count of one per row: the tables that
    :func:`~rankstats.evaluation.evaluate.compute_results` takes for weighted input.
    """
    names = list(table.columns)
    rows, values = rounded_sums(limbs, names)
    columns = {**table.columns, WEIGHT: align(rows, values, table.columns)}
    if squared is not None:
        rows, values = rounded_sums(squared, names)
        columns[WEIGHT_SQUARED] = align(rows, values, table.columns)
    return Table(columns, np.ones(len(table), dtype=np.int64))


#: :func:`row_sums` adds the digits on a dense grid of at most this many limbs per row (the
#: weights' limbs, two above the highest, one for the carries): weights within a factor of
#: about 2**380 of each other; wider spreads go through the sorted limbs of :func:`weight_limbs`
_DENSE_LIMBS = 16


def row_sums(index: IntArray, size: int, weights: FloatArray) -> FloatArray:
    """The float64 nearest the exact sum of the weights of each row (``index[i]``: ``i``'s row).

    The same numbers as :func:`weight_limbs` and :func:`rounded_sums` give (each sum correctly
    rounded, ties to even), without sorting. A row of one weight sums to that weight (a zero of
    either sign to 0.0), taken directly where such rows hold a quarter of the weights or more
    (many groups). The other rows' weights have their three digits added into a dense
    grid of ``int64`` (rows by limbs, from the lowest limb any weight reaches) by
    :func:`numpy.add.at`, exact while a row holds fewer than :math:`2^{31}` weights, then carried
    into :math:`[0, 2^{32})` and rounded as :func:`rounded_sums` rounds the limbs of a table.
    Weights spread over more than :data:`_DENSE_LIMBS` limbs take the sorted limbs instead.

    Parameters
    ----------
    index : numpy.ndarray of int64, shape (n,)
        The row of each weight, in ``0..size - 1``.
    size : int
        The number of rows.
    weights : numpy.ndarray of float64, shape (n,)
        Finite, non-negative weights.

    Returns
    -------
    numpy.ndarray of float64, shape (size,)
        Each row's sum (0 for a row without weights).

    Examples
    --------
    >>> row_sums(np.array([1, 0, 1]), 3, np.array([0.1, 0.5, 0.2])).tolist()
    [0.5, 0.30000000000000004, 0.0]
    """
    held = np.bincount(index, minlength=size)
    if 4 * int(np.count_nonzero(held == 1)) < index.size:
        return _grid_sums(index, size, weights)  # few rows of one weight: not worth the split
    sums = np.zeros(size)
    alone = held[index] == 1
    sums[index[alone]] = weights[alone] + 0.0  # -0.0 + 0.0 is 0.0, as a sum of no limbs
    if not alone.all():
        shared = held > 1
        rest = ~alone
        position = np.cumsum(shared) - 1  # each row of several weights among those rows
        sums[shared] = _grid_sums(position[index[rest]], int(position[-1]) + 1, weights[rest])
    return sums


def _grid_sums(index: IntArray, size: int, weights: FloatArray) -> FloatArray:
    """:func:`row_sums` on the dense grid of limbs (or the sorted limbs: wide spreads)."""
    sums = np.zeros(size)
    live = weights > 0.0
    if not np.any(live):
        return sums
    limb, pieces = _limb_pieces(weights)
    lowest = int(limb[live].min())
    width = int(limb[live].max()) - lowest + 4
    if width > _DENSE_LIMBS or weights.size >= 2**31:
        table = weight_limbs({"row": index}, weights, np.ones(weights.size, dtype=np.int64))
        rows, found = rounded_sums(table, ["row"])
        sums[rows["row"]] = found
        return sums
    cell = index * width + np.where(live, limb - lowest, 0)
    flat: IntArray = np.zeros(size * width, dtype=np.int64)
    for k, piece in enumerate(pieces):
        # each digit is below 2**32 and a row has fewer than 2**31 of them: exact in int64
        np.add.at(flat, cell + k, piece)
    grid = flat.reshape(size, width)
    for k in range(width - 1):
        grid[:, k + 1] += grid[:, k] >> _BITS
        grid[:, k] &= _MASK
    # row-major: rows ascending, each row's limbs ascending (a table of limbs' canonical order)
    held, column = np.nonzero(grid)
    starts = _run_starts(held)
    sums[held[starts]] = _round_rows(column + lowest, grid[held, column], starts)
    return sums


def exactly_weighted(
    keys: Mapping[str, AnyArray], weights: FloatArray, *, squares: bool = False
) -> Table:
    """The distinct rows of ``keys``, each weighing the correctly rounded sum of its weights.

    The weight of a row does not depend on the order of the input, so weighted
    :func:`~rankstats.evaluate` builds the same tables as an accumulator fed the same tasks in
    any shards and order, and gives the same results to the last bit. With ``squares``, the sum
    of the squared weights (each square rounded once, ``weights * weights``) too, in a
    ``weight_squared`` column.

    Examples
    --------
    >>> table = exactly_weighted({"rank": np.array([2, 1, 2])}, np.array([0.1, 0.5, 0.2]))
    >>> table.columns["rank"].tolist(), table.columns["weight"].tolist()
    ([1, 2], [0.5, 0.30000000000000004])
    """
    count = np.ones(weights.size, dtype=np.int64)
    table = Table.build(dict(keys), count)
    # the same distinct rows in the same (sorted) order: row i of the table is row i here
    _, index = distinct_rows(keys)
    columns = {**table.columns, WEIGHT: row_sums(index, len(table), weights)}
    if squares:
        columns[WEIGHT_SQUARED] = row_sums(index, len(table), weights * weights)
    return Table(columns, np.ones(len(table), dtype=np.int64))
