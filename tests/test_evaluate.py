"""evaluate(): values and null statistics, key grammar, export, groups, shared work, bad input."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from rankstats import (
    InverseHarmonicMeanRank,
    RankAccumulator,
    RankBasedMetric,
    UnknownMetricError,
    metric_resolver,
)
from rankstats.evaluation import (
    PYKEEN_METRICS,
    EvaluationResults,
    Ranks,
    evaluate,
    expected_over_ties,
)
from rankstats.null.tasks import Tasks

DATA = Path(__file__).parent / "data"

#: every metric evaluate can take (the needs-candidates ones get candidates)
METRICS = ["mr", "mrr", "hits@1", "hits@3", "hits@10", "gmr", "igmr", "hmr", "iamr"]
METRICS += ["median_rank", "inverse_median_rank", "variance", "std", "mad", "count"]
METRICS += ["amr", "amri", "amrr", "agmri", "adjusted_hits_at_3", "zmr", "zmrr", "zgmr"]
METRICS += ["z_hits_at_3"]


def make_side(seed: int, n: int = 60, width: int = 30) -> Ranks:
    rng = np.random.default_rng(seed)
    candidates = rng.integers(5, width, size=n)
    optimistic = np.minimum(rng.geometric(0.2, size=n), candidates)
    ties = rng.binomial(1, 0.3, size=n) * rng.integers(1, 4, size=n)
    pessimistic = np.minimum(optimistic + ties, candidates)
    return Ranks(optimistic, pessimistic, candidates)


HEAD, TAIL = make_side(1), make_side(2, n=51)
BOTH = Ranks.concatenate([HEAD, TAIL])


@pytest.fixture(scope="module")
def results() -> EvaluationResults:
    return evaluate({"head": HEAD, "tail": TAIL}, metrics=METRICS)


def test_every_value_equals_the_metric_called_directly(results: EvaluationResults) -> None:
    """The table, computed from shared histograms, equals metric-by-metric calls."""
    for side, ranks in (("head", HEAD), ("tail", TAIL), ("both", BOTH)):
        for name in METRICS:
            metric = metric_resolver.make(name)
            for rank_type in metric.supported_rank_types:
                row = results.row(f"{side}.{rank_type}.{name}")
                direct = metric(ranks[rank_type], ranks.num_candidates)
                assert row.value == pytest.approx(direct, rel=1e-12, abs=1e-14), row.key
                if metric.closed_expectation:
                    expected = metric.expected_value(ranks.num_candidates)
                    assert row.expected_value == pytest.approx(expected, rel=1e-12, abs=1e-14)
                if metric.closed_variance:
                    variance = metric.variance(ranks.num_candidates)
                    assert row.variance == pytest.approx(variance, rel=1e-12, abs=1e-14)
                    if variance > 0:
                        z = (direct - row.expected_value) / math.sqrt(variance)
                        assert row.z_score == pytest.approx(z, rel=1e-9, abs=1e-12)


def test_expected_rank_type_is_the_expectation_over_ties(results: EvaluationResults) -> None:
    for name in ("mr", "mrr", "hits@3", "gmr", "variance", "amri", "zmrr", "agmri"):
        metric = metric_resolver.make(name)
        for side, ranks in (("head", HEAD), ("both", BOTH)):
            got = results[f"{side}.expected.{name}"]
            assert got == pytest.approx(expected_over_ties(metric, ranks), rel=1e-12, abs=1e-14)
    # the mean rank is linear, so in expectation it is the realistic mean rank
    assert results["expected.mr"] == pytest.approx(results["realistic.mr"], rel=1e-15)


def test_key_grammar(results: EvaluationResults) -> None:
    mrr = results["both.realistic.inverse_harmonic_mean_rank"]
    assert results["mrr"] == results["realistic.mrr"] == results["both.mrr"] == mrr
    assert results[InverseHarmonicMeanRank()] == mrr
    tail_hits = results["tail.pessimistic.hits_at_3"]
    assert results["tail.pessimistic.hits@3"] == results["pessimistic.tail.h@3"] == tail_hits
    assert results.get_metric("hits_at_10") == results["both.realistic.hits_at_10"]
    assert "tail.optimistic.mrr" in results
    assert "tail.optimistic.amri" in results  # derived metrics of every rank type, as PyKEEN
    assert "nonsense" not in results
    # get() as a mapping's: the default for any key the results do not hold, whatever its type
    assert results.get("tail.optimistic.mrr") == results["tail.optimistic.mrr"]
    for missing in ("nonsense", "hits@5", "hits_at_k.-1", 3, None, ("mrr",)):
        assert missing not in results
        assert results.get(missing) is None
        assert results.get(missing, -1.0) == -1.0
    with pytest.raises(TypeError, match="keys must be strings or metrics, got int"):
        results[3]  # type: ignore[index]
    assert len(results) == len(list(results))
    assert all(key.count(".") == 2 for key in results)
    assert results.sides == ("head", "tail", "both")
    assert results.rank_types == ("optimistic", "realistic", "pessimistic", "expected")


KEY_ERRORS = [
    ("mrrr", UnknownMetricError, r"unknown metric 'mrrr'; closest valid names: .*'mrr'"),
    ("tial.mrr", KeyError, r"'tial' is neither a side \(head, tail, both\) nor a rank type"),
    ("head.tail.mrr", KeyError, r"'tail' is neither a side .* or it is given twice"),
    ("hits@5", KeyError, r"metric 'hits_at_5' was not computed .* pass it in metrics="),
    ("expected.median_rank", KeyError, r"no exact expectation over tie-breaking"),
]


@pytest.mark.parametrize(("key", "error", "match"), KEY_ERRORS)
def test_bad_keys(results: EvaluationResults, key: str, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        results[key]


def test_single_side_and_plain_arrays() -> None:
    plain = evaluate(HEAD.realistic, HEAD.num_candidates, metrics=["mrr", "amri"])
    full = evaluate(HEAD, metrics=["mrr", "amri"])
    assert plain.sides == ("both",)
    assert plain.rank_types == ("realistic",)
    assert plain["mrr"] == full["mrr"]
    assert plain["amri"] == full["amri"]
    # a mapping of rank types; optimistic and pessimistic give "expected" too
    mapping = {"optimistic": HEAD.optimistic, "pessimistic": HEAD.pessimistic}
    from_mapping = evaluate(mapping, HEAD.num_candidates, metrics=["mrr", "amri"])
    assert from_mapping.to_dict() == full.to_dict()
    # realistic ranks alone, a single rank type: keys default to it
    optimistic_only = evaluate({"optimistic": HEAD.optimistic}, metrics=["mrr"])
    assert optimistic_only["mrr"] == full["optimistic.mrr"]


def test_default_metrics_leave_out_what_needs_candidates() -> None:
    without = evaluate(HEAD.realistic)
    assert {m.key for m in without.metrics} == {"inverse_harmonic_mean_rank", "hits_at_1"} | {
        "hits_at_3",
        "hits_at_5",
        "hits_at_10",
        "arithmetic_mean_rank",
    }
    assert without.expected_value("mrr") is None
    assert without.z_score("mrr") is None
    with_candidates = evaluate(HEAD)
    assert "amri" in with_candidates
    assert "zmrr" in with_candidates


def test_weighted_values_equal_weighted_metric_calls() -> None:
    weights = np.random.default_rng(5).random(len(HEAD)) + 0.1
    results = evaluate(HEAD, metrics=["mrr", "hits@3", "gmr", "amri", "zmrr"], weights=weights)
    for name in ("mrr", "hits@3", "gmr", "amri", "zmrr"):
        metric = metric_resolver.make(name)
        direct = metric(HEAD.realistic, HEAD.num_candidates, weights)
        assert results[name] == pytest.approx(direct, rel=1e-12)
        variance = metric.variance(HEAD.num_candidates, weights=weights)
        assert results.std(name) == pytest.approx(math.sqrt(variance), rel=1e-12)
        got = results[f"expected.{name}"]
        assert got == pytest.approx(expected_over_ties(metric, HEAD, weights), rel=1e-12)


# --- groups --------------------------------------------------------------------------------------


GROUPS = np.random.default_rng(4).integers(0, 4, size=len(HEAD))


def test_micro_average_is_all_ranks_and_groups_are_subsets() -> None:
    grouped = evaluate(HEAD, metrics=["mrr", "amri", "median_rank"], groups=GROUPS)
    plain = evaluate(HEAD, metrics=["mrr", "amri", "median_rank"])
    assert grouped.average == "micro"
    for key in plain:
        assert grouped[key] == pytest.approx(plain[key], rel=1e-14)
    assert sorted(grouped.by_group) == [0, 1, 2, 3]
    for label, result in grouped.by_group.items():
        rows = label == GROUPS
        subset = Ranks(HEAD.optimistic[rows], HEAD.pessimistic[rows], HEAD.num_candidates[rows])
        alone = evaluate(subset, metrics=["mrr", "amri", "median_rank"])
        for key in alone:
            assert result[key] == pytest.approx(alone[key], rel=1e-13)
            assert result.std(key) == pytest.approx(alone.std(key), rel=1e-13)


def test_macro_average_counts_every_group_once() -> None:
    macro = evaluate(HEAD, metrics=["mrr", "zmrr", "hits@3"], groups=GROUPS, average="macro")
    for key in macro:
        rows = [g.row(key) for g in macro.by_group.values()]
        count = len(rows)
        assert macro[key] == pytest.approx(sum(r.value for r in rows) / count, rel=1e-14)
        mean = sum(r.expected_value for r in rows) / count  # type: ignore[misc]
        assert macro.expected_value(key) == pytest.approx(mean, rel=1e-14, abs=1e-15)
        variance = sum(r.variance for r in rows) / count**2  # type: ignore[misc]
        assert macro.row(key).variance == pytest.approx(variance, rel=1e-14)
    # for a mean-type metric, the macro average is the weighted one with weights 1 / n_g
    sizes = np.bincount(GROUPS)
    weighted = evaluate(HEAD, metrics=["mrr"], weights=1.0 / sizes[GROUPS])
    for key in ("realistic.mrr", "expected.mrr"):
        assert macro[key] == pytest.approx(weighted[key], rel=1e-13)
        assert macro.std(key) == pytest.approx(weighted.std(key), rel=1e-13)
    assert "macro average over 4 groups" in str(macro)


def test_groups_of_zero_weight_are_left_out() -> None:
    weights = np.where(GROUPS == 2, 0.0, 1.0)
    results = evaluate(HEAD, metrics=["mrr", "amri"], weights=weights, groups=GROUPS)
    assert sorted(results.by_group) == [0, 1, 3]
    kept = GROUPS != 2
    subset = Ranks(HEAD.optimistic[kept], HEAD.pessimistic[kept], HEAD.num_candidates[kept])
    for key, value in evaluate(subset, metrics=["mrr", "amri"]).items():
        assert results[key] == pytest.approx(value, rel=1e-13)


def test_groups_for_several_sides() -> None:
    tail_groups = np.random.default_rng(6).integers(0, 3, size=len(TAIL))
    results = evaluate(
        {"head": HEAD, "tail": TAIL},
        metrics=["mrr"],
        groups={"head": GROUPS, "tail": tail_groups},
        average="macro",
    )
    group = results.by_group[3]  # only the head side has group 3
    assert group.sides == ("head", "both")
    assert group["head.mrr"] == group["both.mrr"]
    labels = np.concatenate([GROUPS, tail_groups])
    both = evaluate(BOTH, metrics=["mrr"], groups=labels, average="macro")
    assert results["both.mrr"] == pytest.approx(both["mrr"], rel=1e-14)


def test_null_quantities_are_computed_once_per_candidate_multiset(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[int] = []
    original = InverseHarmonicMeanRank._expected_value

    def counting(self: RankBasedMetric, tasks: Tasks) -> object:
        calls.append(tasks.size)
        return original(self, tasks)  # type: ignore[arg-type]

    monkeypatch.setattr(InverseHarmonicMeanRank, "_expected_value", counting)
    # head and tail with the same candidate counts (in another order): one multiset, plus both
    tail = Ranks(HEAD.optimistic[::-1], HEAD.pessimistic[::-1], HEAD.num_candidates[::-1])
    evaluate({"head": HEAD, "tail": tail}, metrics=["mrr", "amrr", "zmrr", "hits@1"])
    assert calls == [len(HEAD), 2 * len(HEAD)]


# --- export --------------------------------------------------------------------------------------


def test_flat_dict_and_json(results: EvaluationResults) -> None:
    flat = results.to_dict()
    assert flat == results.to_flat_dict() == dict(results.items())
    with_statistics = results.to_dict(statistics=True)
    key = "tail.realistic.inverse_harmonic_mean_rank"
    assert with_statistics[f"{key}.z_score"] == results.z_score(key)
    assert "both.realistic.standard_deviation.expected_value" not in with_statistics
    document = json.loads(results.to_json(indent=1))
    assert document[key] == flat[key]
    assert document[f"{key}.std"] == results.std(key)


def test_group_results_in_json() -> None:
    labels = np.where(GROUPS % 2 == 0, "even", "odd")
    results = evaluate(HEAD, metrics=["mrr"], groups=labels, rank_types="realistic")
    document = json.loads(results.to_json(statistics=False))
    assert set(document["groups"]) == {"even", "odd"}
    key = "both.realistic.inverse_harmonic_mean_rank"
    assert document["groups"]["odd"] == {key: results.by_group["odd"][key]}
    assert document[key] == results["mrr"]


def test_undefined_values_are_null_in_json() -> None:
    single = evaluate([1.0, 1.0], [1, 1], metrics=["amri", "mrr"])
    assert math.isnan(single["amri"])
    assert single.expected_value("amri") is None
    document = json.loads(single.to_json())
    assert document["both.realistic.adjusted_arithmetic_mean_rank_index"] is None
    assert document["both.realistic.inverse_harmonic_mean_rank"] == 1.0


def test_text_table_is_aligned(results: EvaluationResults) -> None:
    # the rows, without the footnotes and the results' notes (a metric left out of a rank type)
    lines = [
        line
        for line in str(results).splitlines()
        if not line.startswith("[") and line not in results.notes
    ]
    header = ["side", "rank", "type", "metric", "value", "expected", "std", "z-score"]
    assert lines[0].split() == header
    assert len(lines) == len(results) + 1
    value_end = lines[0].index("value") + len("value")
    for line in lines[1:]:
        assert line[value_end - 1] != " "  # right-aligned numbers end in the header's column
    assert "EvaluationResults(sides=['head', 'tail', 'both']" in repr(results)


def test_dataframe(results: EvaluationResults) -> None:
    pandas = pytest.importorskip("pandas")
    frame = results.to_df()
    assert isinstance(frame, pandas.DataFrame)
    columns = ["side", "rank_type", "metric", "value", "expected_value", "std", "z_score"]
    assert list(frame.columns) == columns
    assert len(frame) == len(results)
    row = frame[(frame.side == "tail") & (frame.rank_type == "realistic")]
    row = row[row.metric == "inverse_harmonic_mean_rank"].iloc[0]
    assert row.value == results["tail.mrr"]
    grouped = evaluate(HEAD, metrics=["mrr"], groups=GROUPS).to_df(groups=True)
    assert list(grouped.group.unique()) == ["micro", 0, 1, 2, 3]


def test_dataframe_without_pandas(
    results: EvaluationResults, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"pip install 'rankstats\[pandas\]'"):
        results.to_df()


# --- bad input -----------------------------------------------------------------------------------

GOOD = {"head": HEAD, "tail": TAIL}
INPUT_ERRORS = [
    # (ranks, num_candidates, keyword arguments, exception, message pattern)
    (GOOD, None, {"rank_types": ["realistc"]}, ValueError, r"rank_types must be among .*realistc"),
    (
        [1.0, 2.0],
        [3, 3],
        {"rank_types": ["expected"]},
        ValueError,
        r"'expected' needs the optimistic and pessimistic ranks .* input has \['realistic'\]",
    ),
    (GOOD, None, {"metrics": ["mrrr"]}, UnknownMetricError, r"unknown metric 'mrrr'"),
    (GOOD, None, {"metrics": []}, ValueError, r"metrics must name at least one metric"),
    (GOOD, None, {"average": "mean"}, ValueError, r"average must be 'micro' or 'macro'"),
    ([1.0, 2.0], None, {"metrics": ["amri"]}, ValueError, r"needs num_candidates"),
    (HEAD, None, {"metrics": ["count"], "weights": np.ones(60)}, ValueError, r"support weights"),
    (HEAD, None, {"weights": np.ones(3)}, ValueError, r"weights must have one entry per rank"),
    (HEAD, None, {"groups": np.ones(3)}, ValueError, r"groups must have one label per rank \(60\)"),
    (
        HEAD,
        None,
        {"groups": np.array([{1}, {2}] * 30, dtype=object)},
        TypeError,
        r"group labels must be hashable",
    ),
    (HEAD, HEAD.num_candidates, {}, ValueError, r"num_candidates is given twice"),
    (
        {"head": HEAD, "optimistic": [1]},
        None,
        {},
        ValueError,
        r"either rank types .* or side names, not both",
    ),
    ({"head": HEAD, "both": TAIL}, None, {}, ValueError, r"side 'both' holds all ranks together"),
    ({"expected": [1.0]}, None, {}, ValueError, r"cannot be given for the rank type 'expected'"),
    (
        {"head": [1.0, 5.0], "tail": [1.0]},
        {"head": [3, 3], "tail": [2]},
        {},
        ValueError,
        r"side 'head': ranks must not exceed their num_candidates, got rank 5\.0 > num_cand",
    ),
    ({"head": HEAD, "tail": [1.0]}, None, {}, ValueError, r"every side must give the same kinds"),
    (GOOD, {"left": [1]}, {}, ValueError, r"num_candidates has keys \['left'\] that are not sides"),
    (
        {"optimistic": [1, 2], "pessimistic": [1, 3], "realistic": [1.0, 2.0]},
        None,
        {},
        ValueError,
        r"ranks\['realistic'\] must be the mean of the optimistic and pessimistic ranks",
    ),
    ({"optimistic": [1, 2], "realistic": [1.0]}, None, {}, ValueError, r"one entry per task"),
    ("1 2 3", None, {}, TypeError, r"ranks must be an array-like of numbers, got str"),
]


@pytest.mark.parametrize(("ranks", "candidates", "kwargs", "error", "match"), INPUT_ERRORS)
def test_bad_input(
    ranks: object, candidates: object, kwargs: dict[str, object], error: type, match: str
) -> None:
    with pytest.raises(error, match=match):
        evaluate(ranks, candidates, **kwargs)  # type: ignore[arg-type]


def test_inputs_are_not_mutated() -> None:
    ranks = np.array([3.0, 1.0, 2.5])
    candidates = np.array([5, 4, 6])
    weights = np.array([1.0, 2.0, 0.5])
    groups = np.array([2, 1, 2])
    copies = [a.copy() for a in (ranks, candidates, weights, groups)]
    evaluate(ranks, candidates, weights=weights, groups=groups, metrics=["mrr", "amri"])
    for before, after in zip(copies, (ranks, candidates, weights, groups), strict=True):
        np.testing.assert_array_equal(before, after)


# --- agreement with PyKEEN -----------------------------------------------------------------------


def test_agreement_with_pykeen_on_nations() -> None:
    """PyKEEN 1.11.1's results on the Nations test ranks of a TransE model.

    PyKEEN computed in float32, hence the tolerance. Every key of PyKEEN's flat dictionary is in
    ``to_flat_dict()``, the adjusted and z-scored metrics of optimistic and pessimistic ranks
    included. PyKEEN's keys ``adjusted_hits_at_k`` and ``z_hits_at_k`` are for its default
    k = 10, and ``to_flat_dict`` spells them its way too. The median's null model differs for an
    even number of ranks (PyKEEN uses the upper median's moments), but PyKEEN's results hold no
    null statistics, so no value here is affected.
    """
    arrays = np.load(DATA / "nations_transe_ranks.npz")
    reference = json.loads((DATA / "nations_transe_pykeen_results.json").read_text())
    sides = {
        side: Ranks(
            arrays[f"{side}.optimistic"],
            arrays[f"{side}.pessimistic"],
            arrays[f"num_candidates.{side}"],
        )
        for side in ("head", "tail")
    }
    for side, ranks in sides.items():
        np.testing.assert_array_equal(ranks.realistic, arrays[f"{side}.realistic"])
    names = sorted({key.rsplit(".", 1)[1] for key in reference})
    results = evaluate(sides, metrics=names, rank_types=["optimistic", "realistic", "pessimistic"])
    flat = results.to_flat_dict()
    assert set(reference) <= set(flat)
    for key, expected in reference.items():
        assert flat[key] == pytest.approx(expected, rel=2e-6, abs=1e-6), key
        assert results[key] == flat[key]
    assert len(reference) == 225
    # PYKEEN_METRICS are the same metrics: evaluating them gives every PyKEEN key
    assert {metric_resolver.make(name) for name in names} == {
        metric_resolver.make(name) for name in PYKEEN_METRICS
    }
    default = evaluate(
        sides, metrics=PYKEEN_METRICS, rank_types=["optimistic", "realistic", "pessimistic"]
    )
    assert set(reference) <= set(default.to_flat_dict())


def test_derived_metrics_of_optimistic_and_pessimistic_ranks() -> None:
    """The adjusted and z metrics of every rank type, as direct calls give them."""
    ranks = Ranks([1, 2, 4, 1], [3, 2, 6, 1], [5, 5, 9, 2])
    results = evaluate(ranks, metrics=["amri", "zmrr", "adjusted_hits_at_1", "agmri"])
    for rank_type in ("optimistic", "realistic", "pessimistic"):
        for name in ("amri", "zmrr", "adjusted_hits_at_1", "agmri"):
            metric = metric_resolver.make(name)
            direct = metric(ranks[rank_type], ranks.num_candidates)
            assert results[f"{rank_type}.{name}"] == pytest.approx(direct, rel=1e-12), name
            row = results.row(f"{rank_type}.{name}")
            assert row.method == "exact"
            assert row.expected_value == pytest.approx(0.0, abs=1e-12)


def test_group_labels_of_different_types_stay_apart() -> None:
    # numpy would turn [1, "1"] into two equal strings; labels compare as Python objects
    results = evaluate(
        np.array([1.0, 2.0, 3.0]), np.array([5, 5, 5]), groups=[1, "1", 1], metrics=["mrr"]
    )
    assert list(results.by_group) == [1, "1"]
    assert results.by_group[1]["mrr"] == pytest.approx((1 + 1 / 3) / 2)
    assert results.by_group["1"]["mrr"] == pytest.approx(1 / 2)


def test_tensor_ranks_with_one_candidate_count() -> None:
    """One candidate count stands for every rank of a tensor (np.size read its size method)."""
    torch = pytest.importorskip("torch")
    ranks, weights = torch.tensor([1, 2, 3]), torch.tensor([1.0, 2.0, 1.0])
    expected = evaluate(np.array([1, 2, 3]), 3, weights=np.array([1.0, 2.0, 1.0]))["mrr"]
    assert evaluate(ranks, 3, weights=weights)["mrr"] == expected
    assert evaluate({"head": ranks, "tail": ranks}, 3, weights=weights)["head.mrr"] == expected
    accumulator = RankAccumulator()
    accumulator.update(ranks, 3, weights=weights)
    assert accumulator.compute()["mrr"] == expected
    # and for a 2-D array, in its shape
    assert evaluate(np.array([[1, 2], [3, 1]]), 3)["mrr"] == evaluate([1, 2, 3, 1], 3)["mrr"]


def test_tensor_weights_and_empty_tensor_batches() -> None:
    """Tensors are counted by their shape: weights with one count, an empty batch skipped."""
    torch = pytest.importorskip("torch")
    mean_rank = metric_resolver.make("mr")
    assert mean_rank.moments(5, weights=torch.tensor([1.0, 2.0, 3.0])) == mean_rank.moments(
        5, weights=np.array([1.0, 2.0, 3.0])
    )
    accumulator = RankAccumulator()
    accumulator.update(torch.tensor([], dtype=torch.int64))  # nothing to add
    accumulator.update(torch.tensor([1, 2]), 3)
    assert accumulator.compute()["mr"] == 1.5


def test_a_rank_type_or_side_the_results_lack_is_named() -> None:
    """The error had said to pass the metric in metrics=, though it was passed."""
    results = evaluate([1, 2, 3], 5, metrics=["mrr"])
    with pytest.raises(KeyError, match=r"no rank type 'expected' \(they hold 'realistic'\)"):
        results["expected.mrr"]
    with pytest.raises(KeyError, match=r"pass it in metrics="):  # a metric not asked for
        results["hits@10"]
    sides = evaluate({"head": [1, 2], "tail": [2, 3]}, 5, metrics=["mrr"])
    assert sides["both.mrr"] == evaluate([1, 2, 2, 3], 5, metrics=["mrr"])["mrr"]


def test_a_metric_left_out_of_a_rank_type_is_said_under_the_table() -> None:
    """The median has no exact expectation over tie-breaking: its 'expected' row is left out,
    and the results' notes (under every table) say so; a table of that rank type alone had been
    a header with nothing under it."""
    pairs = {"optimistic": [1, 2], "pessimistic": [3, 2]}
    alone = evaluate(pairs, 10, metrics=["median_rank"], rank_types=["expected"])
    assert len(alone) == 0
    note = "no expected row for median_rank: median_rank has no exact expectation over tie-breaking"
    assert alone.notes == (note,)
    assert note in str(alone)
    both = evaluate(pairs, 10, metrics=["mrr", "median_rank"])
    assert note in both.notes
    assert "expected.mrr" in both
