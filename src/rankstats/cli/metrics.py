"""``rankstats metrics [QUERY]``: list every metric and what its null model offers."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from rankstats.base import RankBasedMetric, _camel_to_snake
from rankstats.cli.common import PROG, CliError, add_format, write_output
from rankstats.errors import UnknownMetricError
from rankstats.evaluation.report import tabulate
from rankstats.registry import metric_resolver

__all__ = ["metric_rows", "register"]


def metric_rows(query: str | None = None) -> list[dict[str, Any]]:
    """Describe every metric class (or those matching ``query``) as rows of a table.

    Parameters
    ----------
    query : str, optional
        Keep the metric it names, resolved by :data:`~rankstats.metric_resolver` as everywhere
        else (so ``"hits@10"`` names :class:`~rankstats.HitsAtK`), and the metrics whose key,
        name, synonyms or description contain it (compared without case, spaces, ``-`` and
        ``_``).

    Returns
    -------
    list of dict
        One row per metric, sorted by key.

    Raises
    ------
    ValueError
        If ``query`` names a metric with a cut-off that is not a positive integer, e.g.
        ``"hits@0"`` (the resolver's error).

    Examples
    --------
    >>> for row in metric_rows("reciprocal"):
    ...     print(row["key"], row["value_range"])
    adjusted_inverse_harmonic_mean_rank (-∞, 1]
    inverse_harmonic_mean_rank (0, 1]
    z_inverse_harmonic_mean_rank (-∞, ∞)
    """
    named = None if query is None else _named(query)
    rows = []
    for cls in metric_resolver:
        row = {
            "key": _camel_to_snake(cls.__name__),  # as RankBasedMetric.key, cut-off left as k
            "name": cls.name,
            "synonyms": sorted(cls.synonyms),
            "value_range": cls.get_range(),
            "increasing": bool(cls.increasing),
            "exact_expectation": bool(cls.closed_expectation),
            "exact_variance": bool(cls.closed_variance),
            "supports_weights": bool(cls.supports_weights),
            "needs_candidates": bool(cls.needs_candidates),
            "description": cls.get_description(),
            "link": cls.get_link(),
            "class": f"rankstats.{cls.__name__}",
        }
        if query is None or cls is named or _matches(query, row):
            rows.append(row)
    return sorted(rows, key=lambda row: row["key"])


def _named(query: str) -> type[RankBasedMetric] | None:
    """The class of the metric ``query`` names, as the resolver reads names; ``None`` if none."""
    try:
        return type(metric_resolver.make(query))
    except UnknownMetricError:  # not a name: perhaps a part of one, for the search
        return None


def _matches(query: str, row: Mapping[str, Any]) -> bool:
    needle = metric_resolver.normalize(query)
    haystack = [row["key"], row["name"], row["description"], row["class"], *row["synonyms"]]
    return any(needle in metric_resolver.normalize(text) for text in haystack)


def run(args: argparse.Namespace) -> int:
    """List the metrics."""
    rows = metric_rows(args.query)
    if not rows:
        raise CliError(f"no metric matches {args.query!r}; run '{PROG} metrics' to list them all")
    if args.format == "table":
        for row in rows:
            row["direction"] = "higher" if row["increasing"] else "lower"
            row["E"] = "exact" if row["exact_expectation"] else "sampled"
            row["V"] = "exact" if row["exact_variance"] else "sampled"
        columns = ["key", "synonyms", "value_range", "direction", "E", "V", "description"]
    else:
        columns = list(rows[0])
    write_output(tabulate(rows, columns, args.format))
    return 0


def register(commands: Any) -> None:
    """Add the ``metrics`` command to the subparsers ``commands``."""
    parser = commands.add_parser(
        "metrics",
        help="list every metric",
        description="List every metric: key, synonyms, value range, whether higher or lower is "
        "better, whether the null model's expected value (E) and variance (V) are exact, and a "
        "one-line description.",
    )
    parser.add_argument(
        "query", nargs="?", metavar="QUERY", help="show only the metrics that mention QUERY"
    )
    add_format(parser)
    parser.set_defaults(handler=run)
