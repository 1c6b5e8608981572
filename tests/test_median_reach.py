"""The exact programme's reach: counts dropped once the tasks left cannot plausibly pass them.

:func:`~rankstats.null.median_tails._reach` bounds what the tasks still to come can add with a
Chernoff bound; the programme settles counts below it. Checked here: the bound against the exact
Poisson-binomial tail (mpmath, 50 digits), and the programme's tails with and without the reach
on the input that needed it (a small count beside 10^12, where the tasks at 10^12 almost never
succeed and the programme's band shrinks from a thousand counts to a few dozen).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

import rankstats.null.median_band as band_module
from rankstats.null.median_tails import _Candidates, _Evaluator, _reach


def _log_tail(q: list[float], s: int) -> float:
    """log P(R >= s) for R the number of successes of independent Bernoulli(q_i), exactly."""
    with mpmath.workdps(50):
        law = [mpmath.mpf(1)]
        for qi in q:
            p = mpmath.mpf(qi)
            law = [
                (law[j] if j < len(law) else 0) * (1 - p) + (law[j - 1] * p if j > 0 else 0)
                for j in range(len(law) + 1)
            ]
        tail = mpmath.fsum(law[s:])
        return -math.inf if tail == 0 else float(mpmath.log(tail))


@pytest.mark.parametrize("seed", range(6))
def test_the_reach_bounds_the_tail_of_the_tasks_left(seed: int) -> None:
    rng = np.random.default_rng(seed)
    likely = rng.uniform(0.05, 1.0, size=int(rng.integers(0, 15)))
    unlikely = 10.0 ** rng.uniform(-13, -3, size=int(rng.integers(5, 40)))
    q = np.concatenate((likely, unlikely))
    reach = _reach(q)
    assert reach.shape == q.shape
    for k in range(q.size):
        left = q.size - k
        assert 0 <= reach[k] <= left
        if reach[k] < left:
            assert _log_tail(q[k:].tolist(), int(reach[k]) + 1) <= band_module.LOG_REACH


def test_the_reach_of_unlikely_tasks_is_short() -> None:
    """Three hundred tasks at 1e-12..1e-10 (a count of 40 beside 10^12): a few dozen counts."""
    q = 10.0 ** np.random.default_rng(7).uniform(-12, -10, size=300)
    reach = _reach(q)
    assert reach.max() <= 40
    assert _log_tail(q.tolist(), int(reach[0]) + 1) <= band_module.LOG_REACH


def test_certain_and_impossible_tasks() -> None:
    assert _reach(np.ones(5)).tolist() == [5, 4, 3, 2, 1]
    assert _reach(np.zeros(4)).tolist() == [0, 0, 0, 0]


@pytest.mark.parametrize(("small", "tasks"), [(39, 1000), (60, 700), (10, 2000)])
def test_the_programme_keeps_every_tail_with_the_reach(
    small: int, tasks: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Half the tasks at a small count, half at 10^12: the lower middle rank's small tails.

    These nodes had exceeded the programme's budget without the reach and fell to the Fourier
    inversion (V of the inverse median off by up to 7e-12); with it, the programme costs a few
    per cent of its old work and agrees with the programme without it to the last digits.
    """
    values = np.array([small, 10**12])
    counts = np.array([tasks, tasks])
    cands = _Candidates(values, counts)
    x = np.linspace(small - 3, small - 0.1, 48)
    t = np.zeros_like(x)
    a = tasks  # the lower middle rank: the count of ranks at most x reaches n / 2
    evaluator = _Evaluator(cands, float(x.min()), float(x.max()), 0.0)
    assert evaluator._small_tail_cheap(x, t, [a], [a, a + 1])
    with_reach = evaluator._dp(x, t, [a], [a, a + 1], force=True)
    monkeypatch.setattr(band_module, "LOG_REACH", -math.inf)
    assert not evaluator._small_tail_cheap(x, t, [a], [a, a + 1])
    without = evaluator._dp(x, t, [a], [a, a + 1], force=True)
    assert with_reach is not None
    assert without is not None
    upper = without[1]
    # the small tails the reach is for, from 1e-3 down; below 1e-300 it leaves 1e-320 absolute
    assert upper.max() < 1e-3
    assert np.count_nonzero(upper > 1e-300) >= 3
    # the small tails and point masses to their last digits; the lower tails, near 1, to the
    # programme's drift of mass (p + q rounds off 1 by an ulp, a thousand tasks alike)
    _, up, pmf, log_factor = with_reach
    np.testing.assert_allclose(up, upper, rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(pmf, without[2], rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(with_reach[0], without[0], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(log_factor, without[3])
