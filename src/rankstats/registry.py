"""Looking metrics up by name: :data:`metric_resolver` over every concrete metric class.

Names are normalised as class-resolver does (lower case; ``-``, ``_`` and spaces dropped), so
``"mrr"``, ``"MRR"``, ``"mean_reciprocal_rank"`` and ``"InverseHarmonicMeanRank"`` all resolve to
:class:`~rankstats.metrics.central.InverseHarmonicMeanRank`. Metrics with a cut-off take it from a
trailing number: ``"hits@10"``, ``"hits_at_3"``, ``"h@1"``, ``"adjusted_hits_at_5"`` and
``"z_hits_at_7"``.
"""

from __future__ import annotations

import difflib
import inspect
import re
from collections.abc import Mapping
from typing import Any

from class_resolver import ClassResolver, HintOrType

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

_TRAILING_NUMBER = re.compile(r"(.*?)(\d+)")


def _takes_k(cls: type[RankBasedMetric]) -> bool:
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
        match = _TRAILING_NUMBER.fullmatch(key)
        if match is not None:
            prefix, digits = match.groups()
            for candidate in (prefix, prefix + "k"):
                found = self.lookup_dict.get(candidate) or self.synonyms.get(candidate)
                if found is not None and _takes_k(found):
                    return found, int(digits)
        raise UnknownMetricError(self._unknown_message(query))

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
        if isinstance(query, str):
            return self._parse(query)[0]
        return super().lookup(query, default=default)

    def make(
        self,
        query: HintOrType[RankBasedMetric],
        pos_kwargs: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> RankBasedMetric:
        """Instantiate a metric from a name (``"hits@10"`` sets ``k=10``), class or instance."""
        if isinstance(query, str):
            cls, k = self._parse(query)
            if k is not None:
                given = {**(pos_kwargs or {}), **kwargs}.get("k")
                if given is not None and given != k:
                    raise ValueError(f"metric {query!r} names k={k}, but k={given!r} was passed")
                kwargs["k"] = k
                pos_kwargs = {name: v for name, v in (pos_kwargs or {}).items() if name != "k"}
            query = cls
        return super().make(query, pos_kwargs, **kwargs)


#: the abstract intermediate classes, which are not metrics of their own
_INTERMEDIATE = {DerivedRankBasedMetric, ExpectationNormalizedMetric, ReindexedMetric, ZMetric}

#: The resolver over every concrete metric; the default is the mean reciprocal rank.
metric_resolver: MetricResolver = MetricResolver.from_subclasses(  # type: ignore[assignment]
    base=RankBasedMetric,  # type: ignore[type-abstract]
    default=InverseHarmonicMeanRank,
    skip=_INTERMEDIATE,
)
