"""evaluate's null-model statistics: Monte-Carlo rows, notes, groups, scalar candidates, threads."""

from __future__ import annotations

import itertools
import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from rankstats import Ranks, evaluate, metric_resolver
from rankstats.null.sampling import (
    MomentAccumulator,
    monte_carlo_moments,
    null_moments_monte_carlo,
    sample_ranks,
)
from rankstats.progress import progress_bar, progress_enabled

CANDIDATES = np.array([3, 4, 2, 5])
RANKS = np.array([1.0, 2.0, 1.0, 4.0])


def _enumerate(metric_name: str, candidates: np.ndarray) -> tuple[float, float]:
    """Exact null mean and variance by enumerating every rank tuple."""
    metric = metric_resolver.make(metric_name)
    tuples = np.array(list(itertools.product(*(range(1, c + 1) for c in candidates))), float)
    values = np.asarray(metric._evaluate(tuples, candidates, None), dtype=float)
    return float(values.mean()), float(values.var())


# --- Monte-Carlo rows -----------------------------------------------------------------------------


def test_without_num_samples_the_row_says_why() -> None:
    results = evaluate(RANKS, CANDIDATES, metrics=["std", "mad", "mr"])
    for name in ("std", "mad"):
        row = results.row(name)
        assert row.expected_value is None
        assert row.method is None
        assert row.note is not None
        assert "num_samples=" in row.note
    assert results.row("mr").method == "exact"
    assert results.row("mr").note is None
    assert results.num_samples is None


def test_without_candidates_there_is_no_null_model() -> None:
    row = evaluate(RANKS, metrics=["mrr"]).row("mrr")
    assert row.method is None
    assert row.note is not None
    assert "num_candidates" in row.note


def test_weighted_median_note_names_weights() -> None:
    row = evaluate(RANKS, CANDIDATES, metrics=["median"], weights=[1, 2, 1, 1]).row("median")
    assert row.expected_value is None
    assert row.note is not None
    assert "weighted" in row.note


@pytest.mark.parametrize("name", ["std", "mad"])
def test_monte_carlo_rows_agree_with_enumeration(name: str) -> None:
    mean, variance = _enumerate(name, CANDIDATES)
    results = evaluate(RANKS, CANDIDATES, metrics=[name], num_samples=40_000, seed=3)
    row = results.row(name)
    assert row.method == "monte-carlo"
    assert row.standard_error is not None
    assert row.standard_error == pytest.approx(math.sqrt(row.variance / 40_000))  # type: ignore[operator]
    # within 5 standard errors of the exact mean, variance within 5 %
    assert abs(row.expected_value - mean) < 5 * row.standard_error  # type: ignore[operator]
    assert row.variance == pytest.approx(variance, rel=0.05)
    assert row.z_score == pytest.approx((row.value - row.expected_value) / math.sqrt(row.variance))  # type: ignore[operator]
    assert results.num_samples == 40_000
    assert results.seed == 3


def test_monte_carlo_is_reproducible_and_shares_one_draw() -> None:
    first = evaluate(RANKS, CANDIDATES, metrics=["std", "mad"], num_samples=500, seed=7)
    again = evaluate(RANKS, CANDIDATES, metrics=["std", "mad"], num_samples=500, seed=7)
    assert first.rows == again.rows
    other = evaluate(RANKS, CANDIDATES, metrics=["std", "mad"], num_samples=500, seed=8)
    assert first.row("std").expected_value != other.row("std").expected_value
    # one shared draw: the same as drawing once and evaluating both metrics on it (evaluate
    # draws for the candidate counts in sorted order)
    samples = sample_ranks(np.sort(CANDIDATES), 500, np.random.default_rng(7))
    for name in ("std", "mad"):
        metric = metric_resolver.make(name)
        values = np.asarray(metric._evaluate(samples, CANDIDATES, None))
        row = first.row(name)
        assert row.expected_value == pytest.approx(values.mean(), rel=1e-12)
        assert row.variance == pytest.approx(values.var(ddof=1), rel=1e-10)


def test_monte_carlo_leaves_closed_forms_alone() -> None:
    exact = evaluate(RANKS, CANDIDATES, metrics=["mr", "zmrr"])
    sampled = evaluate(RANKS, CANDIDATES, metrics=["mr", "zmrr"], num_samples=100, seed=0)
    assert exact.rows == sampled.rows


def test_monte_carlo_of_a_weighted_median_and_groups() -> None:
    results = evaluate(
        np.tile(RANKS, 2),
        np.tile(CANDIDATES, 2),
        metrics=["median"],
        weights=[1, 2, 1, 1, 3, 1, 1, 1],
        groups=[0, 0, 0, 0, 1, 1, 1, 1],
        num_samples=200,
        seed=1,
        average="macro",
    )
    row = results.row("median")
    assert row.method == "monte-carlo"
    groups = [results.by_group[g].row("median") for g in (0, 1)]
    assert all(g.method == "monte-carlo" for g in groups)
    assert row.expected_value == pytest.approx(sum(g.expected_value for g in groups) / 2)  # type: ignore[misc]
    errors = [g.standard_error for g in groups]
    assert row.standard_error == pytest.approx(math.hypot(*errors) / 2)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"num_samples": 0}, ValueError, "num_samples"),
        ({"num_samples": 1}, ValueError, "at least 2"),
        ({"num_samples": 2.5}, (TypeError, ValueError), "num_samples"),
        ({"num_samples": 10, "seed": "x"}, TypeError, "seed"),
        ({"num_samples": 10, "seed": -1}, ValueError, "seed"),
        ({"progress": "yes"}, TypeError, "progress"),
    ],
)
def test_bad_monte_carlo_arguments(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        evaluate(RANKS, CANDIDATES, metrics=["std"], **kwargs)


# --- the library's blocked sampler ----------------------------------------------------------------


def test_moment_accumulator_matches_two_pass() -> None:
    rng = np.random.default_rng(0)
    values = rng.normal(1e6, 1.0, size=(2, 1001))
    acc = MomentAccumulator(2)
    for start in range(0, 1001, 97):
        acc.add(values[:, start : start + 97])
    assert acc.count == 1001
    np.testing.assert_allclose(acc.mean, values.mean(axis=1), rtol=1e-15)
    np.testing.assert_allclose(acc.variance(), values.var(axis=1, ddof=1), rtol=1e-10)


def test_monte_carlo_moments_in_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    import rankstats.null.sampling as sampling

    metric = metric_resolver.make("std")
    whole = monte_carlo_moments([metric], CANDIDATES, None, 1000, np.random.default_rng(5))
    monkeypatch.setattr(sampling, "MAX_BLOCK_ELEMENTS", 4 * 7)  # 7 samples per block
    blocked = monte_carlo_moments([metric], CANDIDATES, None, 1000, np.random.default_rng(5))
    assert blocked[0].expected_value == pytest.approx(whole[0].expected_value, rel=1e-13)
    assert blocked[0].variance == pytest.approx(whole[0].variance, rel=1e-10)


def test_null_moments_monte_carlo_public() -> None:
    mr = metric_resolver.make("mr")
    estimate = null_moments_monte_carlo(mr, [3, 5], 20_000, seed=0)
    assert not isinstance(estimate, list)
    assert abs(estimate.expected_value - 2.5) < 5 * estimate.standard_error
    assert estimate.variance == pytest.approx((8 / 12 + 24 / 12) / 4, rel=0.05)
    several = null_moments_monte_carlo([mr, metric_resolver.make("mrr")], [3, 5], 10, seed=0)
    assert isinstance(several, list)
    assert len(several) == 2
    with pytest.raises(ValueError, match="at least 2"):
        null_moments_monte_carlo(mr, [3, 5], 1)
    with pytest.raises(ValueError, match="weights"):
        null_moments_monte_carlo(metric_resolver.make("count"), [3, 5], 10, weights=[1, 2])


# --- groups ---------------------------------------------------------------------------------------


def test_undefined_group_is_left_out_of_the_macro_average_with_a_note() -> None:
    results = evaluate(
        [1, 1, 1, 2], [1, 1, 3, 4], metrics=["amri", "mr"], groups=[0, 0, 1, 1], average="macro"
    )
    undefined = results.by_group[0].row("amri")
    assert math.isnan(undefined.value)
    assert undefined.note is not None
    assert "undefined" in undefined.note
    defined = results.by_group[1].row("amri")
    row = results.row("amri")
    assert row.value == defined.value
    assert row.expected_value == defined.expected_value
    assert row.variance == defined.variance
    assert row.note is not None
    assert "1 of 2 groups" in row.note
    # the mean rank is defined everywhere and averages both groups
    assert results["mr"] == pytest.approx((1.0 + 1.5) / 2)


def test_all_groups_undefined_is_nan_with_a_note() -> None:
    row = evaluate([1, 1], [1, 1], metrics=["amri"], groups=[0, 1], average="macro").row("amri")
    assert math.isnan(row.value)
    assert row.note is not None
    assert "every one of the 2 groups" in row.note


def test_weightless_groups_are_reported() -> None:
    results = evaluate(
        [1, 2, 1, 1],
        [2, 2, 3, 4],
        metrics=["mr"],
        groups=["a", "a", "b", "b"],
        weights=[0, 0, 1, 1],
    )
    assert list(results.by_group) == ["b"]
    assert len(results.notes) == 1
    assert "weight 0" in results.notes[0]
    assert "'a'" in results.notes[0]


# --- scalar candidate counts ----------------------------------------------------------------------


@pytest.mark.parametrize("count", [5, np.int64(5), np.array(5)])
def test_scalar_num_candidates_broadcasts(count: object) -> None:
    full = evaluate([1, 2, 3], [5, 5, 5], metrics=["mr", "amri"])
    assert evaluate([1, 2, 3], count, metrics=["mr", "amri"]).rows == full.rows
    sides = evaluate({"head": [1, 2, 3], "tail": [4, 1]}, count, metrics=["amri"])
    assert sides["tail.amri"] == evaluate([4, 1], [5, 5], metrics=["amri"])["amri"]
    pairs = {"optimistic": [1, 2, 3], "pessimistic": [2, 2, 4]}
    direct = Ranks([1, 2, 3], [2, 2, 4], [5, 5, 5])
    assert evaluate(pairs, count, metrics=["amri"]).rows == evaluate(direct, metrics=["amri"]).rows


def test_bad_scalar_num_candidates() -> None:
    with pytest.raises(ValueError, match="num_candidates"):
        evaluate([1, 2, 3], 2.5, metrics=["mr"])
    with pytest.raises(ValueError, match="num_candidates"):
        evaluate([1, 2, 3], 2, metrics=["mr"])  # a rank exceeds it


# --- progress and threads -------------------------------------------------------------------------


def test_progress_is_quiet_when_off_and_checks_tqdm(monkeypatch: pytest.MonkeyPatch) -> None:
    with progress_bar(2, "x", enabled=False) as bar:
        bar.update(2)
    assert progress_enabled(False) is False
    import rankstats.progress as progress

    monkeypatch.setattr(progress, "_has_tqdm", lambda: False)
    with pytest.raises(ImportError, match=r"rankstats\[progress\]"):
        progress_enabled(True)
    assert progress_enabled(None) is False


def test_progress_bar_runs(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("tqdm")
    results = evaluate(
        [1, 2, 3, 4],
        [4, 4, 4, 4],
        metrics=["std"],
        groups=[0, 0, 1, 1],
        num_samples=10,
        seed=0,
        progress=True,
    )
    assert results.row("std").method == "monte-carlo"


def test_evaluate_from_several_threads() -> None:
    rng = np.random.default_rng(0)
    candidates = rng.integers(1, 50, size=300)
    ranks = np.minimum(rng.integers(1, 50, size=300), candidates)
    groups = rng.integers(0, 5, size=300)
    names = ["mrr", "amri", "median", "std", "zmrr"]

    def run(_: int) -> dict[str, float]:
        return evaluate(
            ranks, candidates, metrics=names, groups=groups, num_samples=50, seed=1
        ).to_dict(statistics=True)

    reference = run(0)
    with ThreadPoolExecutor(max_workers=8) as pool:
        outcomes = list(pool.map(run, range(16)))
    assert all(outcome == reference for outcome in outcomes)
