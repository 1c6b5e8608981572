"""The reports of a :class:`rankstats.Comparison`: tables, JSON, CSV, pandas, figure."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from rankstats import Comparison, compare


@pytest.fixture(scope="module")
def comparison() -> Comparison:
    rng = np.random.default_rng(0)
    good = rng.integers(1, 4, size=300).astype(float)
    middle = good + rng.integers(0, 3, size=300)
    bad = middle + rng.integers(2, 8, size=300)
    groups = np.repeat(["r_1", "r_2"], 150)
    return compare(
        {"good": good, "mid_dle": middle, "bad": bad},
        metrics=["mrr", "mr", "hits@1"],
        groups=groups,
        per_group=True,
        n_resamples=999,
        seed=7,
    )


def test_lookup(comparison: Comparison) -> None:
    pair = comparison.pair("mrr", "good", "bad")
    reverse = comparison.pair("mrr", "bad", "good")
    assert reverse.difference == -pair.difference
    assert (reverse.lower, reverse.upper) == (-pair.upper, -pair.lower)
    assert pair.significant()
    with pytest.raises(KeyError, match="not in this comparison"):
        comparison.value("gmr", "good")
    with pytest.raises(KeyError, match="model 'nope'"):
        comparison.value("mrr", "nope")


def test_paper_tables_mark_best_and_significance(comparison: Comparison) -> None:
    markdown = comparison.to_markdown()
    lines = markdown.splitlines()
    assert lines[0].startswith("| Model | MRR ↑ | MR ↓ | Hits@1 ↑")
    good = next(line for line in lines if line.startswith("| (a) good"))
    bad = next(line for line in lines if line.startswith("| (c) bad"))
    assert good.count("**") == 6  # best on all three metrics
    assert "<sup>bc</sup>" in good
    assert "<sup>" not in bad
    for phrase in ("randomization test", "999 Monte-Carlo resamples", "seed 7", "Holm", "BCa"):
        assert phrase in markdown
    latex = comparison.to_latex()
    assert r"\textbf{" in latex
    assert "$^{bc}$" in latex
    assert r"\toprule" in latex
    assert r"mid\_dle" in latex
    assert "seed 7" in latex
    assert "[" in comparison.to_markdown(intervals=True)


def test_plain_table(comparison: Comparison) -> None:
    text = str(comparison)
    assert "a - b" in text
    assert "group 'r_1'" in text
    assert "stratified by group" in text
    assert comparison.describe() in text


def test_json_and_csv(comparison: Comparison) -> None:
    data = json.loads(comparison.to_json())
    assert data["settings"]["seed"] == 7
    assert data["settings"]["correction"] == "holm"
    assert set(data["by_group"]) == {"r_1", "r_2"}
    assert len(data["pairs"]) == 3 * 3
    rows = list(csv.DictReader(io.StringIO(comparison.to_csv())))
    assert len(rows) == (3 * 3 + 3 * 3) * 3  # overall and two groups
    assert {row["kind"] for row in rows} == {"model", "pair"}
    pair = next(r for r in rows if r["kind"] == "pair" and r["group"] == "")
    assert float(pair["p_value"]) > 0


def test_frame(comparison: Comparison) -> None:
    pytest.importorskip("pandas")
    frame = comparison.to_frame()
    assert list(frame.columns)[:4] == ["group", "metric", "kind", "model"]
    assert len(frame) == 54


def test_figure(comparison: Comparison) -> None:
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from rankstats.plot import plot_comparison

    ax = plot_comparison(comparison, "mr", ax=Figure().subplots())
    assert ax.get_ylabel() == "Mean Rank (MR)"
    assert ax.get_title().startswith("MR: 95% intervals, * p < 0.05 (Holm)")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["good", "mid_dle", "bad"]
    # every pair differs significantly: three bars with a star each
    assert [t.get_text() for t in ax.texts] == ["*", "*", "*"]
    lines = ax.get_lines()
    assert len(lines) >= 3
    first = plot_comparison(comparison, ax=Figure().subplots())
    assert first.get_ylabel() == "Mean Reciprocal Rank (MRR)"


@pytest.mark.parametrize("alpha", [5, -1, 0, 1, float("nan")])
@pytest.mark.parametrize("method", ["to_table", "to_markdown", "to_latex", "describe"])
def test_alpha_must_be_a_fraction(comparison: Comparison, method: str, alpha: float) -> None:
    with pytest.raises(ValueError, match=r"alpha must be a fraction in \(0, 1\).*got"):
        getattr(comparison, method)(alpha=alpha)
    with pytest.raises(TypeError, match="alpha must be a number"):
        getattr(comparison, method)(alpha="0.05")


def test_csv_refuses_a_group_labelled_like_the_overall_rows() -> None:
    """As evaluate's CSV: a group labelled "" would read as the overall rows."""
    from rankstats import compare

    found = compare(
        {"A": [1, 2, 3, 4], "B": [2, 1, 4, 3]},
        groups=["", "", "x", "x"],
        per_group=True,
        metrics=["mrr"],
        n_resamples=50,
        seed=1,
        interval=None,
    )
    with pytest.raises(ValueError, match=r"the group label '' would be written as empty cells"):
        found.to_csv()
    assert found.to_json()  # JSON tells them apart (null)
