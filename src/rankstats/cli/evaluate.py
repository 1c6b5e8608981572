"""``rankstats evaluate [FILE]``: read ranks with :mod:`rankstats.io`, evaluate, print the table.

Everything is computed by :meth:`rankstats.io.RankData.evaluate` (that is,
:func:`rankstats.evaluate`) and rendered by the results object; this module only turns
arguments into those calls.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rankstats.cli.common import (
    PROG,
    CliError,
    UsageError,
    add_format,
    add_progress,
    candidate_count,
    column_list,
    input_path,
    parse_metrics,
    progress_setting,
    rank_type_list,
    sample_count,
    seed,
    write_output,
)
from rankstats.evaluation.results import EvaluationResults
from rankstats.io import CANDIDATES_COLUMN, RANK_COLUMN, WEIGHT_COLUMN, read_ranks, write_results
from rankstats.io.write import RESULT_SUFFIXES

__all__ = ["register", "render"]

#: the output formats and the results method that renders each
FORMATS = ("table", "json", "csv", "markdown", "latex")


def render(results: EvaluationResults, output_format: str, group_by: list[str]) -> str:
    """The results in one of :data:`FORMATS`, with every group's rows."""
    options: dict[str, Any] = {"groups": bool(group_by), "group_names": group_by or None}
    if output_format == "json":
        from rankstats.evaluation.report import render_json

        return render_json(results, **options)
    method = {
        "table": results.to_table,
        "csv": results.to_csv,
        "markdown": results.to_markdown,
        "latex": results.to_latex,
    }[output_format]
    text: str = method(**options)
    return text


def evaluation_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of :func:`rankstats.evaluate` that the flags give."""
    options: dict[str, Any] = {"average": args.average}
    if args.metrics is not None:
        options["metrics"] = parse_metrics(args.metrics)
    if args.rank_types is not None:
        options["rank_types"] = args.rank_types
    if args.samples is not None:
        options["num_samples"] = args.samples
        options["seed"] = args.seed
    elif args.seed is not None:
        raise UsageError("--seed needs --samples N (the seed of the Monte-Carlo samples)")
    options["progress"] = progress_setting(args)
    return options


def run(args: argparse.Namespace) -> int:
    """Evaluate a file of ranks."""
    group_by: list[str] = args.group_by or []
    if args.average == "macro" and not group_by:
        raise UsageError(
            "--average macro averages over groups and needs --group-by COLUMNS; without "
            "groups there is nothing to average"
        )
    if args.output is not None and Path(args.output).suffix.lower() not in RESULT_SUFFIXES:
        raise UsageError(
            f"--output: the file's suffix gives the format, one of "
            f"{', '.join(RESULT_SUFFIXES)}; got {args.output!r}"
        )
    options = evaluation_options(args)
    path = input_path(args.file, "evaluate")
    data = read_ranks(path, num_candidates=args.num_candidates, progress=progress_setting(args))
    needing = [m.key for m in options.get("metrics", ()) if m.needs_candidates]
    if needing and data.num_candidates is None:
        raise CliError(
            f"{needing[0]} needs the number of candidates of each task; add a "
            f"{CANDIDATES_COLUMN} column to {data.source} or pass --num-candidates N"
        )
    if group_by:
        try:
            data.group_labels(group_by)
        except ValueError as error:
            raise CliError(f"--group-by: {error}") from None
    results = data.evaluate(group_by=group_by or None, **options)
    if args.output is not None:
        try:
            write_results(results, args.output, groups=True, group_names=group_by or None)
        except ValueError as error:
            raise UsageError(f"--output: {error}") from None
    write_output(render(results, args.format, group_by))
    return 0


def register(commands: Any) -> None:
    """Add the ``evaluate`` command to the subparsers ``commands``."""
    parser = commands.add_parser(
        "evaluate",
        help="evaluate ranks from a file and print the metrics table",
        description="Evaluate ranks and print each metric's value with its expected value, "
        "standard deviation and z-score (value - expected) / std under the null model, in which "
        "each rank is uniform on 1..num_candidates.",
        epilog=f"Input columns: {RANK_COLUMN} (the realistic rank, a whole or half-integer; or "
        f"optimistic and pessimistic, which add the rank type 'expected'), {CANDIDATES_COLUMN} "
        f"(needed for expected values and adjusted metrics), {WEIGHT_COLUMN}, and any columns to "
        f"group by. Run '{PROG} example' to see the bundled example file.",
    )
    parser.add_argument(
        "file",
        nargs="?",
        metavar="FILE",
        help="a CSV/TSV/whitespace text file (optionally gzipped), a .npy/.npz, Parquet or "
        "Arrow file, or '-' for standard input; without FILE, piped standard input or else the "
        "bundled example is read",
    )
    parser.add_argument(
        "--metrics",
        metavar="LIST",
        help="comma-separated metric names, e.g. mrr,hits@10,amri (default: a standard set)",
    )
    parser.add_argument(
        "--num-candidates",
        type=candidate_count,
        metavar="N",
        help=f"the number of candidates of every task, when the input has no {CANDIDATES_COLUMN} "
        "column",
    )
    parser.add_argument(
        "--group-by",
        type=column_list,
        metavar="COLUMNS",
        help="comma-separated columns to group by, e.g. relation or relation,side; each group "
        "gets its own rows after the overall ones",
    )
    parser.add_argument(
        "--average",
        choices=("micro", "macro"),
        default="micro",
        help="how the overall rows combine the groups (with --group-by): micro counts every "
        "rank once, macro every group once (default: %(default)s)",
    )
    parser.add_argument(
        "--rank-types",
        type=rank_type_list,
        metavar="LIST",
        help="comma-separated rank types to report: optimistic, realistic, pessimistic, expected "
        "(default: all the input allows)",
    )
    parser.add_argument(
        "--samples",
        type=sample_count,
        metavar="N",
        help="estimate by N Monte-Carlo samples the null-model statistics that have no closed "
        "form (e.g. of the median rank's standard deviation)",
    )
    parser.add_argument("--seed", type=seed, help="the seed of the Monte-Carlo samples")
    parser.add_argument(
        "--output",
        "-o",
        metavar="PATH",
        help="also write the results (every group's too) to PATH: .csv, .json, .parquet, .md "
        "or .tex",
    )
    add_format(parser, FORMATS)
    add_progress(parser)
    parser.set_defaults(handler=run)
