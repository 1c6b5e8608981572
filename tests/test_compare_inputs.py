"""Bad input to :func:`rankstats.compare` gets one clear error; query ids align models."""

from __future__ import annotations

import numpy as np
import pytest

from rankstats import Ranks, compare

A = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 1.0])
B = np.array([2.0, 1.0, 3.0, 6.0, 1.0, 2.0])
C = np.full(6, 10)


@pytest.mark.parametrize(
    ("kwargs", "error", "pattern"),
    [
        ({"ranks": {"a": A}}, ValueError, "two or more models, got 1"),
        ({"ranks": A}, ValueError, "single model"),
        ({"ranks": [1.0, 2.0, 3.0]}, ValueError, "single model"),
        ({"ranks": Ranks([1, 2], [1, 3])}, ValueError, "single model"),
        ({"ranks": {"a": A, "b": B[:5]}}, ValueError, "model 'a' has 6 ranks, model 'b' has 5"),
        (
            {"ranks": {"a": A, "b": B}, "num_candidates": {"a": C, "b": C + 1}},
            ValueError,
            "query 0 has 10 candidates for model 'a' but 11 for model 'b'",
        ),
        (
            {"ranks": {"a": A, "b": B}, "num_candidates": {"a": C}},
            ValueError,
            "every model or none",
        ),
        (
            {"ranks": {"a": A, "b": B}, "query_ids": {"a": list("uvwxyz"), "b": list("uvwxyq")}},
            ValueError,
            "query id 'q' of model 'b' is not among",
        ),
        (
            {"ranks": {"a": A, "b": B}, "query_ids": {"a": list("uvwxyy"), "b": list("uvwxyz")}},
            ValueError,
            "unique",
        ),
        ({"ranks": {"a": A, "b": B}, "confidence_level": 95}, ValueError, r"fraction in \(0, 1\)"),
        ({"ranks": {"a": A, "b": B}, "confidence_level": 1.0}, ValueError, r"\(0, 1\)"),
        ({"ranks": {"a": A, "b": B}, "confidence_level": 0.0}, ValueError, r"\(0, 1\)"),
        ({"ranks": {"a": A, "b": B}, "confidence_level": "0.9"}, TypeError, "confidence_level"),
        ({"ranks": {"a": A, "b": B}, "test": "anova"}, ValueError, "test must be one of"),
        ({"ranks": {"a": A, "b": B}, "correction": "fdr"}, ValueError, "correction must be"),
        ({"ranks": {"a": A, "b": B}, "interval": "basic"}, ValueError, "interval must be"),
        ({"ranks": {"a": A, "b": B}, "n_resamples": 0}, ValueError, "n_resamples"),
        (
            {"ranks": {"a": A, "b": B}, "n_resamples": 1},
            ValueError,
            "n_resamples must be at least 2",
        ),
        ({"ranks": {"a": A, "b": B}, "n_resamples": 2}, None, None),
        ({"ranks": {"a": A, "b": B}, "seed": -1}, ValueError, "seed"),
        ({"ranks": {"a": A, "b": B}, "per_group": True}, ValueError, "needs groups"),
        (
            {"ranks": {"a": A, "b": B}, "rank_type": "expected"},
            ValueError,
            "optimistic and pessimistic",
        ),
        ({"ranks": {"a": A, "b": B}, "rank_type": "best"}, ValueError, "rank_type must be"),
        ({"ranks": {"a": A, "b": B}, "metrics": ["amri"]}, ValueError, "needs num_candidates"),
        ({"ranks": {"a": A, "b": B}, "metrics": ["count"]}, ValueError, "same for every model"),
        ({"ranks": {"a": A, "b": B}, "metrics": ["nope"]}, ValueError, "unknown metric"),
        ({"ranks": {"a": A, "b": B}, "weights": np.ones(5)}, ValueError, "one entry per query"),
        ({"ranks": {"a": A, "b": B}, "groups": [1, 2]}, ValueError, "one label per query"),
        ({"ranks": {"a": A, "b": B}, "exact": True, "metrics": ["mrr"]}, None, None),
        (
            {"ranks": {"a": A, "b": B}, "weights": np.ones(6), "metrics": ["median_rank"]},
            ValueError,
            "without weights",
        ),
        (
            {"ranks": {"a": A, "b": B}, "test": "t", "metrics": ["median_rank"]},
            ValueError,
            "does not apply",
        ),
        (
            {"ranks": {"a": A, "b": B}, "test": "t", "weights": np.ones(6)},
            ValueError,
            "takes no weights",
        ),
        (
            {"ranks": {"a": A, "b": B * 3}, "num_candidates": C},
            ValueError,
            "must not exceed their num_candidates",
        ),
        ({"ranks": {"a": A, "b": -B}}, ValueError, "model 'b'"),
        (
            {
                "ranks": {"a": Ranks([1, 2], [1, 3]), "b": Ranks([1, 1], [2, 2])},
                "metrics": ["median_rank"],
                "rank_type": "expected",
            },
            ValueError,
            "no per-query expectation over tie-breaking",
        ),
    ],
)
def test_bad_input(kwargs, error, pattern) -> None:
    kwargs = {"interval": None, "n_resamples": 10, **kwargs}
    ranks = kwargs.pop("ranks")
    if error is None:
        compare(ranks, **kwargs)
        return
    with pytest.raises(error, match=pattern):
        compare(ranks, **kwargs)


def test_exact_refused_for_many_queries() -> None:
    many = np.arange(1, 31, dtype=float)
    with pytest.raises(ValueError, match="feasible up to 24 queries"):
        compare({"a": many, "b": many[::-1]}, exact=True, interval=None)


def test_query_ids_align_models() -> None:
    ids = np.array(list("uvwxyz"))
    order = np.array([3, 0, 5, 1, 4, 2])
    aligned = compare(
        {"a": A, "b": B[order]},
        query_ids={"a": ids, "b": ids[order]},
        metrics=["mrr", "mr"],
        interval="percentile",
        n_resamples=200,
        seed=1,
    )
    direct = compare(
        {"a": A, "b": B}, metrics=["mrr", "mr"], interval="percentile", n_resamples=200, seed=1
    )
    assert aligned.to_dict() == direct.to_dict()


def test_inputs_not_mutated_and_forms_agree() -> None:
    a, b = A.copy(), B.copy()
    as_mapping = compare({"a": a, "b": b}, metrics=["mrr"], interval=None, n_resamples=50, seed=0)
    as_list = compare([a, b], metrics=["mrr"], interval=None, n_resamples=50, seed=0)
    as_array = compare(np.stack([a, b]), metrics=["mrr"], interval=None, n_resamples=50, seed=0)
    as_dicts = compare(
        {"a": {"realistic": a}, "b": {"realistic": b}},
        metrics=["mrr"],
        interval=None,
        n_resamples=50,
        seed=0,
    )
    assert np.array_equal(a, A)
    assert np.array_equal(b, B)
    assert as_list.models == as_array.models == ("model 1", "model 2")
    assert as_mapping.pairs[0].p_value == as_list.pairs[0].p_value == as_dicts.pairs[0].p_value
    assert as_array.pairs[0].p_value == as_list.pairs[0].p_value


def test_rank_types_of_one_query_must_be_in_order() -> None:
    """As in evaluate: an optimistic rank above the realistic one is refused."""
    from rankstats.compare import compare

    ranks = {"optimistic": [3, 5], "realistic": [2, 1]}
    other = {"optimistic": [1, 1], "realistic": [2, 2]}
    with pytest.raises(ValueError, match=r"model 'a': ranks\['optimistic'\] must not exceed"):
        compare({"a": ranks, "b": other}, [10, 10], metrics=["mr"])
