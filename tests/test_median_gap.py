"""The even-n gap sums (:mod:`rankstats.null.median_gap`) against direct high-precision sums."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from rankstats.null import median_gap
from rankstats.null.grouping import distinct_counts
from rankstats.null.median_gap import _Kernel, gap_sums
from support import record_found


def _kernel_parts(candidates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct counts and the number of tasks below each (and in all, last)."""
    values, counts = distinct_counts(candidates)
    below = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    return values.astype(np.float64), below


def _reference(
    candidates: np.ndarray, a: int, y: np.ndarray, scale: np.ndarray, c0: float
) -> list[float]:
    r"""Every pair, to 30 digits: :math:`\sum_j s_j \sum_{t \ge 1} \kappa(y_j - t, y_j) \varphi(s)`.

    For a non-integer node :math:`y` the inner sum runs over :math:`x = y - t \ge 1` (the
    continuation of the integer sum that the library's rules in :math:`y` need).
    """
    sorted_counts = [mpmath.mpf(int(c)) for c in np.sort(candidates)]
    totals = [mpmath.mpf(0)] * 3
    with mpmath.workdps(30):
        for yj, sj in zip(y.tolist(), scale.tolist(), strict=True):
            ym = mpmath.mpf(yj)
            power = a - sum(1 for c in sorted_counts if c <= ym)
            for t in range(1, math.ceil(yj)):
                xm = ym - t
                if xm < 1:
                    break
                log_k = power * mpmath.log(xm / ym)
                log_k += sum(mpmath.log(xm / c) for c in sorted_counts if xm < c <= ym)
                if log_k < -50:
                    continue
                kappa = mpmath.exp(log_k) * sj
                s = xm + ym
                u1 = 2 / (s + 1) - 1 / mpmath.mpf(c0)
                u0 = 2 / s - 1 / mpmath.mpf(c0)
                u2 = 2 / (s + 2) - 1 / mpmath.mpf(c0)
                weights = (1, 4 / (s * (s + 1) * (s + 2)), u2 * u2 - 2 * u1 * u1 + u0 * u0)
                totals = [total + kappa * w for total, w in zip(totals, weights, strict=True)]
    return [float(total) for total in totals]


#: counts with kinks among the nodes, a node whose power reaches 0, counts spread widely
KINKS = np.concatenate((np.arange(300, 340, 4), np.random.default_rng(2).integers(600, 700, 30)))
FLAT = np.array([2, 3, 5, 40, 45, 50])
SPREAD = np.random.default_rng(4).integers(1, 2_000, size=24)

CASES = [
    # no count below the nodes: every node takes the plain rows (kernel (1 - t/y)^p)
    pytest.param(np.random.default_rng(1).integers(900, 1000, size=40), 20, False, id="plain"),
    # counts among integer nodes (beyond the table of running sums, patched to 0 here): most
    # nodes' reach crosses a count and takes the general pairs, a few take the plain rows
    pytest.param(
        np.concatenate((np.arange(300, 340, 4), np.random.default_rng(2).integers(600, 700, 30))),
        20,
        True,
        id="kinks",
    ),
    # a node's power a - c(y) is 0: the kernel is flat down to x = 1 (general pairs too)
    pytest.param(np.array([2, 3, 5, 40, 45, 50]), 3, True, id="flat"),
]


@pytest.mark.parametrize(("candidates", "a", "integral"), CASES)
def test_enumerated_pairs_against_every_pair(
    candidates: np.ndarray, a: int, integral: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(3)
    values, below = _kernel_parts(candidates)
    lo = float(np.sort(candidates)[a - 1]) * 0.3
    y = np.sort(rng.uniform(lo, float(np.sort(candidates)[a]), size=12)) + 0.37
    if integral:
        y = np.unique(np.floor(y))
        monkeypatch.setattr(median_gap, "_INTEGER_RANGE", 0)
    weights = rng.uniform(0.5, 1.5, size=y.size)
    mass = rng.uniform(0.2, 1.0, size=y.size)
    c0 = float(np.median(candidates)) / 2
    got = gap_sums(values, below, a, y, weights, mass, c0, tolerance=1e-20)
    assert got is not None
    expected = _reference(candidates, a, y, weights * mass, c0)
    np.testing.assert_allclose(got, expected, rtol=1e-13)


def test_lowest_explicit_against_bisection() -> None:
    """The explicit lowest x of a node against bisection for every node.

    Equal (to rounding at the cut) where no count lies in reach; where a few do (at most
    power / 8 tasks), at most a little lower: the sums then take a few more (exact) terms.
    """
    rng = np.random.default_rng(4)
    explicit_with_counts = 0
    for _ in range(20):
        candidates = rng.integers(1, 2_000, size=int(rng.integers(4, 400)))
        a = int(rng.integers(1, candidates.size // 2 + 1))
        values, below = _kernel_parts(candidates)
        kernel = _Kernel(values, below, a)
        y = rng.uniform(1.5, 2_500.0, size=300)
        y = y[kernel.exponent(y) >= 0.0]
        y = np.concatenate((y, np.floor(y[: y.size // 2])))
        y = y[y > 1.0]
        cut = np.full(y.size, 41.0)
        hi = np.maximum(np.ceil(y) - 1.0, 1.0)
        fast = kernel.lowest(y, cut)
        slow = kernel._crossing(y, cut, hi)
        np.testing.assert_array_equal(slow, _plain_bisection(kernel, y, cut))
        crossed = kernel.below[kernel.index(y)] - kernel.below[kernel.index(fast)]
        power = kernel.exponent(y)
        explicit_with_counts += int(np.count_nonzero((crossed > 0) & (fast < slow)))
        assert np.all(fast <= slow + 1.0)
        # where slow is lower, only by rounding at the cut
        edge = fast > slow
        if np.any(edge):
            np.testing.assert_allclose(kernel.log_ratio(slow[edge], y[edge]), -41.0, atol=1e-9)
        # the reach taken is at most about crossed / power longer than needed
        longer = (y - fast) - (y - slow)
        allowed = (y - slow) * 2.0 * crossed / np.maximum(power, 1.0) + 1.0
        assert np.all(longer <= allowed)
        same = crossed == 0
        assert np.all(np.abs(fast - slow)[same] <= 1.0)
    assert explicit_with_counts > 0  # the case with counts in reach was exercised


def test_plain_blocks_match_unblocked(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plain rows' blocking (rows padded to the block's widest span) changes no sum."""
    candidates = np.random.default_rng(5).integers(10_000, 12_000, size=400)
    a = 200
    values, below = _kernel_parts(candidates)
    y = np.linspace(4_000.5, 7_000.5, 300)
    weights = np.ones(y.size)
    mass = np.exp(-(((y - 5_500.0) / 700.0) ** 2))
    blocked = gap_sums(values, below, a, y, weights, mass, 5_000.0)
    monkeypatch.setattr(median_gap, "_PLAIN_BLOCK", 10**9)
    whole = gap_sums(values, below, a, y, weights, mass, 5_000.0)
    assert blocked is not None
    assert whole is not None
    np.testing.assert_allclose(blocked, whole, rtol=1e-14)


@pytest.mark.parametrize(
    ("low", "high", "a", "integral"),
    [(900, 1000, 200, False), (13_000, 14_500, 2_000, True), (10**6, 2 * 10**6, 5_000, False)],
)
def test_interpolated_inner_sums_match_every_node(
    low: int, high: int, a: int, integral: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No count below the nodes: the inner sums' interpolant against summing every node.

    With every kernel term kept (tolerance 1e-20), the two differ by rounding and by the
    interpolation only.
    """
    rng = np.random.default_rng(low)
    candidates = rng.integers(low, high, size=2 * a)
    values, below = _kernel_parts(candidates)
    centre = 0.45 * low
    y = np.sort(rng.uniform(0.8 * centre, 1.2 * centre, size=300))
    if integral:
        y = np.unique(np.floor(y))
    weights = rng.uniform(0.5, 1.5, size=y.size)
    mass = np.exp(-(((y - centre) / (0.1 * centre)) ** 2))
    c0 = centre
    calls: list[bool] = []
    real = median_gap._smooth_sums

    def spy(*args: object, **kwargs: object) -> list[float] | None:
        found = real(*args, **kwargs)  # type: ignore[arg-type]
        calls.append(found is not None)
        return found

    monkeypatch.setattr(median_gap, "_smooth_sums", spy)
    smooth = gap_sums(values, below, a, y, weights, mass, c0, tolerance=1e-20)
    assert calls == [True]
    monkeypatch.setattr(median_gap, "_smooth_sums", lambda *args, **kwargs: None)
    every = gap_sums(values, below, a, y, weights, mass, c0, tolerance=1e-20)
    assert smooth is not None
    assert every is not None
    np.testing.assert_allclose(smooth, every, rtol=1e-14)


def test_interpolated_inner_sums_fall_back_when_the_check_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An interpolant that misses its check is not used: every node is summed."""
    rng = np.random.default_rng(7)
    candidates = rng.integers(900, 1000, size=400)
    values, below = _kernel_parts(candidates)
    y = np.sort(rng.uniform(350.0, 450.0, size=200))
    args = (values, below, 200, y, np.ones(y.size), np.ones(y.size), 400.0)
    monkeypatch.setattr(median_gap, "_SMOOTH_TOLERANCE", 0.0)
    assert (
        median_gap._smooth_sums(
            median_gap._Kernel(values, below, 200),
            lambda s: [np.ones(s.size), *median_gap._inverse_weights(s, 400.0)],
            y,
            median_gap._Kernel(values, below, 200).exponent(y),
            np.full(y.size, 41.0),
            np.ones(y.size),
            3,
        )
        is None
    )
    assert gap_sums(*args) is not None


def test_a_node_without_shifts_cuts_no_piece() -> None:
    """A node whose span is 0 (nothing within reach) has no pieces and leaves the others alone.

    Its regular cuts had been (0 - 1) // step = -1, and ``np.repeat`` failed on the negative
    count ("repeats may not contain negative values"): the even median of a million tasks, half
    with counts in 2..39 and half in 1e8..1e9, raised instead of returning its moments.
    """
    from rankstats.null.median_gap_panels import kernel_pieces, shift_cuts

    values = np.array([5.0, 40.0, 300.0])
    below = np.array([0.0, 3.0, 5.0, 8.0])
    y = np.array([350.0, 120.0, 90.0])
    span = np.array([200, 0, 60])
    power = np.array([4.0, 2.0, 3.0])
    cuts = shift_cuts(values, y, span, power)
    assert cuts.regular[1] == 0
    assert cuts.kinks[1] == 0
    pieces = kernel_pieces(values, below, 8, y, span, power)
    assert not np.any(pieces.owner == 1)
    others = kernel_pieces(values, below, 8, y[[0, 2]], span[[0, 2]], power[[0, 2]])
    np.testing.assert_array_equal(pieces.starts, others.starts)
    np.testing.assert_array_equal(pieces.lengths, others.lengths)
    np.testing.assert_array_equal(pieces.nus, others.nus)
    # every shift 1..span of the other nodes is covered once
    for node, other in ((0, 0), (2, 1)):
        mine = pieces.owner == node
        assert int(pieces.lengths[mine].sum()) == span[node]
        assert np.array_equal(mine.nonzero()[0].size, (others.owner == other).sum())


def test_long_inner_sums_take_the_panels(monkeypatch: pytest.MonkeyPatch) -> None:
    """Equal counts of 1e7 at n = 2306: the inner sums reach 1.5e5 shifts.

    The Chebyshev interpolant had summed every shift at each of its 36 points (equal counts of
    3e8 took 7 s, of 1.2e10 at n = 7136 79 s); past ``_SMOOTH_MAX_SHIFTS`` the panels' rules
    take them. Both ways agree to the last digits here, where the direct sums are affordable.
    """
    import rankstats.null.median as median_module
    from rankstats import InverseMedianRank, MedianRank

    candidates = np.full(2306, 10**7)

    def moments() -> list[float]:
        median_module._CACHE.clear()
        return [
            MedianRank().expected_value(candidates),
            MedianRank().variance(candidates),
            InverseMedianRank().expected_value(candidates),
            InverseMedianRank().variance(candidates),
        ]

    calls = record_found(monkeypatch, median_gap, "_smooth_sums")
    panels = moments()
    assert calls
    assert not any(calls)  # too long for the interpolant
    calls.clear()
    monkeypatch.setattr(median_gap, "_SMOOTH_MAX_SHIFTS", 10**9)
    direct = moments()
    assert any(calls)
    for got, expected in zip(panels, direct, strict=True):
        assert got == pytest.approx(expected, rel=1e-14)


@pytest.mark.parametrize(
    "candidates",
    [
        KINKS,
        FLAT,
        SPREAD,
    ],
    ids=["kinks", "flat", "spread"],
)
@pytest.mark.parametrize("blocks", ["default", "small"])
def test_integer_nodes_against_every_pair(
    candidates: np.ndarray, blocks: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The integer nodes' factorised kernel (a reference per block of nodes) sums every pair.

    With small blocks, every few nodes take a reference of their own and a block's rows have
    spans of different lengths (the shorter ones masked).
    """
    a = candidates.size // 2
    rng = np.random.default_rng(6)
    values, below = _kernel_parts(candidates)
    lo = max(float(np.sort(candidates)[a - 1]) * 0.3, 2.0)
    y = np.unique(np.floor(rng.uniform(lo, float(np.sort(candidates)[a]) + 1.0, size=40)))
    taken = []
    original = median_gap._integer_rows
    monkeypatch.setattr(
        median_gap,
        "_integer_rows",
        lambda *args: taken.append(original(*args)) or taken[-1],
    )
    monkeypatch.setattr(median_gap, "_smooth_sums", lambda *args: None)
    if blocks == "small":
        monkeypatch.setattr(median_gap, "_BLOCK_LOG_RANGE", 0.05)
        monkeypatch.setattr(median_gap, "_PAIR_BLOCK", 64)
    weights = rng.uniform(0.5, 1.5, size=y.size)
    mass = rng.uniform(0.2, 1.0, size=y.size)
    c0 = float(np.median(candidates)) / 2
    got = gap_sums(values, below, a, y, weights, mass, c0, tolerance=1e-20)
    assert taken  # the integer nodes' sums were used
    assert taken[0] is not None
    expected = _reference(candidates, a, y, weights * mass, c0)
    np.testing.assert_allclose(got, expected, rtol=1e-13)


def _plain_bisection(kernel: _Kernel, y: np.ndarray, cut: np.ndarray) -> np.ndarray:
    """The smallest integer x >= 1 with log kappa(x, y) >= -cut, by bisection from 1."""
    hi = np.maximum(np.ceil(y) - 1.0, 1.0)
    ok = kernel.log_ratio(np.ones(y.size), np.maximum(y, 1.0 + 1e-9)) >= -cut
    lo = np.where(ok, 0.0, 1.0)
    while np.any(open_ := (hi - lo > 1.0) & ~ok):
        mid = np.floor((lo + hi) / 2.0)
        above = kernel.log_ratio(np.maximum(mid, 1.0), y) >= -cut
        hi = np.where(open_ & above, mid, hi)
        lo = np.where(open_ & ~above, mid, lo)
    return np.where(ok, 1.0, hi)


@pytest.mark.parametrize(
    "candidates",
    [
        np.array([3] * 50 + [10**9] * 50),  # log kappa jumps at 3, far below the nodes
        np.random.default_rng(7).integers(1, 10**9, size=200),  # kinks all along
        np.random.default_rng(8).integers(1, 2_000, size=60),
        np.concatenate((np.full(30, 2), np.random.default_rng(9).integers(10**4, 10**12, 31))),
    ],
    ids=["jump", "spread", "small", "split"],
)
def test_crossing_finds_what_bisection_finds(candidates: np.ndarray) -> None:
    """The closed form of the reach (log alpha at the counts) ends where bisection from 1 ends,
    for nodes below the median and above it (where alpha falls towards the node)."""
    a = candidates.size // 2
    values, below = _kernel_parts(candidates)
    kernel = _Kernel(values, below, a)
    rng = np.random.default_rng(10)
    top = float(np.sort(candidates)[min(a + a // 3, candidates.size - 1)]) * 1.5
    y = np.exp(rng.uniform(math.log(1.5), math.log(top), size=400))
    y = np.concatenate((y, np.floor(y[:200])))
    y = y[y > 1.0]
    cut = rng.uniform(5.0, 45.0, size=y.size)
    hi = np.maximum(np.ceil(y) - 1.0, 1.0)
    expected = _plain_bisection(kernel, y, cut)
    np.testing.assert_array_equal(kernel._crossing(y, cut, hi), expected)


@pytest.mark.parametrize(
    "candidates",
    [
        KINKS,
        FLAT,
        SPREAD,
        np.random.default_rng(5).integers(1, 3_000, size=100),
    ],
    ids=["kinks", "flat", "spread", "spread-100"],
)
@pytest.mark.parametrize("cut", [5.0, 41.4])
def test_least_pairs_bounds_the_pairs_above_the_cut(candidates: np.ndarray, cut: float) -> None:
    """The early rejection's bound never exceeds the pairs ``(x, y)`` with log kappa >= -cut.

    Counted directly, at every integer ``x`` from ``x0`` below each node; so an input it turns
    away would have been turned away by the table of running sums too.
    """
    a = candidates.size // 2
    values, below = _kernel_parts(candidates)
    kernel = _Kernel(values, below, a)
    rng = np.random.default_rng(3)
    top = float(np.sort(candidates)[a]) + 1.0
    y = np.unique(np.floor(rng.uniform(2.0, top, size=30)))
    for x0 in (1.0, float(np.floor(y.min() / 2.0)) + 1.0):
        pairs = 0
        for node in y[y > x0]:
            x = np.arange(x0, node)
            pairs += int(np.count_nonzero(kernel.log_ratio(x, np.full(x.size, node)) >= -cut))
        bound = median_gap._least_pairs(y, x0, a, np.full(y.size, cut))
        assert 0 < bound <= pairs


@pytest.mark.parametrize(
    "candidates",
    [
        KINKS,
        FLAT,
        SPREAD,
        np.random.default_rng(5).integers(1, 14_505, size=100),
        np.array([3] * 50 + [10**9] * 50),
        np.random.default_rng(6).integers(1, 10**9, size=64),
    ],
    ids=["kinks", "flat", "spread", "spread-100", "separated", "wide"],
)
def test_a_count_surely_crossed_is_crossed(candidates: np.ndarray) -> None:
    """Where the reach's lower bound already holds a count, the bisected reach holds one too:
    node by node, the shortcut says "a count among the shifts" only where there is one (and it
    says so for some nodes of every input, where it saves the bisection)."""
    a = candidates.size // 2
    values, below = _kernel_parts(candidates)
    kernel = _Kernel(values, below, a)
    rng = np.random.default_rng(7)
    top = float(np.sort(candidates)[a]) * 1.5 + 2.0
    said = []
    for cut in (5.0, 41.4):
        nodes = rng.uniform(1.5, top, size=200)
        nodes[::2] = np.floor(nodes[::2]) + 1.0  # integers too
        for node in nodes:
            y = np.array([node])
            surely = median_gap._surely_crosses(values, y, a, cut)
            reach = y - kernel.lowest(y, np.full(1, cut))
            span = int(np.maximum(np.floor(np.minimum(reach, y - 1.0)), 0.0)[0])
            if surely:
                assert not median_gap._continues(values, y, reach, np.array([span]))
                assert np.any((values >= node - span) & (values < node))
            said.append(surely)
    assert any(said)
    assert not all(said)


def _log_kappa_reference(candidates: np.ndarray, a: int, x: float, y: float) -> mpmath.mpf:
    """log kappa(x, y) = (a - c(y)) log(x / y) + sum over counts in (x, y] of log(x / C)."""
    with mpmath.workdps(40):
        xm, ym = mpmath.mpf(x), mpmath.mpf(y)
        power = a - int(np.count_nonzero(candidates <= y))
        crossed = candidates[(candidates > x) & (candidates <= y)]
        total = power * mpmath.log(xm / ym)
        return total + mpmath.fsum(mpmath.log(xm / mpmath.mpf(int(c))) for c in crossed)


@pytest.mark.parametrize(
    "candidates",
    [
        # half the tasks below 4000, half up to 7.5e8: sums of log C over hundreds of counts
        np.concatenate(
            (
                np.random.default_rng(10).integers(1, 4_000, 750),
                np.random.default_rng(11).integers(4_000, 753_122_781, 750),
            )
        ),
        np.random.default_rng(12).integers(1, 14_505, size=100),
        np.random.default_rng(13).integers(1, 10**12, size=64),
    ],
    ids=["clusters", "spread", "wide"],
)
def test_log_kernel_against_high_precision(candidates: np.ndarray) -> None:
    """log kappa within a few units of 2**-53 of 1 + |log kappa| where the kernel is within
    reach of its cut (nodes and points below the median and above it, non-integers too). As
    a difference of running sums of log C over all tasks it had been 1e-13 off near 0 for the
    clusters (whose sums reach thousands)."""
    a = candidates.size // 2
    values, below = _kernel_parts(candidates)
    kernel = _Kernel(values, below, a)
    rng = np.random.default_rng(14)
    ordered = np.sort(candidates)
    top = float(ordered[min(a + a // 4, ordered.size - 1)])
    y = np.exp(rng.uniform(0.0, math.log(top), size=60)) + 1.0
    y[::3] = np.floor(y[::3])
    x = np.maximum(y * rng.uniform(0.05, 1.0, size=y.size) ** 3, 1.0)
    x[::4] = np.maximum(np.floor(x[::4]), 1.0)
    keep = x < y
    x, y = x[keep], y[keep]
    got = kernel.log_ratio(x, y)
    checked = 0
    for xj, yj, gj in zip(x, y, got, strict=True):
        exact = float(_log_kappa_reference(candidates, a, float(xj), float(yj)))
        if exact >= -60.0:  # the kernel's terms within reach of the cut (and some beyond)
            assert abs(gj - exact) <= 2e-15 * (1.0 + abs(exact))
            checked += 1
    assert checked >= 10
