"""What every command shares: the one-line error, argument types, output and progress flags."""

from __future__ import annotations

import argparse
import math
import os
import stat
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from rankstats.base import RankBasedMetric
from rankstats.registry import metric_resolver

__all__ = [
    "EXIT_ERROR",
    "EXIT_USAGE",
    "MAX_CANDIDATES",
    "PROG",
    "CliError",
    "Parser",
    "UsageError",
    "add_format",
    "add_progress",
    "column_list",
    "file_names",
    "finite_float",
    "input_path",
    "numbered",
    "parse_metrics",
    "positive_int",
    "progress_setting",
    "rank_type_list",
    "resample_count",
    "sample_count",
    "seed",
    "split_list",
    "stdin_is_piped",
]

PROG = "rankstats"
#: the exit status of errors in the input or its processing (argparse uses 2 for usage errors)
EXIT_ERROR = 1
EXIT_USAGE = 2
#: the largest candidate count accepted (exact as a float, far inside int64)
MAX_CANDIDATES = 2**53


class CliError(Exception):
    """An error to report on one line of standard error, with a non-zero exit status."""


class UsageError(CliError):
    """A mistake in the arguments that argparse cannot see, reported as argparse reports its own.

    A combination of options, a metric name: the message names the subcommand and ``--help``,
    and the exit status is 2.
    """


class Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line, pointing at ``--help``."""

    def error(self, message: str) -> NoReturn:
        """Report a usage error on one line and exit with status 2."""
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def bounded_int(low: int, high: int | None, what: str) -> Any:
    """An argument type: an integer in ``low..high`` (``high=None``: unbounded), else one line."""

    def convert(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return value

    return convert


#: an argument type: a positive integer (at most 2**63 - 1)
positive_int = bounded_int(1, 2**63 - 1, "a positive integer")
#: an argument type: a number of Monte-Carlo samples (two at least, to estimate a variance)
sample_count = bounded_int(2, 2**63 - 1, "an integer >= 2 (a variance needs two samples)")
#: an argument type: a number of resamples (two at least)
resample_count = bounded_int(2, 2**63 - 1, "an integer >= 2")
#: an argument type: the seed of random draws, a non-negative integer
seed = bounded_int(0, None, "a non-negative integer")
#: an argument type: a candidate count, 1..2**53
candidate_count = bounded_int(1, MAX_CANDIDATES, "a positive integer of at most 2**53")


def finite_float(text: str) -> float:
    """An argument type: a finite number."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def add_format(
    parser: argparse.ArgumentParser, choices: tuple[str, ...] = ("table", "json", "csv")
) -> None:
    """Add ``--format``."""
    parser.add_argument(
        "--format",
        choices=choices,
        default="table",
        help="the output format (default: %(default)s)",
    )


def add_progress(parser: argparse.ArgumentParser) -> None:
    """Add ``--progress`` / ``--no-progress``."""
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show the progress of long work on standard error (default: only on a terminal)",
    )


def progress_setting(args: argparse.Namespace) -> bool | None:
    """The ``progress`` argument of the library: ``None`` (automatic) unless a flag was given."""
    value: bool | None = args.progress
    return value


def rank_type_list(text: str) -> list[str]:
    """An argument type: a comma-separated list of the rank types of the results."""
    from rankstats.evaluation.scores import EVALUATION_RANK_TYPES

    names = split_list(text)
    unknown = [name for name in names if name not in EVALUATION_RANK_TYPES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"expected a comma-separated list of {', '.join(EVALUATION_RANK_TYPES)}, got {text!r}"
        )
    return names


def column_list(text: str) -> list[str]:
    """An argument type: a comma-separated list of column names, at least one.

    Parameters
    ----------
    text : str
        The argument, e.g. ``"relation,side"``.

    Returns
    -------
    list of str
        The names, stripped, without empty ones.

    Raises
    ------
    argparse.ArgumentTypeError
        If the list names no column (``""`` or ``","``), which would silently mean no groups.
    """
    names = split_list(text)
    if not names:
        raise argparse.ArgumentTypeError(
            f"expected a comma-separated list of column names, e.g. relation,side, got {text!r}"
        )
    return names


def file_names(paths: Sequence[str | None]) -> list[str]:
    """A name per input file for legends and tables, numbered where two are alike.

    Its base name without the usual suffixes; ``example`` for the bundled file, ``stdin`` for
    ``-``.
    """
    names = []
    for path in paths:
        if path is None:
            names.append("example")
            continue
        base = "stdin" if path == "-" else os.path.basename(path)
        for suffix in (".gz", ".csv", ".tsv", ".txt", ".npz", ".npy", ".parquet", ".arrow"):
            base = base.removesuffix(suffix)
        names.append(base or path)
    return numbered(names)


def numbered(names: Sequence[str]) -> list[str]:
    """The names, each with its position ``(i)`` where two are alike, else as they are."""
    if len(set(names)) != len(names):
        return [f"{name} ({i + 1})" for i, name in enumerate(names)]
    return list(names)


def split_list(text: str) -> list[str]:
    """The items of a comma-separated list, stripped, without empty ones."""
    return [item.strip() for item in text.split(",") if item.strip()]


def parse_metrics(text: str, option: str = "--metrics") -> list[RankBasedMetric]:
    """Resolve a comma-separated list of metric names, e.g. ``"mrr,hits@10,amri"``."""
    names = split_list(text)
    if not names:
        raise UsageError(f"{option} needs at least one metric name, got {text!r}")
    try:
        return [metric_resolver.make(name) for name in names]
    except ValueError as error:  # UnknownMetricError, and bad cut-offs such as hits@0
        raise UsageError(f"{option}: {error}") from error


def stdin_is_piped() -> bool:
    """Whether standard input is a pipe or a redirected file (not a terminal, not /dev/null)."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (AttributeError, OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


def input_path(path: str | None, command: str) -> str | None:
    """The file of ranks a command reads, as :func:`rankstats.io.read_ranks` takes it.

    Parameters
    ----------
    path : str or None
        The ``FILE`` argument, if one was given.
    command : str
        The command, e.g. ``"evaluate"``, for the note on standard error.

    Returns
    -------
    str or None
        ``path`` if given; else ``"-"`` (standard input) when standard input is piped or
        redirected; else ``None``, the bundled example, which is then announced on standard error
        if that is a terminal.
    """
    if path is not None:
        return path
    if stdin_is_piped():
        return "-"
    if sys.stderr.isatty():
        from rankstats.io.read import EXAMPLE

        sys.stderr.write(
            f"{PROG} {command}: reading the bundled example ({EXAMPLE}: TransE on Nations); "
            f"give a FILE to {command} your own ranks\n"
        )
    return None


def write_output(text: str) -> None:
    """Write a command's output to standard output."""
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
