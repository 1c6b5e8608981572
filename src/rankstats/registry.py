"""Looking metrics up by name: :data:`metric_resolver` over every concrete metric class.

Names are normalised as class-resolver does (lower case; ``-``, ``_`` and spaces dropped), so
``"mrr"``, ``"MRR"``, ``"mean_reciprocal_rank"`` and ``"InverseHarmonicMeanRank"`` all resolve to
:class:`~rankstats.metrics.central.InverseHarmonicMeanRank`. Metrics with a cut-off take it from a
trailing number: ``"hits@10"``, ``"hits_at_3"``, ``"h@1"``, ``"adjusted_hits_at_5"`` and
``"z_hits_at_7"``.

The cut-off must be written as a positive integer in decimal digits: ``"hits@0"``, ``"hits@-1"``
and ``"hits@1.5"`` raise a :class:`ValueError` naming :math:`k` (the minus sign is not read as a
separator there). As everywhere in class-resolver, case, ``-``, ``_`` and spaces do not matter
otherwise: ``"Hits @ 10"`` is ``"hits@10"``. A query that is not a name, class or instance of a
metric (``5``, ``b"mrr"``) raises a :class:`TypeError`.

The resolver lists its metrics in the alphabetical order of their class names, the same in every
process (class-resolver keeps them in a set, whose order varies from run to run).
"""

from __future__ import annotations

import difflib
import functools
import inspect
import re
from collections.abc import Mapping
from typing import Any

from class_resolver import ClassResolver, HintOrType
from class_resolver.utils import get_subclasses

from rankstats.base import RankBasedMetric
from rankstats.errors import UnknownMetricError
from rankstats.metrics import central, derived, dispersion, hits  # noqa: F401  (registers them)
from rankstats.metrics.central import InverseHarmonicMeanRank
from rankstats.metrics.derived import (
    DerivedRankBasedMetric,
    ExpectationNormalizedMetric,
    ReindexedMetric,
    ZMetric,
)

__all__ = ["MetricResolver", "metric_resolver"]

#: (ASCII digits only: ``int`` would read other scripts' digits, "hits@\u0663" as Hits@3)
_TRAILING_NUMBER = re.compile(r"(.*?)(\d+)", re.ASCII)
#: the digits a query ends with (before trailing spaces), as given
_GIVEN_DIGITS = re.compile(r"(\d+)\s*$", re.ASCII)
#: a cut-off that is not a plain positive integer in digits: signed, with a decimal point or an
#: exponent; a ``-`` right after a letter or digit is a separator ("hits-at-10"), not a sign
_BAD_CUT_OFF = re.compile(
    r"(?P<prefix>.*?)(?P<number>(?:(?<![A-Za-z0-9])[-+]\s*)?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?)\s*",
    re.ASCII,
)


@functools.cache
def _takes_k(cls: type[RankBasedMetric]) -> bool:
    """Whether the class takes a cut-off ``k`` (read once per class: signatures are slow)."""
    return "k" in inspect.signature(cls).parameters


class MetricResolver(ClassResolver[RankBasedMetric]):
    """A class resolver for metrics that reads cut-offs from names and suggests close matches.

    Examples
    --------
    >>> metric_resolver.make("hits@10")
    HitsAtK(k=10)
    >>> metric_resolver.make("z_hits_at_7")
    ZHitsAtK(k=7)
    >>> metric_resolver.lookup("mrr").__name__
    'InverseHarmonicMeanRank'
    """

    def _parse(self, query: str) -> tuple[type[RankBasedMetric], int | None]:
        key = self.normalize(query)
        found = self.lookup_dict.get(key) or self.synonyms.get(key)
        if found is not None:
            return found, None
        self._check_cut_off(query)
        match = _TRAILING_NUMBER.fullmatch(key)
        if match is not None:
            prefix, digits = match.groups()
            cls = self._with_cut_off(prefix)
            if cls is not None:
                # one run of digits as given: normalising drops separators ("hits@3 -1" would
                # read as k = 31, "hits@1_000" as 1000)
                given = _GIVEN_DIGITS.search(query)
                if given is None or given.group(1) != digits:
                    raise ValueError(
                        f"metric {query!r}: the cut-off k must be a positive integer in digits, "
                        f"got the digits {digits!r} split by separators"
                    )
                return cls, int(digits)
        raise UnknownMetricError(self._unknown_message(query))

    def _with_cut_off(self, prefix: str) -> type[RankBasedMetric] | None:
        """The metric with a cut-off named by ``prefix`` (normalised, without the number)."""
        for candidate in (prefix, prefix + "k"):
            found = self.lookup_dict.get(candidate) or self.synonyms.get(candidate)
            if found is not None and _takes_k(found):
                return found
        return None

    def _check_cut_off(self, query: str) -> None:
        """Refuse a cut-off that is not a plain positive integer, e.g. ``"hits@-1"``."""
        match = _BAD_CUT_OFF.fullmatch(query.strip())
        if match is None:
            return
        number = match["number"]
        if number.strip().isascii() and number.strip().isdigit():
            return  # a plain integer: parsed (and checked to be positive) by the caller
        if self._with_cut_off(self.normalize(match["prefix"])) is not None:
            raise ValueError(
                f"metric {query!r}: the cut-off k must be a positive integer in digits, "
                f"got {number!r}"
            )

    def _unknown_message(self, query: str) -> str:
        display: dict[str, str] = {}
        for cls in self.lookup_dict.values():
            for name in (cls.__name__, *cls.synonyms):
                display.setdefault(self.normalize(name), name)
        close = difflib.get_close_matches(self.normalize(query), list(display), n=5, cutoff=0.5)
        hint = ", ".join(repr(display[name]) for name in close) or "none"
        return (
            f"unknown metric {query!r}; closest valid names: {hint}. "
            f"Valid names are the class names and synonyms listed by `rankstats metrics`, "
            f"e.g. 'mrr', 'hits@10', 'amri', 'z_hits_at_5'."
        )

    def lookup(
        self, query: HintOrType[RankBasedMetric], default: type[RankBasedMetric] | None = None
    ) -> type[RankBasedMetric]:
        """Look up a metric class by name (a trailing cut-off is ignored), class or instance."""
        _check_query(query)
        if isinstance(query, str):
            return self._parse(query)[0]
        return super().lookup(query, default=default)

    def make(
        self,
        query: HintOrType[RankBasedMetric],
        pos_kwargs: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> RankBasedMetric:
        """Instantiate a metric from a name (``"hits@10"`` sets ``k=10``), class or instance.

        Raises
        ------
        TypeError
            If ``query`` is neither ``None``, a string, a metric class nor a metric instance, or
            keyword arguments are given with an instance.
        ValueError
            If the name's cut-off is not a positive integer (``"hits@0"``, ``"hits@-1"``), or
            contradicts a ``k`` passed as a keyword.
        UnknownMetricError
            If no metric has the name; the message lists the closest valid names.
        """
        _check_query(query)
        if isinstance(query, RankBasedMetric):
            if pos_kwargs or kwargs:
                raise TypeError(
                    f"cannot apply keyword arguments {sorted({**(pos_kwargs or {}), **kwargs})} "
                    f"to the metric instance {query!r}; pass its class or name instead"
                )
            return query
        if isinstance(query, str):
            cls, k = self._parse(query)
            if k is not None:
                given = {**(pos_kwargs or {}), **kwargs}.get("k")
                if given is not None and given != k:
                    raise ValueError(f"metric {query!r} names k={k}, but k={given!r} was passed")
                kwargs["k"] = k
                pos_kwargs = {name: v for name, v in (pos_kwargs or {}).items() if name != "k"}
            try:
                return super().make(cls, pos_kwargs, **kwargs)
            except ValueError as error:
                raise ValueError(f"metric {query!r}: {error}") from error
        return super().make(query, pos_kwargs, **kwargs)


def _check_query(query: object) -> None:
    """Raise a clear :class:`TypeError` for anything that cannot name a metric."""
    if query is None or isinstance(query, str | RankBasedMetric):
        return
    if isinstance(query, type) and issubclass(query, RankBasedMetric):
        return
    shown = query.__name__ if isinstance(query, type) else repr(query)
    raise TypeError(
        f"a metric must be given as a name (str), a RankBasedMetric subclass or instance, or "
        f"None for the default; got {type(query).__name__} {shown}"[:300]
    )


#: the abstract intermediate classes, which are not metrics of their own
_INTERMEDIATE = {DerivedRankBasedMetric, ExpectationNormalizedMetric, ReindexedMetric, ZMetric}

#: The resolver over every concrete metric; the default is the mean reciprocal rank.
metric_resolver: MetricResolver = MetricResolver(
    sorted(
        {
            cls
            for cls in get_subclasses(RankBasedMetric)  # type: ignore[type-abstract]
            if cls not in _INTERMEDIATE
        },
        key=lambda cls: cls.__name__,
    ),
    base=RankBasedMetric,  # type: ignore[type-abstract]
    default=InverseHarmonicMeanRank,
)
