"""The few-task path of the median null model (:mod:`rankstats.null.median_small`).

References:

* exact rational arithmetic (power sums) and 50-digit harmonic sums (mpmath) for the family
  ``C = (1,) * j + (c_1, ..., c_k)``, ``j = k`` or ``k - 1``, whose median is ``(1 + Y) / 2`` or
  ``Y`` with ``Y = min(r_1, ..., r_k)``, ``P(Y >= u) = prod (c_i + 1 - u) / c_i``: counts mixing 1,
  small, 1e6, 1e9 and 1e12, where a decomposition that cancels loses digits;
* the trinomial programme at every pair ``x < y`` of ``test_median_null``;
* the same point masses summed at every integer (for the panel rules).
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import mpmath
import numpy as np
import pytest

import rankstats.null.median as median_module
import rankstats.null.median_small as small_module
from rankstats import InverseMedianRank, MedianRank
from rankstats.null.median import inverse_median_moments, median_moments
from rankstats.null.median_small import (
    EVEN_N,
    EVEN_N_VALID,
    SMALL_N,
    _product,
    _Tasks,
    small_moments,
)
from rankstats.null.median_small_groups import grouped_small_moments
from test_median_null import _reference

real_gap_sums = median_module.gap_sums


@pytest.fixture(autouse=True)
def _fresh_distributions() -> None:
    median_module._CACHE.clear()


def _poly_mul(p: list[Fraction], q: list[Fraction]) -> list[Fraction]:
    out = [Fraction(0)] * (len(p) + len(q) - 1)
    for i, pi in enumerate(p):
        for j, qj in enumerate(q):
            out[i + j] += pi * qj
    return out


def _poly_shift(p: list[Fraction], h: int) -> list[Fraction]:
    """Coefficients of ``p(x + h)``."""
    out = [Fraction(0)] * len(p)
    for i, pi in enumerate(p):
        for j in range(i + 1):
            out[j] += pi * Fraction(h) ** (i - j) * Fraction(_comb(i, j))
    return out


def _comb(n: int, k: int) -> int:
    from math import comb

    return comb(n, k)


def _power_sum(q: int, lo: int, hi: int) -> int:
    """``sum_{s=lo}^{hi} s^q`` exactly (q >= 0), by Faulhaber's formula."""

    def upto(n: int) -> Fraction:
        bern = [Fraction(1)]
        for m in range(1, q + 1):
            bern.append(-sum(_comb(m + 1, j) * bern[j] for j in range(m)) / Fraction(m + 1))
        bern_plus = [b if j != 1 else -b for j, b in enumerate(bern)]  # B_1 = +1/2
        return sum(
            (_comb(q + 1, j) * bern_plus[j] * Fraction(n) ** (q + 1 - j) for j in range(q + 1)),
            Fraction(0),
        ) / (q + 1)

    total = upto(hi) - upto(lo - 1)
    assert total.denominator == 1
    return int(total)


def _min_family_reference(ones: int, counts: list[int]) -> tuple[mpmath.mpf, ...]:
    """E, V of the median and of its inverse for ``C = (1,) * ones + counts``, exactly."""
    k = len(counts)
    assert ones in (k, k - 1)
    even = ones == k
    low = min(counts)
    # S(u) = P(Y >= u) = prod (c + 1 - u) / c, a polynomial on 1..low + 1; pmf = S(u) - S(u + 1)
    surv = [Fraction(1)]
    for c in counts:
        surv = _poly_mul(surv, [Fraction(c + 1, c), Fraction(-1, c)])
    nxt = _poly_shift(surv, 1)
    pmf = [p - q for p, q in zip(surv, nxt, strict=True)]
    # in terms of s = u + 1 (even: M = s / 2) or s = u (odd: M = s), s = s0..s1
    h = 1 if even else 0
    pmf_s = _poly_shift(pmf, -h)
    s0, s1 = 1 + h, low + h
    scale = Fraction(1, 2) if even else Fraction(1)

    def moment(power: int) -> mpmath.mpf:  # E[M^power], power in -2..2
        total = mpmath.mpf(0)
        exact = Fraction(0)
        for q, coef in enumerate(pmf_s):
            if coef == 0:
                continue
            e = q + power
            if e >= 0:
                exact += coef * _power_sum(e, s0, s1)
            elif e == -1:
                total += (
                    mpmath.mpf(coef.numerator)
                    / coef.denominator
                    * (mpmath.harmonic(s1) - mpmath.harmonic(s0 - 1))
                )
            else:
                total += (
                    mpmath.mpf(coef.numerator)
                    / coef.denominator
                    * (mpmath.zeta(-e, s0) - mpmath.zeta(-e, s1 + 1))
                )
        total += mpmath.mpf(exact.numerator) / exact.denominator
        return total * mpmath.mpf(scale.numerator) ** power / mpmath.mpf(scale.denominator) ** power

    with mpmath.workdps(50):
        m1, m2, i1, i2 = moment(1), moment(2), moment(-1), moment(-2)
        return m1, m2 - m1 * m1, i1, i2 - i1 * i1


_VALUES = [2, 3, 7, 10**6, 10**6 + 3, 10**9, 10**12, 999_999_937]


def _min_family_cases() -> list[tuple[int, list[int]]]:
    rng = np.random.default_rng(9)
    cases = [(2, [10**6, 10**6]), (2, [10**12, 10**12]), (1, [10**12, 10**12]), (1, [1, 10**9])]
    for _ in range(40):
        k = int(rng.integers(1, 7))
        ones = int(rng.choice([k, k - 1]))
        if ones + k < 2:
            continue
        cases.append((ones, [int(v) for v in rng.choice(_VALUES, size=k)]))
    return cases


@pytest.mark.parametrize(("ones", "counts"), _min_family_cases(), ids=str)
def test_mixed_scales_against_exact_sums(ones: int, counts: list[int]) -> None:
    """1e-12 relative, all four moments, n = 2..12, counts mixing 1 and up to 1e12."""
    candidates = np.array([1] * ones + counts, dtype=np.int64)
    rng = np.random.default_rng(len(counts))
    candidates = rng.permutation(candidates)
    expected = _min_family_reference(ones, counts)
    got = (*median_moments(candidates), *inverse_median_moments(candidates))
    for actual, wanted in zip(got, expected, strict=True):
        # (a variance that is exactly 0 comes out of the 50-digit reference as ~1e-51)
        assert abs(actual - float(wanted)) <= 1e-12 * abs(float(wanted)) + 1e-40, (actual, wanted)


def test_the_reported_cases() -> None:
    """C = (1, 1, c, c): off by 1.6e-11 (c = 1e6) and 9e-5 (c = 1e12) before this path."""
    for c in (10**6, 10**12):
        expected = _min_family_reference(2, [c, c])
        e, v = (
            InverseMedianRank().expected_value([1, 1, c, c]),
            InverseMedianRank().variance([1, 1, c, c]),
        )
        assert e == pytest.approx(float(expected[2]), rel=1e-13)
        assert v == pytest.approx(float(expected[3]), rel=1e-13)
        assert MedianRank().variance([1, 1, c, c]) == pytest.approx(float(expected[1]), rel=1e-13)


def _sweep() -> list[np.ndarray]:
    rng = np.random.default_rng(77)
    out = []
    for _ in range(12):
        n = int(rng.integers(1, 13))
        low = int(rng.integers(1, 60))
        out.append(rng.integers(low, low + int(rng.integers(1, 90)), size=n))
    return [c for c in out if c.max() > 1]


@pytest.mark.parametrize("candidates", _sweep(), ids=lambda c: f"n={c.size}")
def test_point_masses_against_the_pairwise_programme(candidates: np.ndarray) -> None:
    expected = _reference(candidates)
    for actual, wanted in zip(small_moments(candidates), expected, strict=True):
        assert actual == pytest.approx(wanted, rel=1e-12)


def _every_integer(candidates: np.ndarray) -> tuple[float, float, float, float]:
    """The same point masses summed at every integer, every pair u < v (math.fsum)."""
    tasks = _Tasks(candidates)
    n = candidates.size
    x = np.arange(1, int(candidates.max()) + 1, dtype=np.float64)
    if n % 2:
        p, m = tasks.window_mass(x, n // 2, n // 2 + 1), x
    else:
        a = n // 2
        f, g = tasks.lower_factor(x, a), tasks.upper_factor(x, a)
        iu, iv = np.triu_indices(x.size, 1)
        p = np.concatenate((tasks.window_mass(x, a - 1, a + 1), _product(f, g, iu, iv)))
        m = np.concatenate((x, 0.5 * (x[iu] + x[iv])))
    import math

    mean = math.fsum(p * m)
    inv_mean = math.fsum(p / m)
    return (
        mean,
        math.fsum(p * (m - mean) ** 2),
        inv_mean,
        math.fsum(p * (1.0 / m - inv_mean) ** 2),
    )


@pytest.mark.parametrize(
    "candidates",
    [
        np.array([1500, 1400, 2, 700]),
        np.array([1, 1, 1200, 1300, 5, 900]),
        np.array([1000, 1000, 1000]),
        np.array([1, 1300, 1300, 800, 40]),
        np.random.default_rng(5).integers(100, 1200, size=8),
        np.random.default_rng(6).integers(1, 1000, size=11),
        np.random.default_rng(7).integers(300, 1000, size=16),
    ],
    ids=lambda c: str(c.tolist()),
)
def test_panel_rules_against_every_integer(candidates: np.ndarray) -> None:
    expected = _every_integer(candidates)
    for actual, wanted in zip(small_moments(candidates), expected, strict=True):
        assert actual == pytest.approx(wanted, rel=1e-13)


def test_probabilities_add_up() -> None:
    """Ties plus pairs u < v carry probability one, for both parities."""
    for candidates in itertools.product([1, 3, 10**6], repeat=4):
        c = np.array(candidates)
        if c.max() == 1:
            continue
        tasks = _Tasks(c)
        x = np.arange(1, 40, dtype=np.float64)
        # beyond the enumerated range only when a count is huge: check the small ones exactly
        if c.max() < 40:
            f, g = tasks.lower_factor(x, 2), tasks.upper_factor(x, 2)
            iu, iv = np.triu_indices(x.size, 1)
            total = tasks.window_mass(x, 1, 3).sum() + _product(f, g, iu, iv).sum()
            assert total == pytest.approx(1.0, rel=1e-14)


def test_small_path_is_taken_up_to_its_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = median_module.small_moments

    def spy(counts: np.ndarray) -> tuple[float, float, float, float]:
        calls.append(counts.size)
        return real(counts)

    monkeypatch.setattr(median_module, "small_moments", spy)
    median_moments(np.arange(1, SMALL_N + 1))
    median_moments(np.arange(1, SMALL_N + 2))
    assert calls == [SMALL_N]


@pytest.mark.parametrize(
    ("ones", "counts"),
    [
        (9, [10**6] * 9),
        (12, [10**9] * 12),
        (20, [10**6] * 10 + [10**12] * 10),
        (30, [10**4] * 30),
        (32, [10**12] * 32),
        (11, [10**6] * 12),
    ],
    ids=lambda c: str(c) if isinstance(c, int) else f"{len(c)} counts",
)
def test_larger_n_with_separated_middle_ranks(ones: int, counts: list[int]) -> None:
    """n = 17..64 where the lower middle rank is 1 and the upper one huge: rerouted, exact."""
    candidates = np.array([1] * ones + counts, dtype=np.int64)
    expected = _min_family_reference(ones, counts)
    got = (*median_moments(candidates), *inverse_median_moments(candidates))
    for actual, wanted in zip(got, expected, strict=True):
        assert abs(actual - float(wanted)) <= 1e-12 * abs(float(wanted)) + 1e-40, (actual, wanted)


@pytest.mark.parametrize(
    "candidates",
    [
        np.random.default_rng(3).integers(200, 2500, size=32),
        np.random.default_rng(4).integers(1, 2000, size=63),
        np.full(64, 2000),
    ],
    ids=lambda c: f"n={c.size}",
)
def test_larger_n_panel_rules_against_every_integer(candidates: np.ndarray) -> None:
    """The finer ladder keeps the rules exact for polynomials of degree up to 63."""
    expected = _every_integer(candidates)
    for actual, wanted in zip(small_moments(candidates), expected, strict=True):
        assert actual == pytest.approx(wanted, rel=1e-13)


def test_window_never_passes_the_kth_smallest_count() -> None:
    """X_(k) <= the k-th smallest count: Bennett's bound alone kept X_(20) up to ~1e6 here."""
    from rankstats.null.median_tails import _Candidates

    cands = _Candidates(np.array([1] * 20 + [10**6] * 20, dtype=np.int64))
    assert cands.window(20) == (1, 1)
    assert cands.window(21)[1] <= 10**6
    sf = median_module.order_statistic_sf(np.array([1] * 20 + [10**6] * 20), 20, np.arange(3))
    assert sf.tolist() == [1.0, 0.0, 0.0]


def test_even_n_up_to_64_takes_the_product_form(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = median_module.small_moments

    def spy(counts: np.ndarray) -> tuple[float, float, float, float]:
        calls.append(counts.size)
        return real(counts)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the long-window path should not run")

    monkeypatch.setattr(median_module, "small_moments", spy)
    monkeypatch.setattr(median_module, "gap_sums", refuse)
    median_moments(np.array([1] * 20 + [10**6] * 20))
    median_moments(np.random.default_rng(1).integers(200, 1200, size=EVEN_N))
    assert calls == [40, EVEN_N]
    # odd n beyond SMALL_N and even n beyond EVEN_N take the long-window path
    monkeypatch.setattr(median_module, "gap_sums", real_gap_sums)
    calls.clear()
    median_moments(np.random.default_rng(1).integers(200, 1200, size=EVEN_N + 2))
    median_moments(np.random.default_rng(1).integers(200, 1200, size=SMALL_N + 1))
    assert calls == []


@pytest.mark.parametrize(
    ("small", "large", "low"),
    [(10**6, 10**12, 15), (1000, 10**6, 18), (10**9, 10**12, 18), (3, 10**9, 15)],
)
def test_two_scales_where_the_long_window_path_lost_digits(
    small: int, large: int, low: int
) -> None:
    """n = 38: the decomposition lost up to 1e-6 (V of the inverse median) here; the product
    form agrees with itself on a four times finer ladder (an independent set of panels and
    nodes) to 1e-14, and with Monte-Carlo."""
    candidates = np.array([small] * low + [large] * (38 - low))
    got = (*median_moments(candidates), *inverse_median_moments(candidates))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(small_module, "_LADDER_SPREAD", 4)
        finer = small_moments(candidates)
    for actual, wanted in zip(got, finer, strict=True):
        assert actual == pytest.approx(wanted, rel=1e-14)
    ranks = np.random.default_rng(0).integers(1, candidates + 1, size=(20_000, candidates.size))
    inverse = 1.0 / np.median(ranks, axis=1)
    assert abs(inverse.mean() - got[2]) < 5.0 * np.sqrt(got[3] / inverse.size)
    assert inverse.var() == pytest.approx(got[3], rel=0.1)


def _mixes(seed: int, count: int) -> list[np.ndarray]:
    """Odd n (the long-window path of even n loses digits on such mixes: see above)."""
    rng = np.random.default_rng(seed)
    values = [1, 2, 3, 7, 10**6, 10**6 + 3, 10**9, 10**12, 999_999_937]
    out = []
    for _ in range(count):
        candidates = rng.choice(values, size=2 * int(rng.integers(1, 7)) + 1)
        if candidates.max() > 1:
            out.append(candidates)
    return out


@pytest.mark.parametrize("candidates", _mixes(5, 24), ids=lambda c: str(sorted(c.tolist())))
def test_mixed_scales_agree_with_the_long_window_path(
    candidates: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two independent methods (product-form point masses; tails and Fourier) at counts mixing
    1, small, 1e6, 1e9 and 1e12."""
    got = small_moments(candidates)
    # as if there were more than SMALL_N tasks
    monkeypatch.setattr(median_module, "SMALL_N", 1)
    other = median_module._moments(median_module._Candidates(candidates))
    for actual, wanted in zip(got, other, strict=True):
        assert actual == pytest.approx(wanted, rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("n", [40, 64])
def test_narrow_masses_at_huge_counts_against_a_finer_ladder(n: int) -> None:
    """Counts near 1e12 spread by 10 %: narrow point masses of degree up to n on a panel."""
    candidates = 10**12 + np.random.default_rng(0).integers(0, 10**11, size=n)
    got = small_moments(candidates)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(small_module, "_LADDER_SPREAD", 4)
        finer = small_moments(candidates)
    for actual, wanted in zip(got, finer, strict=True):
        assert actual == pytest.approx(wanted, rel=1e-12)


def _beyond_the_product_form(seed: int, n: int) -> dict[str, np.ndarray]:
    """Counts of every shape the sweeps draw, for ``n`` tasks."""
    rng = np.random.default_rng(seed)
    half = n // 2 + int(rng.integers(-2, 3))
    huge = int(np.exp(rng.uniform(np.log(1e3), np.log(1e12))))
    return {
        "equal": np.full(n, int(rng.integers(2, 10**12))),
        "uniform": rng.integers(1, 2_000, size=n),
        "fb15k": rng.integers(1, 14_506, size=n),
        "log-uniform": np.exp(rng.uniform(0.0, np.log(1e12), size=n)).astype(np.int64) + 1,
        "clusters": np.concatenate(
            (rng.integers(50, 90, size=n // 3), rng.integers(10**8, 2 * 10**8, size=n - n // 3))
        ),
        # half the tasks at a few candidates, half at a huge count: the decomposition's terms
        # cancel for the inverse median, whose sums from the upper middle rank take over
        "pinned": np.concatenate(
            (rng.integers(1, 150, size=half), rng.integers(huge, 2 * huge, size=n - half))
        ),
        "two counts": np.array([3] * (n // 2 - 1) + [10**12] * (n // 2 + 1)),
    }


@pytest.mark.parametrize("n", range(EVEN_N + 2, EVEN_N_VALID + 1, 2))
def test_main_path_against_the_product_form_where_both_hold(n: int) -> None:
    """Even n beyond EVEN_N take the main path; the product form holds there too (1e-15).

    The main path's decomposition keeps an error of about 8.4e-15 times its condition, which it
    keeps below 50 (about 4e-13), and its sums from the upper middle rank beyond that: over 850
    inputs of 34 to 56 tasks the two paths were at most 3.9e-13 apart (2026-11-28).
    """
    for name, counts in _beyond_the_product_form(n, n).items():
        median_module._CACHE.clear()
        got = np.array(median_moments(counts) + inverse_median_moments(counts))
        wanted = np.array(small_moments(np.sort(counts)))
        np.testing.assert_allclose(got, wanted, rtol=5e-13, atol=0.0, err_msg=name)


@pytest.mark.parametrize("n", [56, 58, 60, 62, 64, 66])
@pytest.mark.parametrize("count", [3 * 10**11, 6 * 10**11, 10**12])
def test_median_of_equal_large_counts_is_centred(n: int, count: int) -> None:
    """Equal counts: the law is symmetric about (C + 1) / 2, so E[M] is known exactly.

    The product form's rules lost 3e-12 on E[M] at 64 equal counts of 1e12 (and 1e-10 at 62 tasks
    with counts spread over 1e11..1e12); such inputs now take the main path.
    """
    expected, variance = median_moments(np.full(n, count))
    inverse, inverse_variance = inverse_median_moments(np.full(n, count))
    assert expected == pytest.approx((count + 1) / 2, rel=1e-15)
    # the continuous limit (Beta order statistics) is within O(1/C) of the discrete law
    assert variance == pytest.approx(count**2 / (4 * (n + 2)), rel=0.2)
    assert inverse > 2 / (count + 1)
    assert inverse_variance > 0


@pytest.mark.parametrize("n", [48, 52, 56])
@pytest.mark.parametrize("count", [10**14, 10**15, 3 * 10**15, 2**53 - 1])
def test_equal_counts_beyond_1e12_against_the_continuous_limit(n: int, count: int) -> None:
    """Equal counts up to 2**53: E[M] exact, V[M] the Beta limit's (main path and groups).

    The continuous order statistics of n uniforms give :math:`V = n / (4 (n + 1) (n + 2))` for the
    mean of the middle two; the discrete law is within :math:`O(1/C)` of :math:`C^2 V`. Before
    the elementary symmetric polynomials kept an exponent per entry where their spread needs it
    (2026-11-27), E[M] was up to 7e-8 off here (the small e_j of the first tasks flushed to 0).
    """
    expected, variance = median_moments(np.full(n, count))
    assert expected == pytest.approx((count + 1) / 2, rel=2e-16)
    assert variance == pytest.approx(count**2 * n / (4 * (n + 1) * (n + 2)), rel=1e-12)
    # the groups' path shares the point masses
    grouped = grouped_small_moments(np.full((2, n), count))
    np.testing.assert_allclose(grouped[:, 0], (count + 1) / 2, rtol=2e-16)


@pytest.mark.parametrize("count", [10**15, 2**53 - 1])
@pytest.mark.parametrize(("lower", "upper"), [(27, 28), (27, 29)])
def test_point_masses_at_huge_equal_counts_against_trinomial_sums(
    count: int, lower: int, upper: int
) -> None:
    """:meth:`_Tasks.window_mass` of 56 equal counts against 40-digit trinomial sums."""
    n = 56
    tasks = _Tasks(np.full(n, count))
    nodes = [2 * 10**14, count // 2, count // 2 + 0.37, (4 * count) // 5, count - 12345]
    got = tasks.window_mass(np.array(nodes, dtype=np.float64), lower, upper)
    with mpmath.workdps(40):
        for node, actual in zip(nodes, got.tolist(), strict=True):
            u, c = mpmath.mpf(float(node)), mpmath.mpf(count)
            below, above, at = (u - 1) / c, (c - u) / c, 1 / c
            exact = mpmath.fsum(
                mpmath.factorial(n)
                / (mpmath.factorial(j) * mpmath.factorial(k) * mpmath.factorial(n - j - k))
                * below**j
                * above**k
                * at ** (n - j - k)
                for j in range(lower + 1)
                for k in range(n - upper + 1)
            )
            assert actual == pytest.approx(float(exact), rel=1e-13)


def test_entry_scaled_polynomials_match_row_scaled_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where one exponent per row keeps every entry, one per entry gives the same moments."""
    rng = np.random.default_rng(5)
    cases = [rng.integers(1, 10**6, size=n) for n in (8, 16, 30, 56)]
    cases += [rng.integers(13_541, 14_542, size=n) for n in (10, 40)]
    default = [small_moments(c) for c in cases]
    monkeypatch.setattr(small_module, "_SPREAD_ROW_SCALED", -1.0)
    for candidates, wanted in zip(cases, default, strict=True):
        got = small_moments(candidates)
        np.testing.assert_allclose(got, wanted, rtol=1e-15)


@pytest.mark.parametrize("n", [4, 16, 40, 56])
def test_product_form_memory_does_not_grow_with_the_counts(n: int) -> None:
    """The pairs of panels are formed a block at a time: the same few MB at C up to 1e15.

    Their number grows with the square of the panels (log C each): all at once they took 15 MB
    at n = 4 and 43 MB at n = 56 with counts up to 1e15.
    """
    import tracemalloc

    peaks = []
    for top in (10**3, 10**15):
        candidates = np.random.default_rng(n).integers(1, top, size=n)
        tracemalloc.start()
        try:
            small_moments(candidates)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    assert peaks[1] < 5e6


@pytest.mark.parametrize("seed", range(8))
def test_pairs_of_panels_one_panel_at_a_time_match_the_masked_sums(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pairs of distinct panels, panel by panel with each block scaled on its own (the path
    for masses spanning more than ``_SPAN_MAX`` binary orders), give the moments of the masked
    sums over all nodes at once, on counts from equal to spread over 1..1e12."""
    rng = np.random.default_rng(seed)
    n = int(rng.choice([4, 10, 16, 24, 40, 56]))
    top = 10 ** int(rng.integers(2, 13))
    candidates = [
        np.full(n, top),
        rng.integers(top // 2, top, size=n) + 1,
        np.exp(rng.uniform(0.0, np.log(float(top)), size=n)).astype(np.int64) + 1,
        np.concatenate(
            (rng.integers(1, 5, size=n // 2), rng.integers(top // 10, top, size=n // 2))
        ),
    ][seed % 4]
    together = small_moments(candidates)
    blocks = []
    real = small_module._Centred.add_product

    def spy(self: small_module._Centred, *args: object) -> None:
        blocks.append(args)
        real(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(small_module, "_SPAN_MAX", -1)
    monkeypatch.setattr(small_module._Centred, "add_product", spy)
    apart = small_moments(candidates)
    assert blocks  # the panel-by-panel path ran
    for got, wanted in zip(apart, together, strict=True):
        assert got == pytest.approx(wanted, rel=5e-15, abs=0.0)
