r"""Rendering a :class:`~rankstats.compare.results.Comparison`: text, paper tables, a figure.

The paper tables (Markdown, LaTeX) have one row per model and one column per metric, as results
tables in papers do: the best value of each metric in bold, and after each value the letters of the
models it beats significantly (corrected p-value below :math:`\alpha`), each model being named by
its letter in the first column. The test, resamples, seed, interval and correction are stated under
the table, so that the table can be read (and reproduced) on its own.
"""

from __future__ import annotations

import math
import string
from typing import TYPE_CHECKING, Any, Literal

from rankstats.base import RankBasedMetric
from rankstats.compare.bootstrap import INTERVALS
from rankstats.compare.correction import CORRECTIONS
from rankstats.compare.inputs import check_fraction
from rankstats.evaluation.report import latex_escape, markdown_cell, metric_label, tabulate
from rankstats.validation import check_positive_int

if TYPE_CHECKING:  # pragma: no cover
    from rankstats.compare.results import Comparison, PairComparison

__all__ = ["describe", "paper_table", "plain_table"]


def _letters(count: int) -> list[str]:
    letters = string.ascii_lowercase
    return [
        letters[i] if i < 26 else f"{letters[i // 26 - 1]}{letters[i % 26]}" for i in range(count)
    ]


def describe(comparison: Comparison, alpha: float = 0.05) -> str:
    """One paragraph stating how the p-values and intervals were obtained, and the notes."""
    alpha = check_fraction(alpha, "alpha", 0.05)
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
    if s.family_groups:  # one group's comparison, corrected with the others
        family = (
            f"{'the pair' if pairs == 1 else f'the {pairs} pairs'} of each metric in each of the "
            f"{s.family_groups} groups ({pairs * s.family_groups} tests)"
        )
    elif comparison.by_group:
        family += " (per-group results: across all groups and pairs of each metric)"
    correction = (
        "not corrected for multiple comparisons"
        if s.correction == "none"
        else f"corrected by {CORRECTIONS[s.correction]} over {family}"
    )
    parts = [f"P-values: {test}, {seed}; {correction}; significance at alpha = {alpha:g}."]
    if s.interval is not None and s.num_queries < 2:
        parts.append("Intervals: none (a bootstrap needs at least two queries).")
    elif s.interval is not None:
        strata = ", stratified by group" if s.stratified else ""
        parts.append(
            f"Intervals: {s.confidence_level:.0%} {INTERVALS[s.interval]} paired bootstrap "
            f"({s.n_bootstrap:,} resamples{strata})."
        )
    weighted = ", weighted" if s.weighted else ""
    queries = "1 query" if s.num_queries == 1 else f"{s.num_queries:,} queries"
    parts.append(f"{queries}, {s.rank_type} ranks{weighted}.")
    parts += [f"{note}." for note in comparison.notes]
    return " ".join(parts)


def _fmt(value: float | None, digits: int) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}f}"


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
    alpha = check_fraction(alpha, "alpha", 0.05)
    digits = check_positive_int(digits, "digits")
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
        label = metric_label(metric, short=True)
        header.append(f"{latex_escape(label) if latex else label} {arrow}")
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
        name = latex_escape(model) if latex else markdown_cell(model)
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
                rf"\caption{{{latex_escape(note)}}}",
                r"\end{table}",
            ]
        )
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n\n" + note


def _pair_record(pair: PairComparison, alpha: float, full: bool) -> dict[str, Any]:
    record: dict[str, Any] = {
        "metric": pair.metric,
        "model a": pair.model_a,
        "model b": pair.model_b,
        "a - b": pair.difference,
    }
    if full:
        record |= {"lower": pair.lower, "upper": pair.upper, "effect": pair.effect_size}
    record |= {
        "p": pair.p_value,
        "p adj": pair.p_adjusted,
        "": "*" if pair.significant(alpha) else "",
    }
    return record


def plain_table(comparison: Comparison, alpha: float = 0.05) -> str:
    """The plain-text report: the models' values, then the pairs, then how they were obtained."""
    alpha = check_fraction(alpha, "alpha", 0.05)
    models = [
        {"metric": v.metric, "model": v.model, "value": v.value, "lower": v.lower, "upper": v.upper}
        for v in comparison.values
    ]
    parts = [tabulate(models, ["metric", "model", "value", "lower", "upper"])]
    pairs = [_pair_record(pair, alpha, full=True) for pair in comparison.pairs]
    parts.append(tabulate(pairs, list(pairs[0])))
    for label, group in comparison.by_group.items():
        rows = [_pair_record(pair, alpha, full=False) for pair in group.pairs]
        parts.append(f"group {label!r}:\n" + tabulate(rows, list(rows[0])))
    parts.append("* significant after correction. " + describe(comparison, alpha))
    return "\n".join(parts)
