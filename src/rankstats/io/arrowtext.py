"""The fast path for large CSV / TSV files: ``pyarrow.csv``, multi-threaded C++, where installed.

Used by :func:`~rankstats.io.read_ranks` for a text file named by a path when pyarrow is
installed (``engine="auto"``) or asked for (``engine="pyarrow"``). It applies only to the plain
case: a header on the first line, a comma or tab delimiter, every number parsed by Arrow. Anything
else (a blank first line, whitespace-separated columns, a headerless column of ranks, a field
Arrow cannot parse, a line with the wrong number of fields, a number from 2**52 on, which float64
may have rounded) returns ``None``, and the file is read by the numpy reader of
:mod:`rankstats.io.text`, which reports the exact line of a problem. When a value is wrong after
parsing (a rank larger than its candidate count), the line is found by reading the file once more
with that reader: exact positions cost time only on failure.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from rankstats.io.data import ROUNDING_FROM, RawTable
from rankstats.io.text import choose_delimiter, is_number, read_text, split_header

__all__ = ["read_text_arrow"]


def _first_line(path: Path, compressed: bool) -> bytes:
    opener: Any = gzip.open if compressed else open
    with opener(path, "rb") as file:
        line: bytes = file.readline(1 << 16)
    return line.removeprefix(b"\xef\xbb\xbf")


def read_text_arrow(
    path: Path,
    source: str,
    *,
    delimiter: str | None,
    numeric: Iterable[str],
    compressed: bool = False,
) -> RawTable | None:
    """Read a delimited text file with ``pyarrow.csv``, or ``None`` where that does not apply."""
    import pyarrow
    import pyarrow.compute
    import pyarrow.csv

    try:
        first = (_first_line(path, compressed).splitlines() or [b""])[0].decode("utf-8")
    except (OSError, EOFError, UnicodeDecodeError):
        return None
    sep = choose_delimiter(first, delimiter) if first.strip() else None
    if sep is None or '"' in first:
        return None
    header = split_header(first, sep)
    if len(set(header)) != len(header) or (len(header) == 1 and is_number(header[0])):
        return None
    wanted = set(numeric)
    types = {name: pyarrow.float64() if name in wanted else pyarrow.string() for name in header}
    try:
        table = pyarrow.csv.read_csv(
            path,
            read_options=pyarrow.csv.ReadOptions(skip_rows=1, column_names=header),
            parse_options=pyarrow.csv.ParseOptions(delimiter=sep),
            convert_options=pyarrow.csv.ConvertOptions(
                column_types=types,
                null_values=[],
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pyarrow.ArrowException, OSError, EOFError, ValueError):
        return None
    if table.num_rows == 0:
        return None
    columns = {}
    for name in header:
        column = table.column(name).combine_chunks()
        if name in wanted:
            columns[name] = column.to_numpy(zero_copy_only=False)
            if np.any(columns[name] >= ROUNDING_FROM):  # float64 may have rounded the text
                return None  # the numpy reader checks it (inexact_rows)
        else:
            if pyarrow.compute.any(pyarrow.compute.match_substring_regex(column, "[\r\n]")).as_py():
                # a line break inside quotes, or a quote never closed (Arrow reads the rest of
                # the file into one field): the numpy reader tells the two apart
                return None
            encoded = column.dictionary_encode()
            labels = [label.strip() for label in encoded.dictionary.to_pylist()]
            codes = encoded.indices.to_numpy(zero_copy_only=False)
            columns[name] = np.array(labels, dtype=str)[codes]

    def line_of(row: int) -> int:  # the failure path: the numpy reader knows every line
        opener: Any = gzip.open if compressed else open
        with opener(path, "rb") as stream:
            table = read_text(stream, source, delimiter=sep, numeric=wanted)
        assert table.line_of is not None
        return table.line_of(row)

    return RawTable(source, columns, line_of=line_of)
