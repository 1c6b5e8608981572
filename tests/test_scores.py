"""Ranks from scores (ties, filtering, chunking, bad input) and metrics in expectation over ties."""

from __future__ import annotations

import itertools
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from rankstats import RankBasedMetric, metric_resolver
from rankstats.evaluation import (
    RankAccumulator,
    Ranks,
    evaluate,
    expected_over_ties,
    ranks_from_scores,
)
from rankstats.evaluation.ties import has_tie_expectation, log_power_mean, reciprocal_sum


def reference_ranks(
    scores: np.ndarray, targets: np.ndarray, mask: np.ndarray | None = None
) -> tuple[list[int], list[int], list[int]]:
    """Ranks by a plain Python loop over rows and candidates: an independent reference."""
    optimistic, pessimistic, candidates = [], [], []
    for i, row in enumerate(scores.tolist()):
        true = row[targets[i]]
        kept = [s for j, s in enumerate(row) if mask is None or not mask[i, j]]
        optimistic.append(1 + sum(s > true for s in kept))
        pessimistic.append(sum(s >= true for s in kept))
        candidates.append(len(kept))
    return optimistic, pessimistic, candidates


# --- ranks_from_scores ---------------------------------------------------------------------------


def test_hand_worked_ties() -> None:
    scores = np.array(
        [
            [0.5, 0.9, 0.5, 0.1, 0.5],  # partial tie: 1 better, 3 tied (true included)
            [2.0, 2.0, 2.0, 2.0, 2.0],  # all equal
            [0.0, 1.0, 3.0, 2.0, 4.0],  # no tie, last
            [9.0, 1.0, 3.0, 2.0, 4.0],  # no tie, first
        ]
    )
    ranks = ranks_from_scores(scores, targets=[0, 3, 0, 0])
    assert ranks.optimistic.tolist() == [2, 1, 5, 1]
    assert ranks.pessimistic.tolist() == [4, 5, 5, 1]
    assert ranks.realistic.tolist() == [3.0, 3.0, 5.0, 1.0]
    assert ranks.num_candidates.tolist() == [5, 5, 5, 5]


def test_random_scores_against_a_loop() -> None:
    rng = np.random.default_rng(1)
    scores = rng.integers(0, 4, size=(40, 9)).astype(np.float32)  # many ties
    targets = rng.integers(0, 9, size=40)
    mask = rng.random((40, 9)) < 0.3
    mask[np.arange(40), targets] = False
    for filter_mask in (None, mask):
        ranks = ranks_from_scores(scores, targets, filter_mask=filter_mask)
        optimistic, pessimistic, candidates = reference_ranks(scores, targets, filter_mask)
        assert ranks.optimistic.tolist() == optimistic
        assert ranks.pessimistic.tolist() == pessimistic
        assert ranks.num_candidates.tolist() == candidates


def test_filtering_leaves_candidates_out() -> None:
    scores = np.array([[0.2, 0.8, 0.9, 0.7]])
    unfiltered = ranks_from_scores(scores, [3])
    filtered = ranks_from_scores(scores, [3], filter_mask=np.array([[False, True, True, False]]))
    assert (unfiltered.optimistic[0], unfiltered.num_candidates[0]) == (3, 4)
    assert (filtered.optimistic[0], filtered.num_candidates[0]) == (1, 2)


def test_masked_scores_are_ignored_whatever_their_value() -> None:
    scores = np.array([[0.5, np.nan, -np.inf, 0.7, np.inf]])
    mask = np.array([[False, True, True, False, True]])
    ranks = ranks_from_scores(scores, [0], filter_mask=mask)
    assert (ranks.optimistic[0], ranks.pessimistic[0], ranks.num_candidates[0]) == (2, 2, 2)


@pytest.mark.parametrize("chunk_elements", [1, 7, 30, 10**6])
def test_chunked_equals_one_shot(chunk_elements: int) -> None:
    rng = np.random.default_rng(2)
    scores = rng.integers(0, 5, size=(23, 11)).astype(np.float64)
    targets = rng.integers(0, 11, size=23)
    mask = rng.random((23, 11)) < 0.2
    mask[np.arange(23), targets] = False
    expected = ranks_from_scores(scores, targets, filter_mask=mask)
    chunked = ranks_from_scores(scores, targets, filter_mask=mask, chunk_elements=chunk_elements)
    for name in ("optimistic", "pessimistic", "num_candidates"):
        np.testing.assert_array_equal(getattr(chunked, name), getattr(expected, name))


def test_smaller_is_better_and_target_scores() -> None:
    distances = np.array([[3.0, 1.0, 2.0, 1.0], [0.5, 0.5, 0.1, 0.9]])
    by_index = ranks_from_scores(distances, [1, 0], larger_is_better=False)
    assert by_index.optimistic.tolist() == [1, 2]
    assert by_index.pessimistic.tolist() == [2, 3]
    by_score = ranks_from_scores(distances, target_scores=[1.0, 0.5], larger_is_better=False)
    np.testing.assert_array_equal(by_score.optimistic, by_index.optimistic)
    np.testing.assert_array_equal(by_score.pessimistic, by_index.pessimistic)


class FakeTensor:
    """Stands in for a CPU tensor: convertible with __array__, nothing else."""

    def __init__(self, data: np.ndarray) -> None:
        self._data = data

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        return self._data


class FakeGpuTensor:
    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        raise TypeError("can't convert cuda:0 device type tensor to numpy")


def test_tensors_and_integer_scores_are_accepted_and_inputs_not_mutated() -> None:
    scores = np.array([[3, 1, 3], [0, 5, 5]])
    targets = np.array([0, 2])
    mask = np.array([[False, False, True], [False, False, False]])
    copies = (scores.copy(), targets.copy(), mask.copy())
    ranks = ranks_from_scores(FakeTensor(scores), FakeTensor(targets), filter_mask=FakeTensor(mask))
    assert ranks.optimistic.tolist() == [1, 1]
    assert ranks.pessimistic.tolist() == [1, 2]
    for before, after in zip(copies, (scores, targets, mask), strict=True):
        np.testing.assert_array_equal(before, after)
    with pytest.raises(ValueError, match="read-only"):
        ranks.optimistic[0] = 5


GOOD = np.array([[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]])
SCORE_ERRORS = [
    # (scores, targets, kwargs, exception, message pattern)
    (GOOD[0], [0], {}, ValueError, r"scores must be a 2-D array .* got an array of shape \(3,\)"),
    (np.zeros((0, 3)), [], {}, ValueError, r"scores must have at least one row"),
    (GOOD.astype(bool), [0, 1], {}, TypeError, r"scores must hold real numbers, .* bool"),
    (GOOD, [0.0, 1.0], {}, TypeError, r"targets must be integer column indices.*target_scores="),
    (GOOD, [0, 1, 2], {}, ValueError, r"targets must have shape \(batch,\) = \(2,\).* \(3,\)"),
    (GOOD, [0, 3], {}, ValueError, r"targets must be column indices in \[0, 3\), got 3 in row 1"),
    (GOOD, [-1, 0], {}, ValueError, r"got -1 in row 0"),
    (GOOD, None, {}, ValueError, r"exactly one of targets .* and target_scores"),
    (GOOD, [0, 1], {"target_scores": [0.1, 0.2]}, ValueError, r"exactly one of targets"),
    (
        GOOD,
        [0, 1],
        {"filter_mask": np.zeros((2, 2), dtype=bool)},
        ValueError,
        r"filter_mask must have the shape of scores \(2, 3\), got \(2, 2\)",
    ),
    (
        GOOD,
        [0, 1],
        {"filter_mask": np.zeros((2, 3))},
        TypeError,
        r"filter_mask must be a boolean array .* float64",
    ),
    (
        GOOD,
        [0, 1],
        {"filter_mask": np.array([[False, False, False], [False, True, False]])},
        ValueError,
        r"filter_mask must not exclude the true candidate, but it does in row 1 \(targets\[1\] = 1",
    ),
    (
        np.array([[0.1, 0.2], [0.3, np.nan]]),
        [0, 0],
        {},
        ValueError,
        r"scores must be finite where not filtered, got nan in row 1 \(column 1\)",
    ),
    (
        np.array([[0.1, -np.inf], [0.3, 0.1]]),
        [0, 0],
        {},
        ValueError,
        r"got -inf in row 0 \(column 1\); leave candidates out with filter_mask",
    ),
    (
        GOOD,
        None,
        {"target_scores": [0.1, np.nan]},
        ValueError,
        r"target_scores must be finite, got nan in row 1",
    ),
    (
        GOOD,
        None,
        {"target_scores": [0.1, 0.25]},
        ValueError,
        r"target_scores must occur among the unfiltered scores .* 0\.25 does not in row 1",
    ),
    (GOOD, None, {"target_scores": [0.1]}, ValueError, r"target_scores must have shape \(batch,\)"),
    (GOOD, [0, 1], {"chunk_elements": 0}, ValueError, r"chunk_elements must be a positive integer"),
    (GOOD, [0, 1], {"chunk_elements": -5}, ValueError, r"chunk_elements must be a positive int"),
    (GOOD, [0, 1], {"chunk_elements": 2.0}, TypeError, r"chunk_elements must be a positive int"),
    (GOOD, [0, 1], {"chunk_elements": True}, TypeError, r"chunk_elements must be a positive int"),
    (GOOD, [0, 1], {"chunk_elements": "8"}, TypeError, r"chunk_elements must be a positive int"),
    (GOOD, [0, 1], {"larger_is_better": "False"}, TypeError, r"larger_is_better must be a bool"),
    (GOOD, [0, 1], {"larger_is_better": 0}, TypeError, r"larger_is_better must be a bool"),
    (GOOD, [0, 1], {"larger_is_better": None}, TypeError, r"larger_is_better must be a bool"),
    (GOOD, [0, 1], {"larger_is_better": [True]}, TypeError, r"larger_is_better must be a bool"),
    (GOOD, [0.0, 1.0], {}, TypeError, r"targets must be integer column indices"),
    (GOOD, [0, 3], {}, ValueError, r"targets must be column indices in \[0, 3\), got 3 in row 1"),
    (GOOD, [0, -1], {}, ValueError, r"targets must be column indices in \[0, 3\), got -1 in row 1"),
    (GOOD, [0, 1], {"target_scores": [0.1, 0.2]}, ValueError, r"give exactly one of targets"),
    (GOOD, None, {}, ValueError, r"give exactly one of targets"),
    (np.zeros((2, 3), dtype=complex), [0, 1], {}, TypeError, r"scores must hold real numbers"),
    (np.zeros((2, 3), dtype=object), [0, 1], {}, TypeError, r"scores must hold real numbers"),
    (np.zeros((0, 3)), [], {}, ValueError, r"scores must have at least one row"),
    (np.zeros(3), [0], {}, ValueError, r"scores must be a 2-D array"),
    ("abc", [0], {}, TypeError, r"scores must be an array or tensor, got str"),
    (FakeGpuTensor(), [0], {}, TypeError, r"scores must be convertible .* \.detach\(\)\.cpu\(\)"),
]


@pytest.mark.parametrize(("scores", "targets", "kwargs", "error", "match"), SCORE_ERRORS)
def test_bad_scores_input(
    scores: object, targets: object, kwargs: dict[str, object], error: type, match: str
) -> None:
    with pytest.raises(error, match=match):
        ranks_from_scores(scores, targets, **kwargs)  # type: ignore[arg-type]


RANKS_ERRORS = [
    (
        ([0, 1], [1, 1], None),
        ValueError,
        r"optimistic must be integers between 1 and 2\*\*53, got 0 at",
    ),
    (([1, 1.5], [1, 2], None), ValueError, r"optimistic must be integers between .* got 1\.5"),
    (([1, np.nan], [1, 2], None), ValueError, r"optimistic must be integers between .* got nan"),
    (([1, 2], [1, np.inf], None), ValueError, r"pessimistic must be integers between .* got inf"),
    (([1, 2**53 + 1], [1, 2**53 + 1], None), ValueError, r"optimistic .* got 9007199254740993"),
    (([1, 2**63 - 1], [1, 2**63 - 1], None), ValueError, r"optimistic .* 2\*\*53, got 92233"),
    (
        (np.array([2**63], dtype=np.uint64), [1], None),
        ValueError,
        r"optimistic .* 9223372036854775808",
    ),
    (([1.0, 2.0**63], [1, 2], None), ValueError, r"optimistic .* got 9\.22\d*e\+18 at index 1"),
    # Python integers beyond 64 bits meet the bounds like other numbers (as counts do)
    (
        ([1, 10**30], [1, 2], None),
        ValueError,
        r"optimistic must be integers between 1 and 2\*\*53, got 1e\+30 at index 1",
    ),
    # booleans among numbers, masked entries and ragged nestings, as for every array argument
    (([True, 2], [1, 2], 5), TypeError, r"optimistic must hold numbers, not booleans"),
    (
        (np.ma.masked_array([1, 2], mask=[False, True]), [1, 2], 5),
        TypeError,
        r"optimistic must not be a masked array with masked entries",
    ),
    (([[1], [1, 2]], [1, 2], 5), TypeError, r"optimistic must be convertible to a numpy array"),
    (([1, 2], [1, 2], [[1], [1, 2]]), TypeError, r"num_candidates must be convertible"),
    (([1, 2], [1, 2], 0), ValueError, r"num_candidates must be integers >= 1, got 0"),
    (([1, 2], [1, 3], 2), ValueError, r"pessimistic rank 3 > num_candidates 2 at index 1"),
    (([1, 2], [1, 2], "5"), TypeError, r"num_candidates must be an array-like of numbers"),
    (([1, 2], [1, 2], 2.5), ValueError, r"num_candidates must be integers >= 1, got 2\.5"),
    (([True, True], [1, 1], None), TypeError, r"optimistic must hold numbers, not booleans"),
    ((np.array([True]), [1], None), TypeError, r"optimistic must hold real numbers, got .* bool"),
    (
        (np.array([1 + 1j]), [1], None),
        TypeError,
        r"optimistic must hold real numbers, .* complex128",
    ),
    ((np.float16([1, 2.5]), [1, 3], None), ValueError, r"optimistic must be integers .* 2\.5"),
    (([1, 2], [1, 1], None), ValueError, r"pessimistic .* not be smaller .* 1 < 2 at index 1"),
    (([1, 2], [1, 2, 3], None), ValueError, r"pessimistic must have one entry per task"),
    (([1, 2], [1, 3], [5, 2]), ValueError, r"pessimistic rank 3 > num_candidates 2 at index 1"),
    (([1, 2], [1, 3], [5]), ValueError, r"num_candidates must have one entry per task"),
    (([[1, 2]], [[1, 3]], None), ValueError, r"optimistic must be one-dimensional"),
    ((["a"], ["b"], None), TypeError, r"optimistic must hold real numbers"),
]


@pytest.mark.parametrize(("args", "error", "match"), RANKS_ERRORS)
def test_bad_ranks_objects(args: tuple[object, ...], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        Ranks(*args)  # type: ignore[arg-type]


def test_ranks_concatenate_and_lookup() -> None:
    parts = [Ranks([1, 2], [1, 4], [5, 5]), Ranks([3], [3], [3])]
    joined = Ranks.concatenate(parts)
    assert joined.optimistic.tolist() == [1, 2, 3]
    assert joined["realistic"].tolist() == [1.0, 3.0, 3.0]
    assert len(joined) == 3
    with pytest.raises(KeyError, match="rank_type must be"):
        joined["expected"]
    with pytest.raises(ValueError, match="with and without num_candidates"):
        Ranks.concatenate([Ranks([1], [1]), Ranks([1], [1], [2])])


# --- exact sums behind the expectations over ties ------------------------------------------------

BOUNDS = [(1, 1), (1, 3), (5, 16), (16, 17), (17, 17), (17, 40), (100, 10**5), (10**6, 10**6 + 2)]
BOUNDS += [(10**6, 2 * 10**6), (3, 10**7), (10**9, 10**9 + 5), (2, 2**40)]


def test_reciprocal_sum_against_mpmath() -> None:
    low = np.array([b[0] for b in BOUNDS])
    high = np.array([b[1] for b in BOUNDS])
    got = reciprocal_sum(low, high)
    with mpmath.workdps(40):
        for (lo, hi), value in zip(BOUNDS, got, strict=True):
            exact = mpmath.harmonic(hi) - mpmath.harmonic(lo - 1)
            assert abs(value - exact) <= 1e-15 * exact, (lo, hi)


LOG_POWER_CASES = [
    (1, 1, 0.5),
    (1, 3, 1.0),
    (1, 64, 1e-5),
    (1, 65, 1e-5),
    (1, 100, -1e-7),
    (1, 14541, 1 / 40932),
    (1, 14541, -1 / 40932),
    (3, 1000, 0.3),
    (5000, 5002, 1e-4),
    (100, 2000, -1.0),
    (1, 10**6, -0.7),
    (1, 10**6, 1.0),
    (2, 10**7, -0.49),
    (10**4, 2 * 10**4, 1e-7),
    (1, 10**9, -1.0),
    (70, 10**9, -0.5),
    # untied ranks (a ln r), mixed with the tied ones above in one call
    (1, 1, 0.5),
    (7, 7, 1 / 40932),
    (14541, 14541, -1e-7),
    (10**9, 10**9, -1.0),
]


def test_log_power_mean_against_mpmath() -> None:
    low, high, exponent = (np.array(column) for column in zip(*LOG_POWER_CASES, strict=True))
    got = log_power_mean(low, high, exponent)
    with mpmath.workdps(40):
        for (lo, hi, a), value in zip(LOG_POWER_CASES, got, strict=True):
            if lo == hi:
                total = mpmath.power(lo, a)
            elif a == -1.0:
                total = mpmath.harmonic(hi) - mpmath.harmonic(lo - 1)
            elif lo >= 1000:  # term by term (the Hurwitz zeta is slow for tiny a and large lo)
                total = mpmath.fsum(mpmath.power(j, a) for j in range(lo, hi + 1))
            else:  # the Hurwitz zeta function gives sum_{j=lo}^{hi} j^a
                total = mpmath.zeta(-a, lo) - mpmath.zeta(-a, hi + 1)
            exact = mpmath.log(total / (hi - lo + 1))
            assert abs(value - exact) <= 1e-15 * max(abs(exact), 1e-300), (lo, hi, a)


# --- metrics in expectation over ties, against enumerating every tie-breaking -------------------

TIE_METRICS = [
    "mr",
    "mrr",
    "hits@2",
    "gmr",
    "igmr",
    "variance",
    "count",
    "amr",
    "amri",
    "amrr",
    "agmri",
    "adjusted_hits_at_2",
    "zmr",
    "zmrr",
    "zgmr",
    "z_hits_at_2",
]
OPTIMISTIC = [1, 2, 1, 4, 3, 1]
PESSIMISTIC = [1, 4, 3, 4, 7, 5]
CANDIDATES = [3, 6, 3, 9, 8, 5]
WEIGHTS = [1.0, 0.5, 2.0, 3.0, 0.25, 1.5]


def enumerated_expectation(metric: RankBasedMetric, weights: list[float] | None = None) -> float:
    """E over every tie-breaking, each equally likely, by brute force with exact fractions."""
    grids = [range(o, p + 1) for o, p in zip(OPTIMISTIC, PESSIMISTIC, strict=True)]
    values = [
        metric(np.array(ranks, dtype=float), CANDIDATES, weights)
        for ranks in itertools.product(*grids)
    ]
    return float(sum(Fraction(v) for v in values) / len(values))


@pytest.mark.parametrize("name", TIE_METRICS)
def test_expected_over_ties_equals_enumeration(name: str) -> None:
    metric = metric_resolver.make(name)
    ranks = Ranks(OPTIMISTIC, PESSIMISTIC, CANDIDATES)
    exact = enumerated_expectation(metric)
    assert expected_over_ties(metric, ranks) == pytest.approx(exact, rel=1e-12, abs=1e-13)
    if metric.supports_weights:
        exact = enumerated_expectation(metric, WEIGHTS)
        got = expected_over_ties(metric, ranks, WEIGHTS)
        assert got == pytest.approx(exact, rel=1e-12, abs=1e-13)


def test_expected_over_ties_rejects_what_it_does_not_know() -> None:
    ranks = Ranks([1], [2], [2])
    assert not has_tie_expectation(metric_resolver.make("median_rank"))
    with pytest.raises(ValueError, match="no exact expectation over ties"):
        expected_over_ties(metric_resolver.make("median_rank"), ranks)
    with pytest.raises(TypeError, match="ranks must be a Ranks object"):
        expected_over_ties(metric_resolver.make("mrr"), [1, 2])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs num_candidates"):
        expected_over_ties(metric_resolver.make("amri"), Ranks([1], [2]))
    with pytest.raises(ValueError, match="weights must have one entry per task"):
        expected_over_ties(metric_resolver.make("mrr"), ranks, [1.0, 2.0])


CHANCE_METRICS = ["amri", "amrr", "adjusted_hits_at_10", "agmri", "zmr", "zmrr", "z_hits_at_10"]
CHANCE_METRICS += ["zgmr", "amr"]


def test_constant_scores_score_exactly_chance_in_expectation() -> None:
    """A model that scores every candidate alike is the null model once ties are broken."""
    rng = np.random.default_rng(3)
    batch, width = 300, 400
    scores = np.zeros((batch, width), dtype=np.float32)
    targets = rng.integers(0, width, size=batch)
    mask = rng.random((batch, width)) < 0.5
    mask[np.arange(batch), targets] = False
    ranks = ranks_from_scores(scores, targets, filter_mask=mask)
    assert (ranks.optimistic == 1).all()
    np.testing.assert_array_equal(ranks.pessimistic, ranks.num_candidates)
    metrics = [*CHANCE_METRICS, "mrr"]
    results = evaluate(ranks, metrics=metrics, rank_types=["expected", "realistic"])
    for name in CHANCE_METRICS:
        chance = 1.0 if name == "amr" else 0.0
        assert results[f"expected.{name}"] == pytest.approx(chance, abs=1e-12), name
    # realistic ranks (C + 1) / 2 are not chance for nonlinear metrics: MRR is far too low
    assert results["expected.mrr"] == pytest.approx(results.expected_value("mrr"), rel=1e-14)
    assert results["realistic.zmrr"] < -3


# --- arguments of the right kind in other types --------------------------------------------------


@pytest.mark.parametrize("chunk_elements", [np.int64(5), np.int32(5), np.uint8(5), 5, 10**30])
def test_chunk_elements_takes_any_integer(chunk_elements: int) -> None:
    scores = np.array([[0.1, 0.9, 0.5], [0.3, 0.3, 0.2]])
    expected = ranks_from_scores(scores, [2, 0])
    ranks = ranks_from_scores(scores, [2, 0], chunk_elements=chunk_elements)
    assert ranks.optimistic.tolist() == expected.optimistic.tolist()
    assert ranks.pessimistic.tolist() == expected.pessimistic.tolist()


@pytest.mark.parametrize("flag", [np.bool_(False), False])
def test_larger_is_better_takes_numpy_bools(flag: bool) -> None:
    distances = np.array([[0.5, 0.1, 0.9]])
    ranks = ranks_from_scores(distances, [0], larger_is_better=flag)
    assert ranks.optimistic.tolist() == [2]


def test_ranks_take_a_scalar_num_candidates() -> None:
    for count in (7, np.int64(7), 7.0, np.array(7)):
        ranks = Ranks([1, 2, 3], [1, 4, 3], count)
        assert ranks.num_candidates is not None
        assert ranks.num_candidates.tolist() == [7, 7, 7]
        assert not ranks.num_candidates.flags.writeable


def test_ranks_up_to_two_to_the_53_are_exact() -> None:
    big = 2**53
    ranks = Ranks([big - 1, big], [big, big], [big, big])
    assert ranks.realistic.tolist() == [big - 0.5, float(big)]
    assert ranks.pessimistic.dtype == np.int64


def test_ranks_do_not_mutate_or_alias_their_input() -> None:
    optimistic = np.array([1, 2, 3])
    pessimistic = np.array([1, 4, 3])
    ranks = Ranks(optimistic, pessimistic, [5, 5, 5])
    optimistic[0] = 99
    assert ranks.optimistic.tolist() == [1, 2, 3]
    assert pessimistic.tolist() == [1, 4, 3]


def test_eight_threads_ranking_at_once() -> None:
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(5)
    scores = rng.integers(0, 20, size=(64, 300)).astype(np.float64)
    targets = rng.integers(0, 300, size=64)
    mask = rng.random((64, 300)) < 0.1
    mask[np.arange(64), targets] = False
    reference = ranks_from_scores(scores, targets, filter_mask=mask)

    def work(chunk: int) -> Ranks:
        return ranks_from_scores(scores, targets, filter_mask=mask, chunk_elements=chunk)

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(work, [301, 1000, 4000, 10**6] * 4))
    for ranks in results:
        assert ranks.optimistic.tolist() == reference.optimistic.tolist()
        assert ranks.pessimistic.tolist() == reference.pessimistic.tolist()
        assert ranks.num_candidates is not None
        assert reference.num_candidates is not None
        assert ranks.num_candidates.tolist() == reference.num_candidates.tolist()


def test_copies_and_unpickled_ranks_stay_read_only() -> None:
    import copy
    import pickle

    ranks = Ranks([1, 2], [1, 3], [4, 4])
    for clone in (pickle.loads(pickle.dumps(ranks)), copy.deepcopy(ranks), copy.copy(ranks)):
        assert clone.optimistic.tolist() == [1, 2]
        assert clone.pessimistic.tolist() == [1, 3]
        assert clone.num_candidates is not None
        assert clone.num_candidates.tolist() == [4, 4]
        for array in (clone.optimistic, clone.pessimistic, clone.num_candidates):
            assert not array.flags.writeable
    plain = pickle.loads(pickle.dumps(Ranks([1], [1])))
    assert plain.num_candidates is None


def test_float16_and_float32_ranks_without_warnings() -> None:
    ranks = Ranks(np.float16([1, 2]), np.float32([1, 3]), [4, 4])
    assert ranks.optimistic.tolist() == [1, 2]
    assert ranks.pessimistic.tolist() == [1, 3]


def test_float_target_scores_of_large_integer_scores_compare_exactly() -> None:
    big = 2**53
    scores = np.array([[big + 1, big, 3]], dtype=np.int64)
    ranks = ranks_from_scores(scores, target_scores=[float(big)])
    assert ranks.optimistic.tolist() == [2]  # big + 1 is better, not a tie
    assert ranks.pessimistic.tolist() == [2]
    assert ranks_from_scores(scores, [1]).optimistic.tolist() == [2]
    with pytest.raises(ValueError, match=r"2\.5 is no int64 score, in row 0"):
        ranks_from_scores(scores, target_scores=[2.5])
    with pytest.raises(ValueError, match=r"is no uint8 score"):
        ranks_from_scores(np.array([[1, 2]], dtype=np.uint8), target_scores=[300.0])
    small = ranks_from_scores(np.array([[1, 2]], dtype=np.uint8), target_scores=[1.0])
    assert small.optimistic.tolist() == [2]


def test_bfloat16_scores_hint_at_widening() -> None:
    """numpy has no bfloat16: the hint is to widen the tensor, not to move it."""
    torch = pytest.importorskip("torch")
    scores = torch.rand(2, 3, dtype=torch.bfloat16)
    with pytest.raises(TypeError, match=r"convertible .*\(for a tensor: \.float\(\)\)"):
        ranks_from_scores(scores, targets=[0, 1])
    assert ranks_from_scores(scores.float(), targets=[0, 1]).optimistic.size == 2


def test_target_scores_of_another_float_type_are_named() -> None:
    """float64 targets against float32 scores: 0.1 is no float32 score, and the error says why."""
    scores = np.array([[0.1, 0.5, 0.3]], dtype=np.float32)
    with pytest.raises(ValueError, match=r"the scores are float32 and target_scores float64"):
        ranks_from_scores(scores, target_scores=[0.1])
    ranks = ranks_from_scores(scores, target_scores=scores[:, 0])
    assert ranks.optimistic.tolist() == [3]


def test_integer_target_scores_must_be_exact_scores_of_float_rows() -> None:
    """An integer target beyond 2**53 against float64 scores (or beyond 2**24 against float32)
    is no score of the row: it had rounded, tied with its neighbour and been ranked."""
    scores = np.array([[2.0**53, 2.0**53 + 2]])
    with pytest.raises(ValueError, match=r"9007199254740993 is no float64 score"):
        ranks_from_scores(scores, target_scores=[2**53 + 1])
    assert ranks_from_scores(scores, target_scores=[2**53 + 2]).optimistic.tolist() == [1]
    single = np.array([[1.5, 16777216.0]], dtype=np.float32)
    with pytest.raises(ValueError, match=r"16777217 is no float32 score"):
        ranks_from_scores(single, target_scores=[16777217])
    assert ranks_from_scores(single, target_scores=[16777216]).optimistic.tolist() == [1]


def test_ranks_without_counts_take_the_given_ones() -> None:
    """A Ranks without candidate counts takes those given beside it (a scalar broadcast, as the
    PyKEEN guide says); given in both places they are refused."""
    bare = Ranks([1, 2], [2, 3])
    counted = Ranks([1, 2], [2, 3], 5)
    assert evaluate(bare, 5).to_flat_dict() == evaluate(counted).to_flat_dict()
    accumulator = RankAccumulator(["amri"])
    accumulator.update(bare, num_candidates=[5, 5])
    assert accumulator.compute()["amri"] == evaluate(counted, metrics=["amri"])["amri"]
    with pytest.raises(ValueError, match="num_candidates is given twice"):
        evaluate(counted, 5)
    with pytest.raises(ValueError, match=r"pessimistic rank 3 > num_candidates 2 at index 1"):
        evaluate(bare, 2)
