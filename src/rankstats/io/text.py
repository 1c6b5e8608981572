r"""A vectorised reader of delimited text: CSV, TSV and whitespace-separated columns.

The file is read in blocks of about a megabyte, cut at line ends. Each block is split into its
fields by one call of :meth:`bytes.split`, numbers are converted by one C-level pass
(``numpy.fromiter(map(float, ...))``) and text columns are coded through a dictionary of their
distinct values, each decoded once at the end. The cost per line is a few C-level operations, and
the memory beyond the result is that of one block. Line numbers are not tracked per row: a block
records its first line, and only when something is wrong (a field that is no number, a line with
too many fields) is the block searched line by line for the exact position. Lines may end with LF,
CR LF or a lone CR (classic Mac OS), as in Python's universal newlines.

Files with double quotes (``"rank",...``, quoted fields with embedded delimiters or line breaks)
are read from the first quote on by the standard :mod:`csv` module, which understands quoting,
row by row.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np
import numpy.typing as npt

from rankstats.io.data import RankFileError, RawTable, distinct_columns, inexact_rows

__all__ = ["BLOCK_SIZE", "LineIndex", "choose_delimiter", "is_number", "read_text", "split_header"]

#: the size in bytes of the blocks a text file is read in
BLOCK_SIZE = 1 << 20
_BLANK_LINE = re.compile(rb"\n[ \t\r\f\v]*\n")
_LONE_CR = re.compile(rb"\r(?!\n)")
_WHITESPACE = b" \t\r\f\v"


@dataclass
class LineIndex:
    """Maps the index of a data row to its line in the file, with a few numbers per block.

    A block without blank lines keeps only its first row and first line; a block with blank
    lines (rare) keeps the line of each of its rows.
    """

    starts: list[int] = field(default_factory=list)
    first_lines: list[int] = field(default_factory=list)
    explicit: dict[int, npt.NDArray[np.int64]] = field(default_factory=dict)

    def add(self, row: int, line: int, lines: npt.NDArray[np.int64] | None = None) -> None:
        """Record that data row ``row`` is on line ``line`` (and the rows after it, too)."""
        self.starts.append(row)
        self.first_lines.append(line)
        if lines is not None:
            self.explicit[len(self.starts) - 1] = lines

    def line(self, row: int) -> int:
        """The line of data row ``row`` (0-based row, 1-based line)."""
        segment = bisect.bisect_right(self.starts, row) - 1
        offset = row - self.starts[segment]
        lines = self.explicit.get(segment)
        if lines is not None:
            return int(lines[offset])
        return self.first_lines[segment] + offset


def _chunks(stream: IO[bytes], size: int) -> Iterator[bytes]:
    """The stream's content in chunks of about ``size`` bytes, none empty.

    A carriage return alone (the line end of classic Mac OS, and of Excel's "CSV (Macintosh)")
    becomes a line feed, as in Python's universal newlines and in ``pyarrow.csv``; CR LF is left
    for :meth:`_Parser.feed`.
    """
    held = b""  # a carriage return at the end of a chunk, until the next shows what follows
    while chunk := stream.read(size):
        data = held + chunk
        held = data[-1:] if data.endswith(b"\r") else b""
        data = data[: len(data) - len(held)]
        if b"\r" in data and data.count(b"\r") != data.count(b"\r\n"):
            data = _LONE_CR.sub(b"\n", data)
        if data:
            yield data
    if held:
        yield b"\n"


def _blocks(stream: IO[bytes], size: int) -> Iterator[bytes]:
    """The stream's content in blocks of about ``size`` bytes, each ending at a line end."""
    rest = b""
    for chunk in _chunks(stream, size):
        data = rest + chunk
        cut = data.rfind(b"\n")
        if cut < 0:
            rest = data
            continue
        rest = data[cut + 1 :]
        yield data[: cut + 1]
    if rest:
        yield rest


def _reporting(blocks: Iterator[bytes], report: Callable[[int], object]) -> Iterator[bytes]:
    for block in blocks:
        report(len(block))
        yield block


def _has_blank_line(block: bytes) -> bool:
    """Whether a block (of whole lines, without carriage returns) has an empty or blank line."""
    if block.startswith(b"\n") or b"\n\n" in block:
        return True
    if not any(char in block for char in (b" ", b"\t", b"\f", b"\v")):
        return False  # the common case, found by a few fast scans
    return _BLANK_LINE.search(b"\n" + block) is not None


def _never_closed(text: list[str], sep: str) -> bool:
    """Whether the text of one row (as the lenient :mod:`csv` reader took it) ends in quotes.

    The strict reader refuses exactly that with "unexpected end of data"; other strict errors
    (a character after a closing quote) are cases the lenient reader and Arrow both accept.
    """
    import csv

    try:
        for _ in csv.reader(text, delimiter=sep, strict=True):
            pass
    except csv.Error as error:
        return "unexpected end of data" in str(error)
    return False


def _decode(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise RankFileError(f"{source} is not UTF-8 text ({error.reason})", source) from None


def split_header(line: str, delimiter: str | None) -> list[str]:
    """The column names of a header line: stripped and lower-case."""
    return [name.strip().lower() for name in line.split(delimiter)]


def choose_delimiter(header: str, hint: str | None) -> str | None:
    """The delimiter: from the format, else a tab or comma in the header, else whitespace."""
    if hint is not None:
        return None if hint == "whitespace" else hint
    if "\t" in header:
        return "\t"
    if "," in header:
        return ","
    return None if len(header.split()) > 1 else ","


def is_number(text: str | bytes) -> bool:
    """Whether Python reads the text as a float."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def read_text(
    stream: IO[bytes],
    source: str,
    *,
    delimiter: str | None = None,
    numeric: Iterable[str] = (),
    block_size: int = BLOCK_SIZE,
    on_block: Callable[[int], object] | None = None,
) -> RawTable:
    r"""Read a delimited text table with a header line; a lone column of numbers needs none.

    Parameters
    ----------
    stream : binary file
        The input, read once from its current position.
    source : str
        The input's name for messages.
    delimiter : {",", "\t", "whitespace"}, optional
        The field separator; by default a tab or comma found in the header line, else
        whitespace (or a comma for a single column).
    numeric : iterable of str
        The columns to convert to numbers (lower-case names); the others stay text.
    block_size : int
        The size of the blocks read at once.
    on_block : callable, optional
        Called with the size in bytes of each block read, e.g. to show progress.

    Returns
    -------
    RawTable
        The columns (numbers as float64, text as numpy unicode arrays) and a line locator.
    """
    blocks = _blocks(stream, block_size)
    if on_block is not None:
        blocks = _reporting(blocks, on_block)
    line = 0
    header_text = ""
    first = b""
    for block in blocks:
        if block.startswith(b"\xef\xbb\xbf") and line == 0:
            block = block[3:]
        lines = block.split(b"\n")
        for index, raw in enumerate(lines):
            if raw.strip():
                line += index + 1
                header_text = _decode(raw, source).strip("\r")
                first = b"\n".join(lines[index + 1 :])
                break
        else:
            line += block.count(b"\n")
            continue
        break
    if not header_text:
        raise RankFileError(
            f"{source} is empty; expected a header line naming the columns, e.g. "
            f"rank,num_candidates",
            source,
        )
    if header_text.lstrip().startswith("#"):
        # read as a header of one column, it had failed on the next line's number of fields
        raise RankFileError(
            f"{source}, line {line}: comment lines are not read; the first line must be the "
            f"header naming the columns, e.g. rank,num_candidates",
            source,
            line=line,
        )
    sep = choose_delimiter(header_text, delimiter)
    header = split_header(header_text, sep)
    parser = _Parser(source, sep, set(numeric))
    rest = itertools.chain([first], blocks)
    if len(header) == 1 and is_number(header[0]):  # a headerless column of ranks
        parser.start(["rank"])
        parser.feed(header_text.encode() + b"\n", line)
    elif '"' in header_text:
        return parser.quoted(header_text, rest, line)
    else:
        parser.start(header)
    parser.feed_all(rest, line + 1)
    return parser.finish()


class _Parser:
    """Accumulates the columns of a text table block by block."""

    def __init__(self, source: str, delimiter: str | None, numeric: set[str]) -> None:
        self.source = source
        self.delimiter = None if delimiter is None else delimiter.encode()
        self.numeric = numeric
        self.header: list[str] = []
        self.parts: list[list[npt.NDArray[Any]]] = []
        #: for each text column, its distinct raw values by first appearance, with their codes
        self.codes: dict[int, dict[bytes, int]] = {}
        #: whether the block being parsed holds an underscore anywhere
        self.underscore = True
        self.rows = 0
        self.index = LineIndex()
        #: the text of numbers float64 does not hold exactly, by column and row
        self.inexact: dict[str, dict[int, str]] = {}

    def start(self, header: list[str]) -> None:
        self.header = distinct_columns(header, self.source, "the header")
        self.parts = [[] for _ in header]

    def feed_all(self, blocks: Iterable[bytes], line: int) -> None:
        """Parse every block; ``line`` is the number of the first line of the first block."""
        blocks = iter(blocks)
        for block in blocks:
            if b'"' in block:
                self._quoted_rest(block, blocks, line)
                return
            line += self.feed(block, line)

    def feed(self, block: bytes, line: int) -> int:
        """Parse one block of whole lines starting at line ``line``; return its number of lines."""
        lines_in_block = block.count(b"\n") + (0 if block.endswith(b"\n") or not block else 1)
        if b"\r" in block:
            block = block.replace(b"\r\n", b"\n")
        if not block.endswith(b"\n"):
            block += b"\n"
        lines: npt.NDArray[np.int64] | None = None
        if _has_blank_line(block):
            block, lines = _drop_blank_lines(block, line)
            if not block:
                return lines_in_block
            count = block.count(b"\n")
        else:  # the lines counted above, each ending in a line end now
            count = lines_in_block
        width = len(self.header)
        if self.delimiter is None:
            fields = block.split()
        else:
            fields = block[:-1].replace(b"\n", self.delimiter).split(self.delimiter)
        if len(fields) != width * count:
            self._bad_width(block, line, lines)
        self.index.add(self.rows, line, lines)
        self.underscore = b"_" in block
        for column, name in enumerate(self.header):
            texts = fields[column::width]
            values: npt.NDArray[Any]
            if name in self.numeric:
                values = self._numbers(texts, name, line, lines)
            else:
                values = self._encode(column, texts)
            self.parts[column].append(values)
        self.rows += count
        return lines_in_block

    def _numbers(
        self,
        values: list[bytes],
        name: str,
        line: int,
        lines: npt.NDArray[np.int64] | None,
    ) -> npt.NDArray[np.float64]:
        try:
            numbers = np.fromiter(map(float, values), np.float64, len(values))
            # Python reads "1_0" as 10: a block with an underscore is checked value by value
            if not self.underscore or not any(b"_" in value for value in values):
                inexact = inexact_rows(values, numbers, self.rows)
                if inexact:
                    self.inexact.setdefault(name, {}).update(inexact)
                return numbers
        except ValueError:
            pass
        for offset, value in enumerate(values):  # the failure path only
            if not is_number(value) or b"_" in value:
                text = value.decode("utf-8", "replace").strip()
                shown = repr(text) if text else "an empty field"
                where = lines[offset] if lines is not None else line + offset
                raise RankFileError(
                    f"{self.source}, line {where}: {name} must be a number, got {shown}",
                    self.source,
                    line=int(where),
                    column=name,
                ) from None
        raise AssertionError("numpy and Python disagree on what a number is")  # pragma: no cover

    def _bad_width(self, block: bytes, line: int, lines: npt.NDArray[np.int64] | None) -> None:
        """Find and report the first line with the wrong number of fields (failure path)."""
        width = len(self.header)
        for offset, text in enumerate(block[:-1].split(b"\n")):
            count = len(text.split() if self.delimiter is None else text.split(self.delimiter))
            if count != width:
                where = lines[offset] if lines is not None else line + offset
                self._width_error(int(where), count)
        raise AssertionError("no line has the wrong width")  # pragma: no cover

    def _width_error(self, line: int, count: int) -> None:
        sep = " " if self.delimiter is None else self.delimiter.decode()
        raise RankFileError(
            f"{self.source}, line {line}: expected {len(self.header)} fields "
            f"({sep.join(self.header)!r}), got {count}",
            self.source,
            line=line,
        )

    def quoted(self, header_text: str, blocks: Iterable[bytes], line: int) -> RawTable:
        """Read a file whose header is quoted: all of it with the :mod:`csv` module."""
        import csv

        sep = "," if self.delimiter is None else self.delimiter.decode()
        self.delimiter = sep.encode()
        header = next(csv.reader([header_text], delimiter=sep))
        self.start([name.strip().lower() for name in header])
        self._quoted_rest(b"", iter(blocks), line + 1)
        return self.finish()

    def _quoted_rest(self, block: bytes, blocks: Iterator[bytes], line: int) -> None:
        """Parse ``block`` and all blocks after it row by row with the :mod:`csv` module."""
        import csv

        sep = "," if self.delimiter is None else self.delimiter.decode()

        quotes = 0  # a quote left open leaves an odd number of them in the file
        reading: list[list[str]] = [[]]  # the text of the row being read

        def text_lines() -> Iterator[str]:
            nonlocal quotes
            for data in (block, *blocks):
                quotes += data.count(b'"')
                for raw in data.splitlines(keepends=True):
                    text = _decode(raw, self.source)
                    reading[0].append(text)
                    yield text

        reader = csv.reader(text_lines(), delimiter=sep)
        width = len(self.header)
        rows: list[list[str]] = []
        row_lines: list[int] = []
        begins = last_begins = line  # the lines on which the next and the last row begin
        last_text: list[str] = []
        try:
            for row in reader:
                last_text, reading[0] = reading[0], []
                last_begins, begins = begins, line + reader.line_num
                if not row or (len(row) == 1 and not row[0].strip()):
                    continue
                where = line + reader.line_num - 1
                if len(row) != width:
                    self._width_error(where, len(row))
                rows.append(row)
                row_lines.append(where)
        except csv.Error as error:
            where = line + reader.line_num - 1
            raise RankFileError(
                f"{self.source}, line {where}: {error}", self.source, line=where
            ) from error
        if quotes % 2 and _never_closed(last_text, sep):
            # read leniently, a quote never closed makes a field of the rest of the file
            raise RankFileError(
                f"{self.source}, line {last_begins}: a quoted field opened on this row is never "
                "closed (the file ends inside its quotes)",
                self.source,
                line=last_begins,
            )
        if not rows:
            return
        self.index.add(self.rows, row_lines[0], np.array(row_lines, dtype=np.int64))
        lines = np.array(row_lines, dtype=np.int64)
        for column, name in enumerate(self.header):
            texts = [row[column].strip().encode() for row in rows]
            values: npt.NDArray[Any]
            if name in self.numeric:
                values = self._numbers(texts, name, row_lines[0], lines)
            else:
                values = self._encode(column, texts)
            self.parts[column].append(values)
        self.rows += len(rows)

    def _encode(self, column: int, texts: list[bytes]) -> npt.NDArray[np.int64]:
        """The codes of a text column's values: one dictionary of distinct values per column.

        Looking the values up in a dictionary is a C-level ``map``, several times faster than
        building a numpy byte-string array and sorting it; the values are decoded once each.
        """
        index = self.codes.setdefault(column, {})
        for value in dict.fromkeys(texts):
            index.setdefault(value, len(index))
        return np.fromiter(map(index.__getitem__, texts), np.int64, len(texts))

    def finish(self) -> RawTable:
        if not self.rows:
            raise RankFileError(f"{self.source} has a header but no rows of ranks", self.source)
        columns: dict[str, npt.NDArray[Any]] = {}
        for name, parts in zip(self.header, self.parts, strict=True):
            joined = np.concatenate(parts) if len(parts) > 1 else parts[0]
            column = self.header.index(name)
            if column in self.codes:
                labels = [_decode(value, self.source).strip() for value in self.codes[column]]
                joined = np.array(labels, dtype=str)[joined]
            columns[name] = joined
        return RawTable(self.source, columns, line_of=self.index.line, inexact=self.inexact)


def _drop_blank_lines(block: bytes, first_line: int) -> tuple[bytes, npt.NDArray[np.int64] | None]:
    """Remove the blank lines of a block; also return the line number of each remaining line."""
    data = np.frombuffer(block, dtype=np.uint8)
    ends = np.flatnonzero(data == ord("\n"))
    starts = np.concatenate(([0], ends[:-1] + 1))
    blank = np.isin(data, np.frombuffer(_WHITESPACE + b"\n", dtype=np.uint8))
    content = np.concatenate(([0], np.cumsum(~blank)))
    keep = content[ends] - content[starts] > 0
    if not keep.any():
        return b"", None
    line_of_byte = np.repeat(keep, ends - starts + 1)
    lines = first_line + np.flatnonzero(keep).astype(np.int64)
    return data[line_of_byte].tobytes(), lines
