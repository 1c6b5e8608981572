r"""Rendering a :class:`~rankstats.compare.results.Comparison`: text, paper tables, a figure.

The paper tables (Markdown, LaTeX) have one row per model and one column per metric, as results
tables in papers do: the best value of each metric in bold, and after each value the letters of the
models it beats significantly (corrected p-value below :math:`\alpha`), each model being named by
its letter in the first column. The test, resamples, seed, interval and correction are stated under
the table, so that the table can be read (and reproduced) on its own.
"""

from __future__ import annotations

import math
import re
import string
from typing import TYPE_CHECKING, Any, Literal

from rankstats.base import RankBasedMetric
from rankstats.compare.bootstrap import INTERVALS
from rankstats.compare.correction import CORRECTIONS

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

    from rankstats.compare.results import Comparison

__all__ = ["describe", "metric_label", "paper_table", "plain_table", "plot_comparison"]


def metric_label(metric: RankBasedMetric) -> str:
    """A short column label: the abbreviation in the metric's name, with the cut-off filled in.

    Examples
    --------
    >>> from rankstats import metric_resolver
    >>> metric_label(metric_resolver.make("mrr")), metric_label(metric_resolver.make("hits@3"))
    ('MRR', 'Hits@3')
    """
    name = metric.name
    k = getattr(metric, "k", None) or getattr(getattr(metric, "base", None), "k", None)
    if k is not None:
        name = re.sub(r"\s*(@|at)\s*K$", f"@{k}", name)
    match = re.search(r"\(([^()]+)\)\s*$", name)
    return match.group(1) if match else name


def _letters(count: int) -> list[str]:
    letters = string.ascii_lowercase
    return [
        letters[i] if i < 26 else f"{letters[i // 26 - 1]}{letters[i % 26]}" for i in range(count)
    ]


def describe(comparison: Comparison, alpha: float = 0.05) -> str:
    """One paragraph stating how the p-values and intervals were obtained."""
    s = comparison.settings
    if s.test == "randomization":
        how = (
            f"exact over all {s.n_resamples:,} swap patterns"
            if s.exact
            else f"{s.n_resamples:,} Monte-Carlo resamples, p = (b + 1)/(m + 1)"
        )
        test = f"two-sided paired randomization test ({how})"
    elif s.test == "bootstrap":
        test = f"two-sided paired bootstrap test ({s.n_bootstrap:,} resamples)"
    else:
        test = f"two-sided {comparison.test_name}"
    seed = "unseeded" if s.seed is None else f"seed {s.seed}"
    pairs = len(comparison.models) * (len(comparison.models) - 1) // 2
    family = "the pair of each metric" if pairs == 1 else f"the {pairs} pairs of each metric"
    if comparison.by_group:
        family += " (per-group results: across all groups and pairs of each metric)"
    correction = (
        "not corrected for multiple comparisons"
        if s.correction == "none"
        else f"corrected by {CORRECTIONS[s.correction]} over {family}"
    )
    parts = [f"P-values: {test}, {seed}; {correction}; significance at alpha = {alpha:g}."]
    if s.interval is not None:
        strata = ", stratified by group" if s.stratified else ""
        parts.append(
            f"Intervals: {s.confidence_level:.0%} {INTERVALS[s.interval]} paired bootstrap "
            f"({s.n_bootstrap:,} resamples{strata})."
        )
    weighted = ", weighted" if s.weighted else ""
    parts.append(f"{s.num_queries:,} queries, {s.rank_type} ranks{weighted}.")
    return " ".join(parts)


def _fmt(value: float | None, digits: int) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}f}"


def _fmt_p(value: float | None) -> str:
    if value is None or math.isnan(value):
        return "-"
    return f"{value:.2e}" if value < 1e-3 else f"{value:.4f}"


def _beats(comparison: Comparison, metric: RankBasedMetric, alpha: float) -> dict[str, list[int]]:
    """For each model, the indices of the models it beats significantly on ``metric``."""
    beaten: dict[str, list[int]] = {model: [] for model in comparison.models}
    index = {model: i for i, model in enumerate(comparison.models)}
    for pair in comparison.pairs:
        if pair.metric != metric.key or not pair.significant(alpha) or pair.difference == 0:
            continue
        a_better = (pair.difference > 0) == metric.increasing
        winner, loser = (pair.model_a, pair.model_b) if a_better else (pair.model_b, pair.model_a)
        beaten[winner].append(index[loser])
    return beaten


def paper_table(
    comparison: Comparison,
    style: Literal["markdown", "latex"],
    *,
    alpha: float = 0.05,
    digits: int = 4,
    intervals: bool = False,
) -> str:
    """A results table for a paper, in Markdown or LaTeX (booktabs)."""
    letters = _letters(len(comparison.models))
    latex = style == "latex"
    header = ["Model"]
    columns: list[list[str]] = []
    for metric in comparison.metrics:
        arrow = (
            ("$\\uparrow$" if metric.increasing else "$\\downarrow$")
            if latex
            else ("↑" if metric.increasing else "↓")
        )
        label = metric_label(metric)
        header.append(f"{_latex_escape(label) if latex else label} {arrow}")
        values = [comparison.value(metric, model) for model in comparison.models]
        finite = [v.value for v in values if not math.isnan(v.value)]
        best = (max(finite) if metric.increasing else min(finite)) if finite else math.nan
        beats = _beats(comparison, metric, alpha)
        cells = []
        for model, value in zip(comparison.models, values, strict=True):
            text = _fmt(value.value, digits)
            if round(value.value, digits) == round(best, digits):
                text = f"\\textbf{{{text}}}" if latex else f"**{text}**"
            marks = "".join(letters[i] for i in sorted(beats[model]))
            if marks:
                text += f"$^{{{marks}}}$" if latex else f"<sup>{marks}</sup>"
            if intervals and value.lower is not None and value.upper is not None:
                text += f" [{_fmt(value.lower, digits)}, {_fmt(value.upper, digits)}]"
            cells.append(text)
        columns.append(cells)
    rows = []
    for i, model in enumerate(comparison.models):
        name = _latex_escape(model) if latex else model
        rows.append([f"({letters[i]}) {name}", *(column[i] for column in columns)])
    note = (
        "Bold: best value per metric. Superscripts: the models (by letter) a value is "
        "significantly better than. " + describe(comparison, alpha)
    )
    if latex:
        spec = "l" + "r" * len(comparison.metrics)
        body = "\n".join(" & ".join(row) + r" \\" for row in rows)
        return "\n".join(
            [
                r"\begin{table}[t]",
                r"\centering",
                rf"\begin{{tabular}}{{{spec}}}",
                r"\toprule",
                " & ".join(header) + r" \\",
                r"\midrule",
                body,
                r"\bottomrule",
                r"\end{tabular}",
                rf"\caption{{{_latex_escape(note)}}}",
                r"\end{table}",
            ]
        )
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n\n" + note


def _latex_escape(text: str) -> str:
    replacements = {"&": r"\&", "%": r"\%", "_": r"\_", "#": r"\#", "$": r"\$"}
    return "".join(replacements.get(char, char) for char in text)


def _grid(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(
            cell.ljust(w) if i < 3 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    )


def plain_table(comparison: Comparison, alpha: float = 0.05) -> str:
    """The plain-text report: the models' values, then the pairs, then how they were obtained."""
    digits = 4
    models = [["metric", "model", "", "value", "lower", "upper"]]
    for value in comparison.values:
        models.append(
            [
                value.metric,
                value.model,
                "",
                _fmt(value.value, digits),
                _fmt(value.lower, digits),
                _fmt(value.upper, digits),
            ]
        )
    pairs = [
        ["metric", "model a", "model b", "a - b", "lower", "upper", "effect", "p", "p adj", ""]
    ]
    for pair in comparison.pairs:
        pairs.append(
            [
                pair.metric,
                pair.model_a,
                pair.model_b,
                _fmt(pair.difference, digits),
                _fmt(pair.lower, digits),
                _fmt(pair.upper, digits),
                _fmt(pair.effect_size, 3),
                _fmt_p(pair.p_value),
                _fmt_p(pair.p_adjusted),
                "*" if pair.significant(alpha) else "",
            ]
        )
    parts = [_grid(models), "", _grid(pairs)]
    for label, group in comparison.by_group.items():
        parts += ["", f"group {label!r}:", _grid(_pair_rows(group, alpha, digits))]
    parts += ["", "* significant after correction. " + describe(comparison, alpha)]
    return "\n".join(parts)


def _pair_rows(comparison: Comparison, alpha: float, digits: int) -> list[list[str]]:
    rows = [["metric", "model a", "model b", "a - b", "p", "p adj", ""]]
    for pair in comparison.pairs:
        rows.append(
            [
                pair.metric,
                pair.model_a,
                pair.model_b,
                _fmt(pair.difference, digits),
                _fmt_p(pair.p_value),
                _fmt_p(pair.p_adjusted),
                "*" if pair.significant(alpha) else "",
            ]
        )
    return rows


def plot_comparison(comparison: Comparison, alpha: float = 0.05, ax: Any = None) -> Figure:
    """Each model's value of each metric with its interval; significant pairs joined by a bar.

    Needs matplotlib. With ``ax`` (one axes, or one per metric) it draws there; otherwise it makes
    a new figure with one panel per metric.
    """
    from rankstats.plot import _import_pyplot

    metrics = comparison.metrics
    if ax is None:
        plt = _import_pyplot()
        figure, axes = plt.subplots(
            1, len(metrics), figsize=(3.2 * len(metrics), 3.2), squeeze=False
        )
        panels = list(axes[0])
    else:
        panels = list(ax) if isinstance(ax, list | tuple) else [ax]
        if len(panels) != len(metrics):
            raise ValueError(
                f"ax must hold one axes per metric ({len(metrics)}), got {len(panels)}"
            )
        figure = panels[0].figure
    positions = list(range(len(comparison.models)))
    for panel, metric in zip(panels, metrics, strict=True):
        values = [comparison.value(metric, model) for model in comparison.models]
        centre = [v.value for v in values]
        low = [v.value - (v.lower if v.lower is not None else v.value) for v in values]
        high = [(v.upper if v.upper is not None else v.value) - v.value for v in values]
        panel.errorbar(positions, centre, yerr=[low, high], fmt="o", capsize=4)
        panel.set_xticks(positions, list(comparison.models), rotation=30, ha="right")
        panel.set_title(metric_label(metric))
        panel.set_ylabel(metric.name)
        top = max((v.upper if v.upper is not None else v.value) for v in values)
        bottom = min((v.lower if v.lower is not None else v.value) for v in values)
        step = 0.08 * ((top - bottom) or 1.0)
        level = top + step
        index = {model: i for i, model in enumerate(comparison.models)}
        for pair in comparison.pairs:
            if pair.metric != metric.key or not pair.significant(alpha):
                continue
            a, b = index[pair.model_a], index[pair.model_b]
            panel.plot([a, a, b, b], [level - step / 3, level, level, level - step / 3], color="k")
            panel.text((a + b) / 2, level, "*", ha="center", va="bottom")
            level += step
    figure.suptitle(
        f"{comparison.settings.confidence_level:.0%} intervals; * p < {alpha:g} (corrected)"
    )
    result: Figure = figure
    return result
