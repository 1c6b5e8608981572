r"""The ``rankstats`` command line: evaluate ranks from a file, list the metrics, show null models.

Installing rankstats installs a ``rankstats`` command (also ``python -m rankstats``) with four
subcommands:

``rankstats evaluate [FILE]``
    Read ranks from a CSV or TSV file (a ``rank`` column; optional ``num_candidates``, ``weight``
    and group columns), from a ``.npy`` or ``.npz`` file, or from standard input (``-``, or piped),
    and print each metric's value with its expected value, standard deviation and z-score under the
    null model. Without ``FILE`` it evaluates the example bundled with the package.
``rankstats metrics [QUERY]``
    List every metric: key, synonyms, value range, direction, whether the null model's expected
    value and variance are exact, and a one-line description.
``rankstats null --metric mrr --num-candidates 14541 --n 20466``
    The expected value and standard deviation of a metric under the null model, and, with
    ``--value``, the z-score and adjusted index of a published result.
``rankstats example``
    Print the bundled example file, as a template for your own.

Errors in the input (a missing file, a missing column, a rank out of range at some line) are
reported on one line of standard error with a non-zero exit status, never with a traceback; set
``RANKSTATS_DEBUG=1`` to see the traceback anyway. Progress of long work is shown on standard
error when it is a terminal, and never when it is piped.

This module, and argparse with it, is imported only by the command itself, never by
``import rankstats``.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import itertools
import json
import math
import os
import stat
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import IO, Any, Literal, NoReturn, TextIO, cast

import numpy as np
import numpy.typing as npt

import rankstats
from rankstats.arrays import FloatArray, IntArray
from rankstats.base import RankBasedMetric
from rankstats.errors import NoClosedFormError
from rankstats.evaluation import EvaluationResults, evaluate
from rankstats.registry import metric_resolver

__all__ = ["CliError", "RankTable", "build_parser", "main", "metric_rows", "read_ranks"]


PROG = "rankstats"
#: the bundled example, inside the package
EXAMPLE = "nations_transe.csv"
#: the metrics ``rankstats null`` reports when none are named
DEFAULT_NULL_METRICS = ("mrr", "hits@1", "hits@3", "hits@10", "mr")
#: the column names with a meaning; any other column can be grouped by
RANK_COLUMN = "rank"
#: the columns of ranks, by the rank type they hold (``rank`` is the realistic rank)
RANK_COLUMNS = {
    RANK_COLUMN: "realistic",
    "realistic": "realistic",
    "optimistic": "optimistic",
    "pessimistic": "pessimistic",
}
CANDIDATES_COLUMN = "num_candidates"
WEIGHT_COLUMN = "weight"
#: how many numbers one Monte-Carlo block holds at most
_BLOCK_ELEMENTS = 2**22
#: the exit status of errors in the input or its processing (argparse uses 2 for usage errors)
EXIT_ERROR = 1
EXIT_USAGE = 2


class CliError(Exception):
    """An error to report on one line of standard error, with a non-zero exit status."""


# --- progress -------------------------------------------------------------------------------------


class Progress:
    """A one-line progress indicator on standard error, drawn only where someone can see it.

    Parameters
    ----------
    enabled : bool
        Whether to draw at all; by default the command enables it when standard error is a
        terminal, so piped and redirected runs stay quiet.
    stream : file-like, optional
        Where to draw; standard error by default.
    interval : float, default=0.1
        The least time in seconds between two redraws.
    """

    def __init__(self, enabled: bool, stream: TextIO | None = None, interval: float = 0.1) -> None:
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self._last = -math.inf
        self._drawn = False

    def update(self, label: str, done: float, total: float) -> None:
        """Show that ``done`` of ``total`` units of the task ``label`` are finished."""
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last < self.interval and done < total:
            return
        self._last = now
        fraction = min(1.0, done / total) if total > 0 else 1.0
        self.stream.write(f"\r{label}: {100 * fraction:5.1f}%")
        self.stream.flush()
        self._drawn = True

    def clear(self) -> None:
        """Erase the progress line, if one was drawn."""
        if self._drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._drawn = False


# --- reading ranks --------------------------------------------------------------------------------


@dataclass
class RankTable:
    """Ranks read from a file, validated, with what is needed to say where a bad value was.

    Attributes
    ----------
    source : str
        The input's name for messages: a path, ``<stdin>`` or the bundled example's name.
    ranks : dict of str to numpy.ndarray of shape (n,)
        The ranks by rank type (``"realistic"`` for a ``rank`` column, ``"optimistic"``,
        ``"pessimistic"``), finite and >= 1.
    num_candidates : numpy.ndarray of shape (n,), optional
        The number of candidates of each task, from a column or from ``--num-candidates``.
    weights : numpy.ndarray of shape (n,), optional
        The weight of each task.
    groups : dict of str to numpy.ndarray of shape (n,)
        The group columns asked for, as strings.
    """

    source: str
    ranks: dict[str, FloatArray]
    num_candidates: IntArray | None = None
    weights: FloatArray | None = None
    groups: dict[str, npt.NDArray[np.str_]] = field(default_factory=dict)


#: a column as read: strings from a text file, or an array from a numpy file
_Column = list[str] | npt.NDArray[Any]


@dataclass
class _RawTable:
    """Columns as read, before conversion, with the input line of every row where there is one."""

    source: str
    columns: dict[str, _Column]
    lines: list[int] | None = None

    def where(self, index: int) -> str:
        if self.lines is not None:
            return f"{self.source}, line {self.lines[index]}"
        return f"{self.source}, row {index + 1}"


def _open_source(path: str | None) -> tuple[IO[bytes], str, int | None]:
    """Open the input: a path, ``-`` for standard input, or ``None`` for the bundled example.

    Returns
    -------
    tuple
        A binary stream, the input's name for messages, and its size in bytes where known.
    """
    if path is None:
        resource = resources.files("rankstats") / "data" / EXAMPLE
        data = resource.read_bytes()
        return io.BytesIO(data), f"{EXAMPLE} (bundled example)", len(data)
    if path == "-":
        return sys.stdin.buffer, "<stdin>", None
    file = Path(path)
    if not file.exists():
        raise CliError(f"no such file: {path}")
    if file.is_dir():
        raise CliError(f"{path} is a directory, not a file of ranks")
    if file.name.endswith(".gz"):
        return cast(IO[bytes], gzip.open(file, "rb")), path, None  # its size says little
    return open(file, "rb"), path, file.stat().st_size  # the caller closes it


def _peek(stream: IO[bytes], size: int) -> tuple[bytes, IO[bytes]]:
    """The first ``size`` bytes of ``stream``, and a stream that still starts with them."""
    if isinstance(stream, io.BufferedReader | gzip.GzipFile):
        return stream.peek(size)[:size], stream
    data = stream.read()
    return data[:size], io.BytesIO(data)


def _stdin_is_piped() -> bool:
    """Whether standard input is a pipe or a redirected file (not a terminal, not /dev/null)."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (AttributeError, OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


def _kind(name: str, head: bytes) -> str:
    """The input's format from its name and first bytes: ``npy``, ``npz``, ``tsv`` or ``csv``."""
    if head.startswith(b"\x93NUMPY"):
        return "npy"
    if head.startswith(b"PK\x03\x04"):
        return "npz"
    suffixes = [s.lower() for s in Path(name).suffixes if s.lower() != ".gz"]
    if suffixes and suffixes[-1] in {".npy", ".npz"}:
        raise CliError(f"{name} is not a valid {suffixes[-1]} file")
    if suffixes and suffixes[-1] in {".tsv", ".tab"}:
        return "tsv"
    return "csv"


def read_ranks(
    path: str | None,
    *,
    group_by: Sequence[str] = (),
    num_candidates: int | None = None,
    progress: Progress | None = None,
) -> RankTable:
    """Read and validate ranks from a file, standard input (``"-"``) or the bundled example.

    Parameters
    ----------
    path : str, optional
        The file; ``"-"`` for standard input, ``None`` for the bundled example.
    group_by : sequence of str
        The columns to group by; each must exist.
    num_candidates : int, optional
        The number of candidates of every task, for input without a ``num_candidates`` column.
    progress : Progress, optional
        Where to show the progress of reading a large text file.

    Returns
    -------
    RankTable
        The validated ranks.

    Raises
    ------
    CliError
        With a one-line message that says where the input is wrong.
    """
    stream, source, size = _open_source(path)
    with stream:
        try:
            head, buffered = _peek(stream, 8)
        except gzip.BadGzipFile as error:
            raise CliError(f"{source} is not a valid gzip file: {error}") from error
        kind = _kind(source, head)
        if kind in {"npy", "npz"}:
            raw = _read_numpy(buffered, source, kind)
        else:
            raw = _read_text(buffered, source, "\t" if kind == "tsv" else None, size, progress)
    return _convert(raw, group_by=group_by, num_candidates=num_candidates)


def _read_text(
    stream: IO[bytes],
    source: str,
    delimiter: str | None,
    size: int | None,
    progress: Progress | None,
) -> _RawTable:
    """Read a delimited text table with a header line; a lone column of numbers needs none."""
    with io.TextIOWrapper(stream, encoding="utf-8-sig", newline="") as text:
        lines = _counted_lines(text, size, progress, f"reading {source}")
        try:
            return _parse_text(lines, source, delimiter)
        except UnicodeDecodeError as error:
            raise CliError(f"{source} is not UTF-8 text ({error.reason})") from error
        finally:
            if progress is not None:
                progress.clear()


def _parse_text(lines: Iterator[str], source: str, delimiter: str | None) -> _RawTable:
    first = next(lines, "")
    while first and not first.strip():
        first = next(lines, "")
    if not first:
        raise CliError(
            f"{source} is empty; expected a header line naming the columns, "
            f"e.g. rank,num_candidates"
        )
    if delimiter is None:
        delimiter = "\t" if "\t" in first else ","
    reader = csv.reader(itertools.chain([first], lines), delimiter=delimiter)
    try:
        header = [name.strip().lower() for name in next(reader)]
        if len(header) == 1 and _is_number(header[0]):  # a headerless column of ranks
            columns: list[list[str]] = [[header[0]]]
            row_lines = [reader.line_num]
            header = [RANK_COLUMN]
        else:
            _check_header(header, source)
            columns = [[] for _ in header]
            row_lines = []
        width = len(header)
        for row in reader:
            if not row or (len(row) == 1 and not row[0].strip()):
                continue  # a blank line
            if len(row) != width:
                raise CliError(
                    f"{source}, line {reader.line_num}: expected {width} fields "
                    f"({delimiter.join(header)!r}), got {len(row)}"
                )
            for column, value in zip(columns, row, strict=True):
                column.append(value)
            row_lines.append(reader.line_num)
    except csv.Error as error:
        raise CliError(f"{source}, line {reader.line_num}: {error}") from error
    if not row_lines:
        raise CliError(f"{source} has a header but no rows of ranks")
    return _RawTable(source, dict(zip(header, columns, strict=True)), row_lines)


def _counted_lines(
    text: TextIO, size: int | None, progress: Progress | None, label: str
) -> Iterator[str]:
    """Yield the lines of ``text``, reporting the share of ``size`` read so far."""
    if progress is None or not progress.enabled or size is None:
        yield from text
        return
    done = 0
    for number, line in enumerate(text):
        done += len(line)
        if number % 65536 == 0:
            progress.update(label, done, size)
        yield line


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _check_header(header: list[str], source: str) -> None:
    duplicates = sorted({name for name in header if header.count(name) > 1})
    if duplicates:
        raise CliError(f"{source}: the header names the column {duplicates[0]!r} more than once")
    if not any(name in RANK_COLUMNS for name in header):
        found = ", ".join(repr(name) for name in header)
        raise CliError(
            f"{source} has no {RANK_COLUMN!r} column; its header names {found}. "
            f"The first line must name the columns, one of them {RANK_COLUMN!r} (or "
            f"'optimistic' and 'pessimistic')"
        )


#: PyKEEN's layout of ranks arrays: ``{side}.{rank type}`` and ``num_candidates.{side}``
_SIDES = ("head", "tail")


def _read_numpy(stream: IO[bytes], source: str, kind: str) -> _RawTable:
    """Read ranks from a ``.npy`` array or the arrays of a ``.npz`` archive."""
    data = io.BytesIO(stream.read())  # np.load needs a seekable file
    try:
        loaded = np.load(data, allow_pickle=False)
    except Exception as error:  # numpy raises ValueError, OSError, zipfile errors, ...
        raise CliError(f"{source} is not a readable {kind} file: {error}") from error
    if isinstance(loaded, np.ndarray):
        if loaded.dtype.names:
            columns: dict[str, _Column] = {
                name.lower(): loaded[name] for name in loaded.dtype.names
            }
        elif loaded.ndim == 1:
            columns = {RANK_COLUMN: loaded}
        else:
            raise CliError(
                f"{source}: expected a 1-D array of ranks or a structured array with a "
                f"{RANK_COLUMN!r} field, got an array of shape {loaded.shape}"
            )
    else:
        with loaded:
            arrays = {name.lower(): loaded[name] for name in loaded.files}
        columns = _from_pykeen_layout(arrays) or dict(arrays)
    for name, column in columns.items():
        if np.ndim(column) != 1:
            raise CliError(f"{source}: array {name!r} must be 1-D, got shape {np.shape(column)}")
    lengths = {name: len(column) for name, column in columns.items()}
    if len(set(lengths.values())) > 1:
        listed = ", ".join(f"{name} ({length})" for name, length in lengths.items())
        raise CliError(f"{source}: the arrays must have equal lengths, got {listed}")
    present = [name for name in columns if name in RANK_COLUMNS]
    if not present:
        found = ", ".join(repr(name) for name in columns) or "none"
        raise CliError(f"{source} has no {RANK_COLUMN!r} array; it holds {found}")
    if not len(columns[present[0]]):
        raise CliError(f"{source} holds no ranks")
    return _RawTable(source, columns)


def _from_pykeen_layout(arrays: Mapping[str, npt.NDArray[Any]]) -> dict[str, _Column] | None:
    """Turn PyKEEN's per-side arrays (``head.realistic``, ...) into long columns with ``side``."""
    sides = [side for side in _SIDES if any(key.startswith(f"{side}.") for key in arrays)]
    if not sides:
        return None
    types = [t for t in ("optimistic", "realistic", "pessimistic") if f"{sides[0]}.{t}" in arrays]
    if not types:
        return None
    columns: dict[str, _Column] = {}
    for rank_type in types:
        parts = [arrays.get(f"{side}.{rank_type}") for side in sides]
        if any(part is None for part in parts):
            return None
        columns[rank_type] = np.concatenate([np.ravel(part) for part in parts if part is not None])
    lengths = [np.size(arrays[f"{side}.{types[0]}"]) for side in sides]
    columns["side"] = np.repeat(np.array(sides), lengths)
    if all(f"{CANDIDATES_COLUMN}.{side}" in arrays for side in sides):
        columns[CANDIDATES_COLUMN] = np.concatenate(
            [np.ravel(arrays[f"{CANDIDATES_COLUMN}.{side}"]) for side in sides]
        )
    return columns


def _convert(raw: _RawTable, *, group_by: Sequence[str], num_candidates: int | None) -> RankTable:
    """Convert and validate the columns, naming the line of the first bad value."""
    columns = raw.columns
    for name in group_by:
        if name not in columns:
            found = ", ".join(repr(column) for column in columns)
            raise CliError(f"{raw.source} has no column {name!r} to group by; it has {found}")
    if RANK_COLUMN in columns and "realistic" in columns:
        raise CliError(
            f"{raw.source} has both a {RANK_COLUMN!r} and a 'realistic' column; they mean the "
            f"same, keep one"
        )
    ranks: dict[str, FloatArray] = {}
    for name in (name for name in columns if name in RANK_COLUMNS):
        values = _numbers(raw, name)
        _first_bad(raw, name, ~(values >= 1) | ~np.isfinite(values), "a number >= 1")
        if name in {"optimistic", "pessimistic"}:
            _first_bad(raw, name, values != np.floor(values), "a whole number >= 1")
        ranks[RANK_COLUMNS[name]] = values
    _check_rank_types(raw, ranks)
    candidates = _candidates(raw, ranks, num_candidates)
    weights: FloatArray | None = None
    if WEIGHT_COLUMN in columns:
        weights = _numbers(raw, WEIGHT_COLUMN)
        _first_bad(raw, WEIGHT_COLUMN, ~(weights >= 0) | ~np.isfinite(weights), "a number >= 0")
        if not weights.any():
            raise CliError(f"{raw.source}: every {WEIGHT_COLUMN} is zero")
    groups = {name: np.asarray(columns[name]).astype(str) for name in group_by}
    return RankTable(raw.source, ranks, candidates, weights, groups)


def _check_rank_types(raw: _RawTable, ranks: Mapping[str, FloatArray]) -> None:
    """Check that optimistic <= pessimistic ranks, and that a realistic rank is their mean."""
    if "optimistic" not in ranks or "pessimistic" not in ranks:
        return
    low, high = ranks["optimistic"], ranks["pessimistic"]
    if (high < low).any():
        index = int(np.flatnonzero(high < low)[0])
        raise CliError(
            f"{raw.where(index)}: the pessimistic rank {_show(high[index])} is smaller than the "
            f"optimistic rank {_show(low[index])}"
        )
    if "realistic" in ranks:
        wrong = ranks["realistic"] != 0.5 * (low + high)
        if wrong.any():
            index = int(np.flatnonzero(wrong)[0])
            raise CliError(
                f"{raw.where(index)}: the realistic rank {_show(ranks['realistic'][index])} is "
                f"not the mean of the optimistic and pessimistic ranks"
            )


def _candidates(
    raw: _RawTable, ranks: Mapping[str, FloatArray], num_candidates: int | None
) -> IntArray | None:
    """The candidate counts from their column or the flag; no rank may exceed its count."""
    largest = np.max(np.stack(list(ranks.values())), axis=0)
    if CANDIDATES_COLUMN in raw.columns:
        if num_candidates is not None:
            raise CliError(
                f"{raw.source} has a {CANDIDATES_COLUMN!r} column, and --num-candidates was "
                f"given too; use one or the other"
            )
        counts = _numbers(raw, CANDIDATES_COLUMN)
        bad = ~(counts >= 1) | ~np.isfinite(counts) | (counts != np.floor(counts))
        _first_bad(raw, CANDIDATES_COLUMN, bad, "a whole number >= 1")
        candidates = counts.astype(np.int64)
        limit = f"{CANDIDATES_COLUMN} {{}}"
    elif num_candidates is not None:
        candidates = np.full(largest.size, num_candidates, dtype=np.int64)
        limit = "--num-candidates {}"
    else:
        return None
    too_large = largest > candidates
    if too_large.any():
        index = int(np.flatnonzero(too_large)[0])
        raise CliError(
            f"{raw.where(index)}: rank {_show(largest[index])} is larger than "
            + limit.format(candidates[index])
        )
    return candidates


def _numbers(raw: _RawTable, name: str) -> FloatArray:
    """Column ``name`` as floats; a value that is no number is reported with its line."""
    column = raw.columns[name]
    if isinstance(column, np.ndarray):
        if column.dtype == np.bool_ or not np.issubdtype(column.dtype, np.number):
            raise CliError(f"{raw.source}: array {name!r} must hold numbers, got {column.dtype}")
        return column.astype(np.float64)
    try:
        return np.array(column, dtype=np.float64)
    except ValueError:
        for index, text in enumerate(column):
            if not _is_number(text):
                shown = repr(text) if text.strip() else "an empty field"
                raise CliError(
                    f"{raw.where(index)}: {name} must be a number, got {shown}"
                ) from None
        raise  # pragma: no cover  (numpy and Python disagree on what a number is)


def _first_bad(raw: _RawTable, name: str, bad: npt.NDArray[np.bool_], expected: str) -> None:
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        column = raw.columns[name]
        value = column[index]
        shown = repr(value) if isinstance(value, str) else _show(float(value))
        raise CliError(f"{raw.where(index)}: {name} must be {expected}, got {shown}")


def _show(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


# --- metrics --------------------------------------------------------------------------------------


def _split(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def parse_metrics(text: str) -> list[RankBasedMetric]:
    """Resolve a comma-separated list of metric names, e.g. ``"mrr,hits@10,amri"``.

    Raises
    ------
    CliError
        If the list is empty or names an unknown metric (with the closest valid names).
    """
    names = _split(text)
    if not names:
        raise CliError(f"--metrics/--metric needs at least one metric name, got {text!r}")
    try:
        return [metric_resolver.make(name) for name in names]
    except ValueError as error:  # UnknownMetricError, and bad cut-offs such as hits@0
        raise CliError(str(error)) from error


def _class_key(cls: type[RankBasedMetric]) -> str:
    """The key of a metric class: its name in snake case, with a cut-off left as ``k``."""
    name = cls.__name__
    return "".join(
        f"_{char.lower()}" if char.isupper() and index else char.lower()
        for index, char in enumerate(name)
    )


def metric_rows(query: str | None = None) -> list[dict[str, Any]]:
    """Describe every metric class (or those matching ``query``) as rows of a table.

    Parameters
    ----------
    query : str, optional
        Keep the metrics whose key, name, synonyms or description contain it (compared without
        case, spaces, ``-`` and ``_``).

    Returns
    -------
    list of dict
        One row per metric, sorted by key.

    Examples
    --------
    >>> for row in metric_rows("reciprocal"):
    ...     print(row["key"], row["value_range"])
    adjusted_inverse_harmonic_mean_rank (-∞, 1]
    inverse_harmonic_mean_rank (0, 1]
    z_inverse_harmonic_mean_rank (-∞, ∞)
    """
    rows = []
    for cls in metric_resolver:
        row = {
            "key": _class_key(cls),
            "name": cls.name,
            "synonyms": sorted(cls.synonyms),
            "value_range": cls.get_range(),
            "increasing": bool(cls.increasing),
            "exact_expectation": bool(cls.closed_expectation),
            "exact_variance": bool(cls.closed_variance),
            "supports_weights": bool(cls.supports_weights),
            "needs_candidates": bool(cls.needs_candidates),
            "description": cls.get_description(),
            "link": cls.get_link(),
            "class": f"rankstats.{cls.__name__}",
        }
        if query is None or _matches(query, row):
            rows.append(row)
    return sorted(rows, key=lambda row: row["key"])


def _matches(query: str, row: Mapping[str, Any]) -> bool:
    needle = metric_resolver.normalize(query)
    haystack = [row["key"], row["name"], row["description"], row["class"], *row["synonyms"]]
    return any(needle in metric_resolver.normalize(text) for text in haystack)


# --- the null model -------------------------------------------------------------------------------


@dataclass
class NullMoments:
    """A metric's expected value and standard deviation under the null, and how they were had."""

    expected: float
    std: float
    exact: bool


def null_moments(
    metric: RankBasedMetric,
    num_candidates: IntArray,
    *,
    num_samples: int | None = None,
    seed: int | None = None,
    progress: Progress | None = None,
) -> NullMoments:
    """The expected value and standard deviation of ``metric`` under the null model.

    Closed forms are used where the metric has them; otherwise ``num_samples`` rank vectors are
    drawn in blocks of bounded memory, with progress shown between blocks.

    Raises
    ------
    CliError
        If a Monte-Carlo estimate is needed and ``num_samples`` is not given.
    """
    try:
        return NullMoments(
            metric.expected_value(num_candidates),
            metric.std(num_candidates),
            exact=True,
        )
    except NoClosedFormError:
        if num_samples is None:
            raise CliError(
                f"{metric.key} has no closed-form null model for this input; pass --samples N "
                f"(e.g. --samples 10000) for a Monte-Carlo estimate"
            ) from None
    if num_samples < 2:
        raise CliError(f"--samples must be at least 2 to estimate a variance, got {num_samples}")
    generator = np.random.default_rng(seed)
    block = max(1, _BLOCK_ELEMENTS // max(1, num_candidates.size))
    values = np.empty(num_samples)
    label = f"sampling the null model of {metric.key}"
    for start in range(0, num_samples, block):
        stop = min(num_samples, start + block)
        values[start:stop] = metric.get_sampled_values(
            num_candidates, stop - start, generator=generator
        )
        if progress is not None:
            progress.update(label, stop, num_samples)
    if progress is not None:
        progress.clear()
    return NullMoments(float(values.mean()), float(values.std(ddof=1)), exact=False)


def _best_value(metric: RankBasedMetric) -> float | None:
    """The metric's best value: the bound its direction points to, where that is finite."""
    value_range = metric.value_range
    best = value_range.upper if metric.increasing else value_range.lower
    return None if best is None or not math.isfinite(best) else float(best)


def z_score(value: float, moments: NullMoments) -> float | None:
    r"""The z-score of ``value``, :math:`(M - \mathbb{E}[M]) / \sqrt{\mathbb{V}[M]}`.

    As in :func:`rankstats.evaluate`'s results it is not re-oriented: for a metric where lower is
    better, such as the mean rank, a better-than-chance value has a negative z-score.
    """
    if not moments.std > 0:
        return None
    return (value - moments.expected) / moments.std


def adjusted_index(metric: RankBasedMetric, value: float, moments: NullMoments) -> float | None:
    r"""The adjusted index :math:`(M - \mathbb{E}[M]) / (M^* - \mathbb{E}[M])` of a value.

    :math:`M^*` is the metric's best value. The index is 0 at chance level and 1 at best. It is
    defined for metrics whose best value is 1 (such as MRR, Hits@k and the mean ranks), where it
    equals AMRI, the adjusted MRR and so on.
    """
    best = _best_value(metric)
    if best != 1.0 or moments.expected == best:
        return None
    return (value - moments.expected) / (best - moments.expected)


# --- evaluation -----------------------------------------------------------------------------------


def evaluate_table(
    table: RankTable,
    metrics: Sequence[RankBasedMetric] | None = None,
    *,
    rank_types: Sequence[str] | None = None,
    average: Literal["micro", "macro"] = "micro",
) -> list[dict[str, Any]]:
    """Evaluate the ranks with :func:`rankstats.evaluate`, overall and per group.

    Parameters
    ----------
    table : RankTable
        The validated ranks.
    metrics : sequence of RankBasedMetric, optional
        The metrics; :func:`rankstats.evaluate`'s defaults when not given.
    rank_types : sequence of str, optional
        The rank types to report; by default all the input allows.
    average : {"micro", "macro"}
        How the overall rows combine the groups, when there are groups.

    Returns
    -------
    list of dict
        One row per (group, rank type, metric) with the group columns (``None`` in the overall
        rows), ``rank_type``, ``metric``, ``value``, ``expected``, ``std`` and ``z`` (``None``
        where the null model gives none).
    """
    ranks: Any = table.ranks
    if list(table.ranks) == ["realistic"]:
        ranks = table.ranks["realistic"]
    labels: npt.NDArray[np.int64] | None = None
    combinations: list[dict[str, str]] = []
    if table.groups:
        stacked = np.stack(list(table.groups.values()), axis=1)
        unique, inverse = np.unique(stacked, axis=0, return_inverse=True)
        labels = inverse.reshape(-1).astype(np.int64)
        combinations = [dict(zip(table.groups, row, strict=True)) for row in unique.tolist()]
    results = evaluate(
        ranks,
        table.num_candidates,
        metrics=metrics,
        rank_types=rank_types,
        weights=table.weights,
        groups=labels,
        average=average,
    )
    overall = dict.fromkeys(table.groups)
    rows = _result_rows(results, overall)
    for label, combination in enumerate(combinations):
        if label in results.by_group:
            rows += _result_rows(results.by_group[label], combination)
    return rows


def _result_rows(
    results: EvaluationResults, group: Mapping[str, str | None]
) -> list[dict[str, Any]]:
    return [
        {
            **group,
            "rank_type": row.rank_type,
            "metric": row.metric.key,
            "value": row.value,
            "expected": row.expected_value,
            "std": row.std,
            "z": row.z_score,
        }
        for row in results.rows
    ]


# --- output ---------------------------------------------------------------------------------------


def _format_cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        return f"{value:.6g}"
    if isinstance(value, list | tuple):
        return ", ".join(str(item) for item in value)
    return str(value)


def format_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """Format rows as an aligned text table; numbers are right-aligned."""
    cells = [[_format_cell(row.get(column)) for column in columns] for row in rows]
    widths = [
        max([len(column), *(len(line[i]) for line in cells)]) for i, column in enumerate(columns)
    ]
    numeric = [
        all(isinstance(row.get(column), int | float | None) for row in rows)
        and not all(isinstance(row.get(column), bool) for row in rows)
        for column in columns
    ]

    def line(values: Sequence[str]) -> str:
        parts = [
            value.rjust(width) if right else value.ljust(width)
            for value, width, right in zip(values, widths, numeric, strict=True)
        ]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * width for width in widths)
    return "\n".join([line(columns), rule, *(line(values) for values in cells)]) + "\n"


def format_csv(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """Format rows as CSV; lists are joined with ``;`` and missing values left empty."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        values = []
        for column in columns:
            value = row.get(column)
            if value is None or (isinstance(value, float) and math.isnan(value)):
                values.append("")
            elif isinstance(value, list | tuple):
                values.append(";".join(str(item) for item in value))
            elif isinstance(value, float):
                values.append(repr(value))
            else:
                values.append(str(value))
        writer.writerow(values)
    return buffer.getvalue()


def format_json(data: Any) -> str:
    """Format data as indented JSON, with NaN written as ``null``."""

    def clean(value: Any) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            return None
        if isinstance(value, Mapping):
            return {key: clean(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [clean(item) for item in value]
        return value

    return json.dumps(clean(data), indent=2, ensure_ascii=False) + "\n"


def _render(rows: Sequence[Mapping[str, Any]], columns: Sequence[str], output_format: str) -> str:
    if output_format == "json":
        return format_json([{column: row.get(column) for column in columns} for row in rows])
    if output_format == "csv":
        return format_csv(rows, columns)
    return format_table(rows, columns)


# --- subcommands ----------------------------------------------------------------------------------


def _progress(args: argparse.Namespace) -> Progress:
    enabled = args.progress if args.progress is not None else sys.stderr.isatty()
    return Progress(bool(enabled))


def _command_evaluate(args: argparse.Namespace) -> int:
    metrics = parse_metrics(args.metrics) if args.metrics is not None else None
    rank_types = _split(args.rank_types) if args.rank_types is not None else None
    group_by = _split(args.group_by) if args.group_by else []
    path = args.file
    if path is None and _stdin_is_piped():
        path = "-"
    elif path is None and sys.stderr.isatty():
        sys.stderr.write(
            f"{PROG}: evaluating the bundled example ({EXAMPLE}: TransE on Nations); "
            f"give a FILE to evaluate your own ranks\n"
        )
    table = read_ranks(
        path, group_by=group_by, num_candidates=args.num_candidates, progress=_progress(args)
    )
    needing = [metric.key for metric in metrics or () if metric.needs_candidates]
    if needing and table.num_candidates is None:
        raise CliError(
            f"{needing[0]} needs the number of candidates of each task; add a "
            f"{CANDIDATES_COLUMN} column to {table.source} or pass --num-candidates N"
        )
    rows = evaluate_table(table, metrics, rank_types=rank_types, average=args.average)
    columns = [*group_by, "rank_type", "metric", "value", "expected", "std", "z"]
    if args.format == "table":
        if len({row["rank_type"] for row in rows}) == 1:
            columns.remove("rank_type")
        for row in rows:
            for name in group_by:
                row[name] = "(all)" if row[name] is None else row[name]
    sys.stdout.write(_render(rows, columns, args.format))
    return 0


def _command_metrics(args: argparse.Namespace) -> int:
    rows = metric_rows(args.query)
    if not rows:
        raise CliError(f"no metric matches {args.query!r}; run '{PROG} metrics' to list them all")
    if args.format == "table":
        for row in rows:
            row["direction"] = "higher" if row["increasing"] else "lower"
            row["E"] = "exact" if row["exact_expectation"] else "sampled"
            row["V"] = "exact" if row["exact_variance"] else "sampled"
        columns = ["key", "synonyms", "value_range", "direction", "E", "V", "description"]
    else:
        columns = list(rows[0])
    sys.stdout.write(_render(rows, columns, args.format))
    return 0


def _command_null(args: argparse.Namespace) -> int:
    metrics = parse_metrics(
        args.metric if args.metric is not None else ",".join(DEFAULT_NULL_METRICS)
    )
    if args.value is not None and len(metrics) != 1:
        raise CliError(f"--value needs exactly one --metric, got {len(metrics)}")
    if args.plot is not None and len(metrics) != 1:
        raise CliError(f"--plot needs exactly one --metric, got {len(metrics)}")
    candidates = np.full(args.n, args.num_candidates, dtype=np.int64)
    progress = _progress(args)
    rows: list[dict[str, Any]] = []
    for metric in metrics:
        moments = null_moments(
            metric, candidates, num_samples=args.samples, seed=args.seed, progress=progress
        )
        row: dict[str, Any] = {
            "metric": metric.key,
            "num_candidates": args.num_candidates,
            "n": args.n,
            "expected": moments.expected,
            "std": moments.std,
            "exact": moments.exact,
        }
        if args.value is not None:
            row["value"] = args.value
            row["z"] = z_score(args.value, moments)
            row["adjusted"] = adjusted_index(metric, args.value, moments)
        rows.append(row)
    columns = ["metric", "expected", "std", "exact"]
    if args.value is not None:
        columns += ["value", "z", "adjusted"]
    if args.format != "table":
        columns[1:1] = ["num_candidates", "n"]
    sys.stdout.write(_render(rows, columns, args.format))
    if args.plot is not None:
        _save_plot(metrics[0], candidates, args)
    return 0


def _save_plot(metric: RankBasedMetric, candidates: IntArray, args: argparse.Namespace) -> None:
    try:
        import matplotlib  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        raise CliError(
            "--plot needs matplotlib; install it with pip install 'rankstats[plot]'"
        ) from None
    matplotlib.use("Agg")
    from matplotlib.figure import Figure  # type: ignore[import-not-found, unused-ignore]

    from rankstats.plot import plot_null_distribution

    figure = Figure(figsize=(6.4, 4.0), layout="constrained")
    plot_null_distribution(
        metric,
        candidates,
        observed=args.value,
        num_samples=args.samples or 10_000,
        generator=args.seed,
        ax=figure.subplots(),
    )
    figure.savefig(args.plot, dpi=120)


def _command_example(args: argparse.Namespace) -> int:
    sys.stdout.write((resources.files("rankstats") / "data" / EXAMPLE).read_text("utf-8"))
    return 0


# --- the parser -----------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line, pointing at ``--help``."""

    def error(self, message: str) -> NoReturn:
        """Report a usage error on one line and exit with status 2."""
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _finite_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def _add_format(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=("table", "json", "csv"),
        default="table",
        help="the output format (default: %(default)s)",
    )


def _add_progress(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show the progress of long work on standard error (default: only on a terminal)",
    )


def build_parser() -> argparse.ArgumentParser:
    """Build the parser of the ``rankstats`` command and its subcommands."""
    parser = _Parser(
        prog=PROG,
        description="Rank-based evaluation metrics with exact null models.",
        epilog=f"Run '{PROG} COMMAND --help' for the options of a command.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {rankstats.__version__}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", dest="command")

    evaluate = commands.add_parser(
        "evaluate",
        help="evaluate ranks from a file and print the metrics table",
        description="Evaluate ranks and print each metric's value with its expected value, "
        "standard deviation and z-score (value - expected) / std under the null model, in which "
        "each rank is uniform on 1..num_candidates.",
        epilog=f"Input columns: {RANK_COLUMN} (the realistic rank; or optimistic and pessimistic, "
        f"which add the rank type 'expected'), {CANDIDATES_COLUMN} (needed for expected values "
        f"and adjusted metrics), {WEIGHT_COLUMN}, and any columns to group by. Run "
        f"'{PROG} example' to see the bundled example file.",
    )
    evaluate.add_argument(
        "file",
        nargs="?",
        metavar="FILE",
        help="a CSV/TSV file (optionally .gz), a .npy or .npz file, or '-' for standard input; "
        "without FILE, piped standard input or else the bundled example is read",
    )
    evaluate.add_argument(
        "--metrics",
        metavar="LIST",
        help="comma-separated metric names, e.g. mrr,hits@10,amri (default: a standard set)",
    )
    evaluate.add_argument(
        "--num-candidates",
        type=_positive_int,
        metavar="N",
        help=f"the number of candidates of every task, when the input has no {CANDIDATES_COLUMN} "
        "column",
    )
    evaluate.add_argument(
        "--group-by",
        metavar="COLUMNS",
        help="comma-separated columns to group by, e.g. relation or relation,side; each group "
        "gets its own rows after the overall ones",
    )
    evaluate.add_argument(
        "--average",
        choices=("micro", "macro"),
        default="micro",
        help="how the overall rows combine the groups: micro counts every rank once, macro every "
        "group once (default: %(default)s)",
    )
    evaluate.add_argument(
        "--rank-types",
        metavar="LIST",
        help="comma-separated rank types to report: optimistic, realistic, pessimistic, expected "
        "(default: all the input allows)",
    )
    _add_format(evaluate)
    _add_progress(evaluate)
    evaluate.set_defaults(handler=_command_evaluate)

    metrics = commands.add_parser(
        "metrics",
        help="list every metric",
        description="List every metric: key, synonyms, value range, whether higher or lower is "
        "better, whether the null model's expected value (E) and variance (V) are exact, and a "
        "one-line description.",
    )
    metrics.add_argument(
        "query", nargs="?", metavar="QUERY", help="show only the metrics that mention QUERY"
    )
    _add_format(metrics)
    metrics.set_defaults(handler=_command_metrics)

    null = commands.add_parser(
        "null",
        help="the expected value and standard deviation of metrics under the null model",
        description="The expected value and standard deviation of metrics when each of n ranks is "
        "uniform on 1..C; with --value, the z-score and adjusted index of an observed result.",
    )
    null.add_argument(
        "--metric",
        "--metrics",
        metavar="LIST",
        help=f"comma-separated metric names (default: {','.join(DEFAULT_NULL_METRICS)})",
    )
    null.add_argument(
        "--num-candidates",
        type=_positive_int,
        required=True,
        metavar="C",
        help="the number of candidates of every ranking task",
    )
    null.add_argument(
        "--n",
        type=_positive_int,
        default=1,
        help="the number of ranking tasks (default: %(default)s)",
    )
    null.add_argument(
        "--value",
        type=_finite_float,
        metavar="X",
        help="an observed value of the metric, e.g. a published result, to compare with chance",
    )
    null.add_argument(
        "--plot", metavar="PNG", help="also draw the null distribution to this image file"
    )
    null.add_argument(
        "--samples",
        type=_positive_int,
        metavar="N",
        help="estimate from N Monte-Carlo samples what has no closed form (and the --plot)",
    )
    null.add_argument(
        "--seed", type=int, help="the seed of the Monte-Carlo samples, for reproducible output"
    )
    _add_format(null)
    _add_progress(null)
    null.set_defaults(handler=_command_null)

    example = commands.add_parser(
        "example",
        help="print the bundled example file",
        description="Print the bundled example input (TransE ranks on Nations) as CSV.",
    )
    example.set_defaults(handler=_command_example)
    return parser


# --- entry point ----------------------------------------------------------------------------------


def _one_line(message: str) -> str:
    return " ".join(message.split())


def _fail(message: str) -> int:
    sys.stderr.write(f"{PROG}: error: {_one_line(message)}\n")
    return EXIT_ERROR


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``rankstats`` command.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments, without the program name; ``sys.argv[1:]`` by default.

    Returns
    -------
    int
        The exit status: 0 on success, 1 for errors in the input, 2 for usage errors.
    """
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(errors="replace")  # e.g. '∞' on a console that cannot show it
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    handler: Callable[[argparse.Namespace], int] = args.handler
    if os.environ.get("RANKSTATS_DEBUG"):
        return handler(args)
    try:
        return handler(args)
    except CliError as error:
        return _fail(str(error))
    except (ValueError, TypeError) as error:  # rankstats' own errors are ValueErrors
        return _fail(str(error))
    except BrokenPipeError:  # e.g. piped into head: stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_ERROR
    except FileNotFoundError as error:
        return _fail(f"no such file: {error.filename}")
    except EOFError:
        return _fail("the input ended unexpectedly (a truncated file?)")
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        return _fail(f"{where}{error.strerror or error}")
    except KeyboardInterrupt:
        sys.stderr.write(f"\n{PROG}: interrupted\n")
        return 130
    except MemoryError:
        return _fail("out of memory; try a smaller input or fewer --samples")
    except Exception as error:  # a bug: still one line, with a way to see the traceback
        return _fail(
            f"internal error ({type(error).__name__}: {error}); please report it, and set "
            f"RANKSTATS_DEBUG=1 to see the traceback"
        )
