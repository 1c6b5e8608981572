r"""The ``rankstats`` command line: argument parsing and calls to the library, nothing more.

Installing rankstats installs a ``rankstats`` command (also ``python -m rankstats``) with these
subcommands, one module each:

``rankstats evaluate [FILE]`` (:mod:`rankstats.cli.evaluate`)
    Read ranks with :func:`rankstats.io.read_ranks`, evaluate them with
    :func:`rankstats.evaluate` and print the results as the results object renders them (plain
    table, CSV, JSON, Markdown or LaTeX). Without ``FILE`` it evaluates the bundled example.
``rankstats metrics [QUERY]`` (:mod:`rankstats.cli.metrics`)
    List every metric: key, synonyms, value range, direction, whether the null model's expected
    value and variance are exact, and a one-line description.
``rankstats null --metric mrr --num-candidates 14541 --n 20466`` (:mod:`rankstats.cli.null`)
    A metric's expected value and standard deviation under the null model, from the metric
    classes; with ``--value``, the z-score and adjusted index of a published result.
``rankstats plot hits|ranks [FILE ...] -o IMAGE`` (:mod:`rankstats.cli.plot`)
    The Hits@k curve with the null model's band, or the histogram of ranks, drawn by
    :mod:`rankstats.plot`.
``rankstats example`` (:mod:`rankstats.cli.example`)
    Print the bundled example file, as a template for your own.

Every error (a missing file, a bad argument, a rank out of range at some line) is reported on one
line of standard error with a non-zero exit status, never with a traceback; set
``RANKSTATS_DEBUG=1`` to see the traceback anyway. Progress of long work is shown on standard
error when it is a terminal, and never when it is piped.

A new command is a module with ``register(commands)`` (adding its subparser, whose
``handler`` default runs it), listed in :data:`rankstats.cli.main.COMMANDS`. This package, and
argparse with it, is imported only by the command itself, never by ``import rankstats``.
"""

from rankstats.cli.common import CliError
from rankstats.cli.main import build_parser, main
from rankstats.cli.metrics import metric_rows

__all__ = ["CliError", "build_parser", "main", "metric_rows"]
