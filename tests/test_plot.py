"""Tests of rankstats.plot: the null-distribution figure is drawn, saved, and marks what it says."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rankstats import HitsAtK, InverseHarmonicMeanRank, metric_resolver
from rankstats.evaluation import evaluate

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def figure() -> Any:
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    return Figure(figsize=(5, 3))


def _vertical_lines(ax: Any) -> dict[str, float]:
    """The x position of every vertical line on the axes, by its legend label."""
    found = {}
    for line in ax.get_lines():
        xs = np.asarray(line.get_xdata(), dtype=float)
        if xs.size == 2 and xs[0] == xs[1]:
            found[line.get_label()] = float(xs[0])
    return found


def test_renders_a_png_with_expected_and_observed_marked(figure: Any, tmp_path: Path) -> None:
    from rankstats.plot import plot_null_distribution

    candidates = [5, 10, 20] * 20
    ax = plot_null_distribution(
        "mrr", candidates, observed=0.5, num_samples=2_000, generator=0, ax=figure.subplots()
    )
    path = tmp_path / "null.png"
    figure.savefig(path, dpi=50)
    assert path.read_bytes().startswith(PNG_SIGNATURE)
    assert path.stat().st_size > 1_000

    expected = InverseHarmonicMeanRank().expected_value(candidates)
    std = InverseHarmonicMeanRank().std(candidates)
    lines = _vertical_lines(ax)
    (observed_label,) = [label for label in lines if label.startswith("observed")]
    (expected_label,) = [label for label in lines if label.startswith("expected")]
    assert lines[observed_label] == 0.5
    assert lines[expected_label] == pytest.approx(expected, rel=1e-12)
    assert "exact" in expected_label
    assert f"z = {(0.5 - expected) / std:+.1f}" in observed_label
    assert ax.get_xlabel() == "Mean Reciprocal Rank (MRR)"
    assert any(line.get_label() == "normal approximation" for line in ax.get_lines())


def test_z_is_that_of_the_results_table(figure: Any) -> None:
    from rankstats.plot import plot_null_distribution

    ax = plot_null_distribution(
        "mr", [10] * 30, observed=2.0, num_samples=500, generator=1, ax=figure.subplots()
    )
    (label,) = [label for label in _vertical_lines(ax) if label.startswith("observed")]
    # (M - E) / std, not re-oriented: a mean rank better than chance has a negative z-score
    z = evaluate([2.0] * 30, [10] * 30, metrics=["mr"]).z_score("mr")
    assert f"z = {z:+.1f}" in label
    assert "z = -" in label


def test_metric_without_closed_form_uses_the_samples(figure: Any) -> None:
    from rankstats.plot import plot_null_distribution

    weights = np.arange(1, 11, dtype=float)  # the weighted median has no closed form
    ax = plot_null_distribution(
        "median_rank",
        [7] * 10,
        weights=weights,
        num_samples=500,
        generator=2,
        ax=figure.subplots(),
    )
    labels = list(_vertical_lines(ax))
    assert any("Monte-Carlo" in label for label in labels)
    assert not any(line.get_label() == "normal approximation" for line in ax.get_lines())


def test_accepts_instances_and_draws_with_pyplot(tmp_path: Path) -> None:
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rankstats.plot import plot_null_distribution

    ax = plot_null_distribution(metric_resolver.make("hits@3"), [10] * 8, num_samples=200)
    try:
        ax.figure.savefig(tmp_path / "hits.png", dpi=40)
        assert (tmp_path / "hits.png").read_bytes().startswith(PNG_SIGNATURE)
    finally:
        plt.close(ax.figure)


def test_same_seed_same_figure(figure: Any) -> None:
    from rankstats.plot import plot_null_distribution

    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    heights = []
    for _ in range(2):
        ax = plot_null_distribution(
            "mrr", [10] * 5, num_samples=300, generator=3, ax=Figure().subplots()
        )
        heights.append([patch.get_height() for patch in ax.patches])
    assert heights[0] == heights[1]


def test_missing_matplotlib_is_a_clear_import_error() -> None:
    code = (
        "import sys; sys.modules['matplotlib'] = None; sys.modules['matplotlib.pyplot'] = None\n"
        "import rankstats.plot\n"
        "try:\n"
        "    rankstats.plot.plot_null_distribution('mrr', [3, 4])\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert "rankstats.plot needs matplotlib" in result.stdout
    assert "pip install 'rankstats[plot]'" in result.stdout


def test_importing_rankstats_does_not_import_plotting() -> None:
    code = (
        "import sys, rankstats; print('rankstats.plot' in sys.modules, 'matplotlib' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.split() == ["False", "False"]


# --- the Hits@k curve, the rank histogram, and the real k in every label ---------------------


def test_null_figure_of_hits_says_the_real_k(figure: Any) -> None:
    from rankstats.plot import plot_null_distribution

    ax = plot_null_distribution(
        "hits@10", [20] * 30, num_samples=300, generator=0, ax=figure.subplots()
    )
    assert ax.get_xlabel() == "Hits@10"
    assert ax.get_title() == "Hits@10 under the null model, 30 tasks"
    assert "K" not in ax.get_title()


def test_hits_curve_draws_values_expectation_and_band(figure: Any) -> None:
    from rankstats.plot import hits_metrics, plot_hits_at_k

    ranks, candidates = [1, 2, 8, 3, 30, 4], [10, 10, 20, 20, 40, 40]
    results = evaluate(ranks, candidates, metrics=hits_metrics(6))
    ax = plot_hits_at_k(results, ax=figure.subplots())
    assert ax.get_title() == "Hits@k for k = 1..6 (realistic ranks)"
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("k", "Hits@k")
    curve, expectation = ax.get_lines()[:2]
    np.testing.assert_array_equal(curve.get_xdata(), np.arange(1, 7))
    for k, value, expected in zip(
        curve.get_xdata(), curve.get_ydata(), expectation.get_ydata(), strict=True
    ):
        assert value == pytest.approx(HitsAtK(k=int(k))(ranks))
        assert expected == pytest.approx(HitsAtK(k=int(k)).expected_value(candidates), rel=1e-12)
    (band,) = ax.collections
    lower, upper = (
        band.get_paths()[0].vertices[:, 1].min(),
        band.get_paths()[0].vertices[:, 1].max(),
    )
    std = HitsAtK(k=1).std(candidates)
    assert lower == pytest.approx(max(0.0, HitsAtK(k=1).expected_value(candidates) - 2 * std))
    assert upper <= 1.0
    assert "null ±2 std" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_hits_curve_of_several_results_and_without_hits(figure: Any) -> None:
    from rankstats.plot import hits_metrics, plot_hits_at_k

    runs = {
        name: evaluate(ranks, [10] * 4, metrics=hits_metrics(3))
        for name, ranks in {"good": [1, 1, 2, 1], "bad": [9, 7, 10, 8]}.items()
    }
    ax = plot_hits_at_k(runs, ax=figure.subplots())
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "good" in labels
    assert "bad" in labels
    with pytest.raises(ValueError, match="no Hits@k rows"):
        plot_hits_at_k(evaluate([1], [3], metrics=["mrr"]), ax=figure.subplots())
    with pytest.raises(ValueError, match="max_k must be a positive integer"):
        hits_metrics(0)


def test_rank_histogram_is_log_scaled(figure: Any) -> None:
    from rankstats.plot import plot_rank_histogram

    ranks = [1, 1, 2, 3, 10, 100, 1000]
    ax = plot_rank_histogram({"a": ranks, "b": ranks[:3]}, bins=5, ax=figure.subplots())
    assert ax.get_xscale() == "log"
    assert ax.get_xlabel() == "realistic rank (log scale)"
    assert ax.get_ylabel() == "number of ranking tasks"
    assert ax.get_title() == "Histogram of 10 realistic ranks"
    assert len(ax.patches) == 2  # one outlined histogram per set
    with pytest.raises(ValueError, match="finite numbers >= 1"):
        plot_rank_histogram([0.5, 2], ax=figure.subplots())


@pytest.mark.parametrize(
    ("ranks", "match"),
    [
        ([1e300, 2.0], r"ranks must be at most 2\*\*53 .*got 1e\+300 at index 0"),
        ({"a": [2.0, np.inf]}, r"ranks\['a'\] must be finite numbers >= 1, got inf at index 1"),
        ([], "ranks must not be empty"),
        ({"a": [1, 2], "b": [np.nan]}, r"ranks\['b'\] must be finite numbers >= 1, got nan"),
    ],
)
def test_rank_histogram_validates_ranks_as_evaluate_does(
    figure: Any, ranks: Any, match: str
) -> None:
    from rankstats.plot import plot_rank_histogram

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow in matplotlib's log scale, no other warning
        with pytest.raises(ValueError, match=match):
            plot_rank_histogram(ranks, ax=figure.subplots())
        ax = plot_rank_histogram([1, 2**53], ax=figure.subplots())  # the largest rank is fine
        figure.canvas.draw()
    assert ax.get_title() == "Histogram of 2 realistic ranks"


def test_rank_histogram_refuses_what_evaluate_refuses(figure: Any) -> None:
    from rankstats.plot import plot_rank_histogram

    with pytest.raises(ValueError, match=r"2\*\*53") as refused:
        evaluate([1e300, 2.0], metrics=["mrr"])
    with pytest.raises(ValueError, match=r"2\*\*53") as plotted:
        plot_rank_histogram([1e300, 2.0], ax=figure.subplots())
    assert str(plotted.value) == str(refused.value)  # the same check, the same words


@pytest.mark.parametrize(
    ("name", "args", "message"),
    [
        # one draw: the sampled standard deviation had warned (ddof = 1) and been dropped
        ("plot_null_distribution", ("mad", [3, 5, 7]), "at least 2"),
        # nothing to draw: an empty figure titled "k = 1..0", or max() of an empty sequence
        ("plot_hits_at_k", ({},), "at least one result set"),
        ("plot_rank_histogram", ({},), "at least one array of ranks"),
        ("plot_hits_at_k", ({"a": None}, float("nan")), "band must be"),
        ("plot_hits_at_k", ({"a": None}, -2), "band must be"),
    ],
)
def test_nothing_to_draw_is_an_error(figure: Any, name: str, args: tuple, message: str) -> None:  # type: ignore[type-arg]
    import rankstats.plot

    plot = getattr(rankstats.plot, name)
    keywords: dict[str, Any] = {"ax": figure.subplots()}
    if name == "plot_null_distribution":
        keywords["num_samples"] = 1
    if len(args) == 2 and name == "plot_hits_at_k":
        args, keywords["band"] = args[:1], args[1]
    with pytest.raises(ValueError, match=message):
        plot(*args, **keywords)


def test_probe_faults_of_the_plots(figure: Any) -> None:
    """An interval one ulp short of its estimate drew no figure (negative error bar); alpha,
    observed and bins are checked as elsewhere; one count for every task takes num_ranks."""
    from rankstats import compare
    from rankstats.plot import plot_comparison, plot_null_distribution, plot_rank_histogram

    ranks = {"A": [2] * 10 + [3] * 11, "B": [2] * 11 + [3] * 10}
    found = compare(ranks, metrics=["std"], interval="percentile", seed=0, n_resamples=500)
    ax = plot_comparison(found, ax=figure.subplots())
    assert ax.get_title() == "std: 95% intervals, * p < 0.05 (Holm)"
    bare = compare(ranks, metrics=["mrr"], interval=None, seed=0)
    assert plot_comparison(bare, ax=figure.subplots()).get_title() == "MRR: * p < 0.05 (Holm)"
    with pytest.raises(ValueError, match=r"alpha must be a fraction in \(0, 1\)"):
        plot_comparison(found, alpha=5, ax=figure.subplots())
    for observed, error in (("a", TypeError), (float("nan"), ValueError)):
        with pytest.raises(error, match="observed must be"):
            plot_null_distribution("mrr", [10] * 5, observed=observed, ax=figure.subplots())
    drawn = plot_null_distribution(
        "mrr", 10, num_ranks=50, observed=0.4, num_samples=100, generator=0, ax=figure.subplots()
    )
    assert "observed 0.4 (z = +2.9)" in drawn.get_legend_handles_labels()[1]
    plot_rank_histogram([1, 2, 3], bins=np.int64(5), ax=figure.subplots())
