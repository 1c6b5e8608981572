"""``rankstats compare A B [C ...]``: compare models' rank files with :func:`rankstats.compare`.

Each file is read with :func:`rankstats.io.read_ranks`, as ``rankstats evaluate`` reads it. The
files must hold the same queries: by a query-id column when they have one (``--query-id``, or a
column named ``query_id``, ``qid`` or ``query`` in every file; the files are then aligned to the
first file's order), else by order and candidate counts. Everything else is computed by
:func:`rankstats.compare` and rendered by the :class:`~rankstats.Comparison`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

import numpy as np

from rankstats.cli.common import (
    CliError,
    UsageError,
    add_format,
    candidate_count,
    column_list,
    file_names,
    finite_float,
    numbered,
    parse_metrics,
    resample_count,
    seed,
    split_list,
    write_output,
)
from rankstats.compare import CORRECTIONS, TESTS, Comparison, compare
from rankstats.evaluation.scores import EVALUATION_RANK_TYPES
from rankstats.io import RankData, read_ranks

__all__ = ["QUERY_ID_COLUMNS", "register", "render"]

#: the output formats
FORMATS = ("table", "json", "csv", "markdown", "latex")
#: the columns taken as query ids when ``--query-id`` is not given, in order of preference
QUERY_ID_COLUMNS = ("query_id", "qid", "query")


def render(comparison: Comparison, output_format: str, alpha: float) -> str:
    """The comparison in one of :data:`FORMATS`."""
    if output_format == "json":
        return comparison.to_json()
    if output_format == "csv":
        return comparison.to_csv()
    if output_format == "markdown":
        return comparison.to_markdown(alpha)
    if output_format == "latex":
        return comparison.to_latex(alpha)
    return comparison.to_table(alpha)


def _names(paths: Sequence[str], given: str | None) -> list[str]:
    if given is not None:
        names = split_list(given)
        if len(names) != len(paths):
            raise UsageError(f"--names needs one name per file ({len(paths)}), got {len(names)}")
        return numbered(names)
    return file_names(paths)


def _query_ids(data: Sequence[RankData], column: str | None) -> list[Any] | None:
    if column is not None:
        for item in data:
            if column not in item.columns:
                found = ", ".join(repr(c) for c in item.columns) or "none"
                raise CliError(
                    f"--query-id: {item.source} has no column {column!r}; its text columns "
                    f"are: {found}"
                )
        return [item.columns[column] for item in data]
    for name in QUERY_ID_COLUMNS:
        if all(name in item.columns for item in data):
            return [item.columns[name] for item in data]
    return None


def _common_weights(data: Sequence[RankData], ids: Sequence[Any] | None) -> Any:
    """The weights of the queries: the first file's, which every other file may repeat."""
    first = data[0].weights
    for index, item in enumerate(data[1:], start=1):
        if item.weights is None:
            continue
        same = first is not None and item.weights.shape == first.shape
        if same and first is not None:
            mine, theirs = item.weights, first
            if ids is not None:  # compare query by query, whatever the files' order
                mine = mine[np.argsort(ids[index], kind="stable")]
                theirs = theirs[np.argsort(ids[0], kind="stable")]
            same = bool(np.array_equal(mine, theirs))
        if not same:
            raise CliError(
                f"{item.source} gives other weights than {data[0].source}; weights belong to "
                f"the queries, so give them in the first file (and, if at all, alike in the "
                f"others)"
            )
    return first


def _model_ranks(item: RankData) -> Any:
    ranks = item.evaluate_arguments()["ranks"]
    return ranks


def run(args: argparse.Namespace) -> int:
    """Compare the models of several rank files."""
    if len(args.files) < 2:
        raise UsageError(f"compare needs two or more files of ranks, got {len(args.files)}")
    if args.files.count("-") > 1:
        raise UsageError("standard input ('-') can be only one of the files")
    if args.per_group and not args.group_by:
        raise UsageError("--per-group needs --group-by COLUMNS")
    names = _names(args.files, args.names)
    data = [read_ranks(path, num_candidates=args.num_candidates) for path in args.files]
    ids = _query_ids(data, args.query_id)
    candidates = {
        name: item.num_candidates
        for name, item in zip(names, data, strict=True)
        if item.num_candidates is not None
    }
    weights = _common_weights(data, ids)
    groups = None
    if args.group_by:
        try:
            groups = data[0].group_labels(args.group_by)
        except ValueError as error:
            raise CliError(f"--group-by: {error}") from None
    options: dict[str, Any] = {
        "rank_type": args.rank_type,
        "test": args.test,
        "n_resamples": args.resamples,
        "interval": None if args.interval == "none" else args.interval,
        "confidence_level": args.confidence_level,
        "correction": args.correction,
        "seed": args.seed,
        "per_group": args.per_group,
    }
    if args.metrics is not None:
        options["metrics"] = parse_metrics(args.metrics)
    comparison = compare(
        {name: _model_ranks(item) for name, item in zip(names, data, strict=True)},
        candidates or None,
        weights=weights,
        groups=groups,
        query_ids=None if ids is None else dict(zip(names, ids, strict=True)),
        **options,
    )
    write_output(render(comparison, args.format, args.alpha))
    return 0


def _fraction(text: str) -> float:
    value = finite_float(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"expected a fraction in (0, 1), e.g. 0.95, got {text!r}")
    return value


def register(commands: Any) -> None:
    """Add the ``compare`` command to the subparsers ``commands``."""
    parser = commands.add_parser(
        "compare",
        help="compare models' ranks on the same queries: intervals and corrected p-values",
        description="Compare two or more models on the same queries: each model's value of each "
        "metric with a bootstrap confidence interval, and for each pair the difference, its "
        "interval, an effect size and a p-value (paired randomization test by default), "
        "corrected for the number of comparisons.",
        epilog="The files are read as by 'rankstats evaluate'. They must hold the same queries: "
        f"matched by a query-id column when present ({', '.join(QUERY_ID_COLUMNS)} or "
        "--query-id), else by order, with equal candidate counts.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="two or more rank files")
    parser.add_argument(
        "--metrics",
        metavar="LIST",
        help="comma-separated metric names, e.g. mrr,hits@10,amri (default: mrr,hits@1,hits@3,"
        "hits@10)",
    )
    parser.add_argument(
        "--names", metavar="LIST", help="comma-separated model names (default: the file names)"
    )
    parser.add_argument(
        "--test",
        choices=TESTS,
        default="randomization",
        help="the paired test of each difference (default: %(default)s)",
    )
    parser.add_argument(
        "--resamples",
        type=resample_count,
        default=10_000,
        metavar="N",
        help="resamples of the randomization test and the bootstrap (default: %(default)s)",
    )
    parser.add_argument(
        "--seed", type=seed, help="the seed of every random draw (default: unseeded)"
    )
    parser.add_argument(
        "--interval",
        choices=("bca", "percentile", "none"),
        default="bca",
        help="the bootstrap confidence interval (default: %(default)s)",
    )
    parser.add_argument(
        "--confidence-level",
        type=_fraction,
        default=0.95,
        metavar="LEVEL",
        help="the intervals' coverage, a fraction in (0, 1) (default: %(default)s)",
    )
    parser.add_argument(
        "--correction",
        choices=tuple(CORRECTIONS),
        default="holm",
        help="the multiple-comparison correction; bh is Benjamini-Hochberg (default: %(default)s)",
    )
    parser.add_argument(
        "--alpha",
        type=_fraction,
        default=0.05,
        help="the significance level of the marks in the tables (default: %(default)s)",
    )
    parser.add_argument(
        "--rank-type",
        choices=EVALUATION_RANK_TYPES,
        default="realistic",
        help="the rank type compared (default: %(default)s)",
    )
    parser.add_argument(
        "--query-id", metavar="COLUMN", help="the column of query ids that matches the files"
    )
    parser.add_argument(
        "--num-candidates",
        type=candidate_count,
        metavar="N",
        help="the number of candidates of every query, for files without a num_candidates column",
    )
    parser.add_argument(
        "--group-by",
        type=column_list,
        metavar="COLUMNS",
        help="comma-separated columns (of the first file) to group by: the bootstrap resamples "
        "within groups",
    )
    parser.add_argument(
        "--per-group",
        action="store_true",
        help="also compare the models within each group (with --group-by), corrected across "
        "all groups",
    )
    add_format(parser, FORMATS)
    parser.set_defaults(handler=run)
