"""The adjusted and z-scored metrics against 50-digit mpmath references, near the best value too.

When the expected value is close to the best value 1 (Hits@10 with few candidates, weights on
single-candidate tasks), ``(M - E) / (1 - E)`` and ``V / (1 - E)**2`` lose every digit ``E``
shares with 1 unless ``1 - E`` and ``1 - M`` are computed from the per-task terms; these tests
hold every adjusted and z metric to 1e-12 of the exact value there.
"""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankstats import (
    AdjustedArithmeticMeanRankIndex,
    AdjustedGeometricMeanRankIndex,
    AdjustedHitsAtK,
    AdjustedInverseHarmonicMeanRank,
    ZArithmeticMeanRank,
    ZGeometricMeanRank,
    ZHitsAtK,
    ZInverseHarmonicMeanRank,
)
from rankstats.base import RankBasedMetric
from rankstats.metrics.derived import DerivedRankBasedMetric, ReindexedMetric, ZMetric
from rankstats.null.tasks import Tasks
from support import ALL_METRICS, DERIVED_METRICS, metric_id

DERIVED = DERIVED_METRICS

K = 10
#: (base name, adjusted index, z-score, whether larger base values are better)
FAMILIES = [
    ("hits", AdjustedHitsAtK(k=K), ZHitsAtK(k=K), True),
    ("mrr", AdjustedInverseHarmonicMeanRank(), ZInverseHarmonicMeanRank(), True),
    ("mr", AdjustedArithmeticMeanRankIndex(), ZArithmeticMeanRank(), False),
    ("gmr", AdjustedGeometricMeanRankIndex(), ZGeometricMeanRank(), False),
]


def _shares(num_candidates: np.ndarray, weights: np.ndarray | None) -> list[mp.mpf]:
    if weights is None:
        return [mp.mpf(1) / len(num_candidates)] * len(num_candidates)
    total = mp.fsum(mp.mpf(float(w)) for w in weights)
    return [mp.mpf(float(w)) / total for w in weights]


def _power_mean(c: int, p: mp.mpf) -> mp.mpf:
    """E[r^p] for r uniform on 1..c, summed directly."""
    return mp.fsum(mp.mpf(j) ** p for j in range(1, c + 1)) / c


def _null_reference(name: str, num_candidates: np.ndarray, weights: np.ndarray | None):
    """Exact E and V of the base metric."""
    a = _shares(num_candidates, weights)
    c = [int(x) for x in num_candidates]
    if name == "hits":
        p = [min(mp.mpf(K) / ci, mp.mpf(1)) for ci in c]
        return mp.fsum(x * y for x, y in zip(a, p, strict=True)), mp.fsum(
            x * x * y * (1 - y) for x, y in zip(a, p, strict=True)
        )
    if name == "mrr":
        m1 = [_power_mean(ci, mp.mpf(-1)) for ci in c]
        m2 = [_power_mean(ci, mp.mpf(-2)) for ci in c]
        return mp.fsum(x * y for x, y in zip(a, m1, strict=True)), mp.fsum(
            x * x * (z - y * y) for x, y, z in zip(a, m1, m2, strict=True)
        )
    if name == "mr":
        return mp.fsum(x * (ci + 1) / 2 for x, ci in zip(a, c, strict=True)), mp.fsum(
            x * x * (mp.mpf(ci) ** 2 - 1) / 12 for x, ci in zip(a, c, strict=True)
        )
    mean = mp.fprod(_power_mean(ci, x) for x, ci in zip(a, c, strict=True))
    second = mp.fprod(_power_mean(ci, 2 * x) for x, ci in zip(a, c, strict=True))
    return mean, second - mean * mean


def _value_reference(name: str, ranks: np.ndarray, weights: np.ndarray | None) -> mp.mpf:
    a = _shares(ranks, weights)
    r = [mp.mpf(float(x)) for x in ranks]
    if name == "hits":
        return mp.fsum(x for x, y in zip(a, r, strict=True) if y <= K)
    if name == "mrr":
        return mp.fsum(x / y for x, y in zip(a, r, strict=True))
    if name == "mr":
        return mp.fsum(x * y for x, y in zip(a, r, strict=True))
    return mp.exp(mp.fsum(x * mp.log(y) for x, y in zip(a, r, strict=True)))


def _cases() -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray | None]]:
    """Random sweeps and constructions whose expected value is within 1e-3..1e-12 of the best."""
    rng = np.random.default_rng(2024)
    cases = []
    for trial in range(24):
        n = int(rng.integers(2, 30))
        kind = trial % 3
        if kind == 0:
            candidates = rng.integers(1, 40, n)
        elif kind == 1:  # Hits@10 with counts around k
            candidates = np.where(rng.random(n) < 0.8, rng.integers(1, K + 1, n), K + 1)
        else:  # mostly single candidates: E[MRR], E[MR], E[GMR] near 1
            candidates = np.where(rng.random(n) < 0.9, 1, rng.integers(2, 4, n))
        candidates[0] = K + 1
        weights = None if trial % 2 == 0 else rng.random(n) ** 3
        ranks = np.array([rng.integers(1, c + 1) for c in candidates], dtype=np.float64)
        cases.append((f"sweep{trial}", candidates, ranks, weights))
    for tiny in (1e-3, 1e-6, 1e-9, 1e-12):
        for base in (1, 5, K):
            candidates = np.array([base] * 30 + [K + 1, K + 2])
            weights = np.array([1.0] * 30 + [tiny, 0.7 * tiny])
            ranks = np.array([1.0] * 30 + [K + 1, 3.0])
            cases.append((f"near-best-{base}-{tiny:g}", candidates, ranks, weights))
    return cases


CASES = _cases()


@pytest.mark.parametrize(
    ("label", "candidates", "ranks", "weights"), CASES, ids=[c[0] for c in CASES]
)
@pytest.mark.parametrize(
    ("name", "adjusted", "z", "increasing"), FAMILIES, ids=[f[0] for f in FAMILIES]
)
def test_adjusted_and_z_metrics_match_mpmath(
    label: str,
    candidates: np.ndarray,
    ranks: np.ndarray,
    weights: np.ndarray | None,
    name: str,
    adjusted: ReindexedMetric,
    z: ZMetric,
    increasing: bool,
) -> None:
    with mp.workdps(50):
        mean, variance = _null_reference(name, candidates, weights)
        value = _value_reference(name, ranks, weights)
        gap, value_gap = 1 - mean, 1 - value
        sign = 1 if increasing else -1
        adjusted_value = (value - mean) / gap
        adjusted_variance = variance / gap**2
        z_value = sign * (value - mean) / mp.sqrt(variance)
        # the rounding of the inputs of the last subtraction bounds what any float code reaches
        adjusted_floor = abs(value_gap / gap)
        # adjust() gets M rounded to a float: its rounding, eps |M|, is divided by 1 - E
        input_floor = 2 * mp.mpf(2) ** -52 * abs(value / gap) / mp.mpf(1e-12)
        z_floor = (abs(gap) + abs(value_gap)) / mp.sqrt(variance)

    def close(got: float, exact: mp.mpf, floor: mp.mpf | int = 0) -> None:
        tolerance = 1e-12 * max(abs(exact), floor)
        assert abs(mp.mpf(got) - exact) <= tolerance, (got, exact)

    moments = adjusted.moments(candidates, weights=weights)
    assert moments.expected_value == 0.0
    close(moments.variance, adjusted_variance)
    close(adjusted(ranks, candidates, weights), adjusted_value, adjusted_floor)
    close(
        adjusted.adjust(float(value), candidates, weights),
        adjusted_value,
        max(adjusted_floor, input_floor),
    )
    assert z.moments(candidates, weights=weights) == (0.0, 1.0)
    close(z(ranks, candidates, weights), z_value, z_floor)


@pytest.mark.parametrize("metric", ALL_METRICS, ids=metric_id)
def test_gap_hooks_agree_with_the_moments_and_values(metric: RankBasedMetric) -> None:
    """``1 - E`` and ``1 - M`` from the gap hooks are what subtracting gives, where both exist."""
    candidates = np.array([7, 2, 8, 11, 8, 3, 5, 8])
    ranks = np.array([3.0, 1.0, 8.0, 2.0, 5.0, 2.0, 5.0, 1.0])
    weights = np.arange(1.0, 9.0)
    for w in (None, weights) if metric.supports_weights else (None,):
        try:
            mean, variance, gap = metric._moments_and_gap(Tasks(candidates, w))
        except ValueError:  # no closed form for a derived metric here
            continue
        assert (mean, variance) == metric._moments(Tasks(candidates, w))
        if gap is not None:
            assert mean is not None
            assert gap == pytest.approx(1.0 - mean, rel=1e-14, abs=1e-15)
        value_gap = metric._value_gap(ranks, candidates, w)
        if value_gap is not None:
            value = float(np.asarray(metric._evaluate(ranks, candidates, w)))
            assert float(value_gap) == pytest.approx(1.0 - value, rel=1e-14, abs=1e-15)


@pytest.mark.parametrize("metric", DERIVED, ids=metric_id)
def test_value_from_cached_base_moments_matches_call(metric: DerivedRankBasedMetric) -> None:
    candidates = np.array([7, 2, 8, 11, 8, 3, 5, 8])
    ranks = np.array([3.0, 1.0, 8.0, 2.0, 5.0, 2.0, 5.0, 1.0])
    mean, variance, gap = metric.base._moments_and_gap(Tasks(candidates))
    assert mean is not None
    base_value = metric.base(ranks, candidates)
    assert metric._value_from(base_value, mean, variance, gap) == pytest.approx(
        metric(ranks, candidates), rel=1e-13, abs=1e-14
    )
    assert metric._moments_from(mean, variance, gap) == metric._moments(Tasks(candidates))


def _reciprocal_reference(ranks: list[int], counts: list[int]) -> tuple[mp.mpf, mp.mpf, mp.mpf]:
    """MRR, its null mean and variance, in 40 digits (E[1/r] = H_C / C)."""
    with mp.workdps(40):
        n = len(ranks)
        value = mp.fsum(mp.mpf(1) / r for r in ranks) / n
        means = [mp.harmonic(c) / c for c in counts]
        seconds = [(mp.zeta(2) - mp.zeta(2, c + 1)) / c for c in counts]
        mean = mp.fsum(means) / n
        variance = mp.fsum(s - m * m for s, m in zip(seconds, means, strict=True)) / n**2
        return value, mean, variance


@pytest.mark.parametrize(
    ("ranks", "counts"),
    [([10**9], [10**9]), ([10**9 - 5, 3 * 10**8], [10**9, 10**9]), ([999_000], [10**6])],
)
def test_near_zero_values_keep_their_digits(ranks: list[int], counts: list[int]) -> None:
    """MRR and E[MRR] near 0 (millions of candidates, a near-chance model): M - E directly.

    The gaps 1 - M and 1 - E then share their leading digits; their difference had lost up to
    eight of them (6e-9 relative on the z-score at a billion candidates).
    """
    from rankstats import evaluate

    value, mean, variance = _reciprocal_reference(ranks, counts)
    with mp.workdps(40):
        z = float((value - mean) / mp.sqrt(variance))
        adjusted = float((value - mean) / (1 - mean))
    assert ZInverseHarmonicMeanRank()(ranks, counts) == pytest.approx(z, rel=1e-12, abs=0)
    assert AdjustedInverseHarmonicMeanRank()(ranks, counts) == pytest.approx(
        adjusted, rel=1e-12, abs=0
    )
    for groups in (None, [0] * len(ranks)):
        results = evaluate(ranks, counts, metrics=["zmrr", "amrr"], groups=groups)
        assert results["zmrr"] == pytest.approx(z, rel=1e-12, abs=0)
        assert results["amrr"] == pytest.approx(adjusted, rel=1e-12, abs=0)


def _cancelling_cases() -> list[tuple[str, list[int], list[float], list[float] | None, int]]:
    """Tasks whose terms are certain (one candidate; Hits@k with at most k) beside huge counts.

    ``M`` and ``E`` then share every leading digit the certain tasks give them, and their
    rounded difference keeps none of the few huge-count tasks' contribution.
    """
    big = 10**12
    return [
        ("hits-one-candidate", [1, 1, big], [1, 1, 50], None, 10),
        ("hits-under-k", [3, 7, 10, big, big], [2, 5, 9, 11, 10**9], None, 10),
        ("hits-k2-2**53", [1, 1, 2**53 - 1], [1, 1, 3], None, 2),
        ("hits-weighted", [1, 4, big], [1, 4, 10**6], [1e6, 3.0, 0.5], 10),
        # 1/2 - 3/4 and 1/4 - H(C)/C cancel to -H(C)/C: across tasks, not within one (where
        # no sum of double terms could help: 1/r and H(C)/C are each rounded)
        ("mrr-across-tasks", [2, big], [2, 4], None, 10),
        ("mrr-weighted", [1, 2, big], [1, 2, 4], [1e3, 1.0, 1.0], 10),
        ("mr-halves", [1, 1, 2 * 10**9 + 1], [1, 1, 10**9 + 2], None, 10),
    ]


_BASE_KEYS = {"hits": "hits@{k}", "mrr": "mrr", "mr": "mr"}


CANCELLING = _cancelling_cases()
#: each cancelling case, for each family of mean-type metrics
cancelling_cases = pytest.mark.parametrize("case", CANCELLING, ids=[c[0] for c in CANCELLING])
families = pytest.mark.parametrize("name", ["hits", "mrr", "mr"])
Cancelling = tuple[str, list[int], list[float], list[float] | None, int]


@cancelling_cases
@families
def test_the_tables_z_scores_of_cancelling_means(case: Cancelling, name: str) -> None:
    """Each row's z-score statistic (the table's ``z_score`` column) of a mean-type metric
    takes the same exact M - E as the z-scored metric: without and with groups, both averages,
    every rank type, the expectation over tie-breaking included."""
    _, counts, ranks, weights, k = case
    from rankstats import Ranks, evaluate

    value, mean, variance = _exact_moments(name, ranks, counts, weights, k)
    with mp.workdps(50):
        z = float((value - mean) / mp.sqrt(variance))  # not re-oriented
    key = _BASE_KEYS[name].format(k=k)
    pairs = Ranks(ranks, ranks, counts)
    labels = [0] * len(ranks)
    for average in ("micro", "macro"):
        for groups in (None, labels):
            results = evaluate(
                pairs, weights=weights, metrics=[key], groups=groups, average=average
            )
            cells = [results, *results.by_group.values()]
            for cell in cells:
                for rank_type in ("optimistic", "realistic", "pessimistic", "expected"):
                    found = cell.z_score(f"{rank_type}.{key}")
                    assert found == pytest.approx(z, rel=1e-12, abs=0), (average, rank_type)


def _exact_moments(
    name: str, ranks: list[float], counts: list[int], weights: list[float] | None, k: int
) -> tuple[mp.mpf, mp.mpf, mp.mpf]:
    """M, E and V of a mean-type base metric in 50 digits, for counts of any size."""
    with mp.workdps(50):
        w = [mp.mpf(1)] * len(ranks) if weights is None else [mp.mpf(x) for x in weights]
        total = mp.fsum(w)
        a = [x / total for x in w]
        r = [mp.mpf(x) for x in ranks]
        c = [mp.mpf(x) for x in counts]
        if name == "hits":
            terms = [mp.mpf(1) if x <= k else mp.mpf(0) for x in r]
            means = [min(mp.mpf(k) / x, mp.mpf(1)) for x in c]
            variances = [p * (1 - p) for p in means]
        elif name == "mrr":
            terms = [1 / x for x in r]
            means = [mp.harmonic(x) / x for x in c]
            seconds = [(mp.zeta(2) - mp.zeta(2, x + 1)) / x for x in c]
            variances = [s - m * m for s, m in zip(seconds, means, strict=True)]
        else:
            terms = r
            means = [(x + 1) / 2 for x in c]
            variances = [(x * x - 1) / 12 for x in c]
        value = mp.fsum(x * t for x, t in zip(a, terms, strict=True))
        mean = mp.fsum(x * m for x, m in zip(a, means, strict=True))
        variance = mp.fsum(x * x * v for x, v in zip(a, variances, strict=True))
        return value, mean, variance


_FAMILY_KEYS = {
    "hits": ("adjusted_hits_at_{k}", "z_hits_at_{k}"),
    "mrr": ("amrr", "zmrr"),
    "mr": ("amri", "zmr"),
}


@cancelling_cases
@families
def test_cancelling_means_keep_their_digits_everywhere(case: Cancelling, name: str) -> None:
    """M - E as one exact sum where the rounded means cancel: the metric's call, evaluate with
    and without groups (micro, macro, each group) and the accumulator all within 1e-12.

    Before, the rounded sums of the certain tasks took the digits: the adjusted Hits@10 of ranks
    (1, 1, 50) against (1, 1, 10**12) candidates was 8e-8 off.
    """
    from rankstats import RankAccumulator, Ranks, evaluate
    from rankstats.registry import metric_resolver

    _, counts, ranks, weights, k = case

    value, mean, variance = _exact_moments(name, ranks, counts, weights, k)
    with mp.workdps(50):
        increasing = name != "mr"
        adjusted = float((value - mean) / (1 - mean))
        z = float((1 if increasing else -1) * (value - mean) / mp.sqrt(variance))
    keys = [key.format(k=k) for key in _FAMILY_KEYS[name]]
    expected = dict(zip(keys, (adjusted, z), strict=True))
    for key in keys:
        metric = metric_resolver.make(key)
        assert metric(ranks, counts, weights) == pytest.approx(expected[key], rel=1e-12, abs=0)
    # two groups holding the same tasks: every group, and each average, is the one-group value
    twice = {
        "ranks": np.tile(ranks, 2),
        "num_candidates": np.tile(counts, 2),
        "weights": None if weights is None else np.tile(weights, 2),
    }
    labels = np.repeat([0, 1], len(ranks))
    for average in ("micro", "macro"):
        for groups in (None, labels):
            results = evaluate(**twice, metrics=keys, groups=groups, average=average)  # type: ignore[arg-type]
            for key in keys:
                # z scales with the square root of the number of tasks: not for two copies
                if key == keys[1] and (groups is None or average == "micro"):
                    continue
                assert results[key] == pytest.approx(expected[key], rel=1e-12, abs=0), average
                for group in results.by_group.values():
                    assert group[key] == pytest.approx(expected[key], rel=1e-12, abs=0)
        # optimistic and pessimistic ranks (the pairs' tables), equal: every rank type alike,
        # the expectation over tie-breaking too
        pairs = Ranks(twice["ranks"], twice["ranks"], twice["num_candidates"])
        for groups in (None, labels):
            results = evaluate(
                pairs, weights=twice["weights"], metrics=keys, groups=groups, average=average
            )
            cells = list(results.by_group.values()) if groups is not None else [results]
            for cell in cells:
                for key in keys:
                    if key == keys[1] and groups is None:  # z of two copies: see above
                        continue
                    for rank_type in ("realistic", "expected"):
                        found = cell[f"{rank_type}.{key}"]
                        assert found == pytest.approx(expected[key], rel=1e-12, abs=0), rank_type
        accumulator = RankAccumulator(keys, average=average)
        accumulator.update(ranks, counts, weights=weights, groups=[7] * len(ranks))
        results = accumulator.compute()
        for key in keys:
            assert results[key] == pytest.approx(expected[key], rel=1e-12, abs=0)


_COUNTS = (1, 2, 3, 10, 11, 10**6, 10**12, 2**53 - 1)
#: the references' own rounding at 50 digits, where the exact difference is 0
_NOISE = 1e-40


@st.composite
def _mixtures(draw: st.DrawFn) -> tuple[list[int], list[float], list[float] | None]:
    """A few tasks, certain ones (one candidate, at most k) beside huge counts; chosen ranks."""
    counts = draw(st.lists(st.sampled_from(_COUNTS), min_size=1, max_size=6))
    ranks = [
        float(
            draw(st.sampled_from(sorted({1, min(c, 2), min(c, 10), min(c, 11), (c + 1) // 2, c})))
        )
        for c in counts
    ]
    weights = draw(
        st.none()
        | st.lists(
            st.sampled_from([1.0, 0.5, 3.0, 1e6]), min_size=len(counts), max_size=len(counts)
        )
    )
    return counts, ranks, weights


@settings(max_examples=150, deadline=None)
@given(_mixtures(), st.sampled_from(["hits", "mrr", "mr"]))
def test_mixtures_of_certain_and_huge_tasks(
    mixture: tuple[list[int], list[float], list[float] | None], name: str
) -> None:
    """Random mixtures of certain tasks and huge counts: the adjusted and z-scored means, and the
    rows' z-scores, within 1e-12 of 50-digit mpmath wherever they are defined."""
    from rankstats import evaluate
    from rankstats.registry import metric_resolver

    counts, ranks, weights = mixture
    k = 10
    value, mean, variance = _exact_moments(name, ranks, counts, weights, k)
    if mean == 1 or variance == 0:  # chance is perfect here: undefined
        return
    with mp.workdps(50):
        adjusted = float((value - mean) / (1 - mean))
        z = float((value - mean) / mp.sqrt(variance))
    sign = 1.0 if name != "mr" else -1.0
    adjusted_key, z_key = (key.format(k=k) for key in _FAMILY_KEYS[name])
    assert metric_resolver.make(adjusted_key)(ranks, counts, weights) == pytest.approx(
        adjusted, rel=1e-12, abs=_NOISE
    )
    assert metric_resolver.make(z_key)(ranks, counts, weights) == pytest.approx(
        sign * z, rel=1e-12, abs=_NOISE
    )
    base_key = _BASE_KEYS[name].format(k=k)
    for groups in (None, [0] * len(ranks)):
        results = evaluate(
            ranks, counts, weights=weights, metrics=[adjusted_key, base_key], groups=groups
        )
        for cell in (results, *results.by_group.values()):
            assert cell[adjusted_key] == pytest.approx(adjusted, rel=1e-12, abs=_NOISE)
            assert cell.z_score(base_key) == pytest.approx(z, rel=1e-12, abs=_NOISE)
