"""The gap sums' inner sums interpolated between the counts (``median_gap_intervals``)."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from rankstats.null import median_gap
from rankstats.null import median_gap_intervals as intervals
from rankstats.null.grouping import distinct_counts
from rankstats.null.median_even import window_nodes
from rankstats.null.median_gap import _running_sum, gap_sums, interpolation_plan
from rankstats.null.median_tails import _Candidates, _Evaluator
from support import record_found


@pytest.mark.parametrize("seed", range(4))
def test_interval_points_are_distinct_integers_in_range(seed: int) -> None:
    rng = np.random.default_rng(seed)
    nu = rng.integers(3, intervals.NU_MAX + 1, size=400)
    lo = np.floor(rng.uniform(1.0, 1e6, size=nu.size))
    hi = lo + nu + rng.integers(0, 3 * intervals.NU_MAX, size=nu.size)
    points = intervals._interval_points(lo, hi, nu)
    for row, count, low, high in zip(points, nu, lo, hi, strict=True):
        real = row[~np.isnan(row)]
        assert real.size == count
        assert np.all(np.diff(real) >= 1.0)
        assert np.all(real == np.floor(real))
        assert real[0] >= low
        assert real[-1] <= high


@pytest.mark.parametrize(
    ("lo", "hi", "power", "log_pole"),
    [
        (165.0, 220.0, 50.0, -32.0),  # no count below: the pole weighs e^-cut
        (1048.0, 1072.0, 41.0, 0.0),  # next to a count
        (3000.0, 3144.0, 30.0, -0.5),
        (600.0, 660.0, 41.0, -2.0),
        (20_000.0, 26_000.0, 12.0, -41.0),
    ],
)
def test_points_needed_bound_interpolation_of_the_pole(
    lo: float, hi: float, power: float, log_pole: float
) -> None:
    r"""Interpolating :math:`1 + \kappa (l / y)^p` through the chosen points: within 1e-15.

    (The pole of order :math:`p` at 0 with its weight, and a smooth part; both parts of the
    bound. Evaluated in long double against the function itself.)
    """
    nu = intervals._points_needed(
        np.array([lo]), np.array([hi]), np.array([power]), np.array([log_pole])
    )
    assert int(nu[0]) <= intervals.NU_MAX
    points = intervals._interval_points(np.array([lo]), np.array([hi]), nu)
    kappa = math.exp(log_pole)

    def f(y: np.ndarray) -> np.ndarray:
        wide = y.astype(np.longdouble)
        return np.asarray(1.0 + kappa * (np.longdouble(lo) / wide) ** int(power), dtype=float)

    at = np.linspace(lo + 0.25, hi - 0.25, 997)
    at = at[at != np.floor(at)]
    rows = np.repeat(points, at.size, axis=0)
    values = np.where(np.isnan(rows), 0.0, f(np.nan_to_num(rows, nan=lo)))[None]
    got = intervals._barycentric(
        rows, np.repeat(intervals._weights(points), at.size, axis=0), values, at
    )[0]
    np.testing.assert_allclose(got, f(at), rtol=1e-15, atol=0.0)


def test_running_sum_is_exact_to_its_low_part() -> None:
    """The high and low parts of the running sums against exact rational sums."""
    rng = np.random.default_rng(2)
    steps = 40.0 * np.log1p(1.0 / np.arange(1.0, 200_001.0)) * rng.uniform(0.5, 1.0, 200_000)
    high, low = _running_sum(steps)
    exact = Fraction(0)
    checked = 0
    for k, step in enumerate(steps.tolist(), start=1):
        exact += Fraction(step)
        if k % 9_973 == 0:
            error = Fraction(high[k]) + Fraction(low[k]) - exact
            assert abs(float(error)) <= 1e-26 * float(exact)
            checked += 1
    assert checked > 10
    # the high part alone carries the plain running sum's roundings
    assert float(Fraction(high[-1]) - exact) != 0.0


def _parts(candidates: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    values, counts = distinct_counts(candidates)
    below = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    return values.astype(np.float64), counts.astype(np.float64), below


class _Window:
    """A median's window of the middle ranks, its Gram nodes (with the plan's hard nodes
    enumerated) and the interpolation's cells, as the even median takes them."""

    tolerance = 1e-14

    def __init__(self, candidates: np.ndarray) -> None:
        self.cands = cands = _Candidates(candidates)
        self.a = a = candidates.size // 2
        self.lo = max(cands.window(a)[0], 1)
        self.hi = min(cands.window(a + 1)[1], cands.c_max)
        self.c0 = float(cands.centre(self.lo, self.hi))
        self.values, self.counts, self.below = _parts(candidates)
        nodes = window_nodes(cands, self.lo, self.hi, int(self.c0))
        hard, _, self.cells = interpolation_plan(
            self.values, self.below, a, nodes.x, self.tolerance
        )
        self.x, self.w = nodes.enumerated(hard) if hard.size else (nodes.x, nodes.w)
        self.evaluator = _Evaluator(cands, float(self.lo), float(self.hi), 0.0)

    def sums(self, y: np.ndarray, weights: np.ndarray, **options: Any) -> list[float] | None:
        """The gap sums at nodes ``y`` with the input's point masses there."""
        mass = self.evaluator.evaluate(y, 0.0, [], [self.a])[2][:, 0]
        return gap_sums(
            self.values,
            self.below,
            self.a,
            y,
            weights,
            mass,
            self.c0,
            tolerance=self.tolerance,
            **options,
        )


@pytest.mark.parametrize(
    "candidates",
    [
        np.random.default_rng(0).integers(1_000, 2_001, size=100),
        np.random.default_rng(1).integers(1, 3_001, size=64),
        np.random.default_rng(2).integers(1, 14_506, size=100),
        np.random.default_rng(3).integers(1, 5_001, size=80),
    ],
    ids=["n=100 C~U[1e3,2e3]", "n=64 C~U[1,3e3]", "n=100 C~U[1,14505]", "n=80 C~U[1,5e3]"],
)
def test_gram_nodes_against_every_integer(
    candidates: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> None:
    r"""The gap sums at the window's Gram nodes (interpolated inner sums) against every integer.

    With the point masses :math:`P(N_y = a)` of the input at both (the same smooth function of
    :math:`y` between the counts), and the panels of nodes that cannot be interpolated summed
    at every integer, as the median's moments do. The sums over every integer of the window
    are exact in :math:`y` (each node's inner sum over every pair).
    """
    taken = record_found(monkeypatch, median_gap, "_interpolated")
    window = _Window(candidates)
    assert not bool(np.all(window.x == np.floor(window.x)))
    got = window.sums(window.x, window.w)
    assert taken == [True]  # the inner sums were interpolated
    assert got is not None
    every = np.arange(float(window.lo), float(window.hi) + 1.0)
    expected = window.sums(every, np.ones(every.size))
    assert expected is not None
    # the last weight changes sign at s = 2 c0: its sum is small against its terms
    scale = window.sums(
        every,
        np.ones(every.size),
        phi=lambda s: [np.abs(weight) for weight in median_gap._inverse_weights(s, window.c0)],
    )
    assert scale is not None
    assert got[0] == pytest.approx(expected[0], rel=1e-13)
    assert abs(got[1] - expected[1]) <= 1e-13 * scale[0]
    assert abs(got[2] - expected[2]) <= 1e-13 * scale[1]


def test_the_plan_of_the_choice_serves_the_gap_sums(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cells planned on every Gram node (when the nodes are chosen) serve the nodes the gap
    sums keep, with the same sums as a plan of their own; a node the cells do not hold takes a
    plan of its own."""
    window = _Window(np.random.default_rng(2).integers(1, 14_506, size=100))
    planned = record_found(monkeypatch, intervals, "_restricted")
    own = window.sums(window.x, window.w)
    handed = window.sums(window.x, window.w, cells=window.cells)
    assert planned == [False, True]
    assert own is not None
    assert handed is not None
    np.testing.assert_allclose(handed, own, rtol=1e-15)
    # cells that miss a node (one in the middle of the window, which the gap sums keep): planned
    # afresh
    cells = window.cells
    drop = np.arange(cells.at.size) != cells.at.size // 2
    partial = intervals.Cells(cells.at[drop], cells.cell[drop], cells.points, cells.probe)
    planned.clear()
    again = window.sums(window.x, window.w, cells=partial)
    assert planned == [False]
    assert again == own
