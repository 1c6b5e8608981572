"""Groups computed together (vectorised columns) equal each group evaluated alone."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rankstats import Ranks, evaluate
from rankstats.base import RankBasedMetric
from rankstats.chance import condition_threshold
from rankstats.evaluation import grouped
from rankstats.evaluation.grouped import LazyGroups
from rankstats.evaluation.labels import encode_groups

METRICS = [
    "mr",
    "mrr",
    "hmr",
    "iamr",
    "gmr",
    "igmr",
    "hits@1",
    "hits@3",
    "hits@10",
    "median",
    "variance",
    "std",
    "mad",
    "amr",
    "amri",
    "amrr",
    "agmri",
    "zmr",
    "zmrr",
    "zgmr",
    "adjusted_hits_at_10",
    "z_hits_at_10",
]


def _side(rng: np.random.Generator, n: int) -> Ranks:
    candidates = rng.integers(1, 30, size=n)
    optimistic = np.minimum(rng.geometric(0.2, size=n), candidates)
    ties = rng.binomial(1, 0.3, size=n) * rng.integers(1, 4, size=n)
    return Ranks(optimistic, np.minimum(optimistic + ties, candidates), candidates)


def _subset(ranks: Ranks, rows: np.ndarray) -> Ranks:
    assert ranks.num_candidates is not None
    return Ranks(ranks.optimistic[rows], ranks.pessimistic[rows], ranks.num_candidates[rows])


def _same_row(grouped: object, alone: object) -> None:
    for name in ("value", "expected_value", "variance"):
        a, b = getattr(grouped, name), getattr(alone, name)
        if b is None:
            assert a is None, name
        elif math.isnan(b):
            assert math.isnan(a), name
        else:
            assert a == pytest.approx(b, rel=1e-11, abs=1e-13), name
    assert grouped.method == alone.method  # type: ignore[attr-defined]
    assert (grouped.note is None) == (alone.note is None)  # type: ignore[attr-defined]


@pytest.mark.parametrize("weighted", [False, True])
def test_every_group_equals_evaluating_it_alone(weighted: bool) -> None:
    rng = np.random.default_rng(11)
    head, tail = _side(rng, 120), _side(rng, 90)
    head_groups = rng.integers(0, 7, size=120)
    tail_groups = rng.integers(2, 9, size=90)
    # a group of single-candidate tasks: adjusted metrics undefined there
    single = head_groups == 1
    assert head.num_candidates is not None
    head = Ranks(
        np.where(single, 1, head.optimistic),
        np.where(single, 1, head.pessimistic),
        np.where(single, 1, head.num_candidates),
    )
    weights = None
    if weighted:
        weights = {"head": rng.integers(1, 4, size=120) * 0.5, "tail": rng.random(90) + 0.1}
    metrics = [m for m in METRICS if not (weighted and m == "count")]
    results = evaluate(
        {"head": head, "tail": tail},
        metrics=metrics,
        groups={"head": head_groups, "tail": tail_groups},
        weights=weights,
    )
    assert isinstance(results.by_group, LazyGroups)
    assert list(results.by_group) == list(range(9))
    for label, group in results.by_group.items():
        sides = {}
        side_weights = {}
        for side, ranks, ids in (("head", head, head_groups), ("tail", tail, tail_groups)):
            rows = ids == label
            if rows.any():
                sides[side] = _subset(ranks, rows)
                if weights is not None:
                    side_weights[side] = weights[side][rows]
        alone = evaluate(sides, metrics=metrics, weights=side_weights or None)
        # a group on one side only still has the side "both", equal to that side
        assert {k for k in group if not k.startswith("both.") or len(sides) > 1} == set(alone)
        for key in group:
            side, rest = key.split(".", 1)
            reference = key if key in alone else f"{next(iter(sides))}.{rest}"
            _same_row(group.row(key), alone.row(reference))


def test_large_groups_sum_pairwise() -> None:
    """Groups of more than 128 table rows take the reduceat path; same results as alone."""
    rng = np.random.default_rng(5)
    ranks = _side(rng, 3_000)
    ranks = Ranks(ranks.optimistic, ranks.pessimistic, rng.integers(30, 5_000, size=3_000))
    groups = (rng.random(3_000) < 0.3).astype(int)
    results = evaluate(ranks, metrics=METRICS[:12], groups=groups)
    for label in (0, 1):
        alone = evaluate(_subset(ranks, groups == label), metrics=METRICS[:12])
        for key in alone:
            _same_row(results.by_group[label].row(key), alone.row(key))


def test_large_groups_with_many_ties() -> None:
    """More than 128 distinct tied and untied rows per group: both summed pairwise."""
    rng = np.random.default_rng(8)
    n = 6_000
    candidates = rng.integers(400, 600, size=n)
    optimistic = rng.integers(1, 400, size=n)
    pessimistic = optimistic + rng.binomial(1, 0.5, size=n) * rng.integers(1, 9, size=n)
    ranks = Ranks(optimistic, pessimistic, candidates)
    groups = (rng.random(n) < 0.4).astype(int)
    metrics = [*METRICS[:12], "amri", "zmrr"]
    results = evaluate(ranks, metrics=metrics, groups=groups)
    for label in (0, 1):
        alone = evaluate(_subset(ranks, groups == label), metrics=metrics)
        for key in alone:
            _same_row(results.by_group[label].row(key), alone.row(key))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("num_groups", [3, 60], ids=["few-large", "many-small"])
@pytest.mark.parametrize("given", ["pairs", "realistic"])
def test_micro_average_equals_evaluating_all_tasks_together(
    weighted: bool, num_groups: int, given: str
) -> None:
    """The micro rows come from the sums over the groups (mean-type metrics) or from the merged
    tables (the rest): both equal the ungrouped table, value, E and V of every metric."""
    rng = np.random.default_rng(21)
    pairs = {"head": _side(rng, 1_500), "tail": _side(rng, 1_200)}
    sizes = {side: len(r.optimistic) for side, r in pairs.items()}
    groups = {side: rng.integers(0, num_groups, size=size) for side, size in sizes.items()}
    weights = None
    if weighted:
        weights = {side: rng.random(size) + 0.1 for side, size in sizes.items()}
    sides: dict[str, object] = dict(pairs)
    candidates = None
    if given == "realistic":  # ranks given directly: no optimistic and pessimistic pairs
        sides = {side: r.realistic for side, r in pairs.items()}
        candidates = {side: r.num_candidates for side, r in pairs.items()}
    metrics = METRICS if weighted else [*METRICS, "count"]
    micro = evaluate(sides, candidates, metrics=metrics, groups=groups, weights=weights)
    plain = evaluate(sides, candidates, metrics=metrics, weights=weights)
    assert set(micro) == set(plain)
    for key in plain:
        got, want = micro.row(key), plain.row(key)
        for name in ("value", "expected_value", "variance"):
            a, b = getattr(got, name), getattr(want, name)
            if b is None:
                assert a is None, (key, name)
            else:
                assert a == pytest.approx(b, rel=1e-13, abs=1e-15), (key, name)
        assert got.method == want.method, key


def test_macro_rows_average_the_groups() -> None:
    rng = np.random.default_rng(3)
    ranks = _side(rng, 200)
    groups = rng.integers(0, 12, size=200)
    results = evaluate(ranks, metrics=METRICS, groups=groups, average="macro")
    for key in results:
        rows = [g.row(key) for g in results.by_group.values()]
        defined = [r for r in rows if not math.isnan(r.value)]
        row = results.row(key)
        assert row.value == pytest.approx(sum(r.value for r in defined) / len(defined), rel=1e-12)
        if all(r.expected_value is not None for r in defined):
            mean = sum(r.expected_value for r in defined) / len(defined)  # type: ignore[misc]
            assert row.expected_value == pytest.approx(mean, rel=1e-12, abs=1e-14)
            variance = sum(r.variance for r in defined) / len(defined) ** 2  # type: ignore[misc]
            assert row.variance == pytest.approx(variance, rel=1e-12)
        else:
            assert row.expected_value is None
            assert row.note is not None


def test_groups_without_candidates() -> None:
    results = evaluate([1, 2, 3, 4], metrics=["mrr", "median"], groups=[0, 0, 1, 1])
    row = results.by_group[1].row("mrr")
    assert row.value == pytest.approx((1 / 3 + 1 / 4) / 2)
    assert row.method is None
    assert row.note is not None
    assert "num_candidates" in row.note


def test_lazy_groups_mapping() -> None:
    results = evaluate([1, 2, 3], [3, 3, 3], metrics=["mr"], groups=["b", "a", "b"])
    groups = results.by_group
    assert len(groups) == 2
    assert "a" in groups
    assert "c" not in groups
    assert [] not in groups  # unhashable: not a label
    assert groups["a"] is groups["a"]
    with pytest.raises(KeyError):
        groups["c"]


# --- invariants (hypothesis) ---------------------------------------------------------------------

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies

INVARIANT_METRICS = ["mr", "mrr", "hits@3", "gmr", "variance", "amri", "zmrr", "median"]


@st.composite
def grouped_input(draw: object) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    n = draw(st.integers(2, 25))  # type: ignore[operator]
    candidates = np.array(draw(st.lists(st.integers(1, 12), min_size=n, max_size=n)))  # type: ignore[operator]
    fractions = np.array(draw(st.lists(st.floats(0, 1), min_size=n, max_size=n)))  # type: ignore[operator]
    ranks = np.minimum(np.floor(fractions * candidates) + 1, candidates)
    groups = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))  # type: ignore[operator]
    weights = np.array(draw(st.lists(st.integers(1, 3), min_size=n, max_size=n)))  # type: ignore[operator]
    return ranks, candidates, groups, weights


def _table(results: object) -> dict[str, float]:
    return results.to_dict(statistics=True)  # type: ignore[attr-defined,no-any-return]


def _close(a: dict[str, float], b: dict[str, float], keys: object = None) -> None:
    assert set(a) == set(b)
    for key in a if keys is None else keys:  # type: ignore[attr-defined]
        if math.isnan(a[key]):
            assert math.isnan(b[key]), key
        else:
            assert a[key] == pytest.approx(b[key], rel=1e-10, abs=1e-12), key


@hypothesis.settings(max_examples=40, deadline=None)
@hypothesis.given(grouped_input(), st.sampled_from(["micro", "macro"]))
def test_grouped_invariants(data: tuple, average: str) -> None:
    ranks, candidates, groups, weights = data
    kwargs = {"metrics": INVARIANT_METRICS, "average": average}
    reference = evaluate(ranks, candidates, groups=groups, weights=weights, **kwargs)
    flat = _table(reference)
    # permutation of the tasks
    order = np.random.default_rng(len(ranks)).permutation(len(ranks))
    permuted = evaluate(
        ranks[order], candidates[order], groups=groups[order], weights=weights[order], **kwargs
    )
    _close(flat, _table(permuted))
    # scaling all weights
    scaled = evaluate(ranks, candidates, groups=groups, weights=weights * 2.5, **kwargs)
    _close(flat, _table(scaled))
    # a zero weight is removal (unless it empties a group, which is then left out)
    zero = weights.astype(float)
    zero[0] = 0.0
    removed = evaluate(ranks[1:], candidates[1:], groups=groups[1:], weights=weights[1:], **kwargs)
    with_zero = evaluate(ranks, candidates, groups=groups, weights=zero, **kwargs)
    _close(_table(removed), _table(with_zero))
    # integer weights are repetition for values and expected values (variances differ by design)
    repeated = evaluate(
        np.repeat(ranks, weights),
        np.repeat(candidates, weights),
        groups=np.repeat(groups, weights),
        **kwargs,
    )
    flat_repeated = _table(repeated)
    # (and expected values of nonlinear aggregates: geometric mean, variance, median)
    nonlinear = ("geometric", "variance", "median", "z_")
    values = [k for k in flat if not k.endswith((".std", ".z_score"))]
    values = [
        k
        for k in values
        if not (k.endswith(".expected_value") and any(part in k for part in nonlinear))
        and ".z_" not in k
    ]
    _close({k: flat[k] for k in values}, {k: flat_repeated[k] for k in values})
    # the input is not mutated
    assert np.array_equal(zero[1:], weights[1:])


def test_grouped_results_pickle_and_copy() -> None:
    import copy
    import pickle

    results = evaluate([1, 2, 3, 1], [3, 3, 4, 4], metrics=["mrr", "amri"], groups=[0, 0, 1, 1])
    for clone in (pickle.loads(pickle.dumps(results)), copy.deepcopy(results)):
        assert clone.to_json() == results.to_json()
        assert list(clone.by_group) == [0, 1]


def test_elementwise_entries_equal_the_whole_array() -> None:
    """A derived column's value of one group is bit for bit the whole array's entry."""
    import pickle

    from rankstats.evaluation.group_rows import Elementwise
    from rankstats.evaluation.grouped import _defined_z, _exact_difference
    from rankstats.metrics.derived import chance_difference, index_of_difference

    rng = np.random.default_rng(5)
    gap = rng.random(50)
    gap[[3, 7]] = [0.0, math.nan]
    value_gap, std = rng.random(50), rng.random(50) + 0.1
    value, expected = 1.0 - value_gap, 1.0 - gap  # M - E from either pair, entry by entry
    direct = np.abs(expected) <= np.abs(gap)
    exact = np.full(50, math.nan)
    exact[[1, 20]] = [1e-17, -3e-12]  # exact sums in a few groups
    moments = (value, expected, value_gap, gap, direct)
    rounded = Elementwise(chance_difference, moments)
    corrected = Elementwise(_exact_difference, (*moments, exact))
    for lazy in (
        rounded,
        corrected,
        Elementwise(index_of_difference, (rounded, gap)),
        Elementwise(_defined_z, (corrected, std, gap), -1.0),
    ):
        arrays = [a[:] if isinstance(a, Elementwise) else a for a in lazy.arrays]
        with np.errstate(divide="ignore", invalid="ignore"):
            whole = lazy.function(*arrays, *lazy.constants)
        assert lazy.size == 50
        np.testing.assert_array_equal(lazy[:], whole)
        np.testing.assert_array_equal(np.array([lazy[g] for g in range(50)]), whole)
        np.testing.assert_array_equal(pickle.loads(pickle.dumps(lazy))[:], whole)
    assert corrected[1] == 1e-17
    assert corrected[20] == -3e-12


def test_derived_group_values_match_the_macro_average() -> None:
    """The lazily computed values of every group average to the macro row (grouped adjusted)."""
    rng = np.random.default_rng(11)
    ranks = _side(rng, 400)
    labels = rng.integers(0, 40, size=400)
    metrics = ["amri", "amrr", "zmrr", "z_hits_at_10", "adjusted_hits_at_10"]
    macro = evaluate(ranks, groups=labels, average="macro", metrics=metrics)
    for key in ("amri", "amrr", "zmrr", "z_hits_at_10", "adjusted_hits_at_10"):
        values = [macro.by_group[g][key] for g in macro.by_group]
        defined = [v for v in values if not math.isnan(v)]
        assert macro[key] == pytest.approx(sum(defined) / len(defined), rel=1e-12), key


def test_groups_near_chance_agree_in_both_averages_and_alone() -> None:
    """Uniform ranks over few candidates, with ties: many groups' means within a 256th of
    chance, their M - E summed again exactly. The micro average's groups (screened lazily by
    |M - E|) equal the macro average's (every group's rounded difference its own screen) to the
    bit, and each group evaluated alone."""
    rng = np.random.default_rng(5)
    n = 3000
    candidates = rng.integers(1, 30, size=n)
    optimistic = np.minimum(rng.integers(1, 30, size=n), candidates)
    ties = rng.binomial(1, 0.2, size=n) * rng.integers(1, 3, size=n)
    ranks = Ranks(optimistic, np.minimum(optimistic + ties, candidates), candidates)
    labels = rng.integers(0, 400, size=n)
    metrics = ["mr", "mrr", "hits@3", "amri", "amrr", "adjusted_hits_at_3", "zmrr", "z_hits_at_3"]
    micro = evaluate(ranks, groups=labels, metrics=metrics, average="micro")
    macro = evaluate(ranks, groups=labels, metrics=metrics, average="macro")

    def bits(group: object) -> list[tuple[str, str, str]]:  # NaN equal to NaN
        return [(row.key, repr(row.value), repr(row.z_score)) for row in group.rows]  # type: ignore[attr-defined]

    for label in micro.by_group:
        assert bits(micro.by_group[label]) == bits(macro.by_group[label])
        rows = [(row.key, row.value, row.z_score) for row in micro.by_group[label].rows]
        if label % 10:
            continue
        alone = evaluate(_subset(ranks, labels == label), metrics=metrics)
        for key, value, z in rows:
            row = alone.row(key)
            assert value == pytest.approx(row.value, rel=1e-12, abs=1e-15, nan_ok=True), key
            assert z == pytest.approx(row.z_score, rel=1e-12, abs=1e-15, nan_ok=True), key


def test_released_caches_are_rebuilt_the_same() -> None:
    """The per-row caches of the pairs and the candidate counts, dropped to lower the peak
    memory, are rebuilt equal when asked for again, and give the same sums."""
    from rankstats.evaluation.group_sums import GroupSums
    from rankstats.evaluation.inputs import prepare_input
    from rankstats.evaluation.tables import GROUP

    rng = np.random.default_rng(5)
    n = 2_000
    optimistic = rng.integers(1, 300, size=n)
    pessimistic = optimistic + rng.binomial(1, 0.1, size=n) * rng.integers(1, 4, size=n)
    ranks = Ranks(optimistic, pessimistic, rng.integers(300, 400, size=n))
    prepared = prepare_input(ranks, None, None, rng.integers(0, 50, size=n))
    stats = next(iter(prepared.sides.values()))
    assert stats.pairs is not None
    assert stats.candidates is not None
    data = GroupSums(stats, 50)
    table = stats.candidates
    terms = [np.arange(table.count.size, dtype=np.float64)]
    before = data.weighted_sums(table.columns[GROUP], table.weights(), terms)[0]
    split = data.tie_split
    assert split is not None
    pair_weights = stats.pairs.weights()
    data.release_pairs()
    data.release_candidates()
    assert "_weights" not in stats.pairs.__dict__
    assert "_weights" not in table.__dict__
    after = data.weighted_sums(table.columns[GROUP], table.weights(), terms)[0]
    np.testing.assert_array_equal(after, before)
    np.testing.assert_array_equal(stats.pairs.weights(), pair_weights)
    rebuilt = data.tie_split
    assert rebuilt is not None
    assert rebuilt is not split
    for old, new in zip(split, rebuilt, strict=True):
        np.testing.assert_array_equal(new, old)


@pytest.mark.parametrize("long_groups", [False, True])
def test_sums_by_group_are_the_transpose(long_groups: bool) -> None:
    """``weighted_sums_array(..., by_group=True)`` is the (groups x terms) layout of the same
    sums, to the bit, on both paths (the sparse product, and pairwise where a group has more
    than 128 rows); the group totals it starts from come from the counts, as from the weights."""
    from rankstats.evaluation.group_sums import GroupSums
    from rankstats.evaluation.inputs import prepare_input
    from rankstats.evaluation.tables import GROUP

    rng = np.random.default_rng(8)
    n = 3_000
    groups = 4 if long_groups else 60
    optimistic = rng.integers(1, 500, size=n)
    ranks = Ranks(optimistic, optimistic, rng.integers(500, 900, size=n))
    prepared = prepare_input(ranks, None, None, rng.integers(0, groups, size=n))
    stats = next(iter(prepared.sides.values()))
    table = stats.candidates
    assert table is not None
    data = GroupSums(stats, groups)
    base = stats.pairs
    assert base is not None
    np.testing.assert_array_equal(
        data.total, np.bincount(base.columns[GROUP], weights=base.weights(), minlength=groups)
    )
    terms = np.stack([np.sqrt(np.arange(table.count.size) + 1.0), rng.random(table.count.size)], 1)
    ids, weights = table.columns[GROUP], table.weights()
    by_term = data.weighted_sums_array(ids, weights, terms)
    by_group = data.weighted_sums_array(ids, weights, terms, by_group=True)
    assert by_term.shape == (2, groups)
    np.testing.assert_array_equal(by_group, by_term.T)


PAIR_KEYS = ("group", "optimistic", "pessimistic")
CANDIDATE_KEYS = ("group", "num_candidates")


def _all_numbers(results: object) -> list[tuple[str, float, float | None, float | None]]:
    rows = results.rows  # type: ignore[attr-defined]
    return [(row.key, row.value, row.expected_value, row.variance) for row in rows]


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("average", ["micro", "macro"])
@pytest.mark.parametrize(
    ("metrics", "dropped"),
    [
        (None, ("group",)),
        (["mrr", "hits@10", "amri", "zmrr", "count"], ("group",)),
        (["mrr", "hits@10", "mr", "count"], ("group",)),
        (["count"], PAIR_KEYS + CANDIDATE_KEYS),
        (METRICS, ()),
    ],
)
def test_owned_tables_drop_their_keys(
    weighted: bool, average: str, metrics: list[str] | None, dropped: tuple[str, ...]
) -> None:
    """Tables built for one call lose their key columns once every column is summed, where no
    metric reads them again (the median, the variance of the ranks, a geometric mean's null
    moments do), and the results are the same to the bit as from tables kept whole. The means
    (and their adjusted and z-scored forms) may sum M - E again from the rows of a few groups:
    their ranks and candidate counts stay, only the group ids go."""
    from rankstats.evaluation.evaluate import compute_results, resolve_metrics, weight_sums_suffice
    from rankstats.evaluation.inputs import prepare_input

    rng = np.random.default_rng(11)
    ranks = {"head": _side(rng, 3_000), "tail": _side(rng, 3_000)}
    groups = {"head": rng.integers(0, 40, size=3_000), "tail": rng.integers(0, 40, size=3_000)}
    weights = {"head": rng.random(3_000), "tail": rng.random(3_000)} if weighted else None
    resolved, defaults = resolve_metrics(metrics)
    if weighted:
        resolved = [m for m in resolved if m.supports_weights]
    if not resolved:
        pytest.skip("the count takes no weights")
    found = {}
    for own in (False, True):
        prepared = prepare_input(
            ranks, None, weights, groups, weight_sums=weight_sums_suffice(resolved)
        )
        results = compute_results(
            prepared.sides,
            prepared.labels,
            resolved,
            None,
            average,  # type: ignore[arg-type]
            weighted=weighted,
            default_metrics=defaults,
            own_tables=own,
        )
        stats = prepared.sides["head"]
        assert stats.pairs is not None
        assert stats.candidates is not None
        for table, keys in ((stats.pairs, PAIR_KEYS), (stats.candidates, CANDIDATE_KEYS)):
            assert all((key in table.columns) is not (own and key in dropped) for key in keys)
        found[own] = [_all_numbers(results)] + [
            _all_numbers(results.by_group[label]) for label in (0, 17, 39)
        ]
    assert repr(found[True]) == repr(found[False])  # NaN-aware, to the bit
    if metrics is None:  # evaluate builds its own tables
        direct = evaluate(ranks, groups=groups, weights=weights, average=average)  # type: ignore[arg-type]
        assert repr(_all_numbers(direct)) == repr(found[True][0])


def test_groups_with_counts_beyond_int32() -> None:
    """Every task at 1.6e11 candidates: the counts' offsets are int32, their least value not.

    The least value had gone into the int32 subtraction as a Python int (``OverflowError``).
    """
    rng = np.random.default_rng(5)
    n = 60
    big = 161_473_076_620
    candidates = np.full(n, big)
    optimistic = rng.integers(1, big, size=n)
    ranks = Ranks(optimistic, np.minimum(optimistic + rng.integers(0, 3, size=n), big), candidates)
    labels = rng.integers(0, 4, size=n)
    metrics = ["mr", "mrr", "amri", "zmr"]
    results = evaluate(ranks, metrics=metrics, groups=labels)
    for label, group in results.by_group.items():
        alone = evaluate(_subset(ranks, labels == label), metrics=metrics)
        for key in group:
            _same_row(group.row(key), alone.row(key))


@pytest.mark.parametrize("average", ["micro", "macro"])
@pytest.mark.parametrize("largest", [30, 2**29, 2**31])
def test_narrow_tables_give_the_same_results(average: str, largest: int) -> None:
    """evaluate's own tables of grouped default metrics are int32 where they fit (every rank
    and count below 2**30, the rows in 31 bits): the results are the same to the bit as from
    int64 tables, also where a term squares a count of 2**29 (beyond int32)."""
    from rankstats.evaluation.evaluate import compute_results, resolve_metrics, weight_sums_suffice
    from rankstats.evaluation.inputs import prepare_input

    rng = np.random.default_rng(5)
    n = 2_000
    candidates = largest - rng.integers(0, 20, size=n)
    optimistic = np.minimum(rng.geometric(0.01, size=n), candidates)
    ties = rng.binomial(1, 0.3, size=n) * rng.integers(1, 4, size=n)
    ranks = Ranks(optimistic, np.minimum(optimistic + ties, candidates), candidates)
    groups = rng.integers(0, 50, size=n)
    resolved, defaults = resolve_metrics(None)
    found = {}
    for narrow in (False, True):
        prepared = prepare_input(
            ranks, None, None, groups, weight_sums=weight_sums_suffice(resolved), narrow=narrow
        )
        stats = prepared.sides["both"]
        assert stats.candidates is not None
        narrowed = stats.candidates.columns["num_candidates"].dtype == np.int32
        assert narrowed is (narrow and largest < 2**30)
        results = compute_results(
            prepared.sides,
            prepared.labels,
            resolved,
            None,
            average,  # type: ignore[arg-type]
            default_metrics=defaults,
            own_tables=True,
        )
        found[narrow] = [_all_numbers(results)] + [
            _all_numbers(results.by_group[label]) for label in (0, 17, 49)
        ]
    assert repr(found[True]) == repr(found[False])  # NaN-aware, to the bit


@pytest.mark.parametrize("weighted", [False, True])
def test_closed_form_null_models_of_every_group_at_once(
    monkeypatch: pytest.MonkeyPatch, weighted: bool
) -> None:
    """GMR, IGMR and the ranks' variance: the closed forms of every group from one pass.

    The same as each group alone, in every rank type (GMR's expectation over ties too).

    Groups of one to 60 tasks, counts from 1 to 1e9 (the expansions for large counts too),
    a group of single-candidate tasks (E = 1, V = 0). No group takes a pass of its own.
    Weighted: each task's own share w / W_g (tasks of weight 0, tasks holding nearly all of
    their group's weight, whose 1 - a is summed from the others, a group of weight 0).
    """
    from rankstats.evaluation import grouped

    rng = np.random.default_rng(5)
    sizes = np.concatenate(([1, 2, 60], rng.integers(1, 40, size=30)))
    labels = np.repeat(np.arange(sizes.size), sizes)
    n = labels.size
    candidates = np.exp(rng.uniform(0.0, np.log(1e9), size=n)).astype(np.int64) + 1
    candidates[labels == 1] = 1
    optimistic = np.minimum(rng.geometric(0.01, size=n), candidates)
    ties = rng.binomial(1, 0.2, size=n) * rng.integers(1, 90, size=n)
    ranks = Ranks(optimistic, np.minimum(optimistic + ties, candidates), candidates)
    metrics = ["gmr", "igmr", "agmri", "zgmr", "variance"]
    looped: list[int] = []
    original = grouped._Builder._null_of_group

    def spy(self: object, g: int, *args: object) -> None:
        looped.append(g)
        original(self, g, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(grouped._Builder, "_null_of_group", spy)
    values_of_one: list[object] = []
    original_value = grouped.base_value

    def value_spy(*args: object) -> object:
        values_of_one.append(args)
        return original_value(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(grouped, "base_value", value_spy)
    weights = None
    if weighted:
        weights = rng.choice([0.0, 0.5, 1.0, 3.0, 1e6], size=n)
        weights[labels == 4] = 0.0
    results = evaluate(ranks, metrics=metrics, groups=labels, weights=weights)
    assert looped == []
    assert values_of_one == []  # no value group by group either (GMR and S^2 over ties)
    assert (4 in results.by_group) is not weighted  # weight 0: left out
    for label, group in results.by_group.items():
        rows = labels == label
        alone = evaluate(
            _subset(ranks, rows),
            metrics=metrics,
            weights=None if weights is None else weights[rows],
        )
        for key in group:
            _same_row(group.row(key), alone.row(key))
    single = results.by_group[1].row("both.optimistic.gmr")
    assert single.expected_value == 1.0
    assert single.variance == 0.0


def test_integer_labels_covering_their_span() -> None:
    """Labels covering every integer of their span are coded by their offsets, as by lookup."""
    rng = np.random.default_rng(3)
    full = rng.permutation(np.repeat(np.arange(5, 25), 3))  # every label of 5..24
    gappy = np.where(full == 7, 8, full)  # 7 missing: coded through the lookup table
    for labels in (full, gappy, full - 5):  # from 0: the codes view the caller's array
        before = labels.copy()
        codes, found = encode_groups(labels)
        order = sorted(set(labels.tolist()))
        assert found == order
        assert codes.tolist() == [order.index(label) for label in labels.tolist()]
        np.testing.assert_array_equal(labels, before)
        assert labels.flags.writeable  # the caller's array is left as it was
    ranks = rng.integers(1, 10, size=full.size)
    by_array = evaluate(ranks, 10, groups=full - 5, average="macro")
    by_list = evaluate(ranks, 10, groups=(full - 5).tolist(), average="macro")
    assert repr(_all_numbers(by_array)) == repr(_all_numbers(by_list))


def test_missing_group_labels_are_refused() -> None:
    """None, pandas NA and NaT mark missing values, as NaN does: no silent group of them."""
    pd = pytest.importorskip("pandas")
    missing = [
        ["a", None, "a"],
        np.array(["a", pd.NA, "a"], dtype=object),
        pd.Series(pd.array(["a", None, "a"], dtype="string")),
        np.array(["2020-01-01", "NaT", "2020-01-01"], dtype="datetime64[D]"),
        pd.Series(pd.to_datetime(["2020", None, "2020"])),
    ]
    for groups in missing:
        with pytest.raises(ValueError, match=r"group labels must not be missing values"):
            evaluate([1, 2, 3], 10, groups=groups)
    dates = np.array(["2020-01-01", "2020-01-02", "2020-01-01"], dtype="datetime64[D]")
    assert len(evaluate([1, 2, 3], 10, groups=dates).by_group) == 2


@hypothesis.settings(max_examples=40, deadline=None)
@hypothesis.given(st.integers(0, 2**32 - 1))
def test_micro_screen_misses_no_group_the_macro_average_flags(seed: int) -> None:
    """Certain tasks (few candidates) beside huge counts, weights 20 orders apart: expected
    values within a few units of rounding of 1, where the rounded M - E the lazy screen reads
    is coarser than the gaps' difference compared afterwards. The screen is wide enough: each
    group's adjusted and z-scored means are the macro average's to the bit."""
    rng = np.random.default_rng(seed)
    n = 40
    counts = rng.choice([1, 2, 5, 10, 11, 12, 30, 10**6, 10**12], size=n)
    ranks = np.array(
        [rng.integers(1, c + 1) if c < 100 else rng.choice([1, 5, 11, 50, c]) for c in counts]
    )
    weights = rng.choice([1.0, 3.0, 1e15, 2.5e14, 7e13, 1e-3], size=n)
    labels = rng.integers(0, 8, size=n)
    keys = ["adjusted_hits_at_10", "z_hits_at_10", "amrr", "zmrr", "amri", "zmr"]
    found = [
        evaluate(
            ranks, counts, weights=weights, groups=labels, metrics=keys, average=average
        ).by_group
        for average in ("micro", "macro")
    ]
    for label in found[0]:
        for key in keys:
            assert repr(found[0][label][key]) == repr(found[1][label][key]), (label, key)


def test_screen_bound_is_above_every_threshold() -> None:
    """The bound that picks the groups whose thresholds are computed (``_Builder._bound``) is
    above both the macro average's threshold and the micro average's wider screen, at every
    magnitude of E and its gap, so that picking first flags the groups comparing every group
    flagged. It fails without the bound's margin (a factor of 2**-8 alone)."""
    rng = np.random.default_rng(5)
    expected = np.concatenate(
        [10.0 ** rng.uniform(-300, 300, 20_000), [1.0, 2.0**-1000, 3.0, 1e12, 5e-324]]
    )
    gap = np.concatenate(
        [expected[:10_000], 10.0 ** rng.uniform(-300, 300, expected.size - 10_000)]
    )
    bound = np.abs(expected) * grouped._SCREEN_BOUND
    for gaps in (gap, expected):  # with 1 - M computed directly, and without
        threshold = condition_threshold(expected, gaps)
        assert np.all(threshold <= bound)
        assert np.all(grouped._widened(threshold, expected) <= bound)


def test_metrics_without_closed_forms_say_so_in_every_group() -> None:
    """The MAD and the standard deviation have no null moments in any group without a
    Monte-Carlo plan (taken once, from the first group): every group's row says why, as each
    group alone does; with ``num_samples`` every group gets its own estimate."""
    rng = np.random.default_rng(12)
    ranks = _side(rng, 400)
    labels = rng.integers(0, 30, size=400)
    grouped = evaluate(ranks, groups=labels, metrics=["mad", "std"])
    for label in np.unique(labels).tolist():
        alone = evaluate(_subset(ranks, labels == label), metrics=["mad", "std"])
        for row, single in zip(grouped.by_group[label].rows, alone.rows, strict=True):
            assert row.key == single.key
            assert row.expected_value is None
            assert single.expected_value is None
            assert single.note is not None
            assert row.note == single.note
            assert row.method == single.method
    sampled = evaluate(ranks, groups=labels, metrics=["mad"], num_samples=200, seed=1)
    estimates = {sampled.by_group[label].rows[0].expected_value for label in np.unique(labels)}
    assert None not in estimates
    assert len(estimates) > 1


@pytest.mark.parametrize("average", ["micro", "macro"])
def test_value_gaps_computed_only_where_a_group_reads_them(
    monkeypatch: pytest.MonkeyPatch, average: str
) -> None:
    """1 - M of a base is summed only where some group takes M - E from the gaps: not for the
    MRR and Hits@10 against a million candidates (|E| <= |1 - E| in every group), but for the
    mean rank (E >= 1) and, with two candidates per task, for Hits@10 (E = 1)."""
    asked: list[str] = []
    original = grouped.value_gap_terms

    def recorded(metric: RankBasedMetric) -> object:
        asked.append(type(metric).__name__)
        return original(metric)

    monkeypatch.setattr(grouped, "value_gap_terms", recorded)
    rng = np.random.default_rng(3)
    keys = ["amrr", "adjusted_hits_at_10", "amri"]
    labels = rng.integers(0, 20, size=500)
    ranks = rng.integers(1, 1000, size=500)
    evaluate(ranks, 10**6, groups=labels, metrics=keys, average=average)
    assert set(asked) == {"ArithmeticMeanRank"}
    asked.clear()
    few = evaluate(ranks % 2 + 1, 2, groups=labels, metrics=keys, average=average)
    # E = 3/4 for the MRR, 1 for Hits@10
    assert set(asked) == {"ArithmeticMeanRank", "HitsAtK", "InverseHarmonicMeanRank"}
    alone = evaluate((ranks % 2 + 1)[labels == 0], 2, metrics=keys)
    assert repr(few.by_group[0].to_flat_dict()) == repr(alone.to_flat_dict())


def test_weighted_variance_null_with_a_dominant_task_against_exact_values() -> None:
    """Groups where one task holds nearly all of the weight, with equal counts within each
    group (every offset d is 0): E[S^2] = sigma^2 sum a (1 - a) rests on the 1 - a of the
    dominant task, which must not be taken by subtraction (it would lose up to 12 digits).
    Against exact rational values."""
    from fractions import Fraction

    counts = np.array([1000, 1000, 7, 7, 7, 10**9, 10**9])
    weights = np.array([1e6, 0.5, 3.0, 1e9, 0.25, 1e12, 1.0])
    labels = np.array([0, 0, 1, 1, 1, 2, 2])
    ranks = np.ones(counts.size, dtype=np.int64)
    found = evaluate(ranks, counts, weights=weights, groups=labels, metrics=["variance"])
    for label in range(3):
        rows = labels == label
        c = Fraction(int(counts[rows][0]))
        sigma2 = (c * c - 1) / 12
        v = (c * c - 1) * (c * c - 4) / 180
        w = [Fraction(float(x)) for x in weights[rows]]
        a = [x / sum(w) for x in w]
        expected = sigma2 * sum(x * (1 - x) for x in a)
        variance = sum(x * x * (1 - x) ** 2 for x in a) * v + 2 * sum(
            a[i] ** 2 * a[j] ** 2 * sigma2 * sigma2
            for i in range(len(a))
            for j in range(len(a))
            if i != j
        )
        row = found.by_group[label].row("variance")
        assert row.expected_value == pytest.approx(float(expected), rel=1e-14)
        assert row.variance == pytest.approx(float(variance), rel=1e-13)


def test_tuples_of_numbers_are_labels() -> None:
    """(relation, direction) pairs: numpy had made a 2-D array of them, refused as such."""
    ranks = [1, 2, 3, 4, 5, 6]
    pairs = [(1, 2), (1, 2), (3, 4), (3, 4), (5, 6), (5, 6)]
    results = evaluate(ranks, 10, metrics=["mrr"], groups=pairs)
    assert list(results.by_group) == [(1, 2), (3, 4), (5, 6)]
    assert results.by_group[(3, 4)]["mrr"] == pytest.approx(7 / 24, rel=1e-15)
    assert list(evaluate(ranks[:3], 10, groups=[(1,), (1,), (2,)]).by_group) == [(1,), (2,)]
    for rows in ([[1, 2], [3, 4], [5, 6]], np.zeros((3, 2))):  # lists and arrays: 2-D still
        with pytest.raises(ValueError, match=r"groups must be a 1-D array of labels"):
            evaluate(ranks[:3], 10, groups=rows)
