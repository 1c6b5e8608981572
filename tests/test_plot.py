"""Tests of rankstats.plot: the null-distribution figure is drawn, saved, and marks what it says."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rankstats import InverseHarmonicMeanRank, metric_resolver
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
