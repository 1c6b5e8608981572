"""Null moments of the weighted variance of the ranks against exact enumeration.

Achieved: relative error <= 5e-16 against exact rational enumeration of every rank tuple (weighted
and not, odd and even n), and against the closed form evaluated in exact rationals for huge C,
tiny spreads, a dominant weight or a dominant task. The asserted bounds leave a margin.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from rankstats.null.dispersion import weighted_variance_moments

CASES = [[1, 2, 3, 5], [2, 3, 4, 4], [3, 3], [1], [6], [3, 7, 2], [4, 1, 6, 3, 2], [1, 1, 2]]
WEIGHTS = {
    1: [2.0],
    2: [1.0, 3.0],
    3: [0.2, 1.0, 2.5],
    4: [1.0, 2.0, 0.5, 3.0],
    5: [1.0, 0.0, 2.0, 1.0, 4.0],
}


def _moments(num_candidates: list[int], weights: list[float] | None = None) -> tuple[float, float]:
    c = np.asarray(num_candidates, dtype=np.int64)
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    return weighted_variance_moments(c, w)


def _exact(num_candidates: list[int], weights: list[float] | None) -> tuple[Fraction, Fraction]:
    """E and V of S^2 over every rank tuple, in exact rational arithmetic."""
    w = [Fraction(1)] * len(num_candidates) if weights is None else [Fraction(x) for x in weights]
    a = [x / sum(w) for x in w]
    values = []
    for ranks in itertools.product(*(range(1, c + 1) for c in num_candidates)):
        mean = sum(ai * r for ai, r in zip(a, ranks, strict=True))
        values.append(sum(ai * (r - mean) ** 2 for ai, r in zip(a, ranks, strict=True)))
    expectation = sum(values) / len(values)
    return expectation, sum((v - expectation) ** 2 for v in values) / len(values)


def _closed_form(
    num_candidates: list[int], weights: list[float] | None
) -> tuple[Fraction, Fraction]:
    """The closed form (see the Notes of the function), in exact rational arithmetic."""
    w = [Fraction(1)] * len(num_candidates) if weights is None else [Fraction(x) for x in weights]
    a = [x / sum(w) for x in w]
    m = [Fraction(c + 1, 2) for c in num_candidates]
    d = [mi - sum(aj * mj for aj, mj in zip(a, m, strict=True)) for mi in m]
    s2 = [Fraction(c * c - 1, 12) for c in num_candidates]
    mu4 = [Fraction((c * c - 1) * (3 * c * c - 7), 240) for c in num_candidates]
    diag = [ai - ai * ai for ai in a]
    expectation = sum(g * s for g, s in zip(diag, s2, strict=True)) + sum(
        ai * di**2 for ai, di in zip(a, d, strict=True)
    )
    u = [ai * ai * s for ai, s in zip(a, s2, strict=True)]
    variance = (
        sum(g * g * (m4 - 3 * s * s) for g, m4, s in zip(diag, mu4, s2, strict=True))
        + 2 * sum(g * g * s * s for g, s in zip(diag, s2, strict=True))
        + 2 * (sum(u) ** 2 - sum(x * x for x in u))
        + 4 * sum(ai * ai * di * di * s for ai, di, s in zip(a, d, s2, strict=True))
    )
    return expectation, variance


def _assert_close(actual: float, exact: Fraction, rel: float = 2e-15) -> None:
    assert isinstance(actual, float)
    if exact == 0:
        assert actual == 0.0
    else:
        assert abs(Fraction(actual) - exact) <= rel * abs(exact)


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("candidates", CASES, ids=str)
def test_exact_enumeration(candidates: list[int], weighted: bool) -> None:
    weights = WEIGHTS[len(candidates)] if weighted else None
    expectation, variance = _moments(candidates, weights)
    exact_expectation, exact_variance = _exact(candidates, weights)
    _assert_close(expectation, exact_expectation)
    _assert_close(variance, exact_variance)


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_matches_numpy_definition_by_float_enumeration(weighted: bool) -> None:
    """S^2 is np.var (ddof = 0) unweighted and the np.average form weighted."""
    candidates = [2, 3, 4, 4, 5]
    weights = [1.0, 2.0, 0.5, 3.0, 1.5] if weighted else None
    ranks = np.array(list(itertools.product(*(range(1, c + 1) for c in candidates))), float)
    if weights is None:
        values = np.var(ranks, axis=1)
    else:
        means = np.average(ranks, axis=1, weights=weights)
        values = np.average((ranks - means[:, None]) ** 2, axis=1, weights=weights)
    expectation, variance = _moments(candidates, weights)
    assert expectation == pytest.approx(values.mean(), rel=1e-13)
    assert variance == pytest.approx(values.var(), rel=1e-13)


@pytest.mark.parametrize(
    ("candidates", "weights"),
    [
        ([10**12, 10**12 + 1, 10**12 + 3], None),  # huge C, tiny spread
        ([10**12, 10**12 + 1, 10**12 + 3], [1.0, 2.0, 3.0]),
        ([10**9, 2, 2], None),  # one task dominates the variance: sum over pairs
        ([10**9, 2, 2, 5], [1.0, 1e-3, 1e-3, 2e-3]),
        ([1, 1, 1, 1, 1, 10**12], None),
        ([7, 7, 7, 10**6 + 1], [1e-9, 1e-9, 1e-9, 1.0]),  # one weight near 1: 1 - a_i
        ([5, 2], [1.0, 1e-5]),
        ([3, 10**6, 10**6 + 2, 17], [0.5, 1e-4, 3e-4, 2.0]),
    ],
    ids=str,
)
def test_no_cancellation(candidates: list[int], weights: list[float] | None) -> None:
    expectation, variance = _moments(candidates, weights)
    exact_expectation, exact_variance = _closed_form(candidates, weights)
    _assert_close(expectation, exact_expectation)
    _assert_close(variance, exact_variance)


def test_certain_and_single_tasks() -> None:
    assert _moments([1, 1, 1]) == (0.0, 0.0)
    assert _moments([1]) == (0.0, 0.0)
    assert _moments([10**12]) == (0.0, 0.0)
    assert _moments([5], [3.0]) == (0.0, 0.0)


def test_weight_invariances() -> None:
    candidates = [3, 9, 2, 40, 7]
    base = _moments(candidates)
    assert _moments(candidates, [1.0] * 5) == pytest.approx(base, rel=1e-14)
    weights = [1.0, 2.0, 0.5, 3.0, 1.5]
    weighted = _moments(candidates, weights)
    assert _moments(candidates, [4.5 * w for w in weights]) == pytest.approx(weighted, rel=1e-14)
    # a zero weight is the same as no task
    assert _moments([*candidates, 11], [*weights, 0.0]) == pytest.approx(weighted, rel=1e-14)
    # (integer weights are not repetitions here: a repeated task has its own, independent rank)


def test_monte_carlo_mid_size() -> None:
    rng = np.random.default_rng(0)
    candidates = rng.integers(1, 1000, size=200)
    weights = rng.random(200)
    expectation, variance = weighted_variance_moments(candidates, weights)
    samples = 20_000
    ranks = np.floor(rng.random((samples, candidates.size)) * candidates) + 1.0
    means = np.average(ranks, axis=1, weights=weights)
    values = np.average((ranks - means[:, None]) ** 2, axis=1, weights=weights)
    assert abs(values.mean() - expectation) < 4 * np.sqrt(variance / samples)
    fourth = np.mean((values - values.mean()) ** 4)
    assert abs(values.var() - variance) < 4 * np.sqrt((fourth - variance**2) / samples)


def _exact_unweighted_variance_moments(counts: np.ndarray) -> tuple[Fraction, Fraction]:
    """The exact E and V of the ranks' variance, from the distinct counts and multiplicities."""
    values, multiplicity = np.unique(counts, return_counts=True)
    n = int(counts.size)
    a = Fraction(1, n)
    c = [Fraction(int(v)) for v in values]
    m = [int(k) for k in multiplicity]
    mean_c = sum(k * ci for k, ci in zip(m, c, strict=True)) / n
    sigma2 = [(ci * ci - 1) / 12 for ci in c]
    var_x2 = [s * (ci * ci - 4) / 15 for s, ci in zip(sigma2, c, strict=True)]
    d2 = [((ci - mean_c) / 2) ** 2 for ci in c]
    diagonal = a * (1 - a)
    expectation = sum(k * (diagonal * s + a * d) for k, s, d in zip(m, sigma2, d2, strict=True))
    u = [a * a * s for s in sigma2]
    total = sum(k * ui for k, ui in zip(m, u, strict=True))
    pairs = total * total - sum(k * ui * ui for k, ui in zip(m, u, strict=True))
    variance = (
        sum(k * diagonal * diagonal * v for k, v in zip(m, var_x2, strict=True))
        + 2 * pairs
        + 4 * sum(k * ui * d for k, ui, d in zip(m, u, d2, strict=True))
    )
    return expectation, variance


def test_long_input_keeps_full_precision() -> None:
    """Three million tasks: pairwise sums keep the error at rounding level (a sequential dot
    product loses about three digits here)."""
    rng = np.random.default_rng(3)
    counts = rng.integers(1, 2000, size=3 * 10**6)
    mean, variance = weighted_variance_moments(counts)
    exact_mean, exact_variance = _exact_unweighted_variance_moments(counts)
    assert abs(Fraction(mean) / exact_mean - 1) < 1e-14
    assert abs(Fraction(variance) / exact_variance - 1) < 1e-14
