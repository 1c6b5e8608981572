r"""Rendering evaluation results: a plain text table, CSV, JSON, Markdown and LaTeX.

Every format is built from the same records (:func:`records`): one per side, rank type and
metric, overall first and then, with ``groups=True``, each group's. A record holds the group
columns, ``side``, ``rank_type``, ``metric`` (the metric's key), ``value``, ``expected_value``,
``std`` and ``z_score`` under the null model :math:`r_i \sim \mathcal{U}\{1..C_i\}`, and how the
null-model statistics were had: ``method`` (``"exact"`` or ``"monte-carlo"``),
``standard_error`` (of a Monte-Carlo expectation) and ``note`` (why a cell is empty or how it was
obtained). The methods :meth:`~rankstats.EvaluationResults.to_table`,
:meth:`~rankstats.EvaluationResults.to_csv`, :meth:`~rankstats.EvaluationResults.to_markdown`,
:meth:`~rankstats.EvaluationResults.to_latex` and ``str(results)`` call the functions here, and the
command line prints exactly what they return.

Group labels become columns: a label that is a tuple (grouping by several columns) is split over
``group_names``; a single label goes under ``group_names[0]``, or ``"group"`` by default. The
overall rows have no label (shown as ``(all)`` in text tables, empty in CSV, ``null`` in JSON).
"""

from __future__ import annotations

import io
import json
import math
import re
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rankstats.base import RankBasedMetric
from rankstats.validation import check_positive_int

if TYPE_CHECKING:  # pragma: no cover
    from rankstats.evaluation.results import EvaluationResults, ResultRow

__all__ = [
    "FIELDS",
    "check_csv_labels",
    "latex_escape",
    "markdown_cell",
    "metric_label",
    "records",
    "render_csv",
    "render_json",
    "render_latex",
    "render_markdown",
    "render_table",
    "tabulate",
]

#: the fields of a record after the group columns, in order
FIELDS = (
    "side",
    "rank_type",
    "metric",
    "value",
    "expected_value",
    "std",
    "z_score",
    "method",
    "standard_error",
    "note",
)
_NUMBERS = ("value", "expected_value", "std", "z_score")
#: the label of the overall rows' group cells in text tables
ALL = "(all)"
_CUTOFF = re.compile(r"\s*(?:@|\bat)\s*K\b")


def metric_label(metric: RankBasedMetric, short: bool = False) -> str:
    """The metric's human name with its real cut-off: ``Hits@10``, not ``Hits @ K``.

    Parameters
    ----------
    metric : RankBasedMetric
        The metric.
    short : bool, default=False
        Use the abbreviation in the name's parentheses where there is one (``MRR``).

    Examples
    --------
    >>> from rankstats import HitsAtK, InverseHarmonicMeanRank, ZHitsAtK
    >>> metric_label(HitsAtK(k=10)), metric_label(ZHitsAtK(k=3))
    ('Hits@10', 'z-Hits@3')
    >>> metric_label(InverseHarmonicMeanRank(), short=True)
    'MRR'
    """
    name = metric.name
    k = metric._params().get("k")
    if k is not None:
        name = _CUTOFF.sub(f"@{k}", name)
    if short:
        found = re.search(r"\(([^()]+)\)\s*$", name)
        if found:
            return found.group(1)
    return name


def _group_columns(
    results: EvaluationResults, groups: bool, group_names: Sequence[str] | None
) -> list[str]:
    if not groups or not results.by_group:
        return []
    if group_names:
        names = list(group_names)
        twice = [name for name in dict.fromkeys(names) if names.count(name) > 1]
        if twice:  # each name is a column: a name given twice would keep one part only
            raise ValueError(
                f"group_names must be distinct (one name per group column), got {names}, "
                f"which names {', '.join(repr(name) for name in twice)} more than once"
            )
        return names
    first = next(iter(results.by_group))
    if isinstance(first, tuple):
        return [f"group{i + 1}" for i in range(len(first))]
    return ["group"]


def _group_cells(label: Hashable | None, names: Sequence[str]) -> dict[str, Any]:
    if label is None:
        return dict.fromkeys(names)
    values = label if isinstance(label, tuple) and len(names) > 1 else (label,)
    if len(values) != len(names):
        raise ValueError(
            f"group_names has {len(names)} names, but the group label {label!r} has "
            f"{len(values)} parts"
        )
    return {name: _plain(value) for name, value in zip(names, values, strict=True)}


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python scalar it holds; other values unchanged."""
    item = getattr(value, "item", None)
    return item() if callable(item) and not isinstance(value, str) else value


def _row_record(row: ResultRow, show_side: bool) -> dict[str, Any]:
    record: dict[str, Any] = {"side": row.side} if show_side else {}
    record.update(
        rank_type=row.rank_type,
        metric=row.metric.key,
        value=row.value,
        expected_value=row.expected_value,
        std=row.std,
        z_score=row.z_score,
        method=row.method,
        standard_error=row.standard_error,
        note=row.note,
    )
    return record


def _layout(
    results: EvaluationResults, groups: bool, group_names: Sequence[str] | None
) -> tuple[list[str], bool]:
    """The group columns, and whether the side column is shown (see the module docstring)."""
    names = _group_columns(results, groups, group_names)
    clash = [name for name in names if name in FIELDS and name != "side"]
    if clash:
        raise ValueError(f"group column {clash[0]!r} has the name of a results column; rename it")
    show_side = "side" not in names
    if not show_side and tuple(results.sides) != ("both",):
        raise ValueError(
            "a group column is named 'side', and the results have sides of their own "
            f"{results.sides}; rename the group column"
        )
    return names, show_side


def records(
    results: EvaluationResults,
    *,
    groups: bool = False,
    group_names: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """The results as a list of flat records, overall first, then each group's.

    Parameters
    ----------
    results : EvaluationResults
        The results of :func:`rankstats.evaluate`.
    groups : bool, default=False
        Add the rows of every group (``results.by_group``) after the overall rows.
    group_names : sequence of str, optional
        The names of the group columns: one per part of a tuple label. A group column named
        ``side`` replaces the results' own ``side`` column, which must then be just ``both``.

    Returns
    -------
    list of dict
        One record per row with the fields :data:`FIELDS` (after the group columns);
        ``None`` where a statistic is unknown.
    """
    names, show_side = _layout(results, groups, group_names)
    found = [{**_group_cells(None, names), **_row_record(row, show_side)} for row in results.rows]
    if names:
        for label, group in results.by_group.items():
            cells = _group_cells(label, names)
            found += [{**cells, **_row_record(row, show_side)} for row in group.rows]
    return found


# --- notes under a table ----------------------------------------------------------------------


def _footer(
    results: EvaluationResults, found: list[dict[str, Any]]
) -> tuple[list[str], dict[str, int]]:
    """The lines under a table, and the footnote number of each distinct row note."""
    numbers: dict[str, int] = {}
    for record in found:
        note = record.get("note")
        if note and note not in numbers:
            numbers[note] = len(numbers) + 1
    lines = [f"[{number}] {note}" for note, number in numbers.items()]
    if results.average is not None:
        lines.append(f"({results.average} average over {len(results.by_group)} groups)")
    if results.num_samples is not None and _sampled(found):
        seeded = f", seed {results.seed}" if results.seed is not None else ""
        lines.append(f"Monte-Carlo estimates from {results.num_samples:,} null samples{seeded}")
    lines += list(results.notes)
    return lines, numbers


def _sampled(found: list[dict[str, Any]]) -> bool:
    return any(record.get("method") == "monte-carlo" for record in found)


# --- plain text, CSV and JSON of any records ---------------------------------------------------


def _text(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, list | tuple):
        return ", ".join(str(item) for item in value)
    return str(value)


def _align(lines: Sequence[Sequence[str]], right: Sequence[bool]) -> list[str]:
    """Pad cells to their column's width: text left-aligned, numbers right-aligned."""
    widths = [max(len(line[i]) for line in lines) for i in range(len(right))]
    return [
        "  ".join(
            cell.rjust(width) if flush else cell.ljust(width)
            for cell, width, flush in zip(line, widths, right, strict=True)
        ).rstrip()
        for line in lines
    ]


def check_csv_labels(labels: Iterable[Hashable], *, split: bool = False) -> None:
    """Refuse a group label written as empty cells in CSV, as the overall rows' group cells are.

    That is ``""``, or, for a tuple ``split`` into columns, a tuple of such parts.
    """
    for label in labels:
        parts = label if isinstance(label, tuple) and split else (label,)
        if all(_csv_cell(_plain(part)) == "" for part in parts):
            raise ValueError(
                f"the group label {label!r} would be written as empty cells in CSV, as the "
                "overall rows are: relabel that group, or write JSON or Parquet (where the "
                "overall rows' group cells are null)"
            )


def _csv_cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, list | tuple):
        return ";".join(str(item) for item in value)
    return str(value)


def _json_clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def tabulate(
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[str],
    format: str = "table",
) -> str:
    """Render records as an aligned text table, CSV or a JSON list of objects.

    The one formatter of generic tables (the list of metrics, null-model summaries; the results
    table adds its own layout on the same alignment): the text table has a rule under the header;
    ``None`` is ``-`` in text, empty in CSV and ``null`` in JSON; numbers are
    right-aligned with 6 significant digits in text and written in full in CSV and JSON.

    Examples
    --------
    >>> print(tabulate([{"metric": "mrr", "value": 0.25}, {"metric": "mr", "value": None}],
    ...                ["metric", "value"]), end="")
    metric  value
    ------  -----
    mrr      0.25
    mr          -
    """
    if format == "json":
        cleaned = [{column: _json_clean(row.get(column)) for column in columns} for row in rows]
        return json.dumps(cleaned, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    if format == "csv":
        import csv

        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow([_csv_cell(row.get(column)) for column in columns])
        return buffer.getvalue()
    if format != "table":
        raise ValueError(f"format must be 'table', 'csv' or 'json', got {format!r}")
    right = [
        any(isinstance(row.get(c), int | float) for row in rows)
        and all(isinstance(row.get(c), int | float | None) for row in rows)
        and not any(isinstance(row.get(c), bool) for row in rows)
        for c in columns
    ]
    lines = [list(columns), *([_text(row.get(column)) for column in columns] for row in rows)]
    header, *body = _align(lines, right)
    widths = [max(len(line[i]) for line in lines) for i in range(len(columns))]
    rule = "  ".join("-" * width for width in widths).rstrip()
    return "\n".join([header, rule, *body]) + "\n"


def render_table(
    results: EvaluationResults,
    *,
    groups: bool = False,
    group_names: Sequence[str] | None = None,
) -> str:
    """An aligned plain-text table: what ``str(results)`` and the command line show.

    Columns: the group columns (with ``groups=True``), side, rank type, metric, value,
    expected value, standard deviation and z-score under the null model; with Monte-Carlo
    estimates, also their standard error. Notes are numbered footnotes under the table.
    """
    found = records(results, groups=groups, group_names=group_names)
    names, show_side = _layout(results, groups, group_names)
    footer, numbers = _footer(results, found)
    sampled = _sampled(found)
    header = [*names, *(["side"] if show_side else []), "rank type", "metric"]
    header += ["value", "expected", "std", "z-score", *(["s.e."] if sampled else [])]
    lines: list[list[str]] = [header]
    for record in found:
        metric = record["metric"]
        if record["note"]:
            metric += f" [{numbers[record['note']]}]"
        cells = [ALL if record[name] is None else str(record[name]) for name in names]
        cells += [record["side"]] if show_side else []
        cells += [record["rank_type"], metric, *(_text(record[name]) for name in _NUMBERS)]
        if sampled:
            cells.append(_text(record["standard_error"]))
        lines.append(cells)
    text_columns = len(names) + (3 if show_side else 2)
    right = [index >= text_columns for index in range(len(header))]
    return "\n".join(_align(lines, right) + footer)


def _columns(
    results: EvaluationResults, groups: bool, group_names: Sequence[str] | None
) -> list[str]:
    names, show_side = _layout(results, groups, group_names)
    return [*names, *(field for field in FIELDS if show_side or field != "side")]


def render_csv(
    results: EvaluationResults,
    *,
    groups: bool = False,
    group_names: Sequence[str] | None = None,
) -> str:
    """The records as CSV: a header line, then one line per record; unknown cells are empty.

    The overall rows' group cells are empty too, so a group whose label is the empty string
    (every part of it, for a tuple) is refused with a ``ValueError``: its rows could not be told
    from the overall ones. JSON and Parquet write the overall rows' group cells as null.
    """
    found = records(results, groups=groups, group_names=group_names)
    names, _ = _layout(results, groups, group_names)
    check_csv_labels(results.by_group if names else (), split=len(names) > 1)
    return tabulate(found, _columns(results, groups, group_names), "csv")


def render_json(
    results: EvaluationResults,
    *,
    groups: bool = False,
    group_names: Sequence[str] | None = None,
) -> str:
    """The records as a JSON list of objects; NaN and unknown values are ``null``."""
    found = records(results, groups=groups, group_names=group_names)
    return tabulate(found, _columns(results, groups, group_names), "json")


# --- tables for papers --------------------------------------------------------------------------


def _number(value: Any, digits: int) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return f"{value:.{digits}g}"


def _paper_rows(
    results: EvaluationResults, groups: bool, group_names: Sequence[str] | None
) -> tuple[list[str], bool, list[dict[str, Any]], list[RankBasedMetric]]:
    names, show_side = _layout(results, groups, group_names)
    found = records(results, groups=groups, group_names=group_names)
    rows = list(results.rows)
    if names:
        for group in results.by_group.values():
            rows += list(group.rows)
    return names, show_side, found, [row.metric for row in rows]


def render_markdown(
    results: EvaluationResults,
    *,
    groups: bool = False,
    group_names: Sequence[str] | None = None,
    digits: int = 4,
) -> str:
    r"""A Markdown (GitHub pipe) table with the null model's columns.

    Metrics are shown by their short names (``MRR``, ``Hits@10``); numbers with ``digits``
    significant digits; notes are numbered footnotes under the table.
    """
    digits = check_positive_int(digits, "digits")
    names, show_side, found, metrics = _paper_rows(results, groups, group_names)
    footer, numbers = _footer(results, found)
    sampled = _sampled(found)
    header = [*map(markdown_cell, names), *(["side"] if show_side else []), "rank type", "metric"]
    header += ["value", "E (null)", "std (null)", "z", *(["s.e."] if sampled else [])]
    numeric = 4 + sampled
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join([" --- "] * (len(header) - numeric) + [" ---: "] * numeric) + "|",
    ]
    for record, metric in zip(found, metrics, strict=True):
        label = metric_label(metric, short=True)
        if record["note"]:
            label += f" [{numbers[record['note']]}]"
        cells = [ALL if record[name] is None else str(record[name]) for name in names]
        cells += [record["side"]] if show_side else []
        cells += [record["rank_type"], label]
        cells = [markdown_cell(cell) for cell in cells]
        columns = [*_NUMBERS, *(["standard_error"] if sampled else [])]
        cells += [_number(record[name], digits) or "–" for name in columns]
        lines.append("| " + " | ".join(cells) + " |")
    if footer:
        lines += ["", *(line.replace("|", "\\|") + "  " for line in footer)]
    return "\n".join(lines).rstrip() + "\n"


def markdown_cell(text: str) -> str:
    """Text as one cell of a pipe table: ``|`` escaped, line breaks as spaces."""
    return " ".join(text.replace("|", "\\|").splitlines())


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    r"""Escape the characters LaTeX treats specially (``&``, ``%``, ``_``, ...) in plain text.

    Examples
    --------
    >>> latex_escape("hits_at_10 & 50%")
    'hits\\_at\\_10 \\& 50\\%'
    """
    return "".join(_LATEX_SPECIAL.get(char, char) for char in text)


def _after_break(text: str) -> str:
    r"""Text that may follow a line break ``\\``, preceded by ``{}`` where needed.

    A leading ``[`` or ``*`` would be read as the break's optional length or its star (a group
    label ``[CLS]``, a note ``[1] ...``).
    """
    return "{}" + text if text.lstrip()[:1] in ("[", "*") else text


def render_latex(
    results: EvaluationResults,
    *,
    groups: bool = False,
    group_names: Sequence[str] | None = None,
    digits: int = 4,
    caption: str | None = None,
    label: str | None = None,
) -> str:
    r"""A LaTeX ``table`` in booktabs style (``\toprule``, ``\midrule``, ``\bottomrule``).

    The columns are those of :func:`render_markdown`; the expected value and standard
    deviation are headed :math:`\mathbb{E}_0` and :math:`\sigma_0`, and a line under the table
    says what they are. Needs ``\usepackage{booktabs}`` and ``amssymb`` (for
    :math:`\mathbb{E}`) in the document.
    """
    digits = check_positive_int(digits, "digits")
    names, show_side, found, metrics = _paper_rows(results, groups, group_names)
    footer, numbers = _footer(results, found)
    sampled = _sampled(found)
    header = [latex_escape(name) for name in names]
    header += ["Side"] if show_side else []
    header += ["Rank type", "Metric", "Value", r"$\mathbb{E}_0$", r"$\sigma_0$", "$z$"]
    header += ["s.e."] if sampled else []
    numeric = 4 + sampled
    spec = "l" * (len(header) - numeric) + "r" * numeric
    lines = [r"\begin{table}[ht]", r"\centering"]
    if caption is not None:
        lines.append(rf"\caption{{{latex_escape(caption)}}}")
    if label is not None:
        lines.append(rf"\label{{{label}}}")
    lines += [
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(header) + r" \\",
        r"\midrule",
    ]
    for record, metric in zip(found, metrics, strict=True):
        name = latex_escape(metric_label(metric, short=True))
        if record["note"]:
            name += rf"\textsuperscript{{{numbers[record['note']]}}}"
        cells = [latex_escape(ALL if record[n] is None else str(record[n])) for n in names]
        cells += [latex_escape(record["side"])] if show_side else []
        cells += [latex_escape(record["rank_type"]), name]
        columns = [*_NUMBERS, *(["standard_error"] if sampled else [])]
        for column in columns:
            shown = _number(record[column], digits)
            cells.append("--" if shown is None else f"${shown}$")
        cells[0] = _after_break(cells[0])
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    explanation = (
        r"$\mathbb{E}_0$, $\sigma_0$: expected value and standard deviation under the null "
        r"model $r_i \sim \mathcal{U}\{1, \dots, C_i\}$; $z = (\mathrm{value} - "
        r"\mathbb{E}_0) / \sigma_0$."
    )
    notes = [explanation, *(latex_escape(line) for line in footer)]
    lines.append(r"\par\smallskip{\footnotesize " + r" \\ ".join(map(_after_break, notes)) + "}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"
