r"""The results of an evaluation: values with their null-model statistics, looked up by key.

Keys follow PyKEEN's grammar ``side.rank_type.metric``, where the side and the rank type are
optional and default to ``both`` (all ranks) and ``realistic``, or, where the results hold one
side or one rank type only (ranks given for ``head`` alone, or pessimistic ranks alone), to that
one: ``results["mrr"]`` is then its MRR, and :meth:`EvaluationResults.to_flat_dict` shows the
full key; the metric is any name the
:data:`~rankstats.metric_resolver` knows (``"mrr"``, ``"hits@10"``, ``"hits_at_10"``,
``"inverse_harmonic_mean_rank"``, ...). So ``results["mrr"]``, ``results["realistic.hits_at_10"]``
and ``results["tail.pessimistic.hits@10"]`` all work, and so do PyKEEN's spellings
(:mod:`rankstats.evaluation.keys`): ``results["tail.worst.hits_at_k.10"]``,
``results["avg.mrr"]``.

For every value where the null model :math:`r_i \sim \mathcal{U}\{1..C_i\}` has closed forms, the
results also hold the expected value :math:`\mathbb{E}[M]`, the standard deviation
:math:`\sqrt{\mathbb{V}[M]}` and the z-score :math:`(M - \mathbb{E}[M]) / \sqrt{\mathbb{V}[M]}`.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rankstats.base import RankBasedMetric
from rankstats.evaluation.keys import RANK_TYPE_SYNONYMS, parse_key
from rankstats.evaluation.scores import EVALUATION_RANK_TYPES

if TYPE_CHECKING:  # pragma: no cover
    import pandas  # type: ignore[import-untyped,import-not-found,unused-ignore]

__all__ = ["SIDE_BOTH", "EvaluationResults", "ResultRow"]

#: the side holding all ranks together
SIDE_BOTH = "both"
#: the default rank type of a key that names none
DEFAULT_RANK_TYPE = "realistic"
#: the statistics of a row, in table order
STATISTICS = ("value", "expected_value", "std", "z_score")


#: how a row's null-model statistics were obtained
METHOD_EXACT = "exact"
METHOD_MONTE_CARLO = "monte-carlo"


@dataclass(frozen=True)
class ResultRow:
    r"""One metric on one side and rank type: its value and null-model statistics.

    ``expected_value`` and ``variance`` are ``None`` where there is no null model (no candidate
    counts) or no closed form and no Monte-Carlo estimate was asked for; ``note`` then says why.
    ``value`` is NaN where the metric is undefined (an adjusted index when every task has a
    single candidate), again with a note.

    Attributes
    ----------
    method : {"exact", "monte-carlo"} or None
        How ``expected_value`` and ``variance`` were obtained: closed forms, or a Monte-Carlo
        estimate (``evaluate(..., num_samples=N)``) where at least one of them has none;
        ``None`` without a null model.
    standard_error : float or None
        The Monte-Carlo standard error of ``expected_value``, :math:`\sqrt{s^2 / N}`; ``None``
        where it is exact.
    note : str or None
        Why a statistic is missing or undefined, or how it was obtained, for the reader.
    """

    side: str
    rank_type: str
    metric: RankBasedMetric
    value: float
    expected_value: float | None = None
    variance: float | None = None
    method: str | None = METHOD_EXACT
    standard_error: float | None = None
    note: str | None = None
    #: :math:`M - \mathbb{E}[M]` where computed without cancellation (an exact sum where the
    #: rounded value and expectation share their leading digits, :mod:`rankstats.chance`);
    #: the z-score is taken from it. Determined by the rest: left out of comparisons and repr
    difference: float | None = field(default=None, compare=False, repr=False)

    @property
    def key(self) -> str:
        """The canonical key, ``side.rank_type.metric_key``."""
        return f"{self.side}.{self.rank_type}.{_metric_key(self.metric)}"

    @property
    def std(self) -> float | None:
        """The null model's standard deviation of the metric."""
        return None if self.variance is None else math.sqrt(self.variance)

    @property
    def z_score(self) -> float | None:
        r"""How many null standard deviations the value lies above the null expectation.

        :math:`(M - \mathbb{E}[M]) / \sqrt{\mathbb{V}[M]}`, not re-oriented: for a metric where
        smaller is better, a good model has a negative z-score. ``None`` without a null model or
        where its variance is 0. :math:`M - \mathbb{E}[M]` is :attr:`difference` where given.
        """
        if self.expected_value is None or self.variance is None or not self.variance > 0:
            return None
        difference = self.difference
        if difference is None:
            difference = self.value - self.expected_value
        return difference / math.sqrt(self.variance)

    def statistic(self, name: str) -> float | None:
        """One of ``value``, ``expected_value``, ``std`` and ``z_score``."""
        value: float | None = getattr(self, name)
        return value


class EvaluationResults(Mapping[str, float]):
    """The results of :func:`~rankstats.evaluate`: a read-only mapping from keys to values.

    Iterating gives the canonical keys ``side.rank_type.metric_key``; looking up accepts the
    short forms of PyKEEN's grammar (see the module docstring), metric instances too. The
    null-model statistics are available through :meth:`expected_value`, :meth:`std`,
    :meth:`z_score` and :meth:`row`.

    Parameters
    ----------
    rows : sequence of ResultRow
        The results, one per side, rank type and metric.
    average : {"micro", "macro"} or None
        How groups were combined into these rows, ``None`` without groups.
    by_group : mapping, optional
        The results of each group, by group label.
    skipped : mapping, optional
        For (metric key, rank type) pairs that were not computed, the reason, for error messages.
    num_samples : int, optional
        The number of Monte-Carlo samples behind the rows whose ``method`` is ``"monte-carlo"``
        (``None`` if none was asked for).
    seed : int, optional
        The seed given for those samples, for reports (``None`` for a generator or no seed).
    notes : sequence of str, optional
        Remarks on the whole table, e.g. groups left out because all their weights are 0.

    Examples
    --------
    >>> from rankstats import evaluate
    >>> results = evaluate([1, 2, 4, 1], num_candidates=[5, 5, 5, 5], metrics=["mrr", "hits@1"])
    >>> results["mrr"], results["both.realistic.hits_at_1"]
    (0.6875, 0.5)
    >>> round(results.expected_value("mrr"), 6), round(results.z_score("mrr"), 4)
    (0.456667, 1.5912)
    >>> list(results)
    ['both.realistic.inverse_harmonic_mean_rank', 'both.realistic.hits_at_1']
    """

    def __init__(
        self,
        rows: Sequence[ResultRow],
        *,
        average: str | None = None,
        by_group: Mapping[Hashable, EvaluationResults] | None = None,
        skipped: Mapping[tuple[str, str], str] | None = None,
        num_samples: int | None = None,
        seed: int | None = None,
        notes: Sequence[str] = (),
    ) -> None:
        self._rows = list(rows)
        #: the number of Monte-Carlo samples behind the estimated rows, ``None`` if not asked for
        self.num_samples = num_samples
        #: the integer seed of the Monte-Carlo samples, ``None`` if none was given
        self.seed = seed
        #: remarks on the whole table (e.g. groups left out), for report footers
        self.notes: tuple[str, ...] = tuple(notes)
        # keys by metric object: a metric's key identifies it (class and parameters), and
        # strings hash once, where hashing a metric costs a call per row
        metric_keys: dict[int, str] = {}
        distinct: dict[str, RankBasedMetric] = {}
        self._by_key: dict[str, ResultRow] = {}
        for r in self._rows:
            name = metric_keys.get(id(r.metric))
            if name is None:
                name = metric_keys[id(r.metric)] = r.metric.key
                distinct.setdefault(name, r.metric)
            self._by_key[f"{r.side}.{r.rank_type}.{name}"] = r
        self.average = average
        #: the results of each group, by label (empty without groups); a read-only mapping,
        #: whose entries may be built when first looked up
        self.by_group: Mapping[Hashable, EvaluationResults] = (
            by_group if by_group is not None else {}
        )
        self._skipped = dict(skipped or {})
        self.sides: tuple[str, ...] = tuple(dict.fromkeys(r.side for r in self._rows))
        self.rank_types: tuple[str, ...] = tuple(
            t for t in EVALUATION_RANK_TYPES if any(r.rank_type == t for r in self._rows)
        )
        self.metrics: tuple[RankBasedMetric, ...] = tuple(distinct.values())

    # --- lookup --------------------------------------------------------------------------------

    def row(self, key: str | RankBasedMetric) -> ResultRow:
        """The full row (value and null-model statistics) of a key."""
        if isinstance(key, str) and key in self._by_key:
            return self._by_key[key]
        side, rank_type, metric = self._parse(key)
        found = self._by_key.get(f"{side}.{rank_type}.{metric.key}")
        if found is not None:
            return found
        reason = self._skipped.get((metric.key, rank_type))
        if reason is not None:
            raise KeyError(f"{key!r} was not computed: {reason}")
        if rank_type not in self.rank_types:
            # the metric may well have been asked for (a side is checked by _parse, and the
            # default one is always held)
            raise KeyError(
                f"{key!r}: these results have no rank type {rank_type!r} (they hold "
                f"{', '.join(map(repr, self.rank_types))}); the optimistic, pessimistic and "
                "expected rank types need the optimistic and pessimistic ranks, and rank_types= "
                "chooses among those computed"
            )
        computed = ", ".join(m.key for m in self.metrics) or "none"
        raise KeyError(
            f"{key!r}: metric {metric.key!r} was not computed for side {side!r} and rank type "
            f"{rank_type!r}; computed metrics: {computed}; pass it in metrics= to evaluate"
        )

    def __getitem__(self, key: str | RankBasedMetric) -> float:
        return self.row(key).value

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_key)

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str | RankBasedMetric):
            return False
        try:
            self.row(key)
        except (KeyError, ValueError):
            return False
        return True

    def get(self, key: object, default: Any = None) -> Any:
        """The value of a key, or ``default`` where the results have none.

        As ``key in results``, any object other than a string or a metric is no key here: it
        gives ``default`` (``__getitem__`` raises ``TypeError`` for it).
        """
        if not isinstance(key, str | RankBasedMetric):
            return default
        try:
            return self[key]
        except KeyError:
            return default

    def get_metric(self, name: str) -> float:
        """The value of a key, as PyKEEN's ``MetricResults.get_metric``."""
        return self[name]

    def expected_value(self, key: str | RankBasedMetric) -> float | None:
        """The null model's expected value of the metric of a key, ``None`` without one."""
        return self.row(key).expected_value

    def std(self, key: str | RankBasedMetric) -> float | None:
        """The null model's standard deviation of the metric of a key, ``None`` without one."""
        return self.row(key).std

    def z_score(self, key: str | RankBasedMetric) -> float | None:
        """The z-score of the value of a key under the null model, ``None`` without one."""
        return self.row(key).z_score

    @property
    def rows(self) -> tuple[ResultRow, ...]:
        """Every row, in table order (side, rank type, metric)."""
        return tuple(self._rows)

    def _parse(self, key: str | RankBasedMetric) -> tuple[str, str, RankBasedMetric]:
        """Split a key into side, rank type and metric, filling in the defaults."""
        if isinstance(key, RankBasedMetric):
            return self._default_side(key), self._default_rank_type(key), key
        if not isinstance(key, str):
            raise TypeError(f"keys must be strings or metrics, got {type(key).__name__}")
        side, rank_type, metric = parse_key(key)
        if side is not None and side not in self.sides:
            raise KeyError(
                f"{key!r} is not a key of the form [side.][rank_type.]metric: {side!r} is "
                f"neither a side ({', '.join(self.sides)}) nor a rank type "
                f"({', '.join(EVALUATION_RANK_TYPES)}, or PyKEEN's {', '.join(RANK_TYPE_SYNONYMS)})"
            )
        return (
            side or self._default_side(metric),
            rank_type or self._default_rank_type(metric),
            metric,
        )

    def _default_side(self, metric: RankBasedMetric) -> str:
        if SIDE_BOTH in self.sides or len(self.sides) != 1:
            return SIDE_BOTH
        return self.sides[0]

    def _default_rank_type(self, metric: RankBasedMetric) -> str:
        if DEFAULT_RANK_TYPE in self.rank_types or len(self.rank_types) != 1:
            return DEFAULT_RANK_TYPE
        return self.rank_types[0]

    # --- export --------------------------------------------------------------------------------

    def to_dict(self, statistics: bool = False) -> dict[str, float]:
        """A flat dictionary ``{side.rank_type.metric_key: value}`` (PyKEEN's flat dict).

        Parameters
        ----------
        statistics : bool, default=False
            Whether to add the keys ``<key>.expected_value``, ``<key>.std`` and
            ``<key>.z_score`` where the null model gives them.

        Examples
        --------
        >>> from rankstats import evaluate
        >>> flat = evaluate([1, 3], [4, 4], metrics=["mr"]).to_dict(statistics=True)
        >>> for key, value in flat.items():
        ...     print(f"{key}: {value:.4f}")
        both.realistic.arithmetic_mean_rank: 2.0000
        both.realistic.arithmetic_mean_rank.expected_value: 2.5000
        both.realistic.arithmetic_mean_rank.std: 0.7906
        both.realistic.arithmetic_mean_rank.z_score: -0.6325
        """
        flat: dict[str, float] = {}
        for row in self._rows:
            flat[row.key] = row.value
            if statistics:
                for name in STATISTICS[1:]:
                    value = row.statistic(name)
                    if value is not None:
                        flat[f"{row.key}.{name}"] = value
        return flat

    def to_flat_dict(self) -> dict[str, float]:
        """The values as a flat dictionary, as PyKEEN's ``to_flat_dict``.

        The keys of :meth:`to_dict`, plus PyKEEN's own spelling where it differs: PyKEEN keys
        its adjusted and z-scored Hits@k at its default :math:`k = 10` as
        ``adjusted_hits_at_k`` and ``z_hits_at_k`` (without the value of :math:`k`), so these
        keys are added next to ``adjusted_hits_at_10`` and ``z_hits_at_10``, and code written
        for PyKEEN's flat dictionary finds every key it expects.

        Examples
        --------
        >>> from rankstats import evaluate
        >>> sorted(evaluate([1, 3], 4, metrics=["z_hits_at_10"]).to_flat_dict())
        ['both.realistic.z_hits_at_10', 'both.realistic.z_hits_at_k']
        """
        flat = self.to_dict()
        for row in self._rows:
            alias = _pykeen_key(row.metric)
            if alias is not None:
                flat.setdefault(f"{row.side}.{row.rank_type}.{alias}", row.value)
        return flat

    def to_json(self, statistics: bool = True, **kwargs: Any) -> str:
        """The flat dictionary of :meth:`to_dict` as JSON; undefined values become ``null``.

        Keyword arguments are passed to :func:`json.dumps` (e.g. ``indent=2``). Group results,
        if any, are under the key ``"groups"``, by the string of their label.

        Raises
        ------
        ValueError
            If two groups' labels have the same string (``1`` and ``"1"``): JSON keys are
            strings, and one group would overwrite the other.
        """
        document: dict[str, Any] = {
            key: _json_number(value) for key, value in self.to_dict(statistics).items()
        }
        if self.by_group:
            groups: dict[str, Any] = {}
            labels: dict[str, Hashable] = {}
            for label, group in self.by_group.items():
                text = str(label)
                if text in labels:
                    raise ValueError(
                        f"the group labels {labels[text]!r} and {label!r} are both {text!r} as "
                        "JSON keys (strings); relabel one, or write the groups with to_csv()"
                    )
                labels[text] = label
                groups[text] = {k: _json_number(v) for k, v in group.to_dict(statistics).items()}
            document["groups"] = groups
        return json.dumps(document, allow_nan=False, **kwargs)

    def to_df(self, groups: bool = False) -> pandas.DataFrame:
        """A pandas DataFrame with one row per side, rank type and metric.

        The columns are ``side``, ``rank_type``, ``metric`` (the metric's key), ``value``,
        ``expected_value``, ``std`` and ``z_score`` (NaN where unknown). With ``groups=True``
        the rows of every group follow, and a first column ``group`` holds the group label, or
        the averaging (``"micro"``/``"macro"``) for the combined rows. Needs pandas
        (``pip install rankstats[pandas]``).
        """
        try:
            import pandas
        except ImportError as error:
            raise ImportError(
                "to_df needs pandas, an optional dependency: pip install 'rankstats[pandas]'"
            ) from error
        records = self._records(group=self.average if groups else None)
        if groups:
            for label, result in self.by_group.items():
                records.extend(result._records(group=label))
        columns = ["side", "rank_type", "metric", *STATISTICS]
        if groups:
            columns.insert(0, "group")
        return pandas.DataFrame.from_records(records, columns=columns)

    def _records(self, group: Hashable | None) -> list[dict[str, Any]]:
        records = []
        for row in self._rows:
            record: dict[str, Any] = {"group": group} if group is not None else {}
            record.update(side=row.side, rank_type=row.rank_type, metric=row.metric.key)
            for name in STATISTICS:
                value = row.statistic(name)
                record[name] = math.nan if value is None else value
            records.append(record)
        return records

    # --- rendering (rankstats.evaluation.report) ---------------------------------------------

    def to_records(
        self, *, groups: bool = False, group_names: Sequence[str] | None = None
    ) -> list[dict[str, Any]]:
        """The rows as flat records; see :func:`rankstats.evaluation.report.records`."""
        from rankstats.evaluation import report

        return report.records(self, groups=groups, group_names=group_names)

    def to_table(self, *, groups: bool = False, group_names: Sequence[str] | None = None) -> str:
        """An aligned plain-text table, as the command line prints it (``str(results)``).

        With ``groups=True`` each group's rows follow the overall ones, under group columns
        named by ``group_names``; see :func:`rankstats.evaluation.report.render_table`.
        """
        from rankstats.evaluation import report

        return report.render_table(self, groups=groups, group_names=group_names)

    def to_csv(self, *, groups: bool = False, group_names: Sequence[str] | None = None) -> str:
        """The rows as CSV text; see :func:`rankstats.evaluation.report.render_csv`."""
        from rankstats.evaluation import report

        return report.render_csv(self, groups=groups, group_names=group_names)

    def to_markdown(
        self, *, groups: bool = False, group_names: Sequence[str] | None = None, digits: int = 4
    ) -> str:
        """A Markdown table with the null model's columns, ready for a README or a report.

        Examples
        --------
        >>> from rankstats import evaluate
        >>> print(evaluate([1, 3], [4, 4], metrics=["mrr", "hits@1"]).to_markdown(), end="")
        | side | rank type | metric | value | E (null) | std (null) | z |
        | --- | --- | --- | ---: | ---: | ---: | ---: |
        | both | realistic | MRR | 0.6667 | 0.5208 | 0.2057 | 0.7089 |
        | both | realistic | Hits@1 | 0.5 | 0.25 | 0.3062 | 0.8165 |
        """
        from rankstats.evaluation import report

        return report.render_markdown(self, groups=groups, group_names=group_names, digits=digits)

    def to_latex(
        self,
        *,
        groups: bool = False,
        group_names: Sequence[str] | None = None,
        digits: int = 4,
        caption: str | None = None,
        label: str | None = None,
    ) -> str:
        r"""A booktabs LaTeX table with the null model's columns, ready for a paper.

        See :func:`rankstats.evaluation.report.render_latex`.
        """
        from rankstats.evaluation import report

        return report.render_latex(
            self,
            groups=groups,
            group_names=group_names,
            digits=digits,
            caption=caption,
            label=label,
        )

    def __str__(self) -> str:
        return self.to_table()

    def __repr__(self) -> str:
        metrics = ", ".join(m.key for m in self.metrics)
        groups = f", groups={len(self.by_group)}, average={self.average!r}" if self.by_group else ""
        return (
            f"EvaluationResults(sides={list(self.sides)}, rank_types={list(self.rank_types)}, "
            f"metrics=[{metrics}]{groups})"
        )


@functools.lru_cache(maxsize=1024)
def _metric_key(metric: RankBasedMetric) -> str:
    return metric.key


#: PyKEEN's default cut-off, the one its keys ``adjusted_hits_at_k`` / ``z_hits_at_k`` stand for
_PYKEEN_DEFAULT_K = 10


def _pykeen_key(metric: RankBasedMetric) -> str | None:
    """PyKEEN's flat-dictionary key of a metric, where it differs from :attr:`key`."""
    base = getattr(metric, "base", None)
    if base is None or base._params().get("k") != _PYKEEN_DEFAULT_K:
        return None
    key = _metric_key(metric)
    suffix = f"_at_{_PYKEEN_DEFAULT_K}"
    return f"{key.removesuffix(suffix)}_at_k" if key.endswith(suffix) else None


def _json_number(value: float) -> float | None:
    return value if math.isfinite(value) else None
