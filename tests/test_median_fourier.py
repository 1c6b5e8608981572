"""The median's Fourier inversion: its power tables, series, degree and Chebyshev interpolant.

The reference for tails and point masses is the law of the count :math:`N_x` built task by task
in extended precision (``np.longdouble``, 64-bit significand: its roundings stay near 1e-16
relative after a few thousand tasks), independent of the power sums and of the inversion.
"""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

import rankstats.null.median as median_module
import rankstats.null.median_fourier as fourier
import rankstats.null.median_tails as tails
from rankstats import InverseMedianRank, MedianRank
from rankstats.null.median_even import window_nodes
from rankstats.null.median_fourier import Inversion
from rankstats.null.median_tails import _Candidates, _Evaluator


@pytest.fixture(autouse=True)
def _fresh_distributions() -> None:
    median_module._CACHE.clear()


def _law(counts: np.ndarray, x: np.ndarray, t: float = 0.0) -> np.ndarray:
    """P(N = k) for k = 0..n at each node, with success probabilities min(1, x / (C - t))."""
    values = np.sort(counts).astype(np.longdouble)
    nodes = x.astype(np.longdouble)[:, None]
    law = np.zeros((x.size, counts.size + 1), dtype=np.longdouble)
    law[:, 0] = 1
    for i, c in enumerate(values):
        q = np.minimum(np.longdouble(1), nodes / np.maximum(c - np.longdouble(t), nodes))
        law[:, 1 : i + 2] = law[:, 1 : i + 2] * (1 - q) + law[:, : i + 1] * q
        law[:, 0] *= 1 - q[:, 0]
    return law


def _inverted(
    evaluator: _Evaluator, x: np.ndarray, t: float, cdf_at: list[int], pmf_at: list[int]
) -> tuple[np.ndarray, ...]:
    """:meth:`Inversion.invert` at every node, each with its power table's anchor 100^b <= x."""
    bucket = np.floor(np.log10(x) / 2.0).astype(np.int64)
    outs = [np.zeros((x.size, len(cdf_at))), np.zeros((x.size, len(cdf_at)))]
    outs.append(np.zeros((x.size, len(pmf_at))))
    for b in np.unique(bucket):
        rows = bucket == b
        found = evaluator.fourier.invert(
            x[rows], np.full(int(rows.sum()), t), cdf_at, pmf_at, int(b)
        )
        for out, part in zip(outs, found, strict=False):
            out[rows] = part
    return tuple(outs)


def _window(counts: np.ndarray) -> tuple[_Candidates, np.ndarray, int]:
    cands = _Candidates(*np.unique(counts, return_counts=True))
    a = counts.size // 2
    lo, hi = cands.window(a)
    return cands, window_nodes(cands, lo, hi, cands.centre(lo, hi)).x, a


def _shapes() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    return {
        # a filtered dataset's counts (all near twice the median): every task in the table
        "near twice the median": 14_541 - rng.integers(0, 1_000, size=1_200),
        # spread counts: tasks near certainty go through the complement series, others one by one
        "spread": rng.integers(2, 400, size=301),
        "two clusters": np.concatenate(
            (rng.integers(900, 1_000, size=300), rng.integers(50_000, 60_000, size=500))
        ),
    }


@pytest.mark.parametrize("shape", list(_shapes()))
def test_inversion_matches_the_law_at_the_nodes(shape: str) -> None:
    """Tails and point masses of the inversion within 1e-14 absolute, across the window.

    The series' degree now follows the decay of the characteristic function (18 terms where 35
    had been asked at 4,000 tasks); this is where a cut too early would show.
    """
    counts = _shapes()[shape]
    cands, x, a = _window(counts)
    x = x[:: max(1, x.size // 150)]  # the reference costs a law of n tasks per node
    evaluator = _Evaluator(cands, float(x.min()), float(x.max()), 0.0)
    low, up, pmf = _inverted(evaluator, x, 0.0, [a - 1], [a])
    law = _law(counts, x)
    expected_low = np.asarray(law[:, :a].sum(axis=1), dtype=np.float64)
    expected_up = np.asarray(law[:, a:].sum(axis=1), dtype=np.float64)
    assert np.max(np.abs(low[:, 0] - expected_low)) < 1e-14
    assert np.max(np.abs(up[:, 0] - expected_up)) < 1e-14
    assert np.max(np.abs(pmf[:, 0] - np.asarray(law[:, a], dtype=np.float64))) < 1e-15


def test_inversion_with_a_shift_matches_the_law() -> None:
    """With a shift t the tasks succeed with x / (C - t): the series in t / C is used too."""
    counts = _shapes()["two clusters"]
    cands, x, a = _window(counts)
    x = x[:: max(1, x.size // 40)]
    t = 37.0
    evaluator = _Evaluator(cands, float(x.min()), float(x.max()), t)
    low, _, pmf = _inverted(evaluator, x, t, [a - 1], [a])
    law = _law(counts, x, t)
    assert np.max(np.abs(low[:, 0] - np.asarray(law[:, :a].sum(axis=1), np.float64))) < 1e-14
    assert np.max(np.abs(pmf[:, 0] - np.asarray(law[:, a], np.float64))) < 1e-15


def test_series_powers_against_mpmath() -> None:
    r"""(-1)^{s-1} w^s / s in polar form, within a few units in the last place per power."""
    theta = (np.arange(40) + 0.5) * (2.0 * np.pi / 714.0)
    theta = np.concatenate((theta, [0.5, 1.0, 2.0, 3.1]))
    re, im = fourier._series_powers(theta, 60)
    worst = 0.0
    with mp.workdps(40):
        for j, angle in enumerate(theta):
            w = mp.exp(1j * mp.mpf(float(angle))) - 1
            for s in range(2, 61):
                exact = (-1) ** (s - 1) * w**s / s
                size = abs(exact)
                error = abs(mp.mpc(float(re[s - 1, j]), float(im[s - 1, j])) - exact) / size
                worst = max(worst, float(error) / s)
            assert im[0, j] == pytest.approx(float(mp.sin(angle) - angle), rel=1e-15)
    assert worst < 4e-16


def test_power_table_blocks_change_no_bit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Columns built in blocks of any size equal those built one power at a time."""
    rng = np.random.default_rng(11)
    counts = np.exp(rng.uniform(0.0, np.log(1e9), size=5_000)).astype(np.int64) + 1
    cands = _Candidates(*np.unique(counts, return_counts=True))
    y = np.sort(rng.uniform(100.0, 5_000.0, size=50))

    def table() -> np.ndarray:
        built = fourier._PowerTable(cands, 100.0, 100.0, 10_000.0)
        built.query(y, 3)  # grown twice: from 3 columns to 40
        return built.query(y, 40)

    blocks = table()
    monkeypatch.setattr(fourier, "_BLOCK_TERMS", 1)
    assert np.array_equal(blocks, table())
    assert np.all(np.isfinite(blocks))
    assert np.all(blocks[:, 0] > 0)


def test_least_work_bounds_the_programme() -> None:
    """The closed-form bound never passes the work with the reach (it only rejects early)."""
    rng = np.random.default_rng(2)
    ratios = []
    for trial in range(3_000):
        items = int(rng.integers(1, 3_000))
        values = np.sort(rng.integers(1, 10 ** int(rng.integers(1, 9)), size=items)) + 5.0
        if trial % 3 == 0:
            values[:] = values[-1]
        x = float(rng.uniform(1.0, max(values.min() * rng.uniform(0.01, 1.0), 1.5)))
        top = int(rng.integers(0, items + 1))
        decided = int(rng.integers(-1, top + 1))
        q = np.minimum(1.0, x / values)
        real = tails._programme_work(tails._settle_rows(tails._reach(q), decided, top), top)
        low = tails._least_work(items, x / max(values[-1], x), decided, top)
        assert low <= real
        if real:
            ratios.append(low / real)
    assert np.median(ratios) > 0.2  # and it is not vacuous


def _smooth_calls(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    used: list[bool] = []
    original = Inversion.smooth

    def spy(self: Inversion, *args: object) -> object:
        found = original(self, *args)  # type: ignore[arg-type]
        used.append(found is not None)
        return found

    monkeypatch.setattr(Inversion, "smooth", spy)
    return used


def test_interpolant_matches_the_inversion(monkeypatch: pytest.MonkeyPatch) -> None:
    """A count-free chunk takes the interpolant: 129 points for its ~540 nodes, within 1e-14."""
    counts = 14_541 - np.random.default_rng(1).integers(0, 1_000, size=4_000)
    cands, x, a = _window(counts)
    points: list[int] = []
    original = Inversion.invert

    def counted(self: Inversion, nodes: np.ndarray, *args: object) -> object:
        points.append(nodes.size)
        return original(self, nodes, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(Inversion, "invert", counted)
    inversion = Inversion(cands, float(x.min()), float(x.max()), 0.0)
    smooth = inversion.smooth(x, np.zeros(x.size), [a - 1], [a], 1)
    assert smooth is not None
    assert points == [129 + 3]
    direct = original(inversion, x, np.zeros(x.size), [a - 1], [a], 1)
    for got, expected in zip(smooth[:3], direct[:3], strict=True):
        assert np.max(np.abs(got - expected)) < 1e-14
    # no interpolant with a shift, nor across a count (the tails kink there)
    assert inversion.smooth(x, np.ones(x.size), [a - 1], [a], 1) is None
    inside = _Candidates(*np.unique(np.append(counts, int(x.mean())), return_counts=True))
    assert Inversion(inside, 1.0, 2e4, 0.0).smooth(x, np.zeros(x.size), [a], [], 1) is None


def test_interpolated_moments_against_the_exact_law(monkeypatch: pytest.MonkeyPatch) -> None:
    """Moments through the interpolant agree with those from exact tails at every node.

    The reference replaces the evaluator's tails by the extended-precision law. Taking the
    upper tail as one less the interpolated lower one had left it 1e-15 off where it is tiny,
    and the variance 1.4e-14 off at this size (3.5e-14 on the inverse median's).
    """
    counts = 14_541 - np.random.default_rng(3).integers(0, 1_000, size=1_000)
    used = _smooth_calls(monkeypatch)

    def moments() -> np.ndarray:
        median_module._CACHE.clear()
        return np.array(
            [
                MedianRank().expected_value(counts),
                MedianRank().variance(counts),
                InverseMedianRank().expected_value(counts),
                InverseMedianRank().variance(counts),
            ]
        )

    smooth = moments()
    assert used
    assert all(used)

    def exact(
        self: _Evaluator, x: np.ndarray, t: object, cdf_at: list[int], pmf_at: list[int]
    ) -> tuple[np.ndarray, ...]:
        law = _law(counts, x)
        (m,) = cdf_at
        low = law[:, : m + 1].sum(axis=1)
        return (
            np.asarray(low, np.float64)[:, None],
            np.asarray(1 - low, np.float64)[:, None],
            np.asarray(law[:, list(pmf_at)], np.float64),
            np.zeros(x.size),
        )

    monkeypatch.setattr(_Evaluator, "evaluate", exact)
    reference = moments()
    assert np.all(np.abs(smooth - reference) <= 2e-14 * np.abs(reference)), (smooth, reference)


@pytest.mark.parametrize(("size", "spread"), [(200, 0.07), (60, 0.5), (400, 0.9)])
def test_series_degree_bounds_the_cut(size: int, spread: float) -> None:
    r"""The series cut at the chosen degree leaves at most 1e-21 once weighted by :math:`|\varphi|`.

    In 40 digits over the angles the inversion uses, for the tasks the series serve
    (:math:`q |w|_{\max} \le \rho`; the others go one by one): the exact
    :math:`\sum \log(1 + q w)` against the cut series, at the least variance of all the tasks.
    """
    rng = np.random.default_rng(size)
    counts = np.round(2.0 * 7_000.0 * (1.0 - spread * rng.random(size))) + 1.0
    x = 7_000.0 * (1.0 - spread) * 0.9
    q = x / counts
    var = float(np.sum(q * (1.0 - q)))
    theta_max = np.pi if var <= 27.5 else float(np.arccos(1.0 - 55.0 / var))
    w_abs = 2.0 * np.sin(theta_max / 2.0)
    rho = max(min(0.8, w_abs, w_abs * float(q.max())), 1e-3)
    degree = fourier._series_degree(float(size), var, rho, w_abs)
    served = q[q * w_abs <= rho]
    assert served.size >= size // 3
    worst = mp.mpf(0)
    with mp.workdps(40):
        qs = [mp.mpf(float(v)) for v in served]
        power_sums = [mp.fsum(v**s for v in qs) for s in range(degree + 1)]
        for angle in np.linspace(theta_max / 40.0, theta_max, 40):
            w = mp.exp(1j * mp.mpf(float(angle))) - 1
            exact = mp.fsum(mp.log(1 + v * w) for v in qs)
            cut = mp.fsum((-1) ** (s - 1) * w**s / s * power_sums[s] for s in range(1, degree + 1))
            weight = mp.exp(-var * (1 - mp.cos(mp.mpf(float(angle)))))
            worst = max(worst, abs(exact - cut) * weight)
    assert worst < 1e-21
