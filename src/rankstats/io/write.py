"""Writing evaluation results to files: CSV, JSON, Parquet, Markdown and LaTeX.

Every format holds the same records (:func:`rankstats.evaluation.report.records`): one per side,
rank type and metric, overall and (by default) per group, with the null model's statistics.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from rankstats.evaluation import report

if TYPE_CHECKING:  # pragma: no cover
    from rankstats.evaluation.results import EvaluationResults

__all__ = ["RESULT_FORMATS", "RESULT_SUFFIXES", "write_results"]

#: the formats :func:`write_results` writes
RESULT_FORMATS = ("csv", "json", "parquet", "markdown", "latex")
ResultFormat = Literal["csv", "json", "parquet", "markdown", "latex"]
#: the suffixes of a path that give the format of :func:`write_results`
RESULT_SUFFIXES = {
    ".csv": "csv",
    ".json": "json",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".md": "markdown",
    ".tex": "latex",
}


def write_results(
    results: EvaluationResults,
    path: str | os.PathLike[str],
    *,
    format: ResultFormat | None = None,
    groups: bool = True,
    group_names: Sequence[str] | None = None,
) -> Path:
    """Write results to a file.

    Parameters
    ----------
    results : EvaluationResults
        The results of :func:`rankstats.evaluate` (or :meth:`RankData.evaluate
        <rankstats.io.data.RankData.evaluate>`).
    path : str or path-like
        The file to write (replaced if it exists).
    format : {"csv", "json", "parquet", "markdown", "latex"}, optional
        By default from the suffix: ``.csv``, ``.json``, ``.parquet`` / ``.pq``, ``.md``,
        ``.tex``. Parquet needs the optional pyarrow (``pip install 'rankstats[parquet]'``).
    groups : bool, default=True
        Also write each group's rows.
    group_names : sequence of str, optional
        The names of the group columns (see :func:`rankstats.evaluation.report.records`), all
        different.

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    ValueError
        For an unknown format, or names in ``group_names`` given more than once.

    Examples
    --------
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> from rankstats import evaluate
    >>> results = evaluate([1, 2], [5, 5], metrics=["mrr"])
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = write_results(results, Path(folder) / "results.json")
    ...     json.loads(path.read_text())[0]["value"]
    0.75
    """
    target = Path(path)
    kind = format or RESULT_SUFFIXES.get(target.suffix.lower())
    if kind not in RESULT_FORMATS:
        raise ValueError(
            f"format must be one of {RESULT_FORMATS} or given by the suffix of path "
            f"({', '.join(RESULT_SUFFIXES)}), got format={format!r} and path {os.fspath(path)!r}"
        )
    options = {"groups": groups, "group_names": group_names}
    if kind == "parquet":
        _write_parquet(results, target, groups, group_names)
        return target
    if kind == "csv":
        text = report.render_csv(results, **options)  # type: ignore[arg-type]
    elif kind == "json":
        text = report.render_json(results, **options)  # type: ignore[arg-type]
    elif kind == "markdown":
        text = report.render_markdown(results, **options)  # type: ignore[arg-type]
    else:
        text = report.render_latex(results, **options)  # type: ignore[arg-type]
    target.write_text(text, encoding="utf-8")
    return target


def _write_parquet(
    results: EvaluationResults, path: Path, groups: bool, group_names: Sequence[str] | None
) -> None:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise ImportError(
            "writing Parquet needs pyarrow, an optional dependency: "
            "pip install 'rankstats[parquet]'"
        ) from None
    found = report.records(results, groups=groups, group_names=group_names)
    columns = list(found[0]) if found else list(report.FIELDS)
    table = pyarrow.table({name: [record[name] for record in found] for name in columns})
    pyarrow.parquet.write_table(table, path)
