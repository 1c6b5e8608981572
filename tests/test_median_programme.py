"""The exact programme's blocks: the law of a count, sixteen tasks at a time.

:func:`~rankstats.null.median_tails._programme` convolves each block's own law with the band of
live counts, pools the counts above ``top`` and settles the rows below each block's first
settle row. Checked here against the same process run task by task in 40-digit arithmetic:
with nothing settled it is the law of the count, and with rows settled at block starts it drops
exactly the mass the task-by-task process drops.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

import rankstats.null.median_tails as tails_module
from rankstats.null.median_tails import (
    _DP_BLOCK,
    _Candidates,
    _Evaluator,
    _programme,
    _task_rows,
)
from support import record_found


def _task_by_task(q: np.ndarray, settles: np.ndarray, top: int) -> tuple[list, list]:
    """Counts 0..top and the pool above, and the settled mass, per node, in 40 digits."""
    dists, settled = [], []
    with mpmath.workdps(40):
        for node in range(q.shape[1]):
            dist = [mpmath.mpf(1)] + [mpmath.mpf(0)] * (top + 1)
            gone = mpmath.mpf(0)
            for k in range(q.shape[0]):
                for j in range(int(settles[k])):
                    gone += dist[j]
                    dist[j] = mpmath.mpf(0)
                qk = mpmath.mpf(float(q[k, node]))
                pk = 1 - qk
                new = [dist[j] * pk for j in range(top + 1)] + [dist[top + 1]]
                for j in range(top + 1):
                    new[j + 1] += dist[j] * qk
                dist = new
            dists.append(dist)
            settled.append(gone)
    return dists, settled


def _assert_close(got: np.ndarray, expected: list, rtol: float) -> None:
    want = np.array([float(v) for v in expected])
    big = want > 1e-300
    np.testing.assert_allclose(got[big], want[big], rtol=rtol)
    assert np.all(got[~big] <= 1e-290)


@pytest.mark.parametrize("seed", range(4))
def test_blocks_give_the_law_of_the_count(seed: int) -> None:
    """No row settled: every count up to top, and the pool, as task by task (tiny masses too)."""
    rng = np.random.default_rng(seed)
    items = 3 * _DP_BLOCK + int(rng.integers(1, _DP_BLOCK))  # a last block padded
    q = rng.uniform(0.0, 1.0, size=(items, 4))
    q[rng.random(q.shape) < 0.2] = 1e-12  # unlikely tasks: masses down to 1e-200 and below
    q[:, 0] = np.sort(q[:, 0])[::-1]
    top = int(rng.integers(5, items // 2))
    dist, settled = _programme(q, 1.0 - q, np.zeros(items, dtype=np.int64), top)
    expected, gone = _task_by_task(q, np.zeros(items), top)
    assert dist.shape == (top + 2, 4)
    assert np.all(settled == 0.0)
    assert all(g == 0 for g in gone)
    for node in range(4):
        _assert_close(dist[:, node], expected[node], 1e-13)


def test_task_rows_are_padded_probabilities_and_give_the_same_law() -> None:
    """The rows the programme takes: each task's chances, padded with tasks that never succeed.

    A count at or below the node is certain; above it the chances are ``x / (C - t)`` and
    ``(C - t - x) / (C - t)``, each a single rounding. Padded rows and the same rows unpadded
    give the same law to the bit.
    """
    items = np.array([3.0, 7.0, 7.0, 40.0, 1e9] * 7)  # 35 tasks: padded to 48
    x = np.array([2.0, 5.5, 30.0, 80.0])
    t = np.array([0.0, 1.0, 2.0, 0.0])
    q_rows, p_rows = _task_rows(items, x, t)
    assert q_rows.shape == p_rows.shape == (3 * _DP_BLOCK, x.size)
    room = items[:, None] - t
    inside = room > x
    np.testing.assert_array_equal(q_rows[: items.size], np.where(inside, x / room, 1.0))
    np.testing.assert_array_equal(p_rows[: items.size], np.where(inside, (room - x) / room, 0.0))
    assert np.all(q_rows[items.size :] == 0.0)
    assert np.all(p_rows[items.size :] == 1.0)
    settles = np.zeros(items.size, dtype=np.int64)
    padded = _programme(q_rows, p_rows, settles, 12)
    unpadded = _programme(q_rows[: items.size], p_rows[: items.size], settles, 12)
    for got, want in zip(padded, unpadded, strict=True):
        np.testing.assert_array_equal(got, want)


def test_rows_settled_at_block_starts_drop_what_task_by_task_drops() -> None:
    """Settle rows that rise at block starts: the band, the pool and the settled mass agree."""
    rng = np.random.default_rng(11)
    items = 5 * _DP_BLOCK - 3
    q = rng.uniform(0.2, 0.9, size=(items, 3))
    top = 30
    starts = np.repeat(np.array([0, 0, 10, 20, 28]), _DP_BLOCK)[:items]
    dist, settled = _programme(q, 1.0 - q, starts, top)
    expected, gone = _task_by_task(q, starts, top)
    for node in range(3):
        # the rows below the last settle row are empty; the others are the law's
        assert np.all(dist[: starts[-1], node] == 0.0)
        _assert_close(dist[:, node], expected[node], 1e-13)
        assert settled[node] == pytest.approx(float(gone[node]), rel=1e-13)
        assert settled[node] > 1e-3  # something was settled


def test_band_runs_join_adjacent_pieces_of_the_same_tasks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pieces over many buckets whose band's law covers the same tasks: one call, same values.

    Half the tasks at 3 and half at 10^9: above x = 3 only the large counts are uncertain, so
    every piece from there on takes the same band's law; joined, they take one call where they
    took one per chunk of each power table's range, and every value is the same to the bit.
    """
    values, counts = np.array([3, 10**9]), np.array([500, 500])
    cands = _Candidates(values, counts)
    x = np.unique(np.geomspace(3.0, 2.3e8, 3000).round())
    evaluator = _Evaluator(cands, float(x.min()), float(x.max()), 0.0)
    calls = record_found(monkeypatch, tails_module, "band_tails")  # one entry per call
    joined = evaluator.evaluate(x, 0.0, [500], [500, 501])
    joined_calls = len(calls)
    calls.clear()
    monkeypatch.setattr(
        _Evaluator, "_band_runs", lambda self, pieces, xt, asked: [[piece] for piece in pieces]
    )
    alone = evaluator.evaluate(x, 0.0, [500], [500, 501])
    assert joined_calls == 1
    assert len(calls) > 5
    for a, b in zip(joined, alone, strict=True):
        np.testing.assert_array_equal(a, b)
