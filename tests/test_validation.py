"""Bad input gets a clear error naming the argument, what was expected and what was given."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rankstats import (
    AdjustedArithmeticMeanRankIndex,
    ArithmeticMeanRank,
    HitsAtK,
    InverseHarmonicMeanRank,
    NoClosedFormError,
    StandardDeviation,
    ZInverseHarmonicMeanRank,
    evaluate,
    metric_resolver,
)

MRR = InverseHarmonicMeanRank()

CALL_ERRORS = [
    # (ranks, num_candidates, weights, exception, message pattern)
    # Python integers beyond 64 bits (an array of objects) meet the bounds like other numbers
    (
        [1, 2],
        [2**70, 3],
        None,
        ValueError,
        r"num_candidates must be integers between 1 and 2\*\*53, got 1\.18\d*e\+21 at index 0",
    ),
    # a set has no order to pair its entries with the tasks; a generator is no array
    ({1, 2}, None, None, TypeError, r"ranks must be an array-like of numbers, got set"),
    (
        (x for x in [1, 2]),
        None,
        None,
        TypeError,
        r"ranks must be an array-like of numbers \(a list, array or tensor\), got generator",
    ),
    # multi-dimensional inputs flatten in row-major order: their shapes must agree
    (
        np.ones((4, 2)),
        np.full(8, 3),
        None,
        ValueError,
        r"num_candidates must have the shape of ranks \(4, 2\) .*, got shape \(8,\)",
    ),
    (
        np.ones((4, 2)),
        np.full((2, 4), 3),
        None,
        ValueError,
        r"num_candidates must have the shape of ranks \(4, 2\) .*, got shape \(2, 4\)",
    ),
    (
        np.ones(8),
        None,
        np.ones((2, 4)),
        ValueError,
        r"weights must have the shape of ranks \(8,\) .*, got shape \(2, 4\)",
    ),
    ([], None, None, ValueError, r"ranks must not be empty"),
    (3, None, None, ValueError, r"ranks must be a 1-D array-like, got the scalar 3"),
    ("123", None, None, TypeError, r"ranks must be an array-like of numbers, got str"),
    ([1, 0, 2], None, None, ValueError, r"ranks must be finite numbers >= 1, got 0 at index 1"),
    ([1, -2.5], None, None, ValueError, r"ranks must be finite numbers >= 1, got -2.5 at index 1"),
    ([1, np.nan], None, None, ValueError, r"ranks must be finite numbers >= 1, got nan at index 1"),
    ([1, np.inf], None, None, ValueError, r"ranks must be finite numbers >= 1, got inf at index 1"),
    (
        [True, False],
        None,
        None,
        TypeError,
        r"ranks must hold numbers, not booleans, got list",
    ),
    ([1 + 1j], None, None, TypeError, r"ranks must hold real numbers"),
    (
        [1, 5],
        [3, 4],
        None,
        ValueError,
        r"ranks must not exceed their num_candidates, got rank 5\.0 > num_candidates 4 at index 1",
    ),
    (
        [1, 2],
        [3],
        None,
        ValueError,
        r"num_candidates must have one entry per rank task like ranks \(2\), got 1",
    ),
    ([1, 2], [0, 3], None, ValueError, r"num_candidates must be integers >= 1, got 0 at index 0"),
    (
        [1, 2],
        [2.5, 3],
        None,
        ValueError,
        r"num_candidates must be integers >= 1, got 2\.5 at index 0",
    ),
    (
        [1, 2],
        [np.nan, 3],
        None,
        ValueError,
        r"num_candidates must be integers >= 1, got nan at index 0",
    ),
    (
        [1, 2],
        None,
        [1.0],
        ValueError,
        r"weights must have one entry per rank task like ranks \(2\), got 1",
    ),
    (
        [1, 2],
        None,
        [1.0, -1.0],
        ValueError,
        r"weights must be finite and non-negative, got -1\.0 at index 1",
    ),
    (
        [1, 2],
        None,
        [1.0, np.nan],
        ValueError,
        r"weights must be finite and non-negative, got nan at index 1",
    ),
    ([1, 2], None, [0.0, 0.0], ValueError, r"weights must not all be zero, got 2 zero weights"),
    # a weight below 1e-120 of the largest: its square would be subnormal in the null variance
    (
        [1, 2],
        [2, 2],
        [1e-160, 1.0],
        ValueError,
        r"weights must be 0 or at least 1e-120 times the largest weight, got 1e-160 at index 0",
    ),
    (
        [1, 2, 1],
        [2, 2, 2],
        [0.0, 5e-324, 3.0],
        ValueError,
        r"at least 1e-120 times the largest weight, got 5e-324 at index 1 beside a largest "
        r"weight of 3\.0",
    ),
]


@pytest.mark.parametrize(("ranks", "candidates", "weights", "error", "pattern"), CALL_ERRORS)
def test_call_errors(ranks, candidates, weights, error, pattern) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error, match=pattern):
        MRR(ranks, candidates, weights)


def test_derived_metrics_need_candidates() -> None:
    with pytest.raises(
        ValueError, match=r"AdjustedArithmeticMeanRankIndex\(\) needs num_candidates"
    ):
        AdjustedArithmeticMeanRankIndex()([1, 2])


def test_z_score_with_zero_null_variance() -> None:
    with pytest.raises(ValueError, match=r"null variance .* is 0\.0.*single candidate"):
        ZInverseHarmonicMeanRank()([1, 1], [1, 1])
    with pytest.raises(ValueError, match="undefined"):
        AdjustedArithmeticMeanRankIndex()([1, 1], [1, 1])


@pytest.mark.parametrize("k", [0, -1, 2.5, "3", True, None])
def test_bad_k(k: object) -> None:
    with pytest.raises((ValueError, TypeError), match=r"k must be a positive integer, got"):
        HitsAtK(k=k)  # type: ignore[arg-type]
    with pytest.raises((ValueError, TypeError), match=r"k must be a positive integer, got"):
        metric_resolver.make("adjusted_hits_at_k", k=k)


@pytest.mark.parametrize("num_samples", [0, -5, 1.5])
def test_bad_num_samples(num_samples: object) -> None:
    with pytest.raises((ValueError, TypeError), match="num_samples must be a positive integer"):
        StandardDeviation().expected_value([3, 4], num_samples=num_samples)  # type: ignore[arg-type]


def test_variance_needs_two_samples() -> None:
    with pytest.raises(ValueError, match="num_samples must be at least 2"):
        StandardDeviation().variance([3, 4], num_samples=1)


def test_no_closed_form_names_num_samples() -> None:
    with pytest.raises(
        NoClosedFormError,
        match=r"StandardDeviation\(\) has no closed-form expected value; pass num_samples=",
    ):
        StandardDeviation().expected_value([3, 4])
    assert issubclass(NoClosedFormError, ValueError)


@pytest.mark.parametrize(
    ("level", "error", "message"),
    [
        (0, ValueError, r"confidence_level must be a fraction in \(0, 1\), got 0$"),
        (1, ValueError, r"confidence_level must be a fraction in \(0, 1\), got 1$"),
        (95, ValueError, r"got 95; for 95% pass 0.95"),
        (99.9, ValueError, r"got 99.9; for 99.9% pass 0.999"),
        (150.0, ValueError, r"fraction in \(0, 1\), got 150.0$"),
        (-0.5, ValueError, r"fraction in \(0, 1\), got -0.5$"),
        (float("nan"), ValueError, r"fraction in \(0, 1\), got nan"),
        (True, TypeError, r"confidence_level must be a number in \(0, 1\), got True"),
        ("0.95", TypeError, r"confidence_level must be a number in \(0, 1\), got '0.95'"),
    ],
)
def test_bad_confidence_level(level: object, error: type[Exception], message: str) -> None:
    for method in ("numeric_expected_value_with_ci", "numeric_variance_with_ci"):
        with pytest.raises(error, match=message):
            getattr(StandardDeviation(), method)([3, 4], 10, confidence_level=level)


def test_null_input_errors() -> None:
    with pytest.raises(ValueError, match="num_candidates must not be empty"):
        ArithmeticMeanRank().expected_value([])
    with pytest.raises(
        ValueError, match=r"num_candidates must be integers >= 1, got -1 at index 1"
    ):
        ArithmeticMeanRank().variance([3, -1])
    with pytest.raises(
        ValueError, match=r"weights must have one entry per rank task like num_candidates"
    ):
        ArithmeticMeanRank().variance([3, 4], weights=[1.0])


def test_unknown_metric_suggests_close_names() -> None:
    with pytest.raises(ValueError, match=r"unknown metric 'mrrr'; closest valid names: .*'mrr'"):
        metric_resolver.make("mrrr")
    with pytest.raises(KeyError):
        metric_resolver.lookup("hitz@10")
    with pytest.raises(ValueError, match=r"closest valid names: .*hits"):
        metric_resolver.make("hitz@10")
    with pytest.raises(ValueError, match="unknown metric 'mrr5'"):
        metric_resolver.make("mrr5")


def test_conflicting_k() -> None:
    with pytest.raises(ValueError, match=r"metric 'hits@10' names k=10, but k=3 was passed"):
        metric_resolver.make("hits@10", k=3)


def test_no_runtime_warning_on_extreme_but_valid_input() -> None:
    huge = np.full(3, 10**12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for metric in (MRR, ArithmeticMeanRank(), HitsAtK(k=1)):
            metric([1, 10**12, 5e11], huge)
            metric.expected_value(huge)
            metric.variance(huge)


@pytest.mark.parametrize(
    ("ranks_shape", "other_shape"), [((4, 2), (4, 2)), ((8,), (8, 1)), ((1, 8), (8,)), ((8,), (8,))]
)
def test_shapes_that_pair_the_same_entries_are_accepted(
    ranks_shape: tuple[int, ...], other_shape: tuple[int, ...]
) -> None:
    """Equal shapes, or shapes equal but for axes of length 1, flatten to the same pairing."""
    ranks = np.arange(1, 9).reshape(ranks_shape)
    counts = np.arange(10, 18).reshape(other_shape)
    expected = ArithmeticMeanRank().expected_value(np.arange(10, 18))
    assert ArithmeticMeanRank().expected_value(counts) == expected
    assert ArithmeticMeanRank()(ranks, counts) == pytest.approx(4.5)
    assert ArithmeticMeanRank()(ranks, counts, weights=np.ones(other_shape)) == pytest.approx(4.5)


def test_evaluate_checks_the_shape_of_the_weights() -> None:
    """evaluate pairs ranks and weights as a metric does: their shapes must agree."""
    from rankstats import evaluate

    ranks, counts = np.ones((4, 2)), np.full((4, 2), 3)
    assert evaluate(ranks, counts, weights=np.ones((4, 2)))["mr"] == 1.0
    with pytest.raises(ValueError, match=r"weights must have the shape of ranks \(4, 2\)"):
        evaluate(ranks, counts, weights=np.ones(8))
    with pytest.raises(ValueError, match=r"num_candidates must have the shape of ranks \(4, 2\)"):
        evaluate(ranks, np.full(8, 3))


def test_weights_beyond_64_bits_are_numbers() -> None:
    """Python integers too large for int64 are weights like any other (as floats)."""
    assert ArithmeticMeanRank()([1, 2], weights=[2**70, 2**70]) == 1.5


def test_fractions_and_decimals_are_numbers() -> None:
    """Exact Python numbers (an array of objects to numpy) are converted like integers."""
    from decimal import Decimal
    from fractions import Fraction

    expected = ArithmeticMeanRank()([1.0, 1.5], [3, 3])
    assert ArithmeticMeanRank()([Fraction(1), Fraction(3, 2)], [3, 3]) == expected
    assert ArithmeticMeanRank()([Decimal(1), Decimal("1.5")], [3, 3]) == expected


def test_evaluate_refuses_unordered_groups_and_no_rank_types() -> None:
    from rankstats import evaluate

    with pytest.raises(TypeError, match=r"groups must be an array-like of labels, one per task"):
        evaluate([1, 2], 3, groups={"a", "b"})
    with pytest.raises(ValueError, match=r"rank_types must name at least one rank type"):
        evaluate([1, 2], 3, rank_types=[])


def test_rank_types_of_one_task_must_be_in_order() -> None:
    """An optimistic rank above the realistic one (or that above the pessimistic) is refused."""
    from rankstats import evaluate

    with pytest.raises(
        ValueError, match=r"ranks\['optimistic'\] must not exceed ranks\['realistic'"
    ):
        evaluate({"optimistic": [3, 5], "realistic": [2, 1]}, [10, 10])
    with pytest.raises(ValueError, match=r"ranks\['realistic'\] must not exceed ranks\['pessimist"):
        evaluate({"realistic": [2, 3], "pessimistic": [1, 3]}, [10, 10])
    results = evaluate({"optimistic": [1, 2], "realistic": [2, 2]}, [10, 10], metrics=["mr"])
    assert results["optimistic.mr"] == 1.5


@pytest.mark.parametrize(
    "metric", [ArithmeticMeanRank(), StandardDeviation(), InverseHarmonicMeanRank()]
)
def test_finite_ranks_beyond_2_53_are_refused_by_every_metric(metric: object) -> None:
    """A finite rank beyond 2**53 leaves a mean finite: each rank is checked, not the result."""
    with pytest.raises(ValueError, match=r"ranks must be at most 2\*\*53"):
        metric([1.0, 1e300])  # type: ignore[operator]
    # integers above 2**53 are checked before they become floats (which would round them)
    with pytest.raises(ValueError, match=r"ranks must be at most 2\*\*53.*9007199254740993"):
        AdjustedArithmeticMeanRankIndex()(np.array([2**53 + 1]), np.array([2**53]))


def test_side_mappings_hold_rank_types_only() -> None:
    """A side's mapping without a rank type had raised a bare StopIteration (which a ``map``
    over inputs swallows, ending the results early), and misspelt rank types were dropped."""
    from rankstats import evaluate

    with pytest.raises(ValueError, match=r"'optimstic' \(did you mean 'optimistic'\?\)"):
        evaluate({"head": {"optimstic": [1, 2]}}, 4)
    with pytest.raises(ValueError, match=r"of a side must be .* got an empty mapping"):
        evaluate({"head": {}}, 4)
    with pytest.raises(ValueError, match=r"side 'tail': .*'pessimstic' \(did you mean"):
        evaluate(
            {"head": {"optimistic": [1, 2], "pessimistic": [3, 3]}, "tail": {"pessimstic": [3, 3]}},
            4,
        )
    with pytest.raises(ValueError, match=r"ranks cannot be given for the rank type 'expected'"):
        evaluate({"head": {"expected": [1, 2]}}, 4)
    # a top-level key that looks like a rank type is not taken for a side's name
    for key in ("realistc", "Realistic", "pesimistic"):
        with pytest.raises(ValueError, match=rf"the key '{key}': did you mean the rank type"):
            evaluate({key: [1, 2]}, 4)
    results = evaluate({"head": {"realistic": [1, 2]}, "tail": [2, 2]}, 4, metrics=["mrr"])
    assert results["head.realistic.mrr"] == 0.75


def test_masked_arrays_with_masked_entries_are_refused() -> None:
    """np.asarray drops the mask: the masked ranks had been counted."""
    with pytest.raises(TypeError, match=r"ranks must not be a masked array .* \(1 here\)"):
        MRR(np.ma.array([1, 100], mask=[False, True]))
    with pytest.raises(TypeError, match=r"num_candidates must not be a masked array"):
        MRR([1, 2], np.ma.array([5, 6], mask=[True, False]))
    assert MRR(np.ma.array([1, 4], mask=[False, False])) == 0.625  # nothing masked


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: MRR([True, 2, 3]), "ranks"),
        (lambda: MRR([np.True_, 2]), "ranks"),
        (lambda: MRR([[1, 2], [3, True]]), "ranks"),
        (lambda: MRR([1, 1], [True, 2]), "num_candidates"),
        (lambda: MRR([1, 2], None, [True, 2.0]), "weights"),
        (lambda: ArithmeticMeanRank().expected_value([True, 3]), "num_candidates"),
    ],
)
def test_booleans_among_numbers_are_refused(call: object, name: str) -> None:
    """A list mixing booleans and numbers had been read as numbers (True as 1)."""
    with pytest.raises(TypeError, match=rf"{name} must hold numbers, not booleans"):
        call()  # type: ignore[operator]


def test_timedelta_arrays_are_not_numbers() -> None:
    with pytest.raises(TypeError, match=r"ranks must hold real numbers, got .* timedelta64"):
        MRR(np.array([1, 2], dtype="timedelta64[s]"))


def test_null_models_check_the_shape_of_the_weights() -> None:
    """As the values do: weights of shape (3, 2) against counts of shape (2, 3) pair other
    tasks' entries once both are flattened."""
    counts = np.array([[2, 3, 4], [5, 6, 7]])
    with pytest.raises(ValueError, match=r"weights must have the shape of num_candidates \(2, 3\)"):
        ArithmeticMeanRank().expected_value(counts, weights=np.ones((3, 2)))
    assert ArithmeticMeanRank().expected_value(counts, weights=np.ones((2, 3))) == 2.75


def test_weights_spread_to_the_limit_keep_every_null_statistic() -> None:
    """Positive weights down to 1e-120 of the largest: one uncertain task of two candidates
    beside a certain one. The adjusted indices and z-scores are two-point laws there (E = 0,
    V = 1), whose scale squared alone would pass 1e292; below the limit the weights are
    refused (AMRI's variance had raised OverflowError, and the z-scores lost digits to
    subnormal variances or claimed every outcome certain)."""
    for share in (1e-119, 1e-60, 1e-8):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for name in ("amri", "amrr", "agmri", "zmr", "zmrr", "zgmr", "z_hits_at_1"):
                moments = metric_resolver.make(name).moments([2, 1], weights=[share, 1.0])
                assert moments.expected_value == pytest.approx(0.0, abs=1e-15)
                assert moments.variance == pytest.approx(1.0, rel=1e-12)
    for name in ("amri", "zmr", "hmr"):
        with pytest.raises(ValueError, match=r"at least 1e-120 times the largest weight"):
            metric_resolver.make(name).moments([2, 1], weights=[1e-121, 1.0])
    with pytest.raises(ValueError, match=r"at least 1e-120 times the largest weight"):
        evaluate([1, 1], [2, 1], weights=[1e-160, 1.0], metrics=["amri"])
