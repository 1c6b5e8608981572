"""Reading ranks: open a path, standard input or a file object, find its format, and parse it.

The format comes from the first bytes where they are distinctive (NumPy, zip, Parquet, Arrow,
gzip), else from the name's suffix (``.tsv``, ``.tab``, ``.txt``), else it is delimited text whose
header line says the delimiter. Any failure to read (a missing file, a truncated gzip stream, an
I/O error) becomes a :class:`~rankstats.io.data.RankFileError` naming the file.
"""

from __future__ import annotations

import io
import numbers
import os
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import IO, Literal, cast

from rankstats.io.binary import read_arrow, read_numpy, read_parquet
from rankstats.io.data import NUMERIC_COLUMNS, RankData, RankFileError, RawTable, build_rank_data
from rankstats.io.text import read_text
from rankstats.progress import check_progress, progress_bar, progress_enabled

__all__ = ["EXAMPLE", "FORMATS", "example_source", "read_ranks"]

#: the bundled example, inside the package
EXAMPLE = "nations_transe.csv"
#: the formats :func:`read_ranks` reads
FORMATS = ("csv", "tsv", "whitespace", "npy", "npz", "parquet", "arrow")
#: the parsers of text files
ENGINES = ("auto", "numpy", "pyarrow")
Engine = Literal["auto", "numpy", "pyarrow"]
Format = Literal["csv", "tsv", "whitespace", "npy", "npz", "parquet", "arrow"]
Source = str | os.PathLike[str] | IO[bytes]

_MAGIC = {
    b"\x93NUMPY": "npy",
    b"PK\x03\x04": "npz",
    b"PAR1": "parquet",
    b"ARROW1": "arrow",
    b"\xff\xff\xff\xff": "arrow",  # an Arrow IPC stream's continuation marker
}
_SUFFIXES = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".txt": None,
    ".npy": "npy",
    ".npz": "npz",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".arrow": "arrow",
    ".feather": "arrow",
    ".ipc": "arrow",
}


class _Prefixed(io.RawIOBase):
    """A stream whose first bytes were already read: gives them back first."""

    def __init__(self, head: bytes, stream: IO[bytes]) -> None:
        self._head = head
        self._stream = stream

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        if size is None or size < 0:
            data, self._head = self._head + self._stream.read(), b""
            return data
        if self._head:
            data, self._head = self._head[:size], self._head[size:]
            return data
        return self._stream.read(size)


def _peek(stream: IO[bytes], size: int) -> tuple[bytes, IO[bytes]]:
    """The first ``size`` bytes of ``stream``, and a stream that still starts with them."""
    peek = getattr(stream, "peek", None)
    if peek is not None:
        try:
            return bytes(peek(size)[:size]), stream
        except (OSError, ValueError):
            pass
    head = stream.read(size)
    return head, cast(IO[bytes], _Prefixed(head, stream))


def example_source() -> tuple[bytes, str]:
    """The bundled example file's content and its name for messages."""
    data = (resources.files("rankstats") / "data" / EXAMPLE).read_bytes()
    return data, f"{EXAMPLE} (bundled example)"


@contextmanager
def _opened(source: Source | None) -> Iterator[tuple[IO[bytes], str]]:
    if source is None:
        data, name = example_source()
        yield io.BytesIO(data), name
        return
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        name = os.fspath(source)
        if name == "-":
            import sys

            yield sys.stdin.buffer, "<stdin>"
            return
        if not path.exists():
            raise RankFileError(f"no such file: {name}", name)
        if path.is_dir():
            raise RankFileError(f"{name} is a directory, not a file of ranks", name)
        try:
            stream = open(path, "rb")  # noqa: SIM115 (closed below)
        except OSError as error:
            raise RankFileError(f"{name}: cannot open: {error.strerror or error}", name) from None
        with stream:
            yield stream, name
        return
    given: object = source  # typed as a binary stream; users pass anything
    if isinstance(given, io.TextIOBase) or not callable(getattr(given, "read", None)):
        kind = "a text stream" if isinstance(given, io.TextIOBase) else type(given).__name__
        raise TypeError(
            "source must be a path, '-' (standard input), a file opened in binary mode "
            f"('rb', io.BytesIO) or None (the bundled example), got {kind}"
        )
    label = getattr(source, "name", None)
    yield source, label if isinstance(label, str) and label else "<stream>"


def read_ranks(
    source: Source | None,
    *,
    format: Format | None = None,
    num_candidates: int | numbers.Integral | None = None,
    engine: Engine = "auto",
    progress: bool | None = False,
) -> RankData:
    r"""Read ranks from a file: CSV, TSV, whitespace-separated text, NumPy, Parquet or Arrow.

    Parameters
    ----------
    source : str, path-like, binary file object or None
        A path (``"-"`` for standard input), an open binary file, or ``None`` for the example
        bundled with rankstats (TransE on Nations). Text may be gzip-compressed (found from its
        first bytes).
    format : {"csv", "tsv", "whitespace", "npy", "npz", "parquet", "arrow"}, optional
        The format; by default found from the first bytes and the name. Text files need a
        header line naming the columns (a file of one column of numbers needs none).
    num_candidates : int, optional
        The number of candidates of every task, for input without a ``num_candidates`` column.
    engine : {"auto", "numpy", "pyarrow"}, default="auto"
        The parser of CSV / TSV files named by a path: ``"pyarrow"`` (multi-threaded, needs
        pyarrow) where the file is plain (a header on the first line, every value parsed by
        Arrow), else the vectorised numpy reader; ``"auto"`` uses pyarrow when installed, for
        files of 4 MB or more; ``"numpy"`` never does. Results and errors are the same whichever
        parses.
    progress : bool or None, default=False
        Show a progress bar of reading a text file of known size (see :mod:`rankstats.progress`;
        ``None``: only when standard error is a terminal).

    Returns
    -------
    RankData
        The checked ranks, candidate counts, weights and text columns; ``.evaluate(...)``
        evaluates them.

    Raises
    ------
    RankFileError
        A :class:`ValueError` naming the file, and the line (row) and column of a bad value.
    ImportError
        For Parquet and Arrow files without pyarrow.

    Notes
    -----
    Text is parsed a block at a time with vectorised numpy conversions, so memory beyond the
    result stays at about one block (a megabyte), and line numbers are searched for only when
    something is wrong. See :mod:`rankstats.io.data` for the columns and their checks.

    Examples
    --------
    >>> import io
    >>> data = read_ranks(io.BytesIO(b"rank num_candidates\n1 10\n2.5 10\n"))
    >>> data.ranks["realistic"], data.num_candidates
    (array([1. , 2.5]), array([10, 10]))
    >>> read_ranks(io.BytesIO(b"rank\n1\n1.25\n"))
    Traceback (most recent call last):
    ...
    rankstats.io.data.RankFileError: <stream>, line 3: rank must be a whole or half-integer ...
    """
    if format is not None and format not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, got {format!r}")
    if num_candidates is not None and (
        isinstance(num_candidates, bool)
        or not isinstance(num_candidates, numbers.Integral)
        or not 1 <= int(num_candidates) <= 2**53
    ):
        raise ValueError(f"num_candidates must be an integer in 1..2**53, got {num_candidates!r}")
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    if engine == "pyarrow" and not _has_pyarrow():
        raise ImportError(
            "engine='pyarrow' needs pyarrow, an optional dependency: "
            "pip install 'rankstats[parquet]'"
        )
    progress = check_progress(progress)
    path = None
    if isinstance(source, str | os.PathLike) and os.fspath(source) != "-":
        path = Path(source)
    with _opened(source) as (stream, name):
        try:
            raw = _read(stream, name, format, progress, path, engine)
        except RankFileError:
            raise
        except EOFError:
            raise RankFileError(
                f"{name}: the input ended unexpectedly (a truncated file?)", name
            ) from None
        except (zlib.error, OSError) as error:
            if isinstance(error, OSError) and "gzip" in str(error).lower():
                message = f"{name} is not a valid gzip file: {error}"
            else:
                message = f"{name}: cannot read: {getattr(error, 'strerror', None) or error}"
            raise RankFileError(message, name) from None
    count = None if num_candidates is None else int(num_candidates)  # e.g. numpy.int64
    return build_rank_data(raw, num_candidates=count)


def _has_pyarrow() -> bool:
    try:
        import pyarrow.csv  # noqa: F401
    except ImportError:
        return False
    return True


#: the least file size from which ``engine="auto"`` uses pyarrow (importing it takes a while)
PYARROW_MIN_BYTES = 4 << 20


def _use_pyarrow(path: Path, engine: str) -> bool:
    if engine == "numpy":
        return False
    if engine == "pyarrow":
        return True
    try:
        large = path.stat().st_size >= PYARROW_MIN_BYTES
    except OSError:
        return False
    return large and _has_pyarrow()


def _size(stream: IO[bytes]) -> int | None:
    try:
        return os.fstat(stream.fileno()).st_size or None
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None


def _read(
    stream: IO[bytes],
    name: str,
    format: str | None,
    progress: bool | None = False,
    path: Path | None = None,
    engine: str = "auto",
) -> RawTable:
    size = _size(stream)
    head, stream = _peek(stream, 8)
    suffixes = [s.lower() for s in Path(name).suffixes]
    if head.startswith(b"\x1f\x8b") or (suffixes and suffixes[-1] == ".gz"):
        size = None  # the compressed size says little about the text's
        import gzip

        stream = cast(IO[bytes], gzip.GzipFile(fileobj=stream, mode="rb"))
        head, stream = _peek(stream, 8)
        suffixes = suffixes[:-1] if suffixes and suffixes[-1] == ".gz" else suffixes
    kind = format or next((kind for magic, kind in _MAGIC.items() if head.startswith(magic)), None)
    if kind is None and suffixes:
        kind = _SUFFIXES.get(suffixes[-1])
        if kind in {"npy", "npz", "parquet", "arrow"}:
            raise RankFileError(f"{name} is not a valid .{suffixes[-1][1:]} file", name)
    if kind in {"npy", "npz"}:
        return read_numpy(stream, name, kind)
    if kind == "parquet":
        return read_parquet(stream, name)
    if kind == "arrow":
        return read_arrow(stream, name)
    delimiter = {"csv": ",", "tsv": "\t", "whitespace": "whitespace"}.get(kind or "")
    if path is not None and delimiter != "whitespace" and _use_pyarrow(path, engine):
        from rankstats.io.arrowtext import read_text_arrow

        with progress_bar(1, f"reading {name}", enabled=progress) as bar:
            fast = read_text_arrow(
                path, name, delimiter=delimiter, numeric=NUMERIC_COLUMNS, compressed=size is None
            )
            bar.update(1)
        if fast is not None:
            return fast
    if size is None or not progress_enabled(progress):
        return read_text(stream, name, delimiter=delimiter, numeric=NUMERIC_COLUMNS)
    with progress_bar(size, f"reading {name}", enabled=progress) as bar:
        return read_text(
            stream, name, delimiter=delimiter, numeric=NUMERIC_COLUMNS, on_block=bar.update
        )
