r"""Ranks read from a file: the :class:`RankData` they become, and the checks on the way.

A file of ranks is a table. The columns with a meaning are

``rank`` (or ``realistic``)
    the realistic rank of each task: an integer, or a half-integer where the true answer tied
    with other candidates (the mean of the optimistic and pessimistic ranks);
``optimistic``, ``pessimistic``
    the ranks with ties broken for and against the true answer: whole numbers;
``num_candidates``
    the number of candidates of each task, a whole number no smaller than its ranks;
``weight``
    a non-negative weight per task, not all zero.

Every other column is kept as text, to group by. Each check names the file, the line (or row,
for binary formats) and the column of the first bad value.

Ranks such as 1.25 cannot come from ranking with ties: a realistic rank is the mean of two whole
numbers, so only integers and half-integers arise. They are refused, since they mean the column
holds something else (an average over runs, a score), for which the null model does not hold.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from rankstats.arrays import FloatArray, IntArray

if TYPE_CHECKING:  # pragma: no cover
    from rankstats.evaluation.results import EvaluationResults

__all__ = [
    "CANDIDATES_COLUMN",
    "RANK_COLUMN",
    "RANK_COLUMNS",
    "WEIGHT_COLUMN",
    "RankData",
    "RankFileError",
    "RawTable",
]

#: the realistic rank's usual column name
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
#: the columns read as numbers
NUMERIC_COLUMNS = frozenset([*RANK_COLUMNS, CANDIDATES_COLUMN, WEIGHT_COLUMN])
#: the largest candidate count that is exact as a float and fits int64 comfortably
MAX_CANDIDATES = 2**53
#: the columns of whole or half-integers, which float64 must hold exactly: ranks and counts
EXACT_COLUMNS = frozenset([*RANK_COLUMNS, CANDIDATES_COLUMN])
#: from here on float64 holds no half-integers (and from 2**53 on, not every integer): readers
#: check that larger numbers are the numbers written (see :func:`inexact_rows`)
ROUNDING_FROM = 2.0**52

AnyArray = npt.NDArray[Any]


class RankFileError(ValueError):
    """A file of ranks that cannot be read or does not hold valid ranks.

    The message names the file and, where it applies, the line (or row) and column; they are
    also available as attributes.

    Attributes
    ----------
    source : str
        The file's name (``<stdin>`` for standard input).
    line : int or None
        The 1-based line of a text file, or row of a binary table, of the first bad value.
    column : str or None
        The column of the first bad value.
    """

    def __init__(
        self, message: str, source: str, *, line: int | None = None, column: str | None = None
    ) -> None:
        super().__init__(message)
        self.source = source
        self.line = line
        self.column = column


@dataclass
class RawTable:
    """Columns as read, before checking: numbers as float64, text as unicode arrays.

    ``line_of`` maps a row index to its line in a text file; binary formats have none and name
    rows instead.
    """

    source: str
    columns: dict[str, AnyArray]
    line_of: Callable[[int], int] | None = None
    #: the text of numbers float64 does not hold exactly (from text files), by column and row
    inexact: dict[str, dict[int, str]] = field(default_factory=dict)

    def where(self, index: int) -> tuple[str, int]:
        """Where row ``index`` is, as text (``file, line 7``) and as a number."""
        if self.line_of is not None:
            line = self.line_of(index)
            return f"{self.source}, line {line}", line
        return f"{self.source}, row {index + 1}", index + 1


def repeated(names: Iterable[str]) -> list[str]:
    """The names that occur more than once, in the order they first occur."""
    seen: set[str] = set()
    found: dict[str, None] = {}
    for name in names:
        if name in seen:
            found[name] = None
        seen.add(name)
    return list(found)


def distinct_columns(names: Sequence[str], source: str, where: str) -> list[str]:
    """The column names lower-cased, as columns are matched; a name given twice is refused.

    Parameters
    ----------
    names : sequence of str
        The names as the file gives them.
    source : str
        The file's name, for messages.
    where : str
        What holds the names, for messages: ``"the header"``, ``"the table"``, ...

    Raises
    ------
    RankFileError
        If two names are the same but for case (or the same).
    """
    lowered = [name.lower() for name in names]
    twice = repeated(lowered)
    if twice:
        spellings = list(
            dict.fromkeys(n for n, low in zip(names, lowered, strict=True) if low == twice[0])
        )
        spelled = ""
        if len(spellings) > 1:
            shown = " and ".join(repr(name) for name in spellings)
            spelled = f" (as {shown}: names are matched ignoring case)"
        raise RankFileError(
            f"{source}: {where} names the column {twice[0]!r} more than once{spelled}",
            source,
            column=twice[0],
        )
    return lowered


def inexact_rows(
    values: Sequence[Any] | AnyArray, numbers: FloatArray, first_row: int = 0
) -> dict[int, str]:
    """The rows whose value float64 rounds, with the value as text.

    Only numbers from :data:`ROUNDING_FROM` on are looked at (the rare case): below it, float64
    holds every whole and half-integer, the only values ranks and counts may have.

    Parameters
    ----------
    values : sequence or numpy.ndarray
        The values as given: text (``str`` or UTF-8 ``bytes``), integers or decimals.
    numbers : numpy.ndarray of float64
        The values as float64.
    first_row : int
        The row of the first value.
    """
    found: dict[int, str] = {}
    for index in np.flatnonzero(numbers >= ROUNDING_FROM).tolist():
        value = values[index]
        text = (value.decode() if isinstance(value, bytes) else str(value)).strip()
        if Decimal(text) != Decimal(float(numbers[index])):
            found[first_row + index] = text
    return found


@dataclass(frozen=True, eq=False)
class RankData:
    r"""Validated ranks from a file, ready for :func:`rankstats.evaluate`.

    Attributes
    ----------
    source : str
        Where the ranks came from, for messages: a path, ``<stdin>`` or the bundled example.
    ranks : dict of str to numpy.ndarray of shape (n,)
        The ranks by rank type (``"realistic"``, ``"optimistic"``, ``"pessimistic"``).
    num_candidates : numpy.ndarray of shape (n,) or None
        The number of candidates of each task.
    weights : numpy.ndarray of shape (n,) or None
        The weight of each task.
    columns : dict of str to numpy.ndarray of shape (n,)
        Every other column, as text: what can be grouped by.

    Examples
    --------
    >>> import io
    >>> from rankstats.io import read_ranks
    >>> text = b"relation,rank,num_candidates\nr1,1,10\nr1,3,10\nr2,2,5\n"
    >>> data = read_ranks(io.BytesIO(text))
    >>> len(data), list(data.ranks), list(data.columns)
    (3, ['realistic'], ['relation'])
    >>> results = data.evaluate(metrics=["mrr"], group_by="relation")
    >>> round(results["mrr"], 4), sorted(results.by_group)
    (0.6111, ['r1', 'r2'])
    """

    source: str
    ranks: dict[str, FloatArray]
    num_candidates: IntArray | None = None
    weights: FloatArray | None = None
    columns: dict[str, AnyArray] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(next(iter(self.ranks.values())).size)

    def group_labels(self, by: str | Sequence[str]) -> AnyArray:
        """The group label of each task, for ``evaluate(..., groups=...)``.

        Parameters
        ----------
        by : str or sequence of str
            One column (labels are its strings) or several (labels are tuples of strings).

        Raises
        ------
        ValueError
            If a column does not exist (the message lists those that do).
        """
        names = [by] if isinstance(by, str) else list(by)
        if not names:
            raise ValueError("group_by must name at least one column")
        for name in names:
            if name not in self.columns:
                found = ", ".join(repr(column) for column in self.columns) or "none"
                kind = (
                    "a column of numbers with a meaning" if name in NUMERIC_COLUMNS else "no column"
                )
                raise ValueError(
                    f"{self.source} has {kind} {name!r} to group by; the columns to group by "
                    f"are: {found}"
                )
        if len(names) == 1:
            return self.columns[names[0]]
        stacked = np.empty(len(self), dtype=[(name, self.columns[name].dtype) for name in names])
        for name in names:
            stacked[name] = self.columns[name]
        return stacked

    def evaluate_arguments(self, group_by: str | Sequence[str] | None = None) -> dict[str, Any]:
        """The arguments of :func:`rankstats.evaluate` that these ranks give.

        ``ranks`` (an array for realistic ranks alone, else a mapping by rank type),
        ``num_candidates``, ``weights`` and, with ``group_by``, ``groups``.
        """
        ranks: Any = dict(self.ranks)
        if list(self.ranks) == ["realistic"]:
            ranks = self.ranks["realistic"]
        arguments: dict[str, Any] = {
            "ranks": ranks,
            "num_candidates": self.num_candidates,
            "weights": self.weights,
        }
        if group_by is not None:
            arguments["groups"] = self.group_labels(group_by)
        return arguments

    def evaluate(
        self, *, group_by: str | Sequence[str] | None = None, **kwargs: Any
    ) -> EvaluationResults:
        """Evaluate the ranks with :func:`rankstats.evaluate`.

        Parameters
        ----------
        group_by : str or sequence of str, optional
            Columns to group by; each group's results are in ``results.by_group``, keyed by
            the column's value (a tuple of values for several columns).
        **kwargs
            Any other argument of :func:`rankstats.evaluate` (``metrics``, ``rank_types``,
            ``average``, ...).
        """
        from rankstats.evaluation import evaluate

        return evaluate(**self.evaluate_arguments(group_by), **kwargs)


# --- from raw columns to RankData ----------------------------------------------------------------


def _show(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, int | np.integer):
        return str(int(value))
    number = float(value)
    if number.is_integer() and abs(number) < 2**63:
        return str(int(number))
    return repr(number)


def _first_bad(raw: RawTable, name: str, bad: npt.NDArray[np.bool_], expected: str) -> None:
    if bad.any():
        index = int(np.argmax(bad))
        where, line = raw.where(index)
        value = raw.columns[name][index]
        raise RankFileError(
            f"{where}: {name} must be {expected}, got {_show(value)}",
            raw.source,
            line=line,
            column=name,
        )


def _numbers(raw: RawTable, name: str) -> FloatArray:
    """A column as float64; arrays of non-numbers (from binary formats) are refused.

    Decimals (from Parquet) are numbers. In a column of ranks or counts, a value float64 would
    round (an integer above 2**53, a text or decimal it does not hold) is refused first.
    """
    column = raw.columns[name]
    decimals = column.dtype.kind == "O" and all(isinstance(value, Decimal) for value in column)
    if column.dtype.kind not in "iuf" and not decimals:
        if column.dtype.kind in "OU" and all(isinstance(value, str) for value in column):
            given = f"text such as {str(column[0])!r}"
        else:
            given = f"values of dtype {column.dtype}"
        raise RankFileError(
            f"{raw.source}: column {name!r} must hold numbers (integers or floats), got {given}",
            raw.source,
            column=name,
        )
    values = column.astype(np.float64, copy=False)
    if name in EXACT_COLUMNS:
        inexact = dict(raw.inexact.get(name, {}))
        if column.dtype.kind != "f":
            inexact.update(inexact_rows(column, values))
        if inexact:
            index = min(inexact)
            where, line = raw.where(index)
            rounded = values[index]
            note = (
                f", which it would round to {_show(rounded)}" if rounded <= MAX_CANDIDATES else ""
            )
            raise RankFileError(
                f"{where}: {name} must be at most 2**53 and a whole number (or a half-integer "
                f"below 2**52), which float64 holds exactly; got {inexact[index]}{note}",
                raw.source,
                line=line,
                column=name,
            )
    return values


def build_rank_data(raw: RawTable, *, num_candidates: int | None = None) -> RankData:
    """Check and convert the columns of a table, naming the line of the first bad value.

    Parameters
    ----------
    raw : RawTable
        The columns as read.
    num_candidates : int, optional
        The number of candidates of every task, for input without a ``num_candidates`` column.

    Raises
    ------
    RankFileError
        At the first problem, with the file, line and column.
    """
    columns = raw.columns
    present = [name for name in columns if name in RANK_COLUMNS]
    if not present:
        found = ", ".join(repr(name) for name in columns) or "none"
        raise RankFileError(
            f"{raw.source} has no {RANK_COLUMN!r} column; it has {found}. One column must be "
            f"{RANK_COLUMN!r} (or 'optimistic' and 'pessimistic')",
            raw.source,
        )
    if RANK_COLUMN in columns and "realistic" in columns:
        raise RankFileError(
            f"{raw.source} has both a {RANK_COLUMN!r} and a 'realistic' column; they mean the "
            f"same, keep one",
            raw.source,
        )
    ranks: dict[str, FloatArray] = {}
    for name in present:
        values = _numbers(raw, name)
        _first_bad(raw, name, ~(values >= 1) | ~np.isfinite(values), "a number >= 1")
        _first_bad(
            raw, name, values > MAX_CANDIDATES, "at most 2**53 (no ranking has more candidates)"
        )
        if name in {"optimistic", "pessimistic"}:
            _first_bad(raw, name, values != np.floor(values), "a whole number >= 1")
        else:
            _first_bad(
                raw,
                name,
                2 * values != np.floor(2 * values),
                "a whole or half-integer (a realistic rank is the mean of the optimistic and "
                "pessimistic ranks)",
            )
        ranks[RANK_COLUMNS[name]] = values
    _check_rank_types(raw, ranks)
    candidates = _candidates(raw, ranks, num_candidates)
    weights: FloatArray | None = None
    if WEIGHT_COLUMN in columns:
        weights = _numbers(raw, WEIGHT_COLUMN)
        _first_bad(raw, WEIGHT_COLUMN, ~(weights >= 0) | ~np.isfinite(weights), "a number >= 0")
        if not weights.any():
            raise RankFileError(
                f"{raw.source}: every {WEIGHT_COLUMN} is zero", raw.source, column=WEIGHT_COLUMN
            )
    others = {
        name: column.astype(str) if column.dtype.kind not in "U" else column
        for name, column in columns.items()
        if name not in NUMERIC_COLUMNS
    }
    return RankData(raw.source, ranks, candidates, weights, others)


def _check_rank_types(raw: RawTable, ranks: Mapping[str, FloatArray]) -> None:
    """Check that optimistic <= pessimistic ranks, and that a realistic rank is their mean."""
    if "optimistic" not in ranks or "pessimistic" not in ranks:
        return
    low, high = ranks["optimistic"], ranks["pessimistic"]
    if (high < low).any():
        index = int(np.argmax(high < low))
        where, line = raw.where(index)
        raise RankFileError(
            f"{where}: the pessimistic rank {_show(high[index])} is smaller than the "
            f"optimistic rank {_show(low[index])}",
            raw.source,
            line=line,
            column="pessimistic",
        )
    if "realistic" in ranks:
        wrong = ranks["realistic"] != 0.5 * (low + high)
        if wrong.any():
            index = int(np.argmax(wrong))
            where, line = raw.where(index)
            raise RankFileError(
                f"{where}: the realistic rank {_show(ranks['realistic'][index])} is not the mean "
                f"of the optimistic and pessimistic ranks",
                raw.source,
                line=line,
                column="realistic",
            )


def _candidates(
    raw: RawTable, ranks: Mapping[str, FloatArray], num_candidates: int | None
) -> IntArray | None:
    """The candidate counts from their column or the argument; no rank may exceed its count."""
    largest = np.maximum.reduce(list(ranks.values()))
    if CANDIDATES_COLUMN in raw.columns:
        if num_candidates is not None:
            raise RankFileError(
                f"{raw.source} has a {CANDIDATES_COLUMN!r} column, and num_candidates was given "
                f"too (--num-candidates); use one or the other",
                raw.source,
                column=CANDIDATES_COLUMN,
            )
        counts = _numbers(raw, CANDIDATES_COLUMN)
        bad = ~(counts >= 1) | ~(counts <= MAX_CANDIDATES) | (counts != np.floor(counts))
        _first_bad(raw, CANDIDATES_COLUMN, bad, "a whole number >= 1 (and at most 2**53)")
        candidates = counts.astype(np.int64)
        limit = f"{CANDIDATES_COLUMN} {{}}"
    elif num_candidates is not None:
        candidates = np.full(largest.size, num_candidates, dtype=np.int64)
        limit = "num_candidates {}"
    else:
        return None
    too_large = largest > candidates
    if too_large.any():
        index = int(np.argmax(too_large))
        where, line = raw.where(index)
        raise RankFileError(
            f"{where}: rank {_show(largest[index])} is larger than "
            + limit.format(candidates[index]),
            raw.source,
            line=line,
            column=CANDIDATES_COLUMN,
        )
    return candidates
