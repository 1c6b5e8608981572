"""When M - E is taken again as an exact sum: the criterion of rankstats.chance in every path.

The rounded difference of the mean rank's M and E, each an exact sum of multiples of 1/2 rounded
once where the tasks are unweighted, keeps its digits down to a 1024th of its expectation; other
means (and weighted ones) are summed again exactly below a 256th. These tests hold the mean
rank's adjusted and z-scored values to 50-digit mpmath on both sides of both limits, check that
every path (the metric's call, ``evaluate`` with and without groups, both averages, the
accumulator) gives the same bits, and that the exact sums run where the criterion says.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankstats import (
    AdjustedArithmeticMeanRankIndex,
    AdjustedHitsAtK,
    HitsAtK,
    RankAccumulator,
    ZArithmeticMeanRank,
    ZHitsAtK,
    evaluate,
    ranks_from_scores,
)
from rankstats.chance import (
    CONDITION_LIMIT,
    EXACT_SUMS_LIMIT,
    candidate_rows,
    exact_difference,
    ill_conditioned,
    multiples_of_half,
    sums_exact,
    weight_sums_exact,
)
from rankstats.evaluation import chance_rows, grouped

KEYS = ("amri", "zmr")


def test_multiples_of_half() -> None:
    assert multiples_of_half(np.array([1, 2, 3]))
    assert multiples_of_half(np.array([1.0, 2.5, 2.0**51]))
    assert not multiples_of_half(np.array([1.0, 2.25]))
    assert not multiples_of_half(np.array([2.0**52 + 2.0]))  # too large to add exactly
    assert not multiples_of_half(np.array([1.0, np.nan]))
    assert not multiples_of_half(np.array(["1"]))


def test_sums_exact_needs_every_condition() -> None:
    ranks = [np.array([1.0, 2.5])]
    assert sums_exact(ranks, True, 10.0, 2.0**47)
    assert not sums_exact(ranks, False, 10.0, 2.0**47)  # weights
    assert not sums_exact(ranks, True, 2.0**4, 2.0**48)  # W max C above 2**51
    assert sums_exact(ranks, True, 2.0**3, 2.0**48)
    assert not sums_exact([np.array([1.0, 2.25])], True, 10.0, 10.0)


def test_the_limits_flag_below_their_fractions() -> None:
    mean, gap = np.float64(101.0), np.float64(-100.0)  # the smaller is |1 - E| = 100
    for limit in (CONDITION_LIMIT, EXACT_SUMS_LIMIT):
        below, above = 100.0 / limit * 0.99, 100.0 / limit * 1.01
        assert ill_conditioned(below, mean, gap, limit)
        assert not ill_conditioned(above, mean, gap, limit)
    assert not ill_conditioned(np.nan, mean, gap)


def _ranks_at(counts: list[int], fraction: float) -> list[float]:
    """Half-integer ranks whose mean rank is below its expectation by about ``fraction`` of the
    expectation's distance from 1 (AMRI about ``fraction``)."""
    return [
        min(max(np.round(2.0 * ((c + 1) / 2 - fraction * (c - 1) / 2)) / 2.0, 1.0), float(c))
        for c in counts
    ]


def _reference(ranks: list[float], counts: list[int]) -> tuple[float, float]:
    with mp.workdps(50):
        n = len(ranks)
        value = mp.fsum(mp.mpf(r) for r in ranks) / n
        mean = mp.fsum((mp.mpf(c) + 1) / 2 for c in counts) / n
        variance = mp.fsum((mp.mpf(c) ** 2 - 1) / 12 for c in counts) / n**2
        return float((mean - value) / (mean - 1)), float((mean - value) / mp.sqrt(variance))


def _every_path(ranks: list[float], counts: list[int]) -> list[dict[str, float]]:
    """The two metrics from the call, evaluate (ungrouped, each average's group and average of
    two equal groups) and the accumulator."""
    found = [
        {
            "amri": AdjustedArithmeticMeanRankIndex()(ranks, counts),
            "zmr": ZArithmeticMeanRank()(ranks, counts),
        },
        {key: evaluate(ranks, counts, metrics=list(KEYS))[key] for key in KEYS},
    ]
    labels = [0] * len(ranks) + [1] * len(ranks)
    for average in ("micro", "macro"):
        results = evaluate(
            ranks * 2, counts * 2, metrics=list(KEYS), groups=labels, average=average
        )
        found.extend({key: group[key] for key in KEYS} for group in results.by_group.values())
        found.append({"amri": results["amri"]})  # z of two copies is another number
        accumulator = RankAccumulator(list(KEYS), average=average)
        accumulator.update(np.array(ranks), np.array(counts), groups=[3] * len(ranks))
        computed = accumulator.compute()
        found.append({key: computed[key] for key in KEYS})
    return found


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.sampled_from([2, 3, 10, 999, 10**6, 10**9 + 7, 10**12, 2**40 + 1]),
        min_size=1,
        max_size=6,
    ),
    st.sampled_from([1 / 200, 1 / 300, 1 / 700, 1 / 1000, 1 / 1100, 1 / 5000, 1e-9, -1 / 400]),
)
def test_mean_rank_near_chance_on_both_sides_of_both_limits(
    counts: list[int], fraction: float
) -> None:
    """AMRI and zMR within 1e-12 of mpmath whether the rounded difference is kept or summed
    again, and the same bits from every path (but for the call's zMR, see below)."""
    ranks = _ranks_at(counts, fraction)
    adjusted, z = _reference(ranks, counts)
    paths = _every_path(ranks, counts)
    for found in paths:
        assert found["amri"] == pytest.approx(adjusted, rel=1e-12, abs=1e-300)
        if "zmr" in found:
            assert found["zmr"] == pytest.approx(z, rel=1e-12, abs=1e-300)
    # M - E alike in every path: AMRI to the bit (the call's null variance is summed in
    # another order than the tables', so zMR may differ in its last bit there)
    first = paths[1]
    for found in paths:
        for key, value in found.items():
            if key == "amri" or found is not paths[0]:
                assert value == first[key] or (np.isnan(value) and np.isnan(first[key])), key


def _exact_sums_taken(
    monkeypatch: pytest.MonkeyPatch, ranks: list[float], counts: list[int], weights: object
) -> int:
    """How many times grouped evaluate sums M - E exactly (all rank types, both averages)."""
    calls = []
    original = chance_rows.exact_group_differences

    def spy(*args: object, **kwargs: object) -> object:
        calls.append(args)
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(grouped, "exact_group_differences", spy)
    labels = [0] * len(ranks) + [1] * len(ranks)
    for average in ("micro", "macro"):
        evaluate(
            ranks * 2,
            counts * 2,
            weights=weights,  # type: ignore[arg-type]
            metrics=list(KEYS),
            groups=labels,
            average=average,
        )
    return len(calls)


def test_exact_sums_run_where_the_criterion_says(monkeypatch: pytest.MonkeyPatch) -> None:
    counts = [10**6, 10**6 + 1, 999]
    # a 300th: flagged at the default limit, not at the higher one of exact sums
    assert _exact_sums_taken(monkeypatch, _ranks_at(counts, 1 / 300), counts, None) == 0
    # a 2000th: below both
    assert _exact_sums_taken(monkeypatch, _ranks_at(counts, 1 / 2000), counts, None) > 0
    # weights (even of 1): the sums are no longer known to be exact
    weights = [1.0] * 6
    assert _exact_sums_taken(monkeypatch, _ranks_at(counts, 1 / 300), counts, weights) > 0


HITS_KEYS = ("adjusted_hits_at_3", "z_hits_at_3")


def _hits_every_path(
    ranks: list[float], counts: list[int], weights: list[float] | None
) -> list[float]:
    """Adjusted and z-scored Hits@3 from the call, evaluate (ungrouped, each group of both
    averages, the macro average) and the accumulator."""
    found = [
        float(metric(ranks, counts, weights)) for metric in (AdjustedHitsAtK(k=3), ZHitsAtK(k=3))
    ]
    found.extend(evaluate(ranks, counts, weights=weights, metrics=list(HITS_KEYS)).values())
    twice = None if weights is None else weights * 2
    labels = [0] * len(ranks) + [1] * len(ranks)
    for average in ("micro", "macro"):
        results = evaluate(
            ranks * 2,
            counts * 2,
            weights=twice,
            metrics=list(HITS_KEYS),
            groups=labels,
            average=average,
        )
        found.extend(value for group in results.by_group.values() for value in group.values())
        found.extend(results.values())
        accumulator = RankAccumulator(list(HITS_KEYS), average=average)
        accumulator.update(
            np.array(ranks), np.array(counts), weights=weights, groups=[3] * len(ranks)
        )
        found.extend(accumulator.compute().values())
    return found


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(1, 40), max_size=3),
    st.integers(4, 40),
    st.sampled_from([None, 0.5, 3.0, 0.25]),
    st.randoms(use_true_random=False),
)
def test_hits_exactly_at_chance_give_exactly_zero(
    others: list[int], count: int, weight: float | None, rng: object
) -> None:
    """Each count C given to C tasks whose ranks are 1..C: Hits@3 is exactly its expectation
    (min(3, C) hits of C per count), so the adjusted and z-scored Hits@3 are exactly 0 in every
    path. Each expectation min(3, C) / C rounded before its weight had left 1e-17 (ten tasks of
    ten candidates: 10 fl(3/10) != 3). One count above 3 at least (else chance is perfect)."""
    distinct = sorted({count, *others})
    counts = [c for c in distinct for _ in range(c)]
    ranks = [float(r) for c in distinct for r in range(1, c + 1)]
    order = list(range(len(counts)))
    rng.shuffle(order)  # type: ignore[attr-defined]
    counts, ranks = [counts[i] for i in order], [ranks[i] for i in order]
    weights = None if weight is None else [weight] * len(counts)
    assert all(value == 0.0 for value in _hits_every_path(ranks, counts, weights))


def test_hits_at_chance_over_ties_give_exactly_zero() -> None:
    """The expected rank over ties as a ratio too: ten tasks of 15 candidates with the true
    answer tied with nine others at the top (3/10 of a hit each), five with it last, against
    15 fl(3/15): Hits@3 at chance exactly."""
    scores = np.zeros((15, 15))
    scores[:10, 10:] = -1.0  # ten tasks: candidates 0..9 tied at the top, the target among them
    scores[10:, 1:] = 1.0  # five tasks: the target (0) last
    results = evaluate(
        ranks_from_scores(scores, np.zeros(15, dtype=int)),
        metrics=list(HITS_KEYS),
        rank_types="expected",
    )
    assert list(results.values()) == [0.0, 0.0]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([1, 2, 3, 4, 7, 10, 13, 999, 10**6 + 3, 10**12]),
            st.integers(1, 10**6),
            st.sampled_from([0.1, 0.3, 1.0, 1e-3, 7.0, 2.5]),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_hits_difference_within_a_rounding_of_each_term(
    tasks: list[tuple[int, int, float]],
) -> None:
    """M - E of Hits@3 (weighted, per-task rows) against the exact rational sum: within a unit of
    2**-53 of the sum of the magnitudes of the null terms (each term rounded once at most) and
    of itself (the division by W), whether or not a product of weight and numerator is a
    double."""
    counts = np.array([c for c, _, _ in tasks])
    ranks = np.array([float(min(r, c)) for c, r, _ in tasks])
    weights = np.array([w for _, _, w in tasks])
    terms = HitsAtK(k=3)._chance_terms()
    total = float(weights.sum())
    got = exact_difference(terms, ranks, weights, counts, weights, total)
    exact = sum(
        Fraction(w) * (int(r <= 3) - Fraction(min(3, int(c)), int(c)))
        for c, r, w in zip(counts, ranks, weights, strict=True)
    )
    scale = sum(
        Fraction(w) * Fraction(min(3, int(c)), int(c)) for c, w in zip(counts, weights, strict=True)
    )
    reference = exact / Fraction(total)  # the division by W rounds once more
    bound = (abs(reference) + scale / Fraction(total)) * Fraction(2) ** -52
    assert abs(Fraction(got) - reference) <= bound


def test_weight_sums_exact() -> None:
    assert weight_sums_exact(np.array([0.0, 0.5, 0.0]))
    assert weight_sums_exact(np.zeros(3))
    assert weight_sums_exact(np.array([2.0**51, 1.0, 1.0]))
    assert not weight_sums_exact(np.array([2.0**52, 1.0, 1.0]))  # past 2**52 units of 1
    assert weight_sums_exact(np.array([2.0**1000, 3.0 * 2.0**1001]))
    assert not weight_sums_exact(np.array([1.0, 2.0**-60]))
    assert not weight_sums_exact(np.array([0.1, 0.1]))
    assert weight_sums_exact(np.array([3.0 * 2.0**-1074, 2.0**-1070]))  # subnormals


def test_candidate_rows_merge_a_count_where_its_weights_sum_exactly() -> None:
    counts = np.array([10, 7, 10, 10])
    values, totals = candidate_rows(counts, None)
    assert values.tolist() == [7, 10]
    assert totals.tolist() == [1.0, 3.0]
    values, totals = candidate_rows(counts, np.array([0.5, 2.0, 0.25, 0.25]))
    assert values.tolist() == [7, 10]
    assert totals.tolist() == [2.0, 1.0]
    # tenths do not sum exactly: one row per task, its own weight
    weights = np.array([0.1, 0.2, 0.1, 0.3])
    values, totals = candidate_rows(counts, weights)
    assert values.tolist() == counts.tolist()
    assert totals is weights


@pytest.mark.parametrize("share", [0.5, 1e-3, 1e-8, 1e-30])
def test_base_z_scores_of_one_uncertain_task_are_exactly_one(share: float) -> None:
    """One task of two candidates beside certain ones: each base metric takes two values, equally
    likely, so its z-score is +1 or -1 exactly. With the uncertain task's weight (or, unweighted,
    its share of a hundred thousand tasks) small, M and E agree to many digits: the z-score
    column takes M - E from the gaps 1 - M and 1 - E, as the z metrics do, in every path (it
    had been 1.00000001 at a weight of 1e-8, -3 at 1e-20; the geometric means' 1.7e-11 off
    unweighted, by groups), and AMR's is MR's."""
    names = ["mrr", "mr", "hits@1", "gmr", "igmr", "amr"]
    # the direction of a good model (rank 1) for each metric: larger is better but for MR, GMR
    # and AMR (MR / E, whose z-score is MR's)
    signs = np.array([1.0, -1.0, 1.0, -1.0, 1.0, -1.0])
    weights = np.array([share, 1.0, share, 1.0])
    ranks, counts, labels = np.ones(4), np.array([2, 1, 3, 1]), ["a", "a", "b", "b"]
    found = [
        [results.z_score(k) for k in names]
        for results in (
            evaluate(ranks[:2], counts[:2], weights=weights[:2], metrics=names),
            *(
                evaluate(
                    ranks, counts, weights=weights, groups=labels, metrics=names, average=a
                ).by_group["a"]
                for a in ("micro", "macro")
            ),
        )
    ]
    accumulator = RankAccumulator(names)
    accumulator.update(ranks, num_candidates=counts, weights=weights, groups=np.array(labels))
    found.append([accumulator.compute().by_group["a"].z_score(k) for k in names])
    for z in found:
        np.testing.assert_allclose(z, signs, rtol=1e-13, atol=0)
    if share != 0.5:
        return
    # unweighted: a share of 1e-5 (one uncertain task among 1e5)
    many = 100_000
    counts = np.ones(many, dtype=np.int64)
    counts[0] = 2
    ranks = np.ones(many)
    halves = np.repeat([0, 1], many // 2)
    alone = evaluate(ranks, counts, metrics=names)
    np.testing.assert_allclose([alone.z_score(k) for k in names], signs, rtol=1e-13, atol=0)
    for average in ("micro", "macro"):
        grouped = evaluate(ranks, counts, groups=halves, metrics=names, average=average)
        for results in (grouped, grouped.by_group[0]):
            z = [results.z_score(k) for k in names]
            np.testing.assert_allclose(z, signs, rtol=1e-13, atol=0)


def test_indices_of_best_ranks_are_one_exactly() -> None:
    """Every rank 1: each adjusted index is 1 exactly, its range's top, in every path. Where E is
    below 1/2, M - E rounded had made the MRR's and Hits@k's indices 1 + 2e-16, outside
    their declared range."""
    from rankstats import AdjustedInverseHarmonicMeanRank, metric_resolver

    rng = np.random.default_rng(5)
    names = ["amrr", "adjusted_hits_at_1", "adjusted_hits_at_3", "amri", "agmri"]
    for _ in range(40):
        n = int(rng.integers(1, 30))
        counts = rng.integers(4, 50, size=n)  # above 3: Hits@3 is defined in every group
        ones = np.ones(n)
        weights = rng.uniform(0.1, 3.0, size=n)
        labels = rng.integers(0, 3, size=n)
        for name in names:
            metric = metric_resolver.make(name)
            assert metric(ones, counts) == 1.0
            assert metric(ones, counts, weights) == 1.0
            assert metric.adjust(1.0, counts) == 1.0
            assert metric(ones, counts) in metric.value_range
        for average in ("micro", "macro"):
            found = evaluate(ones, counts, metrics=names, groups=labels, average=average)
            for results in (found, *found.by_group.values()):
                assert all(results[name] == 1.0 for name in names)
        accumulator = RankAccumulator(names)
        accumulator.update(ones, num_candidates=counts, weights=weights)
        assert all(accumulator.compute()[name] == 1.0 for name in names)
    assert AdjustedInverseHarmonicMeanRank()([1], [7]) == 1.0


def test_hits_terms_cancelling_between_tasks_keep_their_digits() -> None:
    """Hits@k's expectations min(k, C) / C are no doubles (1/3, 1/6): where those of several
    tasks cancel against the hits (1/2 + 1/3 + 1/6 against one hit of three), the exact sum of
    the rounded terms had kept their roundings (2.8e-5 relative). Each term is now a quotient
    and its remainder: the adjusted Hits@k and its z-score match exact rationals to 1e-13."""
    from rankstats import AdjustedHitsAtK, ZHitsAtK

    def exact(ranks: list[int], counts: list[int], k: int) -> tuple[float, float]:
        n = len(ranks)
        p = [Fraction(min(k, c), c) for c in counts]
        m = Fraction(sum(r <= k for r in ranks), n)
        e = sum(p) / n
        v = sum(q * (1 - q) for q in p) / (n * n)
        with mp.workdps(50):
            d = m - e
            z = (mp.mpf(d.numerator) / d.denominator) / mp.sqrt(mp.mpf(v.numerator) / v.denominator)
        return float((m - e) / (1 - e)), float(z)

    cases = [([1, 11, 11, 11], [20, 30, 60, 10**12], 10), ([1, 2, 2, 2], [2, 3, 6, 10**12], 1)]
    rng = np.random.default_rng(17)
    for _ in range(200):
        n = int(rng.integers(3, 40))
        counts = rng.integers(2, 13, size=n).tolist()
        ranks = [int(rng.integers(1, c + 1)) for c in counts]
        cases.append((ranks, counts, int(rng.integers(1, 4))))
    for ranks, counts, k in cases:
        adjusted, z = exact(ranks, counts, k)
        found = evaluate(ranks, counts, metrics=[f"ah@{k}", f"zh@{k}"])
        for value in (AdjustedHitsAtK(k=k)(ranks, counts), found[f"ah@{k}"]):
            assert value == pytest.approx(adjusted, rel=1e-13, abs=0)
        for value in (ZHitsAtK(k=k)(ranks, counts), found[f"zh@{k}"]):
            assert value == pytest.approx(z, rel=1e-13, abs=0)
