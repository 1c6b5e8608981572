"""``rankstats plot``: figures of files of ranks, written to a file the user names.

``rankstats plot hits FILE [FILE ...] -o hits.png`` draws the Hits@k curve (k = 1..K) of each file
with the null model's expectation and a band of two standard deviations;
``rankstats plot ranks FILE [FILE ...] -o ranks.png`` the histogram of the ranks on a log scale.
The figures are drawn by :mod:`rankstats.plot`; matplotlib is imported only here.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rankstats.cli.common import (
    CliError,
    add_progress,
    bounded_int,
    candidate_count,
    file_names,
    input_path,
    progress_setting,
)

__all__ = ["check_image_path", "new_figure", "register", "save_figure"]


def new_figure() -> Any:
    """A matplotlib figure drawn without a display (the Agg canvas), or a one-line error."""
    try:
        from matplotlib.figure import Figure  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        raise CliError(
            "plots need matplotlib; install it with pip install 'rankstats[plot]'"
        ) from None
    return Figure(figsize=(6.4, 4.0), layout="constrained")


def check_image_path(figure: Any, path: str, option: str) -> None:
    """Refuse an image path that :func:`save_figure` could not honour, before any work is done.

    Parameters
    ----------
    figure : matplotlib.figure.Figure
        The figure to be saved (its canvas lists the formats).
    path : str
        The image file to write.
    option : str
        The option that named ``path``, for messages.

    Raises
    ------
    CliError
        If ``path`` is a directory, has no suffix (matplotlib would write ``path + ".png"``
        instead, silently) or one of no format matplotlib writes, or its folder does not exist:
        before any work, not after it.
    """
    target = Path(path)
    if target.is_dir():
        raise CliError(f"{option}: {path} is a directory; give the name of an image file")
    supported = figure.canvas.get_supported_filetypes()
    formats = ", ".join(f".{name}" for name in sorted(supported))
    if not target.suffix:
        raise CliError(
            f"{option}: {path!r} has no suffix to give the image format; end it with one of "
            f"{formats}"
        )
    if target.suffix[1:].lower() not in supported:
        raise CliError(f"{option}: {target.suffix!r} is no image format; use one of {formats}")
    if not target.parent.is_dir():
        raise CliError(f"{option}: the folder {str(target.parent)!r} does not exist")


def save_figure(figure: Any, path: str, option: str) -> None:
    """Save a figure; the format comes from the suffix (``.png``, ``.pdf``, ``.svg``, ...).

    Parameters
    ----------
    figure : matplotlib.figure.Figure
        The figure.
    path : str
        The image file to write.
    option : str
        The option that named ``path``, for messages.

    Raises
    ------
    CliError
        If :func:`check_image_path` refuses ``path``, its suffix is not a format matplotlib
        writes, or the file cannot be written.
    """
    check_image_path(figure, path, option)
    try:
        figure.savefig(path, dpi=120)
    except ValueError as error:  # an unknown suffix
        raise CliError(f"cannot save the figure to {path}: {error}") from None
    except OSError as error:
        raise CliError(f"cannot write {path}: {error.strerror or error}") from None


def run(args: argparse.Namespace) -> int:
    """Draw the figure."""
    from rankstats.io import read_ranks
    from rankstats.plot import hits_metrics, plot_hits_at_k, plot_rank_histogram

    figure = new_figure()
    check_image_path(figure, args.output, "--output")
    files = args.files or [input_path(None, "plot")]
    names = file_names(files)  # two files of one name are two curves, numbered
    data = [read_ranks(f, num_candidates=args.num_candidates) for f in files]
    ax = figure.subplots()
    if args.kind == "hits":
        missing = [d.source for d in data if d.num_candidates is None]
        if missing:
            raise CliError(
                f"the Hits@k curve's null model needs the number of candidates; add a "
                f"num_candidates column to {missing[0]} or pass --num-candidates N"
            )
        results = {
            name: d.evaluate(
                metrics=hits_metrics(args.max_k),
                rank_types=[args.rank_type],
                **_progress(args),
            )
            for name, d in zip(names, data, strict=True)
        }
        plot_hits_at_k(results, rank_type=args.rank_type, ax=ax)
    else:
        ranks = {}
        for name, d in zip(names, data, strict=True):
            if args.rank_type not in d.ranks:
                raise CliError(
                    f"{d.source} has no {args.rank_type} ranks; it has {', '.join(d.ranks)}"
                )
            ranks[name] = d.ranks[args.rank_type]
        plot_rank_histogram(ranks, ax=ax, rank_type=args.rank_type)
    save_figure(figure, args.output, "--output")
    return 0


def _progress(args: argparse.Namespace) -> dict[str, Any]:
    return {"progress": progress_setting(args)}


def register(commands: Any) -> None:
    """Add the ``plot`` command to the subparsers ``commands``."""
    parser = commands.add_parser(
        "plot",
        help="draw the Hits@k curve or the histogram of ranks of files to an image",
        description="Draw a figure of one or more files of ranks (read as by 'rankstats "
        "evaluate') and write it to an image file: 'hits' draws Hits@k for k = 1..K with the "
        "null model's expectation and a band of +-2 standard deviations; 'ranks' the histogram "
        "of the ranks on a log scale. The null distribution of a metric is drawn by "
        "'rankstats null --plot'.",
    )
    parser.add_argument("kind", choices=("hits", "ranks"), help="the figure to draw")
    parser.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="files of ranks, one curve each, or '-' for standard input (default: piped "
        "standard input, else the bundled example)",
    )
    parser.add_argument(
        "--output",
        "-o",
        required=True,
        metavar="IMAGE",
        help="the image file to write; its suffix gives the format (.png, .pdf, .svg, ...), "
        "and a name without one is refused",
    )
    parser.add_argument(
        "--max-k",
        type=bounded_int(1, 1000, "an integer in 1..1000"),
        default=10,
        metavar="K",
        help="the largest k of the Hits@k curve (default: %(default)s)",
    )
    parser.add_argument(
        "--rank-type",
        choices=("realistic", "optimistic", "pessimistic"),
        default="realistic",
        help="the rank type to draw (default: %(default)s)",
    )
    parser.add_argument(
        "--num-candidates",
        type=candidate_count,
        metavar="N",
        help="the number of candidates of every task, for files without a num_candidates column",
    )
    add_progress(parser)
    parser.set_defaults(handler=run)
