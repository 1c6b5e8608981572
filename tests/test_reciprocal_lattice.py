"""The harmonic mean rank's null moments through lattice tables (many distinct weights).

References: the pair-by-pair sums of the same module (each pair's transform evaluated at each
node), exact enumeration of every rank tuple, and 30-digit mpmath quadrature with the transform
of every task summed directly. Achieved: the lattice agrees with the pair-by-pair sums to
about 2e-16 (expectation) and 2e-14 (variance), and with exact enumeration and mpmath to the
same; the asserted bounds leave a margin for other libm builds.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rankstats.null import interpolation, lattice, reciprocal
from rankstats.null.interpolation import count_intervals, lagrange_basis
from rankstats.null.reciprocal import harmonic_mean_moments

BOUND_MEAN, BOUND_VARIANCE = 1e-14, 1e-13


def _pair_by_pair(monkeypatch: pytest.MonkeyPatch, c: np.ndarray, w: np.ndarray | None) -> tuple:
    with monkeypatch.context() as patch:
        patch.setattr(reciprocal, "_LATTICE_PAIRS", 10**12)
        return harmonic_mean_moments(c, w)


def _through_lattice(
    monkeypatch: pytest.MonkeyPatch, c: np.ndarray, w: np.ndarray | None
) -> tuple[float, float]:
    with monkeypatch.context() as patch:
        patch.setattr(reciprocal, "_LATTICE_PAIRS", 1)
        patch.setattr(reciprocal, "_pair_cost", lambda *args: math.inf)
        used = []
        original = lattice.LatticeSum.__call__

        def spy(self: lattice.LatticeSum, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            used.append(u.size)
            return original(self, u)

        patch.setattr(lattice.LatticeSum, "__call__", spy)
        out = harmonic_mean_moments(c, w)
        assert used, "the lattice was not used"
        return out


LABELS = [
    "few counts",
    "counts 100..20000",
    "counts 2..300",
    "log-uniform counts to 1e12",
    "weights over six decades",
    "weights over 300 decades",
    "one count",
    "counts 1..3 and zero weights",
]


def _inputs(label: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(LABELS.index(label))
    weights = rng.uniform(0.5, 2.0, n)
    if label == "few counts":
        return rng.choice([2, 7, 100, 5000, 14541], n), weights
    if label == "counts 100..20000":
        return rng.integers(100, 20_001, n), weights
    if label == "counts 2..300":
        return rng.integers(2, 301, n), weights
    if label == "log-uniform counts to 1e12":
        return np.exp(rng.uniform(0.0, np.log(1e12), n)).astype(np.int64) + 1, weights
    if label == "weights over six decades":
        return rng.integers(1, 10**9, n), np.exp(rng.uniform(np.log(1e-6), 0.0, n))
    if label == "weights over 300 decades":  # the floor of the tables
        return rng.integers(2, 10**6, n), np.exp(rng.uniform(-690.0, 0.0, n))
    if label == "one count":
        return np.full(n, 10**6), weights
    if label == "counts 1..3 and zero weights":  # tasks with C = 1 add to ell only
        weights[::7] = 0.0
        return rng.integers(1, 4, n), weights
    raise AssertionError(label)


@pytest.mark.parametrize("n", [1500, 12_000])
@pytest.mark.parametrize("label", LABELS)
def test_lattice_equals_pair_by_pair_sums(
    monkeypatch: pytest.MonkeyPatch, label: str, n: int
) -> None:
    c, w = _inputs(label, n)
    mean, variance = _through_lattice(monkeypatch, c, w)
    exact_mean, exact_variance = _pair_by_pair(monkeypatch, c, w)
    assert mean == pytest.approx(exact_mean, rel=BOUND_MEAN)
    assert variance == pytest.approx(exact_variance, rel=BOUND_VARIANCE)


def test_nodes_off_the_lattice(monkeypatch: pytest.MonkeyPatch) -> None:
    """Four halvings of the quadrature step put nodes between lattice points: a second fold."""
    c, w = _inputs("counts 100..20000", 3000)
    monkeypatch.setattr(reciprocal, "_SETTLED", -1.0)
    folds = []
    original = lattice.LatticeSum._fold

    def spy(self: lattice.LatticeSum, phase: int) -> tuple[int, np.ndarray, np.ndarray]:
        folds.append(phase)
        return original(self, phase)

    monkeypatch.setattr(lattice.LatticeSum, "_fold", spy)
    mean, variance = _through_lattice(monkeypatch, c, w)
    assert set(folds) == {0, 32}
    exact_mean, exact_variance = _pair_by_pair(monkeypatch, c, w)
    assert mean == pytest.approx(exact_mean, rel=BOUND_MEAN)
    assert variance == pytest.approx(exact_variance, rel=BOUND_VARIANCE)


def _enumerated(candidates: list[int], weights: list[float]) -> tuple[float, float]:
    ranks = np.array(list(itertools.product(*(range(1, c + 1) for c in candidates))), float)
    values = 1.0 / np.average(1.0 / ranks, axis=-1, weights=weights)
    mean = math.fsum(values) / values.size
    return mean, math.fsum((values - mean) ** 2) / values.size


@pytest.mark.parametrize(
    ("candidates", "weights"),
    [
        ([2, 3, 4, 5, 7, 3], [1.0, 0.3, 2.5, 0.7, 1.1, 0.9]),
        ([70, 2, 90, 3], [0.2, 1.0, 3.0, 0.6]),
        ([300, 2, 257], [1.0, 2.0, 0.5]),
    ],
)
def test_lattice_against_exact_enumeration(
    monkeypatch: pytest.MonkeyPatch, candidates: list[int], weights: list[float]
) -> None:
    c, w = np.array(candidates), np.array(weights)
    mean, variance = _through_lattice(monkeypatch, c, w)
    exact_mean, exact_variance = _enumerated(candidates, weights)
    assert mean == pytest.approx(exact_mean, rel=BOUND_MEAN)
    assert variance == pytest.approx(exact_variance, rel=BOUND_VARIANCE)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(st.integers(1, 6), st.floats(0.01, 100.0)),
        min_size=1,
        max_size=4,
    )
)
@example([(1, 11.0), (2, 0.03125)])  # a dominant certain task: V far below rounding of values
def test_lattice_against_enumeration_property(
    monkeypatch: pytest.MonkeyPatch, tasks: list[tuple[int, float]]
) -> None:
    """Any few tasks with any positive weights, through the lattice: the exact moments."""
    candidates, weights = [c for c, _ in tasks], [w for _, w in tasks]
    if max(candidates) == 1:
        return  # no spread: the lattice is not reached
    mean, variance = _through_lattice(monkeypatch, np.array(candidates), np.array(weights))
    # in rational arithmetic: with a dominant certain task the variance is far below the
    # rounding of the values themselves
    w = [Fraction(x) for x in weights]
    values = [
        sum(w) / sum(x / r for x, r in zip(w, ranks, strict=True))
        for ranks in itertools.product(*(range(1, c + 1) for c in candidates))
    ]
    exact_mean = sum(values) / len(values)
    exact_variance = sum((x - exact_mean) ** 2 for x in values) / len(values)
    assert mean == pytest.approx(float(exact_mean), rel=BOUND_MEAN)
    assert variance == pytest.approx(float(exact_variance), rel=BOUND_VARIANCE, abs=1e-300)


def _mp_moments(c: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """E and V of 1/X by 30-digit quadrature, the transform of every (C, w) summed directly."""
    pairs, multiplicity = np.unique(np.stack([c, w]), axis=1, return_counts=True)
    with mp.workdps(30):
        total = mp.fsum(mp.mpf(float(x)) for x in w)
        groups = [
            (int(count), mp.mpf(float(weight)) / total, int(m))
            for (count, weight), m in zip(pairs.T, multiplicity, strict=True)
        ]
        inverse = {k: [1 / mp.mpf(j) for j in range(1, k + 1)] for k, _, _ in groups}

        def transform(t: mp.mpf) -> mp.mpf:
            log = mp.mpf(0)
            for count, share, m in groups:
                s = t * share
                log += m * mp.log(mp.fsum(mp.exp(-s * y) for y in inverse[count]) / count)
            return mp.exp(log)

        mu = mp.fsum(m * share * mp.fsum(inverse[k]) / k for k, share, m in groups)
        points = [0, *(mp.mpf(x) / mu for x in (0.3, 1, 3, 10, 30, 100, 1e3, 1e4)), mp.inf]
        first = mp.quad(transform, points)
        second = mp.quad(lambda t: t * transform(t), points)
        return float(first), float(second - first**2)


@pytest.mark.parametrize(
    ("counts", "weights", "n"),
    [
        ([2, 3, 4, 5, 6, 7], None, 20),  # a distinct weight per task
        ([3, 10, 50], [0.5, 1.3, 2.0], 100_000),  # many tasks, few distinct pairs
    ],
)
def test_lattice_against_mpmath_quadrature(
    monkeypatch: pytest.MonkeyPatch, counts: list[int], weights: list[float] | None, n: int
) -> None:
    rng = np.random.default_rng(7)
    c = rng.choice(counts, n)
    w = rng.uniform(0.5, 2.0, n) if weights is None else rng.choice(weights, n)
    mean, variance = _through_lattice(monkeypatch, c, w)
    exact_mean, exact_variance = _mp_moments(c, w)
    assert mean == pytest.approx(exact_mean, rel=BOUND_MEAN)
    assert variance == pytest.approx(exact_variance, rel=BOUND_VARIANCE)


@pytest.mark.parametrize("phase", [0, 32])
def test_lattice_sums_equal_the_transform_of_every_pair(phase: int) -> None:
    """K and ell at nodes on and between lattice points against every pair's own transform."""
    rng = np.random.default_rng(2)
    c = np.concatenate([rng.integers(2, 64, 100), rng.integers(64, 10**7, 900)])
    a = rng.uniform(0.5, 2.0, c.size)
    a /= a.sum()
    multiplicity = rng.integers(1, 4, c.size).astype(np.float64)
    task = reciprocal._HarmonicTask(c)
    mu = float(np.sum(multiplicity * a * task.mean))
    sums = lattice.LatticeSum(
        c, a, multiplicity, mu, lambda k: reciprocal._HarmonicTask(k).tabulate
    )
    assert sums.table_counts.size < 500  # counts folded in log C
    v = lattice.STEP * (np.arange(-300, 200, 7) + phase / 64)
    u = np.exp(v)
    centred, log_transform = sums(u)
    k, ell = task(a[:, None] * (u / mu)[None, :], np.arange(c.size))
    np.testing.assert_allclose(centred, multiplicity @ k, rtol=1e-14)
    np.testing.assert_allclose(log_transform, multiplicity @ ell, rtol=1e-14)


def test_interpolation_in_log_s_converges() -> None:
    """The stencil error falls ~60x per two points: 16 points leave it far below rounding."""
    task = reciprocal._HarmonicTask(np.array([2]))
    rng = np.random.default_rng(4)
    k = np.arange(-200, 160)
    sigma = k * lattice.STEP
    centred, _ = task(np.exp(sigma)[None, :], np.array([0]))
    table = centred[0] * np.exp(-2.0 * sigma)
    delta = rng.random(300)
    base = rng.integers(20, k.size - 20, 300)
    weights = lattice._stencil_weights(delta)
    values = np.sum(weights * table[base[:, None] + lattice._OFFSETS[None, :]], axis=1)
    x = (k[base] + delta) * lattice.STEP
    exact, _ = task(np.exp(x)[None, :], np.array([0]))
    error = np.max(np.abs(values * np.exp(2.0 * x) / exact[0] - 1.0))
    assert error < 2e-15
    assert np.allclose(weights.sum(axis=1), 1.0, rtol=0, atol=1e-15)


def test_count_intervals_reproduce_smooth_sums() -> None:
    rng = np.random.default_rng(5)
    counts = np.unique(np.exp(rng.uniform(0.0, np.log(1e9), 20_000)).astype(np.int64) + 1)
    nodes, position, intervals = count_intervals(counts, 64)
    assert nodes.size < 1200
    assert np.all(position[counts < 64] >= 0)
    assert np.all(nodes[position[position >= 0]] == counts[position >= 0])
    members = np.concatenate([m for m, _ in intervals])
    assert np.all(position[members] == -1)
    assert np.sum(position >= 0) + members.size == counts.size
    for function in (lambda x: np.log(x) ** 2 / x, lambda x: np.sqrt(x) / (1.0 + x / 1e4)):
        exact = np.sum(function(counts.astype(np.float64)))
        folded = np.sum(function(counts[position >= 0].astype(np.float64)))
        for member, node_positions in intervals:
            basis = lagrange_basis(
                np.log(nodes[node_positions].astype(np.float64)),
                np.log(counts[member].astype(np.float64)),
            )
            folded += np.sum(basis @ function(nodes[node_positions].astype(np.float64)))
        assert folded == pytest.approx(exact, rel=1e-14)
    assert max(n.size for _, n in intervals) <= interpolation.DEGREE + 1


def test_weighted_moments_unchanged_by_scaling_and_order(monkeypatch: pytest.MonkeyPatch) -> None:
    c, w = _inputs("counts 100..20000", 5000)
    base = _through_lattice(monkeypatch, c, w)
    order = np.random.default_rng(6).permutation(c.size)
    assert _through_lattice(monkeypatch, c[order], 3.5 * w[order]) == pytest.approx(base, rel=1e-13)
