"""Even n beyond the product-form path: the middle ranks orders of magnitude apart.

With half the tasks (or one fewer or more) at a small count and the others at 1e6..1e12, the
lower middle rank is tiny and the upper one huge. The decomposition into single order statistics
and a double sum then cancels (E and V of the inverse median off by up to 1.8 and 1e-2 before
:mod:`rankstats.null.median_even`); such inputs are now detected by the condition of the sums
and summed from the upper middle rank. References: the 30-60 digit pool decomposition of
``median_pool_reference`` (independent of the library's machinery), and the pairwise
programme of ``test_median_null`` for spread counts.
"""

from __future__ import annotations

import numpy as np
import pytest

import rankstats.null.median as median_module
from median_pool_reference import two_count_reference
from rankstats import InverseMedianRank, MedianRank
from rankstats.null.median_even import even_moments
from rankstats.null.median_tails import _Candidates
from support import median_null_moments, record_found
from test_median_null import _reference


@pytest.fixture(autouse=True)
def _fresh_distributions() -> None:
    median_module._CACHE.clear()


def _close(actual: float, expected: float, rel: float = 1e-12) -> None:
    assert abs(actual - expected) <= rel * abs(expected), (actual, expected)


@pytest.mark.parametrize(
    ("c1", "m1", "c2", "m2"),
    [
        (3, 50, 10**9, 50),  # E[1/M] was off by 3e-10, V[1/M] by 4e-9
        (2, 33, 10**12, 33),  # 2e-7 and 1e-6
        (1, 40, 10**6, 40),  # V[1/M] 1e-11 (n = 80, the case in the issue)
        (1, 39, 10**6, 41),  # one small count fewer than half: V[1/M] 1.5e-12
        # the middle ranks the two smallest of a few uniform ranks (the reference's sums over
        # up to 10^7 terms had been wrong here: 4e-5 on E[M])
        (1, 18, 10**6, 20),
        (5, 29, 10**7, 31),
        (2, 32, 10**12, 34),  # E[1/M] 180 % off (nodes dropped from the double sum)
        (3, 51, 10**9, 49),  # one more than half: both middle ranks at most 3
        (10, 33, 10**9, 33),  # kernel sums below the count 10: 6e-6 before the fix of _panels
        # both middle ranks pinned at 7 (V ~ 7e-11): tails ~1e-10 from the Fourier inversion
        # (1e-16 absolute) cost 2e-6 relative in V until the few nodes took the exact programme
        (7, 165, 305_420_729_280, 163),
        # the lower middle rank below the small count, at a tail of 1e-13..1e-60 (the Fourier
        # inversion's absolute 1e-16 there had put V[1/M] up to 1e-7 off): the exact programme
        # and the band take the small tails now
        (10, 200, 10**12, 200),
        (3, 250, 10**12, 250),
        (20, 250, 10**12, 250),
        (39, 300, 10**12, 300),
        # the same from n = 900 up (V[1/M] 1.3e-11 here): the programme had exceeded its budget
        # at the small tails' nodes until it settled counts beyond the tasks' reach
        (50, 500, 10**12, 500),
        # the decomposition's terms at 500 (and 910) times V[1/M], under the condition limit of
        # 1e3 it had then: 2.6e-12 (and 1.4e-12) off; now summed from the upper middle rank
        (50, 28, 2 * 10**6, 30),
        (30, 50, 2 * 10**6, 50),
    ],
    ids=lambda value: str(value),
)
def test_two_separated_counts_against_the_pool_reference(
    c1: int, m1: int, c2: int, m2: int
) -> None:
    expected = two_count_reference(c1, m1, c2, m2)
    candidates = np.random.default_rng(m1).permutation(np.array([c1] * m1 + [c2] * m2))
    got = median_null_moments(candidates)
    for actual, wanted in zip(got, expected, strict=True):
        _close(actual, wanted)


def _spread(seed: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    low = int(rng.integers(5, 40))
    return rng.integers(low, low + int(rng.integers(20, 80)), size=n)


@pytest.mark.parametrize(
    "candidates",
    [
        _spread(1, 66),
        _spread(2, 70),
        np.array([1] * 33 + [60] * 33),
        np.array([2] * 30 + [50] * 20 + [90] * 18),
    ],
    ids=lambda c: f"n={c.size}",
)
def test_the_upper_path_on_any_input_against_the_pairwise_programme(
    candidates: np.ndarray,
) -> None:
    """The summation from the upper middle rank is exact for every input, not only where it is
    chosen (here forced, on spread and mixed counts with short windows)."""
    expected = _reference(candidates)
    got = even_moments(_Candidates(np.sort(candidates)))
    assert got is not None
    for actual, wanted in zip(got, expected, strict=True):
        _close(actual, wanted)


def test_it_is_chosen_where_the_sums_cancel(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = median_module.even_moments

    def spy(cands: _Candidates) -> tuple[float, float, float, float] | None:
        calls.append(cands.n)
        return real(cands)

    monkeypatch.setattr(median_module, "even_moments", spy)
    median_module.median_moments(np.array([3] * 50 + [10**9] * 50))
    assert calls == [100]
    # spread counts: the decomposition is well conditioned and kept
    median_module.median_moments(np.random.default_rng(0).integers(200, 1200, size=100))
    assert calls == [100]


@pytest.mark.parametrize(
    "counts",
    [
        pytest.param(
            np.random.default_rng(0).integers(1, 10**9, size=2000), id="n=2000 C~U[1,1e9]"
        ),
        pytest.param(
            np.exp(np.random.default_rng(1).uniform(0, np.log(1e12), size=66)).astype(np.int64) + 1,
            id="n=66 log-uniform to 1e12",
        ),
    ],
)
def test_even_median_memory_is_bounded(counts: np.ndarray) -> None:
    """Wide counts: the gap sums' pairs are built block by block (they took 350 MB at n = 1e4)."""
    import tracemalloc

    median_module._CACHE.clear()
    tracemalloc.start()
    try:
        median_module.median_distribution(counts).moments()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40e6


@pytest.mark.parametrize("n", [4000, 20466, 40932])
def test_rules_on_count_free_windows_match_every_rank(
    n: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A window with no count inside takes ~530 nodes however wide, and loses no digit.

    Counts in 13,541..14,541 (the table's shape): the window of 740 to 2,400 ranks around
    7,000 had taken every rank below a width of 1,152 (1,054 nodes at n = 20,466). Against
    the pieces of the cut-at-counts design (every rank where the rule would not pay twice).
    """
    from rankstats.null import median_even

    rng = np.random.default_rng(n)
    counts = 14_541 - rng.integers(0, 1_000, size=n)
    cands = _Candidates(*np.unique(counts, return_counts=True))
    lo, hi = cands.window(n // 2)
    nodes = median_even.window_nodes(cands, lo, hi, cands.centre(lo, hi))
    assert nodes.x.size <= 560
    assert float(nodes.w.sum()) == pytest.approx(hi - lo + 1, rel=1e-13)
    metric, inverse = MedianRank(), InverseMedianRank()

    def moments() -> list[float]:
        median_module._CACHE.clear()
        return [
            metric.expected_value(counts),
            metric.variance(counts),
            inverse.expected_value(counts),
            inverse.variance(counts),
        ]

    ruled = moments()
    monkeypatch.setattr(median_even, "_RATIO_UNCLIPPED", 0.0)
    for got, expected in zip(ruled, moments(), strict=True):
        assert got == pytest.approx(expected, rel=5e-14)


@pytest.mark.parametrize(
    "counts",
    [
        np.array([3] * 500 + [10**9] * 500),
        np.array([1] * 20 + [10**6] * 20),
        np.array([1_000] * 30 + [10**9] * 30),
        np.array([2] * 30 + [50] * 20 + [90] * 18),
    ],
    ids=lambda c: f"n={c.size}",
)
def test_upper_middle_rank_gram_nodes_against_integer_nodes(
    counts: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counts within the kernel's reach of the upper middle rank's nodes: the cheaper of the Gram
    nodes (the kernel sums interpolated between the counts) and the integer nodes, against the
    integer nodes (forced; the path before 2026-11-28)."""
    from rankstats.null import median_even

    cands = _Candidates(*np.unique(counts, return_counts=True))
    chosen: list[bool] = []
    real = median_even.cheaper_nodes

    def spy(*args: object, **kwargs: object) -> object:
        found = real(*args, **kwargs)  # type: ignore[arg-type]
        chosen.append(bool(found[2]))
        return found

    monkeypatch.setattr(median_even, "cheaper_nodes", spy)
    got = even_moments(cands)
    assert len(chosen) == 1  # a count lies within the kernel's reach
    monkeypatch.setattr(
        median_even, "cheaper_nodes", lambda *args, **kwargs: (*args[4].nodes(), True, None)
    )
    forced = even_moments(cands)
    assert got is not None
    assert forced is not None
    for actual, wanted in zip(got, forced, strict=True):
        assert actual == pytest.approx(wanted, rel=1e-13)


def test_upper_middle_rank_plans_its_cells_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cells planned when the Gram nodes are chosen serve the kernel sums at v - 1 (one
    plan, not two), with the moments the same to the bit as a plan of their own."""
    from rankstats.null import median_even, median_gap_intervals

    counts = np.array([3] * 500 + [10**9] * 500)
    plans = record_found(monkeypatch, median_gap_intervals, "_plan")  # one entry per call
    handed = even_moments(_Candidates(counts))
    assert len(plans) == 1
    real_choice = median_even.cheaper_nodes
    monkeypatch.setattr(
        median_even,
        "cheaper_nodes",
        lambda *args, **kwargs: (*real_choice(*args, **kwargs)[:3], None),
    )
    plans.clear()
    own = even_moments(_Candidates(counts))
    assert len(plans) == 2
    assert handed == own
