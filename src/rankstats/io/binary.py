"""Readers of binary tables of ranks: NumPy ``.npy`` / ``.npz``, Parquet and Arrow.

- a ``.npy`` file holds a 1-D array of ranks or a structured array whose fields are the columns;
- a ``.npz`` archive holds one 1-D array per column, or PyKEEN's layout: ``head.optimistic``,
  ``head.realistic``, ``head.pessimistic``, ``tail.…`` and ``num_candidates.head``,
  ``num_candidates.tail``, which become the columns ``optimistic``, ``realistic``,
  ``pessimistic``, ``num_candidates`` and a text column ``side`` (``head`` rows first);
- Parquet and Arrow IPC (Feather v2) files hold a table whose columns are read as they are; they
  need the optional ``pyarrow`` (``pip install 'rankstats[parquet]'``), imported only here.

Column names are matched ignoring case, as in text files; byte strings are decoded as UTF-8.
Binary tables have no lines: errors name the row (1-based).
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Mapping
from typing import IO, Any

import numpy as np
import numpy.typing as npt

from rankstats.io.data import (
    CANDIDATES_COLUMN,
    NUMERIC_COLUMNS,
    RANK_COLUMN,
    RankFileError,
    RawTable,
    distinct_columns,
)

__all__ = ["read_arrow", "read_numpy", "read_parquet"]

AnyArray = npt.NDArray[Any]
#: PyKEEN's layout of ranks arrays: ``{side}.{rank type}`` and ``num_candidates.{side}``
_SIDES = ("head", "tail")
_PYARROW = "pip install 'rankstats[parquet]'"


def read_numpy(stream: IO[bytes], source: str, kind: str) -> RawTable:
    """Read ranks from a ``.npy`` array or the arrays of a ``.npz`` archive (``kind``)."""
    data = io.BytesIO(stream.read())  # np.load needs a seekable file
    try:
        loaded = np.load(data, allow_pickle=False)
    except Exception as error:  # numpy raises ValueError, OSError, zipfile errors, ...
        raise RankFileError(f"{source} is not a readable {kind} file: {error}", source) from error
    if isinstance(loaded, np.ndarray):
        if loaded.dtype.names:
            fields = loaded.dtype.names
            names = distinct_columns(fields, source, "the structured array")
            columns: dict[str, AnyArray] = {
                name: loaded[field] for name, field in zip(names, fields, strict=True)
            }
        elif loaded.ndim == 1:
            columns = {RANK_COLUMN: loaded}
        else:
            raise RankFileError(
                f"{source}: expected a 1-D array of ranks or a structured array with a "
                f"{RANK_COLUMN!r} field, got an array of shape {loaded.shape}",
                source,
            )
    else:
        with loaded:
            names = distinct_columns(loaded.files, source, "the archive")
            try:
                arrays = {name: loaded[key] for name, key in zip(names, loaded.files, strict=True)}
            except Exception as error:  # a damaged member
                raise RankFileError(
                    f"{source} is not a readable {kind} file: {error}", source
                ) from error
        columns = _from_pykeen_layout(arrays, source) or dict(arrays)
    return _checked(columns, source, "array")


def _checked(columns: dict[str, AnyArray], source: str, what: str) -> RawTable:
    for name, column in columns.items():
        if np.ndim(column) != 1:
            raise RankFileError(
                f"{source}: {what} {name!r} must be 1-D, got shape {np.shape(column)}",
                source,
                column=name,
            )
        if column.dtype.kind == "b":
            columns[name] = column.astype(str)
        elif column.dtype.kind == "S" or (column.size and isinstance(column[0], bytes)):
            columns[name] = _decoded(column, source, name)
    lengths = {name: len(column) for name, column in columns.items()}
    if len(set(lengths.values())) > 1:
        listed = ", ".join(f"{name} ({length})" for name, length in lengths.items())
        raise RankFileError(f"{source}: the {what}s must have equal lengths, got {listed}", source)
    if columns and not next(iter(lengths.values())):
        raise RankFileError(f"{source} holds no ranks", source)
    return RawTable(source, columns)


def _decoded(column: AnyArray, source: str, name: str) -> AnyArray:
    """A column of byte strings as text, decoded as UTF-8 (as text files are)."""
    values: list[bytes] = column.tolist()
    try:
        return np.array([value.decode("utf-8") for value in values], dtype=str)
    except UnicodeDecodeError:
        pass
    for row, value in enumerate(values):  # the failure path only
        try:
            value.decode("utf-8")
        except UnicodeDecodeError as error:
            shown = repr(value[:20]) + ("..." if len(value) > 20 else "")
            raise RankFileError(
                f"{source}, row {row + 1}: {name} must be a number or UTF-8 text, got the "
                f"bytes {shown} ({error.reason})",
                source,
                line=row + 1,
                column=name,
            ) from None
    raise AssertionError("no value failed to decode")  # pragma: no cover


def _from_pykeen_layout(arrays: Mapping[str, AnyArray], source: str) -> dict[str, AnyArray] | None:
    """Turn PyKEEN's per-side arrays (``head.realistic``, ...) into long columns with ``side``.

    Every array must be read: one of no side and rank type (a ``weight`` of every task, say)
    or counts of some sides only had been dropped without a word.
    """
    sides = [side for side in _SIDES if any(key.startswith(f"{side}.") for key in arrays)]
    if not sides:
        return None
    types = [t for t in ("optimistic", "realistic", "pessimistic") if f"{sides[0]}.{t}" in arrays]
    if not types:
        return None
    columns: dict[str, AnyArray] = {}
    for rank_type in types:
        parts = [arrays.get(f"{side}.{rank_type}") for side in sides]
        if any(part is None for part in parts):
            return None
        columns[rank_type] = np.concatenate([np.ravel(part) for part in parts if part is not None])
    lengths = [np.size(arrays[f"{side}.{types[0]}"]) for side in sides]
    columns["side"] = np.repeat(np.array(sides), lengths)
    counts = [f"{CANDIDATES_COLUMN}.{side}" for side in sides]
    given = [name for name in counts if name in arrays]
    if given and len(given) < len(counts):
        missing = [name for name in counts if name not in arrays]
        raise RankFileError(
            f"{source}: PyKEEN's layout has {', '.join(given)} but not {', '.join(missing)}; "
            "give the counts of every side or of none",
            source,
        )
    if given:
        columns[CANDIDATES_COLUMN] = np.concatenate([np.ravel(arrays[name]) for name in counts])
    used = {f"{side}.{rank_type}" for side in sides for rank_type in types} | set(given)
    unused = [name for name in arrays if name not in used]
    if unused:
        raise RankFileError(
            f"{source}: in PyKEEN's layout (one array per side and rank type, and "
            f"{CANDIDATES_COLUMN}.<side>), the arrays {', '.join(map(repr, unused))} belong to "
            "no side and rank type read; save them per column (one array each, with "
            "'side' and the ranks as columns) to keep them",
            source,
        )
    return columns


def _pyarrow(what: str) -> Any:
    try:
        import pyarrow
    except ImportError:
        raise ImportError(
            f"reading {what} files needs pyarrow, an optional dependency: {_PYARROW}"
        ) from None
    return pyarrow


def _from_arrow_table(table: Any, source: str) -> RawTable:
    import pyarrow.types

    columns: dict[str, AnyArray] = {}
    given = [str(name) for name in table.column_names]
    names = distinct_columns(given, source, "the table")
    for label, name, column in zip(given, names, table.columns, strict=True):
        if column.null_count and name not in NUMERIC_COLUMNS:
            # a column of labels: a null is an empty label, as an empty field of a text file
            # (a column read for nothing had refused the whole table); numbers with nulls are
            # labels in text then, as a text file's column with an empty field
            with contextlib.suppress(pyarrow.ArrowException):  # a nested type: refused below
                column = column.cast(pyarrow.string()).fill_null("")
        if column.null_count:
            index = int(np.flatnonzero(np.asarray(column.is_null()))[0])
            raise RankFileError(
                f"{source}, row {index + 1}: {label} is missing (null)",
                source,
                line=index + 1,
                column=name,
            )
        if pyarrow.types.is_nested(column.type) and not pyarrow.types.is_struct(column.type):
            raise RankFileError(
                f"{source}: column {name!r} must hold one number or text per row, got values "
                f"of type {column.type}",
                source,
                column=name,
            )
        columns[name] = np.asarray(column.to_numpy())
    if not columns:
        raise RankFileError(f"{source} holds no columns", source)
    return _checked(columns, source, "column")


def read_parquet(stream: IO[bytes], source: str) -> RawTable:
    """Read a Parquet table (needs pyarrow).

    Parquet is read from its end: a file is read in place; a stream that cannot seek (standard
    input, gzip, a file object) is read into memory first, as Arrow files are.
    """
    arrow = _pyarrow("Parquet")
    import pyarrow.parquet

    seekable = isinstance(stream, io.BufferedReader | io.FileIO) and stream.seekable()
    path = getattr(stream, "name", None)
    # a file by its path, through Arrow's own file (a Python file object handed to pyarrow
    # leaves work behind that aborted the interpreter at exit, now and then: apache/arrow#33975)
    data = (
        arrow.memory_map(path)
        if seekable and isinstance(path, str)
        else arrow.BufferReader(stream.read())
    )
    try:
        table = pyarrow.parquet.read_table(data)
    except Exception as error:  # pyarrow's ArrowInvalid, OSError, ...
        raise RankFileError(f"{source} is not a readable Parquet file: {error}", source) from error
    return _from_arrow_table(table, source)


def read_arrow(stream: IO[bytes], source: str) -> RawTable:
    """Read an Arrow IPC file or stream, Feather v2 included (needs pyarrow)."""
    arrow = _pyarrow("Arrow")
    import pyarrow.ipc

    data = stream.read()
    try:
        try:
            table = pyarrow.ipc.open_file(arrow.BufferReader(data)).read_all()
        except arrow.ArrowInvalid:
            table = pyarrow.ipc.open_stream(arrow.BufferReader(data)).read_all()
    except Exception as error:
        raise RankFileError(f"{source} is not a readable Arrow file: {error}", source) from error
    return _from_arrow_table(table, source)
