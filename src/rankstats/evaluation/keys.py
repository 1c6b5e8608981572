"""Result keys in PyKEEN's grammar ``[side.][rank_type.]metric``: parsed in one place.

Both :class:`~rankstats.evaluation.results.EvaluationResults` (``results["tail.best.mrr"]``) and
:class:`~rankstats.evaluation.stopping.EarlyStopper` (which finds its metric in a results mapping
or PyKEEN's flat dict) read keys through :func:`parse_key`. Besides rankstats' own spellings it
understands PyKEEN's: the rank-type synonyms ``best`` / ``optimistic``, ``worst`` /
``pessimistic``, ``avg`` / ``average`` / ``realistic``, and a metric's cut-off after a dot
(``"hits_at_k.3"`` for Hits@3, as in ``"head.best.hits_at_k.3"``).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

from rankstats.base import RankBasedMetric
from rankstats.errors import UnknownMetricError
from rankstats.evaluation.scores import EVALUATION_RANK_TYPES
from rankstats.registry import metric_resolver

__all__ = ["RANK_TYPE_SYNONYMS", "ParsedKey", "parse_key", "try_parse_key"]

#: PyKEEN's synonyms of rank types in result keys
RANK_TYPE_SYNONYMS = {
    "best": "optimistic",
    "worst": "pessimistic",
    "avg": "realistic",
    "average": "realistic",
}

#: a parsed results key: side (None: not given), rank type (None: not given) and metric
ParsedKey = tuple[str | None, str | None, RankBasedMetric]


def parse_key(key: str) -> ParsedKey:
    """Split a results key ``[side.][rank_type.]metric`` into side, rank type and metric.

    Any qualifier that is not a rank type (or a synonym of one) is taken for the side; the caller
    checks it against the sides it has.

    Raises
    ------
    KeyError
        If the key is not of that form; :class:`~rankstats.errors.UnknownMetricError` (a
        :class:`KeyError` too) if the metric name is unknown.

    Examples
    --------
    >>> side, rank_type, metric = parse_key("head.best.hits_at_k.3")
    >>> side, rank_type, metric.key
    ('head', 'optimistic', 'hits_at_3')
    >>> parse_key("avg.mrr")[:2]
    (None, 'realistic')
    """
    parsed = _parse(key)
    if isinstance(parsed, _Unknown):  # a fresh error each time (cached ones pile up tracebacks)
        _metric(parsed.name, parsed.cut_off)
        raise AssertionError(f"{parsed.name!r} resolved on a second try")  # pragma: no cover
    if isinstance(parsed, str):
        raise KeyError(parsed)
    return parsed


def try_parse_key(key: str) -> ParsedKey | None:
    """:func:`parse_key`, or ``None`` where ``key`` is not a key of a value."""
    parsed = _parse(key)
    return None if isinstance(parsed, str | _Unknown) else parsed


class _Unknown(NamedTuple):
    """A key whose metric name the resolver does not know."""

    name: str
    cut_off: int | None


def _metric(name: str, cut_off: int | None) -> RankBasedMetric:
    if cut_off is None:
        return metric_resolver.make(name)
    return metric_resolver.make(name, k=cut_off)  # a k in the name must agree with cut_off


def _looks_like_number(text: str) -> bool:
    """Whether a key's last part is a number (a signed or decimal cut-off), not a metric name."""
    try:
        float(text)
    except ValueError:
        return False
    return True


@functools.lru_cache(maxsize=4096)
def _parse(key: str) -> ParsedKey | str | _Unknown:
    """The parts of a key, or why it is not one (cached: results and stoppers look up often)."""
    parts = key.split(".")
    cut_off = None
    if len(parts) > 1 and parts[-1].isascii() and parts[-1].isdigit():
        cut_off = int(parts.pop())
    *qualifiers, name = parts
    form = f"{key!r} is not a key of the form [side.][rank_type.]metric"
    if not name:  # "mrr." or "": had been "unknown metric ''"
        return f"{form}[.k]: it ends without a metric name"
    if qualifiers and _looks_like_number(name):  # "hits_at_k.-1": had been "unknown metric '-1'"
        pieces = key.split(".")
        first = len(pieces) - 1  # where the numbers after the metric's name begin
        while first > 1 and _looks_like_number(pieces[first - 1]):
            first -= 1
        return (
            f"{key!r}: the cut-off k after the metric must be a positive integer, got "
            f"{'.'.join(pieces[first:])!r}"
        )
    if len(qualifiers) > 2:
        return f"{form}: it has {len(qualifiers) + 1} parts"
    side = rank_type = None
    for given in qualifiers:
        part = RANK_TYPE_SYNONYMS.get(given, given)
        if part in EVALUATION_RANK_TYPES and rank_type is None:
            rank_type = part
        elif part not in EVALUATION_RANK_TYPES and side is None and part:
            side = part
        else:
            return (
                f"{form}: {given!r} is neither a side nor a rank type "
                f"({', '.join(EVALUATION_RANK_TYPES)}), or it is given twice"
            )
    try:
        metric = _metric(name, cut_off)
    except UnknownMetricError:
        return _Unknown(name, cut_off)
    except (TypeError, ValueError) as error:
        return f"{key!r}: cannot make the metric {name!r}: {error}"
    return side, rank_type, metric
