"""The split bands: the likely tasks' misses and the unlikely tasks' count, each on a band.

:func:`~rankstats.null.median_band.split_band_tails` serves the small tails of a median pinned
at a small count by half the tasks, with the other half's counts huge, for any n (the exact
programme costs a step per task and loses ~n ulps relative where thousands of tasks share a
count). The reference sums binomial laws exactly in mpmath (40 digits).
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

import rankstats.null.median as median_module
from rankstats.null.median_band import split_band_tails, split_plan
from rankstats.null.median_tails import _Candidates


def _law_of_some(q: list[mpmath.mpf]) -> list[mpmath.mpf]:
    law = [mpmath.mpf(1)]
    for qi in q:
        law = [
            (law[j] if j < len(law) else 0) * (1 - qi) + (law[j - 1] * qi if j else 0)
            for j in range(len(law) + 1)
        ]
    return law


def _reference(
    counts: list[tuple[int, int]], x: float, t: float, asked: list[int]
) -> dict[str, list[mpmath.mpf]]:
    """P(N >= k), P(N <= k - 1) and P(N = k) for k in ``asked``, exactly.

    ``counts``: (candidate count, tasks); the first is the likely one (its misses are few),
    the second the unlikely one (its hits are few), any others have a few tasks each.
    """
    with mpmath.workdps(40):

        def success(c: int) -> mpmath.mpf:
            room = mpmath.mpf(c) - t
            return mpmath.mpf(1) if room <= x else mpmath.mpf(x) / room

        (c1, m1), (c2, m2), *rest = counts
        q1, q2 = success(c1), success(c2)
        others = _law_of_some([success(c) for c, m in rest for _ in range(m)])

        def binom(m: int, q: mpmath.mpf, j: int) -> mpmath.mpf:
            return mpmath.binomial(m, j) * q**j * (1 - q) ** (m - j) if 0 <= j <= m else 0

        hits = [binom(m2, q2, j) for j in range(min(m2, 80) + 1)]
        # the likely tasks' law from the lowest count asked for on, and its upper tails
        first = max(min(asked) - len(hits) - len(others), 0)
        likely = [binom(m1, q1, i) for i in range(first, m1 + 1)]
        tails = [mpmath.fsum(likely[i:]) for i in range(len(likely))]

        def at(table: list[mpmath.mpf], i: int, below: mpmath.mpf) -> mpmath.mpf:
            if i < first:
                return below
            return table[i - first] if i - first < len(table) else mpmath.mpf(0)

        out: dict[str, list[mpmath.mpf]] = {"upper": [], "exactly": []}
        for k in asked:
            upper, exactly = mpmath.mpf(0), mpmath.mpf(0)
            for j2, p2 in enumerate(hits):
                for js, ps in enumerate(others):
                    need = k - j2 - js
                    exactly += p2 * ps * at(likely, need, mpmath.mpf(0))
                    upper += p2 * ps * at(tails, need, mpmath.mpf(1))
            out["upper"].append(upper)
            out["exactly"].append(exactly)
        return out


@pytest.mark.parametrize(
    ("counts", "shift"),
    [
        ([(39, 1000), (10**12, 1000)], 0.0),
        ([(100, 5000), (10**12, 5000)], 0.0),  # the programme: 4e-13 relative here
        ([(10, 2000), (10**9, 1999), (5000, 2)], 0.0),
        ([(60, 700), (10**12, 699), (7, 1), (10**6, 2)], 1.0),
        ([(3, 3000), (10**9, 3000)], 1.0),
    ],
    ids=lambda value: str(value),
)
def test_split_tails_against_exact_binomial_sums(
    counts: list[tuple[int, int]], shift: float
) -> None:
    values = np.array(sorted(c for c, _ in counts), dtype=np.int64)
    tasks = dict(counts)
    cands = _Candidates(values, np.array([tasks[v] for v in values.tolist()]))
    n = cands.n
    a = n // 2
    small = counts[0][0]
    x = np.linspace(small - shift - 0.5, small - shift - 0.02, 6)
    t = np.full(x.size, shift)
    cdf_at, pmf_at = [a - 1, a], [a, a + 1]
    plan = split_plan(cands, x, t, cdf_at, pmf_at)
    assert plan is not None
    low, up, pmf = split_band_tails(cands, x, t, cdf_at, pmf_at, plan)
    checked = 0
    for i in range(x.size):
        ref = _reference(counts, float(x[i]), shift, [a, a + 1])
        for j in range(2):
            expected_up = float(ref["upper"][j])
            expected_pmf = float(ref["exactly"][j])
            if expected_up > 1e-300:
                checked += 1
                assert abs(up[i, j] - expected_up) <= 1e-13 * expected_up, (i, j)
                assert abs(low[i, j] - (1 - expected_up)) <= 1e-14
            if expected_pmf > 1e-300:
                assert abs(pmf[i, j] - expected_pmf) <= 1e-13 * expected_pmf, (i, j)
    assert checked >= 5


def test_no_plan_for_spread_counts() -> None:
    """A thousand distinct counts near the nodes: every split is past the budget."""
    values = np.arange(40, 1040, dtype=np.int64)
    cands = _Candidates(values, np.ones(values.size, dtype=np.int64))
    x = np.linspace(300.0, 400.0, 200)
    assert split_plan(cands, x, np.zeros(x.size), [499], [500]) is None


@pytest.mark.parametrize("seed", range(3))
def test_rare_law_against_binomial_products(seed: int) -> None:
    """The unlikely tasks' law from power sums and Newton's identities, 40-digit reference.

    Thousands of tasks at counts 1e4 to 1e5 times the nodes, shared counts (the law Newton's
    identities serve without cancellation), on the band the reach asks, each entry to 1e-13
    relative down to 1e-300. The reference multiplies exact binomial laws, truncated.
    """
    from rankstats.null.median_band import _rare_law, _rare_terms, chernoff_reach

    rng = np.random.default_rng(300 + seed)
    scale = 10 ** int(rng.integers(6, 10))
    values = np.unique(rng.integers(scale, 10 * scale, size=10))
    counts = rng.integers(200, 3000, size=values.size)
    cands = _Candidates(values, counts)
    x = np.sort(rng.uniform(scale / 1e5, scale / 1e4, size=3))
    hits = int(chernoff_reach(np.array([float(x.max()) * float(cands.inv1[0])]), cands.n)[0]) + 1
    terms = _rare_terms(cands, 0, np.array([0]), np.array([hits]), float(x.min()), float(x.max()))
    assert terms[0] > 0
    law = _rare_law(cands, 0, x, hits, int(terms[0]))
    with mpmath.workdps(40):
        for i, xi in enumerate(x.tolist()):
            exact = [mpmath.mpf(1)] + [mpmath.mpf(0)] * (hits - 1)
            for c, m in zip(values.tolist(), counts.tolist(), strict=True):
                q = mpmath.mpf(xi) / c
                factor = [mpmath.binomial(m, j) * q**j * (1 - q) ** (m - j) for j in range(hits)]
                exact = [
                    mpmath.fsum(exact[i2] * factor[j - i2] for i2 in range(j + 1))
                    for j in range(hits)
                ]
            for j in range(hits):
                value = float(exact[j])
                assert abs(law[j, i] - value) <= 1e-13 * value + 1e-300, (i, j)


@pytest.mark.parametrize(
    ("counts", "x", "shift"),
    [
        ([(12, 300), (13, 310)], [5.0, 6.0, 6.5, 7.0], 0.0),
        ([(12, 700), (13, 720)], [6.0, 7.0], 0.0),
        ([(40, 150)], [15.0, 20.0, 25.0], 0.0),
        ([(9, 400), (30, 50)], [4.0, 5.0], 1.0),
    ],
    ids=lambda value: str(value),
)
def test_two_count_tails_against_exact_sums(
    counts: list[tuple[int, int]], x: list[float], shift: float
) -> None:
    """One or two uncertain counts near q = 1/2: every tail and mass, tiny ones included.

    The reference convolves the two binomial laws in 40-digit arithmetic.
    """
    from rankstats.null.median_band import two_count_tails

    values = np.array([c for c, _ in counts], dtype=np.int64)
    cands = _Candidates(values, np.array([m for _, m in counts]))
    n = cands.n
    nodes = np.array(x)
    t = np.full(nodes.size, shift)
    asked = [n // 2 - 1, n // 2, n // 2 + 3]
    found = two_count_tails(cands, nodes, t, asked, asked)
    assert found is not None
    low, up, pmf = found
    with mpmath.workdps(40):
        for i, xi in enumerate(x):
            laws = []
            for c, m in counts:
                room = mpmath.mpf(c) - shift
                q = mpmath.mpf(1) if room <= xi else mpmath.mpf(xi) / room
                law_c = [mpmath.binomial(m, j) * q**j * (1 - q) ** (m - j) for j in range(m + 1)]
                laws.append(law_c)
            law = laws[0]
            if len(laws) == 2:
                law = [
                    mpmath.fsum(
                        laws[0][k - j] * laws[1][j]
                        for j in range(max(0, k - len(laws[0]) + 1), min(k, len(laws[1]) - 1) + 1)
                    )
                    for k in range(len(laws[0]) + len(laws[1]) - 1)
                ]
            for col, k in enumerate(asked):
                above = float(mpmath.fsum(law[k + 1 :]))
                below = float(mpmath.fsum(law[: k + 1]))
                exact = float(law[k]) if k < len(law) else 0.0
                assert abs(up[i, col] - above) <= 1e-12 * above + 1e-300, (i, k)
                assert abs(low[i, col] - below) <= 1e-12 * below + 1e-300, (i, k)
                assert abs(pmf[i, col] - exact) <= 1e-12 * exact + 1e-300, (i, k)


def test_two_count_tails_decline_three_counts() -> None:
    from rankstats.null.median_band import two_count_tails

    cands = _Candidates(np.array([10, 11, 12]), np.array([5, 5, 5]))
    assert two_count_tails(cands, np.array([5.0]), np.zeros(1), [7], []) is None


def test_a_median_pinned_by_two_nearby_counts_has_a_positive_variance() -> None:
    """24,531 tasks at 12 and 24,591 at 13: the median is 7 but for a tail of about 1e-17.

    From the Fourier inversion (1e-16 absolute) V came out as -5.5e-19 (found by
    ``benchmarks/sweep_shapes.py``); the two binomial laws give it to its own digits.
    """
    from rankstats import InverseMedianRank, MedianRank

    candidates = np.array([12] * 24_531 + [13] * 24_591)
    median_module._CACHE.clear()
    assert MedianRank().expected_value(candidates) == pytest.approx(7.0, abs=1e-15)
    variance = MedianRank().variance(candidates)
    assert 1e-19 < variance < 1e-16
    assert 0.0 < InverseMedianRank().variance(candidates) < 1e-19
