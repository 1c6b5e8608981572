"""Streaming evaluation: collect ranks batch by batch and across workers, compute once.

A :class:`RankAccumulator` keeps the tables of :mod:`rankstats.evaluation.tables`: each distinct
(optimistic, pessimistic) rank pair, or rank, and each distinct candidate count, with its count,
per side and group. Ranks are integers or half-integers, so its size is bounded by the number of
distinct values, not by the number of batches; updating and merging add integer counts, which is
exact, associative and commutative, so :meth:`RankAccumulator.compute` equals
:func:`~rankstats.evaluate` on all the ranks at once, to the last bit.

Every change is all or nothing: :meth:`~RankAccumulator.update`, :meth:`~RankAccumulator.merge`
and :meth:`~RankAccumulator.from_state_dict` validate and build the new state first and only then
replace the old one, under a lock, so a failed call leaves the accumulator exactly as it was and
several threads may update one accumulator at once.

The module is long because one class owns its state and must check all of it when reading it
back (:meth:`RankAccumulator.from_state_dict`); the parts that do not touch that state live
beside it: exact weight sums in :mod:`~rankstats.evaluation.weight_sums`, weighted and counted
batches in :mod:`~rankstats.evaluation.weighted_tables`.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import threading
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from rankstats.arrays import IntArray
from rankstats.evaluation.evaluate import (
    Average,
    MetricHint,
    available_rank_types,
    compute_results,
    resolve_metrics,
    resolve_rank_types,
    weight_sums_suffice,
)
from rankstats.evaluation.inputs import broadcast_candidates, prepare_input, ranks_shape
from rankstats.evaluation.labels import (
    add_labels,
    check_label,
    encode_groups,
    label_from_json,
    label_order,
)
from rankstats.evaluation.results import EvaluationResults
from rankstats.evaluation.scores import EVALUATION_RANK_TYPES, MAX_RANK, RANK_EXPECTED, Ranks
from rankstats.evaluation.tables import GROUP, WEIGHT, SideStatistics, Table
from rankstats.evaluation.ties import needs_task_weights
from rankstats.evaluation.weight_sums import LIMB, MAX_LIMB, rounded_sums, weight_limbs
from rankstats.evaluation.weighted_tables import (
    CANDIDATE_SUMS,
    MAX_TASKS,
    check_num_tasks,
    check_squared_range,
    combine_sums,
    counted_tables,
    rank_tables,
    rows_within,
    total_weight,
    with_weights,
)
from rankstats.null.sampling import Seed
from rankstats.validation import holds_booleans, is_scalar, num_entries

__all__ = ["RankAccumulator"]

#: the version of the layout of :meth:`RankAccumulator.state_dict` (2: weights; 3: weight sums
#: per candidate count where every null model needs only those)
STATE_VERSION = 3
_STATE_KEYS = frozenset(
    {"version", "metrics", "default_metrics", "rank_types", "average", "grouped", "labels", "sides"}
)
_WEIGHT_KEYS = frozenset({"weighted", "weight_sums"})
#: the columns of each kind of table (besides ``count``)
_TABLE_COLUMNS = {
    "pairs": (GROUP, "optimistic", "pessimistic"),
    "candidates": (GROUP, "num_candidates"),
    "tie_pairs": (GROUP, "optimistic", "pessimistic"),
    **{
        f"ranks.{rank_type}": (GROUP, "rank")
        for rank_type in ("optimistic", "realistic", "pessimistic")
    },
}


@dataclass(frozen=True)
class _Snapshot:
    """Everything an accumulator holds, as one immutable value (tables are never changed)."""

    sides: dict[str, SideStatistics]
    labels: tuple[Hashable, ...]
    grouped: bool | None
    #: whether weights were given (``None`` before the first batch)
    weighted: bool | None = None
    #: for weighted input: per side, per rank table, the exact weight sum of each row, in limbs
    #: (:mod:`~rankstats.evaluation.weight_sums`); the rank tables themselves then hold counts
    sums: dict[str, dict[str, Table]] = dataclasses.field(default_factory=dict)


class RankAccumulator:
    """Collects ranks batch by batch; :meth:`compute` gives the results of :func:`evaluate`.

    Parameters
    ----------
    metrics : sequence of str, metric or metric class, optional
        The metrics to compute, as for :func:`~rankstats.evaluate`.
    rank_types : sequence of str, optional
        The rank types to compute, as for :func:`~rankstats.evaluate`.
    average : {"micro", "macro"}, default="micro"
        How to combine groups, as for :func:`~rankstats.evaluate`.

    Notes
    -----
    The state is the tables of distinct (group, rank) and (group, candidate count) cells with
    their counts: it grows with the number of distinct cells, not of ranks, and merging adds
    integers, exactly.

    **Weights** (``update(..., weights=...)``) are kept as the exact sum of the weights of each
    distinct rank cell: every float64 is an integer multiple of :math:`2^{-1126}`, so the sum is
    kept as an integer, in base-:math:`2^{32}` digits (:mod:`~rankstats.evaluation.weight_sums`),
    and rounded to the nearest float64 only by :meth:`compute`. The results therefore do not
    depend on how the ranks were split into batches and shards, nor on the order of the merges,
    to the last bit, and they equal :func:`~rankstats.evaluate` with the same weights bit for
    bit (evaluate weighs each distinct rank by the same correctly rounded sum). When every
    metric's null model is a mean of per-task terms (MR, MRR, Hits@k and what derives from them:
    the default metrics), the candidate table keeps the exact sums of the weights and of their
    squares per candidate count, and the state stays bounded whatever the weights. A metric
    that needs each task's weight (geometric and harmonic means, the ranks' variance, the
    median) makes it keep one cell per distinct (group, candidate count, weight) instead:
    bounded when weights take few values, growing with the data for weights that differ task
    by task.
    With weights, the expectation over ties (rank type ``expected``) of the geometric means and
    the variance depends on every tied task's own weight; with such a metric the rank pairs are
    kept with each weight too. ``counts=`` gives rows that stand for
    several tasks each (a histogram).

    It is picklable, and its state is small, so workers can gather their accumulators and
    :meth:`merge` them (:mod:`rankstats.distributed` does this on torch.distributed and Dask);
    :meth:`state_dict` gives the state as JSON-able lists.

    Group labels are the same group exactly when they are equal in Python: ``1``, ``1.0`` and
    ``np.int64(1)`` are one group, but ``1`` and ``"1"`` are two. Labels must be hashable and not
    NaN. Results list the groups in sorted order (by type name first where types are mixed).

    Updates and merges are atomic (a failed call changes nothing) and thread-safe: several threads
    may update and merge into one accumulator at once.

    Examples
    --------
    >>> from rankstats import Ranks, evaluate
    >>> accumulator = RankAccumulator(metrics=["mrr", "hits@3"])
    >>> accumulator.update(Ranks([1, 2], [1, 5], [10, 10]))
    >>> accumulator.update(Ranks([4], [4], [8]))
    >>> other = RankAccumulator(metrics=["mrr", "hits@3"])
    >>> other.update(Ranks([7, 1], [9, 1], [9, 10]))
    >>> accumulator.merge(other)
    >>> results = accumulator.compute()
    >>> everything = Ranks([1, 2, 4, 7, 1], [1, 5, 4, 9, 1], [10, 10, 8, 9, 10])
    >>> results.to_dict() == evaluate(everything, metrics=["mrr", "hits@3"]).to_dict()
    True
    >>> accumulator.num_ranks
    5
    """

    def __init__(
        self,
        metrics: Sequence[MetricHint] | MetricHint | None = None,
        *,
        rank_types: Sequence[str] | str | None = None,
        average: Average = "micro",
    ) -> None:
        self.metrics, self._default_metrics = resolve_metrics(metrics)
        #: weighted input keeps the sums of the weights and of their squares per candidate count
        #: (bounded state) instead of each weight, where every null model needs only those
        self._weight_sums = weight_sums_suffice(self.metrics)
        #: weighted rank pairs are kept with each task's weight too, for the expectations over
        #: ties that are not linear in the weights
        self._tie_weights = any(needs_task_weights(metric) for metric in self.metrics)
        if average not in ("micro", "macro"):
            raise ValueError(f"average must be 'micro' or 'macro', got {average!r}")
        self.average: Average = average
        self.rank_types: tuple[str, ...] | None = (
            None
            if rank_types is None
            else tuple(resolve_rank_types(rank_types, EVALUATION_RANK_TYPES))
        )
        self.reset()

    def reset(self) -> None:
        """Forget every rank collected so far."""
        lock = getattr(self, "_lock", None)
        if lock is None:
            self._lock = threading.RLock()
        with self._lock:
            self._state = _Snapshot({}, (), None)

    def __getstate__(self) -> dict[str, Any]:
        with self._lock:
            state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()

    @property
    def num_ranks(self) -> int:
        """The number of ranks collected (over all sides)."""
        return sum(stats.size for stats in self._state.sides.values())

    @property
    def sides(self) -> tuple[str, ...]:
        """The sides seen so far."""
        return tuple(self._state.sides)

    def update(
        self,
        ranks: Any,
        num_candidates: Any = None,
        *,
        groups: Any = None,
        weights: Any = None,
        counts: Any = None,
    ) -> None:
        """Add a batch of ranks, in any form :func:`~rankstats.evaluate` takes.

        Parameters
        ----------
        ranks : Ranks, array-like or mapping
            The batch's ranks (see :func:`~rankstats.evaluate`); every batch must give the same
            sides and kinds of ranks. An empty batch (no ranks) changes nothing.
        num_candidates : int, array-like or mapping, optional
            The batch's candidate counts, if not part of ``ranks``; one integer stands for the
            same count for every rank of the batch.
        groups : array-like or mapping, optional
            The batch's group labels; give them with every batch or with none.
        weights : array-like or mapping, optional
            The batch's task weights (finite, non-negative); give them with every batch or with
            none. The accumulator keeps the exact sum of the weights of each distinct rank (see
            Notes of :class:`RankAccumulator`), so a batch whose weights are all zero is fine.
            Positive weights must lie between :math:`2^{-500}` and :math:`2^{500}` (the
            accumulator keeps each weight, or the sums of their squares, in float64, and cannot
            rescale a batch as :func:`~rankstats.evaluate` does: a later one may hold larger
            weights), and at least :math:`10^{-120}` times the largest, within the batch here
            and over every batch at :meth:`compute` where each weight is kept; only their
            ratios matter, so rescale them if they do not.
        counts : array-like or mapping, optional
            Non-negative integer multiplicities: row ``i`` stands for ``counts[i]`` tasks with
            the same rank, candidate count, group and weight (e.g. a histogram computed on a
            GPU or by a database); one array for a single side, a mapping for several.
            Each count is at most :math:`2^{53}`, and each side holds fewer than :math:`2^{62}`
            ranks in all (as in :meth:`merge` and :meth:`from_state_dict`).

        Raises
        ------
        ValueError, TypeError
            On bad input, or input that does not fit the earlier batches; the accumulator is then
            left unchanged.
        """
        if _is_empty(ranks):
            _check_empty_companions(num_candidates, groups, weights, counts)
            return
        num_candidates = _broadcast_candidates(ranks, num_candidates)
        codes, batch_labels = encode_groups(groups)
        weighted = weights is not None
        if counts is None and not weighted:
            prepared = prepare_input(ranks, num_candidates, None, codes)
            sums: dict[str, dict[str, Table]] = {}
            sides, present = prepared.sides, prepared.labels
        else:
            sides, sums, present = counted_tables(
                ranks,
                num_candidates,
                codes,
                weights,
                counts,
                _side_sizes(ranks),
                weight_sums=self._weight_sums,
                tie_weights=self._tie_weights,
            )
            if not sides:
                return  # every count was zero
        grouped = codes is not None
        first = next(iter(sides.values()))
        if self.rank_types is not None:
            resolve_rank_types(self.rank_types, available_rank_types(first))
        with self._lock:
            state = self._state
            if state.grouped is not None and grouped != state.grouped:
                raise ValueError(
                    "groups must be given with every update or with none; this accumulator was "
                    f"{'' if state.grouped else 'not '}given groups before"
                )
            if state.weighted is not None and weighted != state.weighted:
                raise ValueError(
                    "weights must be given with every update or with none; this accumulator was "
                    f"{'' if state.weighted else 'not '}given weights before"
                )
            labels = state.labels
            if grouped:
                assert present is not None
                # prepare_input numbers the groups by their sorted codes
                batch = [batch_labels[int(code)] for code in present]  # type: ignore[call-overload]
                labels, mapping = add_labels(state.labels, batch)
                sides, sums = _relabel(sides, sums, mapping)
            self._state = _Snapshot(
                _combine([state.sides, sides]),
                labels,
                grouped,
                weighted,
                combine_sums([state.sums, sums]),
            )

    def _check_weighted_ties(self, available: Sequence[str]) -> None:
        """Refuse weighted expectations over ties that need every task's own weight.

        Only a state of version 2 lacks them (later ones keep ``tie_pairs`` for such metrics).
        """
        if RANK_EXPECTED not in (available if self.rank_types is None else self.rank_types):
            return
        bad = [metric.key for metric in self.metrics if needs_task_weights(metric)]
        if bad:
            raise ValueError(
                f"with weights, the expectation over ties (rank type 'expected') of {bad} "
                "depends on the weight of every tied task, which an accumulator does not keep "
                "(this state of version 2 keeps the weight sum per distinct rank only); pass "
                "rank_types without "
                "'expected' (e.g. ['optimistic', 'realistic', 'pessimistic']), or use evaluate()"
            )

    def merge(self, other: RankAccumulator) -> None:
        """Add the ranks of another accumulator (e.g. another worker's) to this one.

        Raises
        ------
        ValueError
            If the accumulators were built for different metrics, rank types or averaging, or
            hold different sides or kinds of ranks, or if a side would hold :math:`2^{62}` ranks
            or more; this accumulator is then left unchanged.
        """
        self._merge_all([other])

    def _check_mergeable(self, other: Any) -> None:
        if not isinstance(other, RankAccumulator):
            raise TypeError(f"can only merge a RankAccumulator, got {type(other).__name__}")
        if set(other.metrics) != set(self.metrics):
            raise ValueError(
                f"cannot merge accumulators with different metrics: "
                f"{[m.key for m in self.metrics]} and {[m.key for m in other.metrics]}"
            )
        if other.rank_types != self.rank_types or other.average != self.average:
            raise ValueError(
                "cannot merge accumulators with different rank_types or average: "
                f"({self.rank_types}, {self.average!r}) and ({other.rank_types}, {other.average!r})"
            )

    def _merge_all(self, others: Sequence[RankAccumulator]) -> None:
        """Add several accumulators at once: one concatenation and one sort per table."""
        for other in others:
            self._check_mergeable(other)
        # one immutable snapshot each: no lock on the others needed
        incoming = [other._state for other in others if other._state.sides]
        if not incoming:
            return
        with self._lock:
            state = self._state
            grouped, weighted = state.grouped, state.weighted
            labels = state.labels
            parts = [(state.sides, state.sums)] if state.sides else []
            for snapshot in incoming:
                if grouped is not None and snapshot.grouped != grouped:
                    raise ValueError("cannot merge an accumulator with groups and one without")
                if weighted is not None and snapshot.weighted != weighted:
                    raise ValueError("cannot merge an accumulator with weights and one without")
                grouped, weighted = snapshot.grouped, snapshot.weighted
                sides, sums = snapshot.sides, snapshot.sums
                if grouped:
                    labels, mapping = add_labels(labels, list(snapshot.labels))
                    sides, sums = _relabel(sides, sums, mapping, sort=False)
                parts.append((sides, sums))
            self._state = _Snapshot(
                _combine([sides for sides, _ in parts]),
                labels,
                grouped,
                weighted,
                combine_sums([sums for _, sums in parts]),
            )

    def __add__(self, other: RankAccumulator) -> RankAccumulator:
        merged = copy.deepcopy(self)
        merged.merge(other)
        return merged

    @classmethod
    def merged(cls, accumulators: Iterable[RankAccumulator]) -> RankAccumulator:
        """One accumulator holding the ranks of all the given ones (which are left unchanged).

        Merging many at once concatenates and sorts each table once, faster than merging them
        one by one.
        """
        items = list(accumulators)
        if not items:
            raise ValueError("merged needs at least one accumulator")
        if not isinstance(items[0], RankAccumulator):
            raise TypeError(f"can only merge RankAccumulators, got {type(items[0]).__name__}")
        result = copy.deepcopy(items[0])
        result._merge_all(items[1:])
        return result

    def compute(
        self,
        *,
        num_samples: int | None = None,
        seed: Seed = None,
        progress: bool | None = False,
    ) -> EvaluationResults:
        """The results of :func:`~rankstats.evaluate` on every rank collected so far.

        Parameters
        ----------
        num_samples, seed, progress
            As in :func:`~rankstats.evaluate`: Monte-Carlo estimates of the null statistics that
            have no closed form, reproducible from ``seed``, with an optional progress bar.
        """
        state = self._state
        if not state.sides:
            raise ValueError("no ranks to evaluate: call update() first")
        sides = state.sides
        if state.weighted:
            sides = {side: with_weights(stats, state.sums[side]) for side, stats in sides.items()}
            if all(total_weight(stats) == 0 for stats in sides.values()):
                raise ValueError("every weight collected so far is zero: nothing to evaluate")
        labels: list[Hashable] | None = None
        if state.grouped:
            # label the groups in sorted order, as evaluate does
            order = label_order(state.labels)
            labels = [state.labels[index] for index in order]
            mapping = np.empty(len(order), dtype=np.int64)
            mapping[order] = np.arange(len(order), dtype=np.int64)
            sides = {side: stats.relabel_groups(mapping) for side, stats in sides.items()}
        return compute_results(
            sides,
            labels,
            self.metrics,
            self.rank_types,
            self.average,
            weighted=bool(state.weighted),
            default_metrics=self._default_metrics,
            num_samples=num_samples,
            seed=seed,
            progress=progress,
        )

    # --- state --------------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """The accumulator's configuration and collected counts as JSON-able Python objects.

        The state is canonical: groups are listed in sorted order, so accumulators holding the
        same ranks give equal states, however the ranks were split into batches and merged.
        Group labels appear as they are: the state is JSON-able where they are (strings,
        numbers, booleans, ``None`` and tuples of them, which JSON turns into lists and
        :meth:`from_state_dict` back into tuples); labels of other types (bytes, dates) keep
        it picklable only.
        """
        state = _sorted_labels(self._state)
        return {
            "version": STATE_VERSION,
            "metrics": [metric.key for metric in self.metrics],
            "default_metrics": self._default_metrics,
            "rank_types": None if self.rank_types is None else list(self.rank_types),
            "average": self.average,
            "grouped": state.grouped,
            "labels": list(state.labels),
            "sides": {
                side: {name: table.state() for name, table in stats.tables().items()}
                for side, stats in state.sides.items()
            },
            "weighted": state.weighted,
            "weight_sums": {
                side: {name: table.state() for name, table in tables.items()}
                for side, tables in state.sums.items()
            },
        }

    @classmethod
    def from_state_dict(cls, state: Mapping[str, Any]) -> RankAccumulator:
        """Rebuild an accumulator from :meth:`state_dict`.

        The state is checked completely (keys, version, types, shapes, counts, ranks and
        candidate counts, group ids against the labels, agreement between tables and sides);
        anything malformed raises a :class:`ValueError` or :class:`TypeError` naming the entry.
        """
        if not isinstance(state, Mapping):
            raise TypeError(
                f"state must be a mapping from state_dict(), got {type(state).__name__}"
            )
        unknown = sorted(map(str, set(state) - _STATE_KEYS - _WEIGHT_KEYS))
        if unknown:
            raise ValueError(f"state has unknown keys {unknown}; expected those of state_dict()")
        missing = sorted(_STATE_KEYS - {"version"} - set(state))
        if missing:
            raise ValueError(f"state lacks the keys {missing}")
        # a state without a version is read as its keys say
        version = state.get("version", STATE_VERSION if set(state) & _WEIGHT_KEYS else 1)
        if isinstance(version, bool) or version not in (1, 2, STATE_VERSION):
            raise ValueError(
                f"state has version {version!r}; this version of rankstats reads 1 to "
                f"{STATE_VERSION}"
            )
        if version == 1 and set(state) & _WEIGHT_KEYS:
            raise ValueError(f"a state of version 1 has no {sorted(_WEIGHT_KEYS)}")
        if version != 1 and not set(state) >= _WEIGHT_KEYS:
            raise ValueError(f"state lacks the keys {sorted(_WEIGHT_KEYS - set(state))}")
        if not isinstance(state["default_metrics"], bool):
            raise TypeError(
                f"state['default_metrics'] must be a bool, got {state['default_metrics']!r}"
            )
        metrics = state["metrics"]
        if (
            isinstance(metrics, str)
            or not isinstance(metrics, Sequence)
            or not all(isinstance(key, str) for key in metrics)
        ):  # checked as keys even where the defaults are taken (a state of other defaults)
            raise TypeError(f"state['metrics'] must be a list of metric keys, got {metrics!r}")
        rank_types = state["rank_types"]
        if rank_types is not None and (
            isinstance(rank_types, str) or not isinstance(rank_types, Sequence)
        ):
            raise TypeError(f"state['rank_types'] must be None or a list, got {rank_types!r}")
        accumulator = cls(
            None if state["default_metrics"] else list(metrics),
            rank_types=None if rank_types is None else list(rank_types),
            average=state["average"],
        )
        grouped = state["grouped"]
        if grouped is not None and not isinstance(grouped, bool):
            raise TypeError(f"state['grouped'] must be None or a bool, got {grouped!r}")
        raw_labels = state["labels"]
        if isinstance(raw_labels, str | bytes) or not isinstance(raw_labels, Sequence):
            raise TypeError(f"state['labels'] must be a list, got {raw_labels!r}")
        labels, _ = add_labels((), [check_label(label_from_json(label)) for label in raw_labels])
        if len(labels) != len(raw_labels):
            raise ValueError("state['labels'] must not repeat a label")
        if not grouped and labels:
            raise ValueError("state['labels'] must be empty for an accumulator without groups")
        raw_sides = state["sides"]
        if not isinstance(raw_sides, Mapping):
            raise TypeError(f"state['sides'] must be a mapping, got {type(raw_sides).__name__}")
        if (grouped is None) != (not raw_sides):
            raise ValueError(
                "state['grouped'] must be None exactly when state['sides'] is empty, got "
                f"{grouped!r} with {len(raw_sides)} sides"
            )
        weighted = state.get("weighted")
        if weighted is not None and not isinstance(weighted, bool):
            raise TypeError(f"state['weighted'] must be None or a bool, got {weighted!r}")
        if version != 1 and (weighted is None) != (not raw_sides):
            raise ValueError("state['weighted'] must be None exactly when state['sides'] is empty")
        # version 2 kept each weight in the candidate table whatever the metrics
        weight_keys = bool(weighted) and (version == 2 or not accumulator._weight_sums)
        tie_weights = bool(weighted) and version != 2 and accumulator._tie_weights
        sides = {
            _check_side_name(side): _side_from_state(
                tables,
                f"state['sides'][{side!r}]",
                len(labels) if grouped else 1,
                weight_keys,
                tie_weights,
            )
            for side, tables in raw_sides.items()
        }
        raw_sums = state.get("weight_sums", {})
        if not isinstance(raw_sums, Mapping):
            raise TypeError(
                f"state['weight_sums'] must be a mapping, got {type(raw_sums).__name__}"
            )
        if set(raw_sums) != (set(sides) if weighted else set()):
            raise ValueError(
                "state['weight_sums'] must have one entry per side for weighted states and none "
                f"otherwise, got {sorted(map(str, raw_sums))}"
            )
        candidate_sums = bool(weighted) and version != 2 and accumulator._weight_sums
        sums = {
            side: _sums_from_state(
                tables, f"state['weight_sums'][{side!r}]", sides[side], candidate_sums
            )
            for side, tables in raw_sums.items()
        }
        if weighted and version == 2 and accumulator._weight_sums:
            for side, stats in sides.items():
                sides[side], sums[side] = _to_weight_sums(stats, sums[side])
        if sides:
            layouts = {stats.layout() for stats in sides.values()}
            if len(layouts) > 1:
                raise ValueError("every side of state['sides'] must have the same tables")
            if accumulator.rank_types is not None:
                first = next(iter(sides.values()))
                resolve_rank_types(accumulator.rank_types, available_rank_types(first))
        if version == 1 and sides:
            weighted = False
        if weighted and version == 2:
            accumulator._check_weighted_ties(available_rank_types(next(iter(sides.values()))))
        accumulator._state = _Snapshot(sides, labels, grouped, weighted, sums)
        return accumulator

    def __repr__(self) -> str:
        metrics = ", ".join(metric.key for metric in self.metrics)
        return (
            f"RankAccumulator(metrics=[{metrics}], sides={list(self._state.sides)}, "
            f"num_ranks={self.num_ranks})"
        )


# --- batches -------------------------------------------------------------------------------------


def _is_empty(ranks: Any) -> bool:
    """Whether a batch holds no ranks at all (an empty array, or a mapping of empty arrays)."""
    if isinstance(ranks, Ranks | str | bytes):
        return False
    if isinstance(ranks, Mapping):
        return bool(ranks) and all(_is_empty(value) for value in ranks.values())
    try:
        return num_entries(ranks) == 0
    except (TypeError, ValueError):  # ragged lists and the like: validation says what is wrong
        return False


def _check_empty_companions(num_candidates: Any, groups: Any, weights: Any, counts: Any) -> None:
    for name, value in (
        ("num_candidates", num_candidates),
        ("groups", groups),
        ("weights", weights),
        ("counts", counts),
    ):
        if value is None or (name == "num_candidates" and is_scalar(value)):
            continue
        values = value.values() if isinstance(value, Mapping) else [value]
        if any(not _is_empty(item) for item in values):
            raise ValueError(f"the batch has no ranks, but {name} is not empty")


def _broadcast_candidates(ranks: Any, num_candidates: Any) -> Any:
    """Turn one candidate count (overall or per side) into an array per side."""
    if num_candidates is None:
        return None

    def spread(value: Any, side_ranks: Any) -> Any:
        if not is_scalar(value):
            return value
        if isinstance(side_ranks, Ranks):
            return value  # the Ranks broadcasts it (or, holding counts, says it is given twice)
        return broadcast_candidates(value, ranks_shape(side_ranks))

    from rankstats.base import RANK_TYPES

    by_side = isinstance(ranks, Mapping) and not all(key in RANK_TYPES for key in ranks)
    if not by_side:
        return spread(num_candidates, ranks)
    if isinstance(num_candidates, Mapping):
        return {side: spread(value, ranks.get(side)) for side, value in num_candidates.items()}
    if is_scalar(num_candidates):
        return {side: spread(num_candidates, side_ranks) for side, side_ranks in ranks.items()}
    return num_candidates


def _combine(parts: Sequence[Mapping[str, SideStatistics]]) -> dict[str, SideStatistics]:
    """The statistics of all parts together, as a new mapping (no part is changed)."""
    parts = [part for part in parts if part]
    if not parts:
        return {}
    if len(parts) == 1:
        return dict(parts[0])
    first = parts[0]
    for incoming in parts[1:]:
        if set(incoming) != set(first):
            raise ValueError(
                f"every update must give the same sides; expected {list(first)}, got "
                f"{list(incoming)}"
            )
        for side, stats in incoming.items():
            if stats.layout() != first[side].layout():
                raise ValueError(
                    f"every update must give the same kinds of ranks (rank types, candidate "
                    f"counts); side {side!r} differs from the earlier updates"
                )
    for side in first:  # each part's count is below 2**62: its int64 sum is exact
        check_num_tasks(sum(part[side].size for part in parts), f"the counts of side {side!r}")
    return {side: SideStatistics.concatenate([part[side] for part in parts]) for side in first}


# --- weights and counts --------------------------------------------------------------------------


def _side_sizes(ranks: Any) -> dict[str, int]:
    from rankstats.base import RANK_TYPES
    from rankstats.evaluation.results import SIDE_BOTH

    by_side = isinstance(ranks, Mapping) and not all(key in RANK_TYPES for key in ranks)
    parts = dict(ranks) if by_side else {SIDE_BOTH: ranks}
    sizes = {}
    for side, value in parts.items():
        shape = ranks_shape(value)
        if shape is None:
            raise ValueError(f"the ranks of side {side!r} must be one flat array per rank type")
        sizes[side] = math.prod(shape)
    return sizes


def _relabel(
    sides: Mapping[str, SideStatistics],
    sums: Mapping[str, dict[str, Table]],
    mapping: IntArray,
    *,
    sort: bool = True,
) -> tuple[dict[str, SideStatistics], dict[str, dict[str, Table]]]:
    """Replace group ids through ``mapping``.

    Without ``sort`` the tables are left unsorted, to be concatenated (which sorts) right after.
    """

    def table(t: Table) -> Table:
        if sort:
            return t.relabel_groups(mapping)
        return Table({**t.columns, GROUP: mapping[t.columns[GROUP]]}, t.count)

    return (
        {name: stats.map(table) for name, stats in sides.items()},
        {name: {key: table(t) for key, t in tables.items()} for name, tables in sums.items()},
    )


def _sorted_labels(state: _Snapshot) -> _Snapshot:
    """The same snapshot with the group ids renumbered in the sorted order of their labels."""
    if not state.grouped:
        return state
    order = label_order(state.labels)
    mapping = np.empty(len(order), dtype=np.int64)
    mapping[order] = np.arange(len(order), dtype=np.int64)
    sides, sums = _relabel(state.sides, state.sums, mapping)
    labels = tuple(state.labels[index] for index in order)
    return _Snapshot(sides, labels, state.grouped, state.weighted, sums)


# --- state ---------------------------------------------------------------------------------------


def _check_side_name(side: Any) -> str:
    if not isinstance(side, str):
        raise TypeError(f"the sides of state['sides'] must be strings, got {side!r}")
    return side


def _column(
    values: Any, name: str, *, low: float, high: float, half: bool = False, real: bool = False
) -> npt.NDArray[Any]:
    """A state column: a list of integers (or half-integers) in [low, high]."""
    if isinstance(values, str | bytes) or not isinstance(values, Sequence | np.ndarray):
        raise TypeError(f"{name} must be a list of numbers, got {type(values).__name__}")
    if holds_booleans(values):  # np.asarray reads [True, 2] as [1, 2]
        raise TypeError(f"{name} must hold numbers, not booleans")
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{name} must be a flat list, got shape {array.shape}")
    if array.size and (array.dtype == np.bool_ or array.dtype.kind not in "iuf"):
        raise TypeError(f"{name} must hold numbers, got an array of dtype {array.dtype}")
    values_f = array.astype(np.float64) * (2.0 if half else 1.0)
    with np.errstate(invalid="ignore"):
        bad = ~(array >= low) | ~(array <= high) | ~np.isfinite(values_f)
        if not real:
            bad |= values_f != np.floor(values_f)
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        kind = "finite numbers" if real else "integers or half-integers" if half else "integers"
        raise ValueError(
            f"{name} must hold {kind} between {low:g} and {high:g}, got "
            f"{array[index].item()!r} at index {index}"
        )
    return array.astype(np.float64 if half or real else np.int64)


def _key_column(values: Any, where: str, column: str, num_groups: int) -> npt.NDArray[Any]:
    """A key column of a state's table: group ids, (half-integer) ranks or candidate counts."""
    if column == GROUP:
        return _column(values, where, low=0, high=num_groups - 1)
    if column == "rank":
        return _column(values, where, low=1, high=MAX_RANK, half=True)
    return _column(values, where, low=1, high=MAX_RANK)


def _keyed_counts(table: Table) -> npt.NDArray[np.float64]:
    """The distinct rows of a table's keys (sorted) with their counts summed, as one array."""
    keys = np.stack([np.asarray(column, dtype=np.float64) for column in table.columns.values()])
    if keys.size == 0:
        return np.empty((keys.shape[0] + 1, 0))
    distinct, inverse = np.unique(keys, axis=1, return_inverse=True)
    counts = np.bincount(inverse.ravel(), weights=table.count, minlength=distinct.shape[1])
    return np.vstack((distinct, counts))


def _table_from_state(
    state: Any, name: str, kind: str, num_groups: int, weighted: bool = False
) -> Table:
    if not isinstance(state, Mapping):
        raise TypeError(f"{name} must be a mapping of columns, got {type(state).__name__}")
    # the candidate table keeps each weight (unless weight sums are kept), the tie pairs always
    with_weight = (weighted and kind == "candidates") or kind == "tie_pairs"
    expected = {*_TABLE_COLUMNS[kind], "count", *([WEIGHT] if with_weight else [])}
    if set(state) != expected:
        raise ValueError(
            f"{name} must have the columns {sorted(expected)}, got {sorted(map(str, state))}"
        )
    count = _column(state["count"], f"{name}['count']", low=1, high=MAX_TASKS - 1)
    columns: dict[str, npt.NDArray[Any]] = {}
    for column in _TABLE_COLUMNS[kind]:
        where = f"{name}[{column!r}]"
        columns[column] = _key_column(state[column], where, column, num_groups)
        if columns[column].size != count.size:
            raise ValueError(
                f"{where} must have one entry per row like {name}['count'] ({count.size}), "
                f"got {columns[column].size}"
            )
    if with_weight:
        columns[WEIGHT] = _column(state[WEIGHT], f"{name}['weight']", low=0, high=np.inf, real=True)
        if columns[WEIGHT].size != count.size:
            raise ValueError(f"{name}['weight'] must have one entry per row like {name}['count']")
    if count.size == 0:
        raise ValueError(f"{name} must not be empty")
    check_num_tasks(float(count.astype(np.float64).sum()), f"{name}['count']")
    if kind in ("pairs", "tie_pairs") and (columns["pessimistic"] < columns["optimistic"]).any():
        raise ValueError(f"{name}: pessimistic ranks must not be smaller than optimistic ones")
    return Table.build(columns, count)


def _group_totals(table: Table, num_groups: int) -> npt.NDArray[np.int64]:
    return np.bincount(table.columns[GROUP], weights=table.count, minlength=num_groups).astype(
        np.int64
    )


def _side_from_state(
    tables: Any, name: str, num_groups: int, weighted: bool = False, tie_weights: bool = False
) -> SideStatistics:
    if not isinstance(tables, Mapping):
        raise TypeError(f"{name} must be a mapping of tables, got {type(tables).__name__}")
    unknown = sorted(str(table) for table in tables if table not in _TABLE_COLUMNS)
    if unknown:
        raise ValueError(f"{name} has unknown tables {unknown}; expected {sorted(_TABLE_COLUMNS)}")
    built = {
        table: _table_from_state(state, f"{name}[{table!r}]", table, num_groups, weighted)
        for table, state in tables.items()
    }
    pairs = built.pop("pairs", None)
    candidates = built.pop("candidates", None)
    tie_pairs = built.pop("tie_pairs", None)
    if (tie_pairs is not None) != (tie_weights and pairs is not None):
        raise ValueError(
            f"{name} must have a 'tie_pairs' table exactly when it is weighted, has a 'pairs' "
            "table and a metric needs each tied task's weight"
        )
    if tie_pairs is not None and pairs is not None:
        # each task of the pairs once with its weight: the same rows, the same counts
        keys = {column: tie_pairs.columns[column] for column in _TABLE_COLUMNS["tie_pairs"]}
        tied = _keyed_counts(Table.build(keys, tie_pairs.count))
        if not np.array_equal(tied, _keyed_counts(pairs)):
            raise ValueError(
                f"{name}['tie_pairs'] must hold the rows of {name}['pairs'], each task once "
                "with its weight"
            )
    ranks = {table.removeprefix("ranks."): value for table, value in built.items()}
    if (pairs is None) == (not ranks):
        raise ValueError(f"{name} must have either a 'pairs' table or 'ranks.<rank type>' tables")
    reference = pairs if pairs is not None else next(iter(ranks.values()))
    totals = _group_totals(reference, num_groups)
    for table_name, table in [*built.items(), ("candidates", candidates), ("tie_pairs", tie_pairs)]:
        if table is not None and not np.array_equal(_group_totals(table, num_groups), totals):
            raise ValueError(
                f"{name}[{table_name!r}] must count as many ranks per group as the other tables"
            )
    if candidates is not None:
        largest = (
            reference.columns["pessimistic"]
            if pairs is not None
            else np.ceil(reference.columns["rank"])
        )
        most = np.zeros(num_groups)
        np.maximum.at(most, candidates.columns[GROUP], candidates.columns["num_candidates"])
        if (largest > most[reference.columns[GROUP]]).any():
            raise ValueError(f"{name}: a rank exceeds every candidate count of its group")
    return SideStatistics(pairs=pairs, ranks=ranks, candidates=candidates, tie_pairs=tie_pairs)


def _to_weight_sums(
    stats: SideStatistics, sums: dict[str, Table]
) -> tuple[SideStatistics, dict[str, Table]]:
    """A version-2 side (each weight in the candidate table) with weight sums per count instead."""
    table = stats.candidates
    if table is None:
        return stats, sums
    keys = {name: column for name, column in table.columns.items() if name != WEIGHT}
    weights = table.columns[WEIGHT]
    check_squared_range(weights)  # as an update checks them: the squares must stay normal
    total = weight_limbs(keys, weights, table.count)
    squared = weight_limbs(keys, weights * weights, table.count)
    return dataclasses.replace(stats, candidates=Table.build(keys, table.count)), {
        **sums,
        CANDIDATE_SUMS[0]: total,
        CANDIDATE_SUMS[1]: squared,
    }


def _sums_from_state(
    state: Any, name: str, stats: SideStatistics, candidate_sums: bool = False
) -> dict[str, Table]:
    """The exact weight sums of one side's tables, checked against those tables."""
    if not isinstance(state, Mapping):
        raise TypeError(f"{name} must be a mapping of tables, got {type(state).__name__}")
    tables = rank_tables(stats)
    if candidate_sums and stats.candidates is not None:
        tables = {**tables, **dict.fromkeys(CANDIDATE_SUMS, stats.candidates)}
    if set(state) != set(tables):
        raise ValueError(
            f"{name} must have the tables {sorted(tables)}, got {sorted(map(str, state))}"
        )
    sums = {}
    for table_name, table in tables.items():
        where = f"{name}[{table_name!r}]"
        columns_state = state[table_name]
        if not isinstance(columns_state, Mapping):
            raise TypeError(f"{where} must be a mapping of columns")
        expected = {*table.columns, LIMB, "count"}
        if set(columns_state) != expected:
            raise ValueError(
                f"{where} must have the columns {sorted(expected)}, got "
                f"{sorted(map(str, columns_state))}"
            )
        digits = _column(columns_state["count"], f"{where}['count']", low=1, high=2**32 - 1)
        groups = int(table.columns[GROUP].max(initial=0)) + 1  # (rows_within checks each row)
        columns = {
            column: _key_column(
                columns_state[column], f"{where}[{column!r}]", column, groups
            ).astype(table.columns[column].dtype)
            if np.size(columns_state[column])
            else table.columns[column][:0]
            for column in table.columns
        }
        columns[LIMB] = _column(columns_state[LIMB], f"{where}['limb']", low=0, high=MAX_LIMB)
        if any(column.shape != digits.shape for column in columns.values()):
            raise ValueError(f"{where} must have one entry per row in every column")
        limbs = Table.build(columns, digits)
        if len(limbs) != digits.size or (limbs.count >= 2**32).any():
            raise ValueError(f"{where} must hold each (row, limb) once, with digits below 2**32")
        keys, _ = rounded_sums(limbs, list(table.columns))  # the distinct rows
        if not rows_within(keys, table.columns):
            raise ValueError(f"{where} has weight sums for rows that {table_name!r} does not have")
        sums[table_name] = limbs
    return sums
