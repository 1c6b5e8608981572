"""Compressed tables: the integer paths of ``Table.build`` against a lexicographic sort."""

from __future__ import annotations

import numpy as np
import pytest

from rankstats.evaluation.tables import Table, group_sum


def _reference(
    columns: dict[str, np.ndarray], count: np.ndarray
) -> tuple[list[list[int]], list[int]]:
    keys, (summed,) = group_sum(list(columns.values()), [count])
    return [k.tolist() for k in keys], summed.tolist()


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize(
    "largest_count",
    [
        None,  # one each: a plain sort of the combined key
        1,
        7,
        2**40,  # counts in the low bits of a combined key
        2**51,  # too wide to pack next to the key (13 bits): the indirect sort
    ],
)
def test_build_matches_lexicographic_sort(seed: int, largest_count: int | None) -> None:
    rng = np.random.default_rng(seed)
    size = int(rng.integers(1, 400))
    columns = {
        "group": rng.integers(0, 5, size=size),
        "optimistic": rng.integers(-3, 40, size=size),
        "pessimistic": rng.integers(1, 1_000_000, size=size) // 50_000,
    }
    if largest_count is None:
        count = np.ones(size, dtype=np.int64)
        table = Table.build(columns)
    else:
        count = rng.integers(0, largest_count, size=size, endpoint=True).astype(np.int64)
        table = Table.build(columns, count)
    keys, counts = _reference(columns, count)
    assert [table.columns[name].tolist() for name in columns] == keys
    assert table.count.tolist() == counts
    assert table.count.dtype == np.int64


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize(
    ("low", "spread", "narrowed"),
    [
        (1, 40, True),
        (2**30 - 41, 40, True),  # the largest values that fit
        (2**30 - 40, 40, False),  # a value of 2**30: the sum of two would not fit in int32
        (-(2**30), 40, True),
        (-(2**30) - 1, 40, False),
        (1, 2**20, False),  # the rows take more than 31 bits
    ],
)
def test_narrow_build(seed: int, low: int, spread: int, narrowed: bool) -> None:
    """``narrow`` gives int32 columns after the first (and counts) where they fit, equal rows."""
    rng = np.random.default_rng(seed)
    size = int(rng.integers(1, 400))
    columns = {
        "group": rng.integers(0, 5, size=size),
        "optimistic": low + rng.integers(0, spread, size=size),
        "pessimistic": low + rng.integers(0, spread, size=size, endpoint=True),
    }
    columns["optimistic"][0], columns["pessimistic"][0] = low, low + spread
    wide = Table.build(columns)
    table = Table.build(columns, narrow=True)
    assert [c.tolist() for c in table.columns.values()] == [
        c.tolist() for c in wide.columns.values()
    ]
    assert table.count.tolist() == wide.count.tolist()
    dtype = np.int32 if narrowed else np.int64
    assert table.columns["group"].dtype == np.int64
    assert table.columns["optimistic"].dtype == dtype
    assert table.columns["pessimistic"].dtype == dtype
    assert table.count.dtype == dtype


def test_build_keeps_its_input() -> None:
    columns = {"group": np.array([1, 0, 1]), "rank": np.array([2, 2, 2])}
    count = np.array([3, 1, 2])
    copies = {name: c.copy() for name, c in columns.items()}
    table = Table.build(columns, count)
    assert table.columns["group"].tolist() == [0, 1]
    assert table.count.tolist() == [1, 5]
    assert all(np.array_equal(columns[name], copies[name]) for name in columns)
    assert count.tolist() == [3, 1, 2]


@pytest.mark.parametrize("counted", [False, True])
def test_build_of_wide_keys(counted: bool) -> None:
    # keys too wide to hold a count next to them (but still one combined integer)
    rng = np.random.default_rng(3)
    size = 300
    columns = {
        "group": rng.integers(0, 3, size=size),
        "rank": rng.integers(0, 4, size=size) * 2**50 + rng.integers(0, 2, size=size),
    }
    count = rng.integers(0, 2**20, size=size) if counted else np.ones(size, dtype=np.int64)
    table = Table.build(columns, count if counted else None)
    keys, counts = _reference(columns, count)
    assert [table.columns[name].tolist() for name in columns] == keys
    assert table.count.tolist() == counts


def test_build_of_few_distinct_rows() -> None:
    rng = np.random.default_rng(4)
    columns = {"group": rng.integers(0, 3, size=500), "rank": rng.integers(-2, 2, size=500)}
    table = Table.build(columns)
    keys, counts = _reference(columns, np.ones(500, dtype=np.int64))
    assert [table.columns[name].tolist() for name in columns] == keys
    assert table.count.tolist() == counts


def test_half_integer_columns_take_the_integer_path_with_the_same_result() -> None:
    rng = np.random.default_rng(0)
    n = 5000
    groups = rng.integers(0, 300, size=n)
    ranks = rng.integers(2, 400, size=n) / 2.0  # realistic ranks: halves
    count = rng.integers(1, 4, size=n)
    fast = Table.build({"group": groups, "rank": ranks}, count)
    keys, (summed,) = group_sum([groups, ranks], [count])  # the general path
    assert fast.columns["rank"].dtype == np.float64
    np.testing.assert_array_equal(fast.columns["group"], keys[0])
    np.testing.assert_array_equal(fast.columns["rank"], keys[1])
    np.testing.assert_array_equal(fast.count, summed)
    # a column of other fractions is not taken for halves
    thirds = Table.build({"rank": np.array([1 / 3, 1 / 3, 0.5])})
    assert thirds.columns["rank"].tolist() == [1 / 3, 0.5]
    assert thirds.count.tolist() == [2, 1]


@pytest.mark.parametrize("seed", range(4))
def test_float_key_columns_take_the_integer_path_with_the_same_result(seed: int) -> None:
    """Task weights as a key column: coded by their rank among the distinct weights."""
    rng = np.random.default_rng(seed)
    n = 3000
    columns = {
        "group": rng.integers(0, 40, size=n),
        "optimistic": rng.integers(1, 30, size=n),
        "weight": rng.choice([0.0, 1e-300, 0.1, 1 / 3, 2.5, 1e300], size=n)
        * rng.integers(1, 3, size=n),
    }
    if seed % 2:
        columns["pessimistic"] = columns["optimistic"] + rng.integers(0, 2, size=n)
    count = rng.integers(1, 5, size=n) if seed >= 2 else np.ones(n, dtype=np.int64)
    fast = Table.build(columns, count if seed >= 2 else None)
    keys, (summed,) = group_sum(list(columns.values()), [count])  # an indirect sort
    for name, key in zip(columns, keys, strict=True):
        np.testing.assert_array_equal(fast.columns[name], key)
        assert fast.columns[name].dtype == key.dtype
    np.testing.assert_array_equal(fast.count, summed)
    # a negative zero is taken as zero: one row
    zeros = Table.build({"weight": np.array([-0.0, 0.0, -0.0])})
    assert zeros.count.tolist() == [3]
    assert str(zeros.columns["weight"][0]) == "0.0"
    # also where the keys are too wide to pack (an indirect sort)
    wide = Table.build({"key": np.array([0, 2**62, 0]), "weight": np.array([-0.0, 1.0, 0.0])})
    assert wide.count.tolist() == [2, 1]
    assert [str(w) for w in wide.columns["weight"]] == ["0.0", "1.0"]


@pytest.mark.parametrize("total_bits", [30, 31, 32, 33])
@pytest.mark.parametrize("counted", [False, True])
def test_build_across_the_32_bit_packing_boundary(total_bits: int, counted: bool) -> None:
    """Keys packed in 31 bits or fewer sort as int32; the columns come back as exact int64."""
    rng = np.random.default_rng(total_bits)
    size = 400
    low = 10**12  # far above 2**31: only the differences are packed
    first_bits = total_bits - 16
    columns = {
        "group": rng.integers(0, 2**first_bits, size=size),
        "num_candidates": low + rng.integers(0, 2**16, size=size),
    }
    columns["group"][:2] = [0, 2**first_bits - 1]  # the widths the case is about
    columns["num_candidates"][:2] = [low, low + 2**16 - 1]
    count = rng.integers(1, 2**20, size=size) if counted else np.ones(size, dtype=np.int64)
    table = Table.build(columns, count if counted else None)
    keys, counts = _reference(columns, count)
    assert [table.columns[name].tolist() for name in columns] == keys
    assert all(table.columns[name].dtype == np.int64 for name in columns)
    assert table.count.tolist() == counts


@pytest.mark.parametrize("counted", [False, True])
@pytest.mark.parametrize("close", [True, False])
def test_build_packs_a_column_as_its_difference_from_the_one_before(
    counted: bool, close: bool
) -> None:
    """(group, optimistic, pessimistic) rows: the pessimistic rank as its few tied candidates.

    Packed as the difference from the optimistic rank (2 bits, not 14) where that is narrower
    (``close``), not where it is wider (independent columns); the rows, their order and counts
    are the reference's either way, and so are the distinct rows and each row's index.
    """
    from rankstats.evaluation import tables

    rng = np.random.default_rng(int(close))
    size = 3000
    optimistic = rng.integers(1, 2**14, size=size)
    pessimistic = optimistic + rng.integers(0, 4, size=size)
    if not close:
        pessimistic = rng.permutation(pessimistic)
    columns = {
        "group": rng.integers(0, 2**14, size=size),
        "optimistic": optimistic,
        "pessimistic": pessimistic,
    }
    columns["group"][:2] = [0, 2**14 - 1]
    repeated = {name: np.concatenate([c, c[:500]]) for name, c in columns.items()}
    packed = tables._pack(list(repeated.values()))
    assert packed is not None
    assert packed[3] == [False, False, close]
    assert packed[0].dtype == (np.int32 if close else np.int64)
    count = rng.integers(1, 9, size=size + 500) if counted else np.ones(size + 500, dtype=np.int64)
    table = Table.build(repeated, count if counted else None)
    keys, counts = _reference(repeated, count)
    assert [table.columns[name].tolist() for name in repeated] == keys
    assert all(table.columns[name].dtype == np.int64 for name in repeated)
    assert table.count.tolist() == counts
    rows, index = tables.distinct_rows(repeated)
    assert [rows[name].tolist() for name in repeated] == keys
    for name in repeated:
        np.testing.assert_array_equal(rows[name][index], repeated[name])


def test_build_does_not_difference_columns_whose_difference_could_overflow() -> None:
    columns = {
        "a": np.array([-(2**62), -(2**62), 0], dtype=np.int64),
        "b": np.array([2**62, 2**62, 2**62 - 1], dtype=np.int64),
    }
    table = Table.build(columns)
    keys, counts = _reference(columns, np.ones(3, dtype=np.int64))
    assert [table.columns[name].tolist() for name in columns] == keys
    assert table.count.tolist() == counts


def test_narrow_columns_beyond_int32_pack_exactly() -> None:
    """Columns far beyond int32 but with narrow ranges take the 32-bit keys, exactly.

    The least value had gone into the int32 subtraction as a Python int and raised
    ``OverflowError`` (``evaluate`` with every task at 6e10 candidates).
    """
    big = 59_799_868_036
    columns = {
        "a": np.array([big + 1, big, big + 1, big]),
        "b": np.array([3 * 10**9 + 2, 3 * 10**9, 3 * 10**9 + 2, 3 * 10**9 + 1]),
    }
    table = Table.build(columns)
    assert table.columns["a"].tolist() == [big, big, big + 1]
    assert table.columns["b"].tolist() == [3 * 10**9, 3 * 10**9 + 1, 3 * 10**9 + 2]
    assert table.count.tolist() == [1, 1, 2]


def test_evaluate_with_counts_beyond_int32() -> None:
    from rankstats import evaluate

    candidates = np.full(3, 59_799_868_036)
    ranks = {
        "optimistic": np.array([5.0, 100.0, 7e9]),
        "pessimistic": np.array([5.0, 101.0, 7e9]),
    }
    results = evaluate(ranks, candidates, metrics=["mr"], rank_types=["optimistic"])
    row = next(r for r in results.rows if r.side == "both")
    assert row.value == pytest.approx((5.0 + 100.0 + 7e9) / 3, rel=1e-15)
