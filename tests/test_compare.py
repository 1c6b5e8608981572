"""The numbers of :func:`rankstats.compare`: values, exact and Monte-Carlo tests, intervals."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from scipy import stats

from rankstats import Ranks, compare, evaluate, metric_resolver
from rankstats.compare.correction import correct_pvalues

RNG = np.random.default_rng(12345)


def _models(n: int, seed: int, candidates: int = 20) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    a = rng.integers(1, candidates + 1, size=n)
    b = np.clip(a + rng.integers(-4, 6, size=n), 1, candidates)
    c = rng.integers(1, candidates + 1, size=n)
    return a.astype(float), b.astype(float), c.astype(float), np.full(n, candidates)


def _tied_models(n: int, seed: int, candidates: int = 12) -> tuple[Ranks, Ranks]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(2):
        optimistic = rng.integers(1, candidates + 1, size=n)
        pessimistic = np.minimum(optimistic + rng.integers(0, 3, size=n), candidates)
        out.append(Ranks(optimistic, pessimistic, np.full(n, candidates)))
    return out[0], out[1]


# --- values ------------------------------------------------------------------------------------

VALUE_METRICS = ["mrr", "mr", "hits@3", "gmr", "igmr", "hmr", "iamr", "median_rank", "amri", "zmrr"]


@pytest.mark.parametrize("rank_type", ["optimistic", "realistic", "pessimistic"])
def test_values_equal_evaluate(rank_type: str) -> None:
    first, second = _tied_models(40, 1)
    metrics = [
        name
        for name in VALUE_METRICS
        if rank_type in metric_resolver.make(name).supported_rank_types
    ]
    result = compare(
        {"x": first, "y": second},
        metrics=metrics,
        rank_type=rank_type,
        interval=None,
        n_resamples=10,
        seed=0,
    )
    assert len(result.metrics) == len(metrics) >= 8
    for name, ranks in (("x", first), ("y", second)):
        table = evaluate(ranks, rank_types=[rank_type], metrics=metrics)
        for metric in result.metrics:
            expected = table[f"{rank_type}.{metric.key}"]
            assert result.value(metric, name).value == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
def test_expected_rank_type_equals_evaluate(weighted: bool) -> None:
    first, second = _tied_models(30, 2)
    weights = np.random.default_rng(3).uniform(0.5, 2.0, size=30) if weighted else None
    metrics = ["mrr", "mr", "hits@2", "amrr", "z_hits_at_2"] + ([] if weighted else ["gmr", "igmr"])
    result = compare(
        [first, second],
        metrics=metrics,
        rank_type="expected",
        weights=weights,
        interval=None,
        n_resamples=10,
        seed=0,
    )
    for name, ranks in (("model 1", first), ("model 2", second)):
        table = evaluate(ranks, rank_types=["expected"], metrics=metrics, weights=weights)
        for metric in result.metrics:
            expected = table[f"expected.{metric.key}"]
            assert result.value(metric, name).value == pytest.approx(expected, rel=1e-12)


def test_weighted_values_equal_evaluate() -> None:
    a, b, _, candidates = _models(50, 4)
    weights = np.random.default_rng(5).uniform(0, 3, size=50)
    metrics = ["mrr", "mr", "hits@5", "gmr", "hmr", "amri"]
    result = compare({"a": a, "b": b}, candidates, metrics=metrics, weights=weights, interval=None)
    for name, ranks in (("a", a), ("b", b)):
        table = evaluate(ranks, candidates, metrics=metrics, weights=weights)
        for metric in result.metrics:
            assert result.value(metric, name).value == pytest.approx(table[metric.key], rel=1e-12)
    pair = result.pair("mrr", "a", "b")
    assert pair.difference == pytest.approx(
        result.value("mrr", "a").value - result.value("mrr", "b").value, abs=1e-15
    )


# --- the randomization test --------------------------------------------------------------------


def _brute_force_pvalue(metric_name, a, b, candidates=None, weights=None, rank_type=None) -> float:
    """All 2**n swaps, one Python call of the public metric each: the reference."""
    metric = metric_resolver.make(metric_name)

    def value(ranks):
        if rank_type == "expected":
            from rankstats import expected_over_ties

            return expected_over_ties(metric, ranks, weights)
        kwargs = {} if candidates is None else {"num_candidates": candidates}
        return metric(ranks, weights=weights, **kwargs)

    def swapped(mask):
        if rank_type == "expected":
            opt = (
                np.where(mask, b.optimistic, a.optimistic),
                np.where(mask, a.optimistic, b.optimistic),
            )
            pes = (
                np.where(mask, b.pessimistic, a.pessimistic),
                np.where(mask, a.pessimistic, b.pessimistic),
            )
            return (
                Ranks(opt[0], pes[0], a.num_candidates),
                Ranks(opt[1], pes[1], a.num_candidates),
            )
        return np.where(mask, b, a), np.where(mask, a, b)

    n = len(a)
    observed = abs(value(a) - value(b))
    count = 0
    for bits in itertools.product([False, True], repeat=n):
        x, y = swapped(np.array(bits))
        count += abs(value(x) - value(y)) >= observed * (1 - 1e-9)
    return count / 2**n


@pytest.mark.parametrize(
    "metric", ["mrr", "mr", "hits@3", "gmr", "hmr", "iamr", "median_rank", "igmr", "variance"]
)
def test_exact_randomization_equals_brute_force(metric: str) -> None:
    a, b, _, _ = _models(9, 7)
    result = compare({"a": a, "b": b}, metrics=[metric], interval=None, seed=0)
    pair = result.pairs[0]
    assert result.settings.exact is True
    assert result.settings.n_resamples == 2**9
    assert pair.p_value == pytest.approx(_brute_force_pvalue(metric, a, b), abs=1e-12)
    assert pair.p_value_se == 0.0


def test_exact_randomization_derived_and_weighted() -> None:
    a, b, _, candidates = _models(8, 8)
    weights = np.random.default_rng(1).uniform(0.1, 2, size=8)
    for metric in ("amri", "zmrr", "adjusted_hits_at_3"):
        result = compare(
            {"a": a, "b": b}, candidates, metrics=[metric], weights=weights, interval=None, seed=0
        )
        expected = _brute_force_pvalue(metric, a, b, candidates, weights)
        assert result.pairs[0].p_value == pytest.approx(expected, abs=1e-12)


def test_exact_randomization_expected_rank_type() -> None:
    first, second = _tied_models(8, 9)
    for metric in ("mrr", "hits@2", "gmr"):
        result = compare(
            [first, second], metrics=[metric], rank_type="expected", interval=None, seed=0
        )
        expected = _brute_force_pvalue(metric, first, second, rank_type="expected")
        assert result.pairs[0].p_value == pytest.approx(expected, abs=1e-12)


def test_exact_randomization_equals_scipy_permutation_test() -> None:
    a, b, _, _ = _models(11, 10)

    def statistic(x, y, axis=-1):
        return np.abs(np.mean(1 / x, axis=axis) - np.mean(1 / y, axis=axis))

    reference = stats.permutation_test(
        (a, b),
        statistic,
        permutation_type="samples",
        alternative="greater",
        vectorized=True,
        n_resamples=10_000,
    )
    result = compare({"a": a, "b": b}, metrics=["mrr"], interval=None, seed=0)
    assert result.pairs[0].p_value == pytest.approx(reference.pvalue, abs=1e-12)


def test_monte_carlo_within_its_error_of_a_long_run() -> None:
    a, b, c, _ = _models(300, 11)
    models = {"a": a, "b": b, "c": c}
    metrics = ["mrr", "hits@10", "gmr", "median_rank"]
    short = compare(models, metrics=metrics, interval=None, n_resamples=2_000, seed=1)
    long = compare(models, metrics=metrics, interval=None, n_resamples=100_000, seed=2)
    assert short.settings.exact is False
    for quick, reference in zip(short.pairs, long.pairs, strict=True):
        bound = 4 * math.hypot(quick.p_value_se, reference.p_value_se) + 1e-3
        assert abs(quick.p_value - reference.p_value) <= bound, (quick, reference)
        assert quick.p_value_se == pytest.approx(
            math.sqrt(quick.p_value * (1 - quick.p_value) / 2_000)
        )


def test_pvalue_never_zero_and_reproducible() -> None:
    n = 200
    good, bad = np.ones(n), np.full(n, 50.0)
    first = compare({"good": good, "bad": bad}, metrics=["mrr"], n_resamples=999, seed=3)
    again = compare({"good": good, "bad": bad}, metrics=["mrr"], n_resamples=999, seed=3)
    assert first.pairs[0].p_value == pytest.approx(1 / 1000)
    assert first.to_dict() == again.to_dict()


def test_identical_models_give_p_one() -> None:
    a, _, _, _ = _models(100, 12)
    result = compare(
        {"a": a, "b": a.copy()}, metrics=["mrr", "median_rank"], seed=0, test="randomization"
    )
    assert all(p.p_value == 1.0 for p in result.pairs)
    assert all(p.lower == p.upper == 0.0 for p in result.pairs)


# --- analytic tests ----------------------------------------------------------------------------


def test_t_test_equals_scipy() -> None:
    a, b, c, candidates = _models(150, 13)
    result = compare(
        {"a": a, "b": b, "c": c}, candidates, metrics=["mrr", "mr", "amri"], test="t", interval=None
    )
    terms = {"mrr": lambda r: 1 / r, "mr": lambda r: r, "amri": lambda r: r}
    for pair in result.pairs:
        name = {"inverse_harmonic_mean_rank": "mrr", "arithmetic_mean_rank": "mr"}.get(
            pair.metric, "amri"
        )
        x, y = (terms[name]({"a": a, "b": b, "c": c}[m]) for m in (pair.model_a, pair.model_b))
        reference = stats.ttest_rel(x, y)
        assert pair.p_value == pytest.approx(reference.pvalue, rel=1e-12, abs=1e-300)
        assert abs(pair.statistic) == pytest.approx(abs(reference.statistic), rel=1e-12)
        assert pair.p_value_se is None


@pytest.mark.parametrize(
    ("a", "b", "statistic", "p_value"),
    [
        ([1] * 5, [2] * 5, math.inf, 0.0),  # MRR terms differ by 1/2 on every query
        ([2] * 5, [1] * 5, -math.inf, 0.0),
        ([2, 3], [3, 6], math.inf, 0.0),  # 1/2 - 1/3 and 1/3 - 1/6: equal up to rounding
        ([1, 2, 3], [1, 2, 3], 0.0, 1.0),
    ],
)
def test_t_test_on_differences_without_spread(a, b, statistic, p_value) -> None:
    """No precision-loss warning of scipy: the case is decided here (warnings are errors)."""
    result = compare({"a": a, "b": b}, [10] * len(a), metrics=["mrr"], test="t")
    pair = result.pairs[0]
    assert (pair.statistic, pair.p_value, pair.p_adjusted) == (statistic, p_value, p_value)
    assert pair.effect_size is None  # no spread, as for Cohen's d_z
    shown = json.loads(result.to_json())["pairs"][0]["statistic"]  # JSON has no infinity
    assert shown == (None if math.isinf(statistic) else statistic)


def test_t_test_of_a_single_query_is_undefined() -> None:
    """One query leaves the t-test no degrees of freedom: undefined (None) as scipy's NaN (the
    no-spread limit had given p = 0, significant), and the report names no bootstrap it could
    not draw."""
    from rankstats.compare.report import describe

    result = compare({"a": [1], "b": [2]}, [5], metrics=["mrr"], test="t")
    pair = result.pairs[0]
    assert (pair.statistic, pair.p_value, pair.p_adjusted) == (None, None, None)
    assert not pair.significant()
    with np.errstate(all="ignore"):  # scipy divides by the zero degrees of freedom
        assert math.isnan(stats.ttest_rel([1.0], [0.5]).pvalue)
    text = describe(result)
    assert "Intervals: none (a bootstrap needs at least two queries)" in text
    assert "1 query," in text


def test_wilcoxon_equals_scipy() -> None:
    a, b, _, _ = _models(80, 14)
    result = compare({"a": a, "b": b}, metrics=["mrr", "hits@5"], test="wilcoxon", interval=None)
    assert result.pairs[0].p_value == pytest.approx(stats.wilcoxon(1 / a, 1 / b).pvalue, rel=1e-12)
    hits = stats.wilcoxon((a <= 5).astype(float), (b <= 5).astype(float))
    assert result.pairs[1].p_value == pytest.approx(hits.pvalue, rel=1e-12)


def test_effect_size_is_cohens_dz() -> None:
    a, b, _, _ = _models(60, 15)
    result = compare({"a": a, "b": b}, metrics=["mrr", "mr"], interval=None, n_resamples=10)
    d = 1 / a - 1 / b
    assert result.pairs[0].effect_size == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)
    # lower is better for MR, but the effect is signed like the difference
    d = a - b
    assert result.pairs[1].effect_size == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)


# --- the bootstrap ------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["bca", "percentile"])
@pytest.mark.parametrize("stratified", [False, True])
def test_bootstrap_intervals_equal_scipy(method: str, stratified: bool) -> None:
    a, b, _, _ = _models(120, 16)
    groups = np.zeros(120, dtype=int) if stratified else None  # one stratum: the same draws

    def difference(x, y, axis=-1):
        return np.mean(1 / x, axis=axis) - np.mean(1 / y, axis=axis)

    def first(x, y, axis=-1):
        return np.mean(1 / x, axis=axis)

    settings = {
        "paired": True,
        "vectorized": True,
        "n_resamples": 3_000,
        "method": method,
        "batch": 500,
    }
    reference = stats.bootstrap((a, b), difference, rng=np.random.default_rng(21), **settings)
    model = stats.bootstrap((a, b), first, rng=np.random.default_rng(21), **settings)
    result = compare(
        {"a": a, "b": b},
        metrics=["mrr"],
        test="t",
        interval=method,
        n_resamples=3_000,
        batch=500,
        seed=21,
        groups=groups,
    )
    pair = result.pairs[0]
    assert result.settings.stratified is stratified
    assert (pair.lower, pair.upper) == pytest.approx(
        tuple(reference.confidence_interval), rel=1e-10
    )
    value = result.value("mrr", "a")
    assert (value.lower, value.upper) == pytest.approx(tuple(model.confidence_interval), rel=1e-10)


@pytest.mark.parametrize("n_resamples", [1, 0])
def test_too_few_resamples_refused(n_resamples: int) -> None:
    a, b, _, _ = _models(10, 16)
    with pytest.raises(ValueError, match=f"n_resamples must be at least 2.*got {n_resamples}"):
        compare({"a": a, "b": b}, metrics=["mrr"], n_resamples=n_resamples)


@pytest.mark.parametrize("test", ["randomization", "bootstrap"])
@pytest.mark.parametrize("groups", [None, np.repeat([0, 1], 15)])
def test_two_resamples_suffice(test: str, groups) -> None:
    """The fewest resamples allowed give intervals and p-values without a warning."""
    a, b, _, _ = _models(30, 16)
    result = compare(
        {"a": a, "b": b}, metrics=["mrr"], test=test, groups=groups, n_resamples=2, seed=0
    )
    pair = result.pairs[0]
    assert pair.lower <= pair.upper
    assert 0 < pair.p_value <= 1


def test_interval_coverage_on_simulated_data() -> None:
    """95% intervals of MRR cover the true value about 95% of the time (seeded, loose bound)."""
    rng = np.random.default_rng(22)
    candidates = 10
    truth = sum(1 / k for k in range(1, candidates + 1)) / candidates  # E[1/r], r ~ U{1..10}
    covered = 0
    repetitions = 200
    for _ in range(repetitions):
        a = rng.integers(1, candidates + 1, size=60)
        b = rng.integers(1, candidates + 1, size=60)
        result = compare(
            {"a": a, "b": b}, metrics=["mrr"], test="t", n_resamples=500, seed=rng, interval="bca"
        )
        value = result.value("mrr", "a")
        covered += value.lower <= truth <= value.upper
        pair = result.pairs[0]  # true difference is 0
        covered += pair.lower <= 0 <= pair.upper
    assert 0.89 <= covered / (2 * repetitions) <= 0.99


def test_bootstrap_test_pvalue() -> None:
    a, b, _, _ = _models(100, 17)
    result = compare({"a": a, "b": b}, metrics=["mrr"], test="bootstrap", n_resamples=2_000, seed=5)
    reference = stats.bootstrap(
        (a, b),
        lambda x, y, axis=-1: np.mean(1 / x, axis) - np.mean(1 / y, axis),
        paired=True,
        n_resamples=2_000,
        rng=np.random.default_rng(5),
        method="bca",
    )
    theta = np.mean(1 / a) - np.mean(1 / b)
    extreme = np.abs(reference.bootstrap_distribution - theta) >= abs(theta) * (1 - 1e-9)
    assert result.pairs[0].p_value == pytest.approx((extreme.sum() + 1) / 2_001)


# --- groups -------------------------------------------------------------------------------------


def test_per_group_results_and_correction_across_groups() -> None:
    a, b, c, _ = _models(90, 18)
    groups = np.repeat(["r1", "r2", "r3"], 30)
    result = compare(
        {"a": a, "b": b, "c": c},
        metrics=["mrr", "hits@3"],
        groups=groups,
        per_group=True,
        interval=None,
        n_resamples=1_000,
        seed=0,
        correction="bh",
    )
    assert list(result.by_group) == ["r1", "r2", "r3"]
    for label, part in result.by_group.items():
        mask = groups == label
        alone = compare(
            {"a": a[mask], "b": b[mask], "c": c[mask]},
            metrics=["mrr", "hits@3"],
            interval=None,
            n_resamples=10,
        )
        for value, reference in zip(part.values, alone.values, strict=True):
            assert value.value == pytest.approx(reference.value, rel=1e-12)
    for metric in ("inverse_harmonic_mean_rank", "hits_at_3"):
        raw = [p.p_value for g in result.by_group.values() for p in g.pairs if p.metric == metric]
        adjusted = [
            p.p_adjusted for g in result.by_group.values() for p in g.pairs if p.metric == metric
        ]
        assert adjusted == pytest.approx(list(stats.false_discovery_control(raw)), rel=1e-12)


def test_group_of_zero_weights_left_out_with_a_note() -> None:
    """As evaluate leaves such a group out; no 0 / 0 (warnings are errors)."""
    a = [1, 2, 3, 4, 1, 2, 3, 4]
    b = [2, 2, 2, 2, 1, 1, 1, 1]
    groups = list("xxxxyyyy")
    result = compare(
        {"a": a, "b": b},
        [10] * 8,
        weights=[1] * 4 + [0] * 4,
        groups=groups,
        per_group=True,
        n_resamples=200,
        seed=0,
    )
    assert list(result.by_group) == ["x"]
    note = "1 group(s) left out because all their tasks have weight 0: 'y'"
    assert note in result.notes
    assert note in str(result)
    assert note in result.to_dict()["notes"]
    alone = compare({"a": a[:4], "b": b[:4]}, [10] * 4, n_resamples=200, seed=0)
    for found, expected in zip(result.by_group["x"].pairs, alone.pairs, strict=True):
        assert found.difference == expected.difference
        assert found.p_value == expected.p_value


@pytest.mark.parametrize("test", ["randomization", "bootstrap"])
@pytest.mark.parametrize("stratified", [False, True])
def test_zero_weights_give_the_results_of_the_other_queries(test: str, stratified: bool) -> None:
    a, b, _, candidates = _models(30, 23)
    weights = np.random.default_rng(24).uniform(0.5, 2.0, size=30)
    weights[::3] = 0.0  # 10 of 30
    groups = np.tile(["r1", "r2"], 15) if stratified else None
    options = {
        "metrics": ["mrr", "hits@3", "amri"],
        "test": test,
        "n_resamples": 500,
        "seed": 4,
    }
    keep = weights > 0
    result = compare(
        {"a": a, "b": b},
        candidates,
        weights=weights,
        groups=groups,
        per_group=stratified,
        **options,
    )
    alone = compare(
        {"a": a[keep], "b": b[keep]},
        candidates[keep],
        weights=weights[keep],
        groups=None if groups is None else groups[keep],
        per_group=stratified,
        **options,
    )
    assert result.notes[0] == "10 of 30 queries left out because their weight is 0"
    assert alone.notes == []
    assert result.settings == alone.settings
    assert result.values == alone.values
    assert result.pairs == alone.pairs
    assert all(p.lower is not None and p.upper is not None for p in result.pairs)
    assert {label: c.pairs for label, c in result.by_group.items()} == {
        label: c.pairs for label, c in alone.by_group.items()
    }


def test_zero_weights_keep_the_intervals() -> None:
    a = [1, 3] + [1] * 8
    b = [2, 1] + [1] * 8
    result = compare({"a": a, "b": b}, weights=[1, 1] + [0] * 8, metrics=["mrr"], seed=0)
    alone = compare({"a": a[:2], "b": b[:2]}, weights=[1, 1], metrics=["mrr"], seed=0)
    assert result.pairs == alone.pairs
    assert result.values == alone.values
    assert all(v.lower is not None and v.upper is not None for v in result.values)
    assert "8 of 10 queries left out because their weight is 0." in result.describe()


# --- corrections --------------------------------------------------------------------------------


def _holm_by_hand(pvalues: list[float]) -> list[float]:
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def test_corrections() -> None:
    pvalues = [*list(RNG.uniform(0, 0.2, size=12)), 0.001, 0.5]
    assert correct_pvalues(pvalues, "holm") == pytest.approx(_holm_by_hand(pvalues), rel=1e-14)
    assert correct_pvalues(pvalues, "bh") == pytest.approx(stats.false_discovery_control(pvalues))
    assert correct_pvalues(pvalues, "by") == pytest.approx(
        stats.false_discovery_control(pvalues, method="by")
    )
    assert correct_pvalues(pvalues, "bonferroni") == pytest.approx(
        np.minimum(np.array(pvalues) * 14, 1)
    )
    with_nan = correct_pvalues([0.01, math.nan, 0.02], "holm")
    assert math.isnan(with_nan[1])
    assert with_nan[[0, 2]] == pytest.approx([0.02, 0.02])


def test_corrections_against_statsmodels() -> None:
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    pvalues = RNG.uniform(0, 0.1, size=10)
    for ours, theirs in (
        ("holm", "holm"),
        ("bh", "fdr_bh"),
        ("by", "fdr_by"),
        ("bonferroni", "bonferroni"),
    ):
        expected = multitest.multipletests(pvalues, method=theirs)[1]
        assert correct_pvalues(pvalues, ours) == pytest.approx(expected, rel=1e-12)


def test_compare_applies_the_correction_over_pairs() -> None:
    a, b, c, _ = _models(100, 19)
    result = compare(
        {"a": a, "b": b, "c": c}, metrics=["mrr"], interval=None, n_resamples=500, seed=0
    )
    raw = [p.p_value for p in result.pairs]
    assert [p.p_adjusted for p in result.pairs] == pytest.approx(_holm_by_hand(raw))


def test_stratified_bootstrap_keeps_group_sizes() -> None:
    """Hits@1 of a model with rank 1 on exactly the queries of one group is fixed by strata."""
    n = 30
    groups = np.repeat(["first", "rest"], [10, 20])
    a = np.where(groups == "first", 1.0, 5.0)
    b = np.where(np.arange(n) % 3 == 0, 1.0, 4.0)
    stratified = compare(
        {"a": a, "b": b},
        metrics=["hits@1"],
        groups=groups,
        interval="percentile",
        n_resamples=500,
        seed=0,
    )
    value = stratified.value("hits@1", "a")
    assert value.lower == value.upper == pytest.approx(1 / 3)
    plain = compare(
        {"a": a, "b": b}, metrics=["hits@1"], interval="percentile", n_resamples=500, seed=0
    )
    assert plain.value("hits@1", "a").lower < 1 / 3 < plain.value("hits@1", "a").upper


def test_seeded_p_values_do_not_depend_on_the_intervals() -> None:
    """The randomization test and the bootstrap draw from separate streams of the seed: the
    p-values had moved with ``interval`` (the bootstrap drew first from the shared generator)."""
    rng = np.random.default_rng(0)
    a = rng.integers(1, 15, 100)
    b = np.maximum(1, a + rng.integers(-2, 3, 100))
    found = {
        interval: compare(
            {"a": a, "b": b}, [20] * 100, metrics=["mrr"], seed=5, interval=interval, exact=False
        ).pairs[0]
        for interval in ("bca", None, "percentile")
    }
    assert len({pair.p_value for pair in found.values()}) == 1
    assert 0.05 < found[None].p_value < 0.95  # a p-value the resamples decide
    assert found["bca"].lower != found["percentile"].lower


def test_a_stratified_bootstrap_of_one_query_per_group_is_refused() -> None:
    """Each resample within groups of one query is the data itself: the intervals had had
    width 0, silently."""
    a, b, _, _ = _models(20, 3)
    groups = np.arange(20)
    with pytest.raises(ValueError, match=r"each of the 20 groups holds one query"):
        compare({"a": a, "b": b}, metrics=["mrr"], groups=groups, seed=1)
    result = compare(
        {"a": a, "b": b}, metrics=["mrr"], groups=groups, interval=None, test="t", seed=1
    )
    assert result.pairs[0].p_value is not None


def test_probe_faults_of_compare() -> None:
    """Faults an outside probe found, each now right: numpy integers in the settings (JSON),
    Wilcoxon's unsigned statistic both ways, the t statistic signed like the metric, values equal
    to the metric's own (the resampling sums had differed in the last bit), one array of counts
    with per-model query ids, tuple group labels, a group's correction family, and p-values
    outside [0, 1]."""
    queries = {"A": [1, 2, 3, 4, 5, 6, 3], "B": [2, 3, 5, 4, 7, 9, 1]}
    found = compare(queries, metrics=["mrr"], n_resamples=np.int64(100), seed=0)
    assert json.loads(found.to_json())["settings"]["n_resamples"] == 100
    signed = compare(queries, metrics=["mrr"], test="wilcoxon", interval=None)
    assert signed.pair("mrr", "A", "B").statistic == signed.pair("mrr", "B", "A").statistic == 6.0
    few = {"A": [1, 2, 3, 1, 2, 5], "B": [2, 3, 4, 2, 5, 4]}
    t_test = compare(few, [9] * 6, metrics=["amri", "mr"], test="t", interval=None)
    amri = (1.0 - (np.array(few["A"]) - 1) / 4.0, 1.0 - (np.array(few["B"]) - 1) / 4.0)
    pair = t_test.pair("amri", "A", "B")
    assert pair.difference > 0
    assert pair.statistic == pytest.approx(stats.ttest_rel(*amri).statistic, rel=1e-12)
    assert t_test.pair("mr", "A", "B").statistic < 0
    shared = compare({"A": [1, 2, 3], "B": [3, 2, 1]}, [3, 4, 5], metrics=["mrr", "amri"], seed=0)
    for key in ("mrr", "amri"):
        assert shared.value(key, "A").value == evaluate([1, 2, 3], [3, 4, 5], metrics=[key])[key]
    ids = {"A": ["q1", "q2", "q3"], "B": ["q3", "q2", "q1"]}
    aligned = compare({"A": [1, 2, 3], "B": [3, 2, 1]}, [3, 4, 5], query_ids=ids, seed=0)
    assert aligned.pair("mrr", "A", "B").difference == 0.0
    labels = [("r1", "h"), ("r1", "t"), ("r2", "h"), ("r2", "t")] * 5
    ranks = {"A": np.arange(1, 21) % 5 + 1, "B": np.arange(1, 21) % 4 + 1}
    grouped = compare(ranks, [10] * 20, groups=labels, per_group=True, seed=0, interval=None)
    assert list(grouped.by_group) == [("r1", "h"), ("r1", "t"), ("r2", "h"), ("r2", "t")]
    assert "in each of the 4 groups (4 tests)" in grouped.by_group[("r1", "h")].describe()
    for bad in ([0.5, -0.1], [1.5]):
        with pytest.raises(ValueError, match=r"pvalues must lie in \[0, 1\]"):
            correct_pvalues(bad, "holm")
    with pytest.raises(ValueError, match="pvalues must be one-dimensional"):
        correct_pvalues([[0.1, 0.2]], "bh")
    named = compare({"A|B": [1, 2, 3], "C": [2, 3, 1]}, metrics=["mrr"], seed=0)
    assert r"A\|B" in named.to_markdown()
    with pytest.raises(ValueError, match="digits must be a positive integer"):
        named.to_markdown(digits=-1)
