"""The discrete Gauss (Gram) rules of the median null model against exact power sums.

Each rule of ``nu`` nodes on ``0..L-1`` must sum every polynomial of degree below ``2 nu``
exactly; the reference sums come from Bernoulli polynomials in 80-digit arithmetic. The lengths
straddle every tier of the rule tables (computed one by one, tabulated from the interpolant,
summed from the low-degree series, its first three terms far out).
"""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

from rankstats.null import median_rules
from rankstats.null.median_rules import (
    IntegerWindow,
    _gram_rules,
    _nodes_per_piece,
    _piece_nodes,
    _suffix_sum,
    exponential_nodes_per_piece,
    integer_nodes,
    matmul,
)


def _exact_mean(length: int, power: int) -> float:
    r"""``mean_{x=0}^{L-1} ((2x - (L - 1)) / L)^power`` (Faulhaber sums, 80 digits)."""
    with mp.workdps(80):
        big = mp.mpf(length)
        total = mp.mpf(0)
        for i in range(power + 1):
            sums = (mp.bernpoly(i + 1, big) - mp.bernpoly(i + 1, 0)) / (i + 1)
            total += mp.binomial(power, i) * 2**i * (-(big - 1)) ** (power - i) * sums
        return float(total / big**power / big)


def _lengths(nu: int) -> list[int]:
    return [
        nu + 1,
        2 * nu + 1,
        4 * nu,
        4 * nu + 1,
        17 * nu + 3,
        64 * nu,
        64 * nu + 1,
        640 * nu,
        640 * nu + 1,
        10**6 + 7,
        10**12 + 3,
    ]


@pytest.mark.parametrize("nu", [3, 8, 16, 24, 32])
def test_gram_rules_sum_polynomials_exactly(nu: int) -> None:
    lengths = np.array(_lengths(nu), dtype=np.int64)
    z, w = _gram_rules(lengths, nu)
    assert np.all(np.diff(z, axis=1) > 0)
    assert np.all(w > 0)
    for row, length in enumerate(lengths.tolist()):
        # nodes x_j = (L - 1) / 2 + L z_j, so (2 x_j - (L - 1)) / L = 2 z_j
        for power in range(0, 2 * nu, 3):
            got = float(np.sum(w[row] * (2.0 * z[row]) ** power))
            assert got == pytest.approx(_exact_mean(length, power), rel=1e-13, abs=1e-15), (
                length,
                power,
            )


@pytest.mark.parametrize("nu", [3, 16])
def test_gram_rules_of_long_pieces_only(nu: int) -> None:
    """Lengths all beyond ten times the table (the kernel sums' pieces) take a shorter path:
    the same rules, to the bit, as with a tabulated length among them."""
    lengths = np.array([640 * nu + 1, 10**6 + 7, 10**12 + 3], dtype=np.int64)
    z, w = _gram_rules(lengths, nu)
    z_mixed, w_mixed = _gram_rules(np.append(lengths, nu + 1), nu)
    assert np.array_equal(z, z_mixed[:-1])
    assert np.array_equal(w, w_mixed[:-1])
    for row, length in enumerate(lengths.tolist()):
        got = float(np.sum(w[row] * (2.0 * z[row]) ** 4))
        assert got == pytest.approx(_exact_mean(length, 4), rel=1e-13)


def test_gram_rules_repeat_and_order() -> None:
    """Repeated and unsorted lengths get the same rule each time, in the order asked."""
    lengths = np.array([10**9, 40, 10**9, 7000, 40], dtype=np.int64)
    z, w = _gram_rules(lengths, 16)
    single = [_gram_rules(np.array([length]), 16) for length in lengths.tolist()]
    for row, (z1, w1) in enumerate(single):
        assert np.array_equal(z[row], z1[0])
        assert np.array_equal(w[row], w1[0])


def _exact_sum(lo: int, length: int, power: int) -> float:
    """``sum_{x=lo}^{lo+length-1} ((x - lo) / (length - 1))^power``, exactly (Faulhaber)."""
    with mp.workdps(60):
        top = mp.mpf(length)
        total = (mp.bernpoly(power + 1, top) - mp.bernpoly(power + 1, 0)) / (power + 1)
        return float(total / mp.mpf(length - 1) ** power)


def test_integer_rules_of_several_node_counts() -> None:
    """Rules of different node counts formed in one batch: each the same, to the bit, as formed
    alone, with integer nodes (pushed apart on short pieces), exact to degree ``nu - 1``."""
    nus = np.array([8, 32, 8, 27, 13, 32, 26, 9], dtype=np.int64)
    lengths = np.array([17, 65, 10**6 + 3, 55, 27, 10**9 + 1, 400, 19], dtype=np.int64)
    starts = np.arange(lengths.size, dtype=np.int64) * 10**10 + 1
    with median_rules._GRAM_LOCK:
        median_rules._INTEGER_CACHE.clear()
    x, w = median_rules._integer_rules(starts, lengths, nus)
    offset = 0
    for start, length, nu in zip(starts.tolist(), lengths.tolist(), nus.tolist(), strict=True):
        with median_rules._GRAM_LOCK:
            median_rules._INTEGER_CACHE.clear()
        x1, w1 = median_rules._integer_rules(np.array([start]), np.array([length]), np.array([nu]))
        assert np.array_equal(x[offset : offset + nu], x1)
        assert np.array_equal(w[offset : offset + nu], w1)
        assert np.all(x1 == np.floor(x1))
        assert np.all(np.diff(x1) >= 1.0)
        assert x1[0] >= start
        assert x1[-1] <= start + length - 1
        scaled = (x1 - start) / (length - 1)
        for power in range(nu):
            got = float(np.sum(w1 * scaled**power))
            assert got == pytest.approx(_exact_sum(start, length, power), rel=1e-9)
        offset += nu
    assert offset == x.size


@pytest.mark.parametrize(
    ("lo", "hi", "centre", "width"),
    [
        (1_000, 400_000, 200_000.0, 40_000.0),
        (10**9, 10**9 + 5 * 10**7, 10**9 + 2.5 * 10**7, 4 * 10**6),
        (300, 9_000, 4_000.0, 900.0),
    ],
)
def test_integer_nodes_with_a_scale(lo: int, hi: int, centre: float, width: float) -> None:
    """Integer rules with as many nodes as the scale asks: a smooth sum to 1e-14.

    The summand is a Gaussian of the window's width times ``1/x`` (the inverse median's weights);
    the reference sums every integer (positive terms, numpy's pairwise sums: about 1e-16).
    """
    rng = np.random.default_rng(lo)
    breaks = np.sort(rng.integers(lo, hi, size=30))
    scale = 2.0 * (hi - lo + 1) / 48
    piece = -(-(hi - lo + 1) // 48)
    x, w = integer_nodes(lo, hi, breaks, piece, scale)
    assert np.all(x == np.floor(x))
    default_x, _ = integer_nodes(lo, hi, breaks, piece)
    assert x.size < default_x.size  # fewer nodes than the fixed 32 per panel
    # the count a comparison of costs reads, without forming the rules
    assert IntegerWindow(lo, hi, breaks, piece, scale).size() == x.size
    assert IntegerWindow(lo, hi, breaks, piece).size() == default_x.size

    def f(values: np.ndarray) -> np.ndarray:
        return np.exp(-(((values - centre) / width) ** 2)) / values

    got = float(np.sum(w * f(x)))
    total = 0.0
    for start in range(lo, hi + 1, 1_000_000):
        block = np.arange(start, min(start + 1_000_000, hi + 1), dtype=np.float64)
        total += float(np.sum(f(block)))
    assert got == pytest.approx(total, rel=1e-14)


@pytest.mark.parametrize("scale", [7.3, 55.0, 1_234.5, 65_432.1])
@pytest.mark.parametrize("scales_long", [0.3, 1.0, 2.0, 4.0])
def test_exponential_nodes_sum_a_decay(scale: float, scales_long: float) -> None:
    """The node counts for exponential-like summands: e^(-t/scale) (1 + t/y)^-3 to 1e-15.

    Against every term (numpy's pairwise sums of positive terms); the pieces are as long as the
    gap sums' (up to four decay lengths) and start where the summand is largest or has fallen.
    """
    length = max(int(scales_long * scale), 1)
    y = 50.0 * scale
    for start in (1, int(3 * scale) + 1):
        starts = np.array([start], dtype=np.int64)
        lengths = np.array([length], dtype=np.int64)
        nus = exponential_nodes_per_piece(lengths, np.array([scale]))
        x, w, _ = _piece_nodes(starts, lengths, nu=nus)

        def f(t: np.ndarray) -> np.ndarray:
            return np.exp(-t / scale) * (1.0 + t / y) ** -3

        every = np.arange(start, start + length, dtype=np.float64)
        assert float(np.sum(w * f(x))) == pytest.approx(float(np.sum(f(every))), rel=1e-15)


def test_exponential_nodes_fewer_than_the_pole_model() -> None:
    """Four decay lengths take 11 nodes (the pole model of the single sums asks the most, 16)."""
    lengths = np.array([4_000, 2_000, 400], dtype=np.int64)
    scale = np.full(3, 1_000.0)
    assert exponential_nodes_per_piece(lengths, scale).tolist() == [11, 9, 6]
    assert _nodes_per_piece(lengths, scale).tolist() == [16, 16, 11]


@pytest.mark.parametrize(("rows", "inner", "cols"), [(512, 18, 39), (3, 400, 200), (1, 1, 1)])
def test_matmul_in_row_blocks(rows: int, inner: int, cols: int) -> None:
    """Blocks small enough for one BLAS thread give the product (512 rows: three blocks)."""
    rng = np.random.default_rng(rows)
    a, b = rng.normal(size=(rows, inner)), rng.normal(size=(inner, cols))
    got = matmul(a, b)
    assert got.shape == (rows, cols)
    assert np.allclose(got, a @ b, rtol=1e-14, atol=1e-13)
    blocks = -(-rows // max(1, median_rules._GEMM_ONE_THREAD // (inner * cols)))
    assert blocks == {512: 3, 3: 3, 1: 1}[rows]


def test_suffix_sum_rows_match_one_row_at_a_time() -> None:
    """Each row of a 2-D array is summed as the 1-D vector is, to the bit, and compensated."""
    rng = np.random.default_rng(3)
    values = rng.lognormal(0.0, 3.0, size=(5, 1_000))
    both = _suffix_sum(values)
    assert both.shape == (5, 1_001)
    for row, summed in zip(values, both, strict=True):
        assert np.array_equal(summed, _suffix_sum(row))
        with mp.workdps(40):
            exact = float(mp.fsum(mp.mpf(float(v)) for v in row))
        assert summed[0] == pytest.approx(exact, rel=4e-16)
        assert summed[-1] == 0.0
